"""Open a persisted store as a retriever."""

from __future__ import annotations

import os
from typing import Any

from grounded_rag.retrieval.hybrid import HybridRetriever, Mode
from grounded_rag.retrieval.rerank import Reranker
from grounded_rag.retrieval.store import Store, resolve_store_dir


def open_retriever(
    store_dir: str | os.PathLike[str] | None = None,
    *,
    chroma_url: str | None = None,
    embeddings: Any = None,
    mode: Mode = "hybrid",
    reranker: Reranker | None = None,
    n_candidates: int = 20,
) -> HybridRetriever:
    """Open the store at ``store_dir`` (default ``$GROUNDED_RAG_STORE`` or ``./.grounded-rag``).

    Raises :class:`StoreNotFoundError` / :class:`EmptyStoreError` (both
    :class:`RetrievalError`) with a message telling the user to run ``grounded-rag ingest``.
    ``chroma_url`` points the vector side at a Chroma server; ``embeddings`` must be the
    same model the store was built with (any LangChain ``Embeddings``).
    """
    from grounded_rag.retrieval.embeddings import embeddings_name

    store = Store(resolve_store_dir(store_dir), chroma_url=chroma_url)
    store.require_documents()
    if embeddings is None and mode != "bm25":
        from grounded_rag.retrieval.embeddings import MiniLMEmbeddings

        embeddings = MiniLMEmbeddings()
    if embeddings is not None:
        store.check_embeddings(embeddings_name(embeddings), None)
    store.bm25_index()
    return HybridRetriever(
        store, embeddings, mode=mode, reranker=reranker, n_candidates=n_candidates
    )
