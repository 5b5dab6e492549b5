"""grounded-rag: answers from your documents with citations it can prove, or an abstention."""

from __future__ import annotations

import importlib as _importlib
import sys as _sys
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
__version__ = "0.2.0"

# Importing the package is cheap: LangChain, LangGraph, Chroma and the models load when a
# name below is first used, and the default graph is compiled on first access.
_LAZY = {
    "Context": "grounded_rag.context",
    "Retriever": "grounded_rag.retrieval.base",
    "Verifier": "grounded_rag.verification.base",
    "build_builder": "grounded_rag.graph",
    "build_graph": "grounded_rag.graph",
    "graph": "grounded_rag.graph",
    "sample_corpus_dir": "grounded_rag.ask_cli",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'grounded_rag' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(_ModuleType):
    """Keeps ``grounded_rag.graph`` the compiled graph once the ``graph`` module is imported.

    Importing a submodule sets it as an attribute of its package; for the wiring module
    ``grounded_rag.graph`` that would shadow the public ``graph`` (the compiled workflow).
    (Submodules such as ``grounded_rag.types`` shadow module globals the same way, hence
    the underscored imports above.)
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "graph" and isinstance(value, _ModuleType):
            return
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
