"""Open a persisted store as a retriever."""

from __future__ import annotations

import os
from typing import Any

from grounded_rag.retrieval.hybrid import HybridRetriever, Mode
from grounded_rag.retrieval.rerank import Reranker
from grounded_rag.retrieval.store import open_store


def open_retriever(
    store_dir: str | os.PathLike[str] | None = None,
    *,
    chroma_url: str | None = None,
    embeddings: Any = None,
    embedder: str | None = None,
    mode: Mode = "hybrid",
    reranker: Reranker | None = None,
    n_candidates: int = 20,
) -> HybridRetriever:
    """Open the store at ``store_dir`` (default ``$GROUNDED_RAG_STORE`` or ``./.grounded-rag``).

    ``store_dir`` may be a ``postgresql://USER@HOST:PORT/DB?schema=NAME`` URL: the networked
    store (catalogue and BM25 in Postgres, vectors on the Chroma server at ``chroma_url``).

    Raises :class:`StoreNotFoundError` / :class:`EmptyStoreError` (both
    :class:`RetrievalError`) with a message telling the user to run ``grounded-rag ingest``.
    ``chroma_url`` points the vector side at a Chroma server. Without ``embeddings`` the
    built-in embedder that built the store is used (and followed if the store is
    re-embedded while open); ``embedder`` (``e5``, ``minilm``, ``openai:MODEL[@URL]``) or
    ``embeddings`` (any LangChain ``Embeddings``) must match the store, else
    :class:`StoreMismatchError` names the re-embed command.
    """
    from grounded_rag.retrieval.embeddings import embedder_identity
    from grounded_rag.retrieval.ingest import embeddings_for_store

    store = open_store(store_dir, chroma_url=chroma_url)
    store.require_documents()
    follow = embeddings is None and embedder is None
    if embeddings is None and mode != "bm25":
        embeddings = embeddings_for_store(store, embedder)
    if embeddings is not None:
        store.check_embeddings(embedder_identity(embeddings))
    store.bm25_index()
    return HybridRetriever(
        store,
        embeddings,
        mode=mode,
        reranker=reranker,
        n_candidates=n_candidates,
        follow_store=follow,
    )
