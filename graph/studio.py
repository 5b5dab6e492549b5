"""What ``langgraph.json`` serves to ``langgraph dev`` and LangGraph Studio: the default graph.

The Agent Server reads the graph from this module's namespace (not through attribute
access), so the default workflow is built here at import, whereas ``grounded_rag.graph``
builds it on first access.
"""

from __future__ import annotations

from grounded_rag.graph import graph

__all__ = ["graph"]
