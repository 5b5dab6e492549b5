"""Retrieval and ingestion: section-aware chunks in Chroma + BM25, fused, with calibrated relevance.

Importing this package is cheap: chromadb, onnxruntime and Sudachi load on first use.

Typical use::

    from grounded_rag.retrieval import ingest_paths, open_retriever

    ingest_paths(["docs/"], store_dir=".grounded-rag")  # multilingual-e5 on Linux x86_64
    hits = open_retriever(".grounded-rag").retrieve("How long does the battery last?", k=5)

    # the store as a LangChain retriever (Documents, filters in search_kwargs)
    docs = as_retriever(".grounded-rag", k=3, path_prefix="policies/").invoke("Taxi rules?")
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
    from grounded_rag.retrieval.embeddings import (
        E5Embeddings,
        MiniLMEmbeddings,
        default_embeddings,
    )
    from grounded_rag.retrieval.filters import ChunkFilter, make_filter
    from grounded_rag.retrieval.hybrid import HybridRetriever
    from grounded_rag.retrieval.ingest import IngestReport, ingest_paths, reembed_store
    from grounded_rag.retrieval.langchain_retriever import GroundedRetriever, as_retriever
    from grounded_rag.retrieval.memory import InMemoryRetriever
    from grounded_rag.retrieval.rerank import CrossEncoderReranker, FeatureScorer, Reranker

_LAZY = {
    "open_retriever": "grounded_rag.retrieval._open",
    "ingest_paths": "grounded_rag.retrieval.ingest",
    "IngestReport": "grounded_rag.retrieval.ingest",
    "HybridRetriever": "grounded_rag.retrieval.hybrid",
    "InMemoryRetriever": "grounded_rag.retrieval.memory",
    "LangChainRetriever": "grounded_rag.retrieval.adapters",
    "GroundedRetriever": "grounded_rag.retrieval.langchain_retriever",
    "as_retriever": "grounded_rag.retrieval.langchain_retriever",
    "ChunkFilter": "grounded_rag.retrieval.filters",
    "make_filter": "grounded_rag.retrieval.filters",
    "MiniLMEmbeddings": "grounded_rag.retrieval.embeddings",
    "E5Embeddings": "grounded_rag.retrieval.embeddings",
    "default_embeddings": "grounded_rag.retrieval.embeddings",
    "reembed_store": "grounded_rag.retrieval.ingest",
    "Reranker": "grounded_rag.retrieval.rerank",
    "FeatureScorer": "grounded_rag.retrieval.rerank",
    "CrossEncoderReranker": "grounded_rag.retrieval.rerank",
}

__all__ = [
    "ChunkFilter",
    "CrossEncoderReranker",
    "E5Embeddings",
    "EmptyStoreError",
    "FeatureScorer",
    "GroundedRetriever",
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
    "as_retriever",
    "default_embeddings",
    "ingest_paths",
    "make_filter",
    "open_retriever",
    "reembed_store",
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
