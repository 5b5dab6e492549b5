"""Retrieval and ingestion: section-aware chunks in Chroma + BM25, fused, with calibrated relevance.

Importing this package is cheap: chromadb, onnxruntime and Sudachi load on first use.

Typical use::

    from grounded_rag.retrieval import ingest_paths, open_retriever

    ingest_paths(["docs/"], store_dir=".grounded-rag")
    hits = open_retriever(".grounded-rag").retrieve("How long does the battery last?", k=5)
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from grounded_rag.retrieval._errors import (
    EmptyStoreError,
    LoadError,
    ModelFileError,
    RetrievalError,
    StoreMismatchError,
    StoreNotFoundError,
)
from grounded_rag.retrieval.base import Retriever

# onnxruntime (used by our embeddings, and imported by chromadb) reports telemetry unless
# this is set before it is first imported anywhere in the process.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

if TYPE_CHECKING:
    from grounded_rag.retrieval._open import open_retriever
    from grounded_rag.retrieval.adapters import LangChainRetriever
    from grounded_rag.retrieval.embeddings import MiniLMEmbeddings
    from grounded_rag.retrieval.hybrid import HybridRetriever
    from grounded_rag.retrieval.ingest import IngestReport, ingest_paths
    from grounded_rag.retrieval.memory import InMemoryRetriever
    from grounded_rag.retrieval.rerank import CrossEncoderReranker, FeatureScorer, Reranker

_LAZY = {
    "open_retriever": "grounded_rag.retrieval._open",
    "ingest_paths": "grounded_rag.retrieval.ingest",
    "IngestReport": "grounded_rag.retrieval.ingest",
    "HybridRetriever": "grounded_rag.retrieval.hybrid",
    "InMemoryRetriever": "grounded_rag.retrieval.memory",
    "LangChainRetriever": "grounded_rag.retrieval.adapters",
    "MiniLMEmbeddings": "grounded_rag.retrieval.embeddings",
    "Reranker": "grounded_rag.retrieval.rerank",
    "FeatureScorer": "grounded_rag.retrieval.rerank",
    "CrossEncoderReranker": "grounded_rag.retrieval.rerank",
}

__all__ = [
    "CrossEncoderReranker",
    "EmptyStoreError",
    "FeatureScorer",
    "HybridRetriever",
    "InMemoryRetriever",
    "IngestReport",
    "LangChainRetriever",
    "LoadError",
    "MiniLMEmbeddings",
    "ModelFileError",
    "Reranker",
    "RetrievalError",
    "Retriever",
    "StoreMismatchError",
    "StoreNotFoundError",
    "ingest_paths",
    "open_retriever",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'grounded_rag.retrieval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
