"""grounded-rag: answers from your documents with citations it can prove, or an abstention."""

from __future__ import annotations

from grounded_rag.ask_cli import sample_corpus_dir
from grounded_rag.context import Context
from grounded_rag.graph import build_builder, build_graph, graph
from grounded_rag.retrieval.base import Retriever
from grounded_rag.verification.base import Verifier

__all__ = [
    "Context",
    "Retriever",
    "Verifier",
    "build_builder",
    "build_graph",
    "graph",
    "sample_corpus_dir",
]
__version__ = "0.1.0"
