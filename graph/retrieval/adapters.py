"""Adapt any LangChain retriever or vector store to the project's ``Retriever`` protocol."""

from __future__ import annotations

import math
from typing import Any

from grounded_rag.types import Evidence


def _evidence_from_document(doc: Any, rank: int, score: float, relevance: float) -> Evidence:
    meta = dict(getattr(doc, "metadata", {}) or {})
    doc_id = str(
        meta.get("doc_id") or meta.get("source") or getattr(doc, "id", None) or f"doc{rank}"
    )
    source_id = str(
        meta.get("source_id")
        or meta.get("chunk_id")
        or getattr(doc, "id", None)
        or f"{doc_id}#sec{rank}"
    )
    ev = Evidence(
        source_id=source_id,
        doc_id=doc_id,
        title=str(meta.get("title") or doc_id),
        url=str(meta.get("url") or meta.get("source") or ""),
        text=doc.page_content,
        score=float(score),
        relevance=min(1.0, max(0.0, float(relevance))),
    )
    if meta.get("section"):
        ev["section"] = str(meta["section"])
    return ev


class LangChainRetriever:
    """Wrap a LangChain ``BaseRetriever`` or ``VectorStore`` (Chroma server, pgvector, ...).

    Relevance comes from the vector store's normalised relevance score when it has one
    (``similarity_search_with_relevance_scores``), else from a ``relevance_score`` /
    ``score`` in the document metadata, else from ``default_relevance`` decaying with rank.
    Such scores are not calibrated like the built-in retriever's: set the graph's abstain
    threshold for that backend (``benchmarks/fit_relevance.py`` shows how).
    """

    def __init__(
        self,
        backend: Any,
        *,
        default_relevance: float = 0.5,
        search_kwargs: dict[str, Any] | None = None,
    ):
        from langchain_core.retrievers import BaseRetriever
        from langchain_core.vectorstores import VectorStore

        if not isinstance(backend, BaseRetriever | VectorStore):
            raise TypeError(
                f"expected a LangChain BaseRetriever or VectorStore, got {type(backend).__name__}"
            )
        self.backend = backend
        self.default_relevance = default_relevance
        self.search_kwargs = search_kwargs or {}

    def retrieve(self, query: str, k: int = 5) -> list[Evidence]:
        """Return up to ``k`` evidence items, best first."""
        from langchain_core.vectorstores import VectorStore

        if isinstance(self.backend, VectorStore):
            try:
                pairs = self.backend.similarity_search_with_relevance_scores(
                    query, k=k, **self.search_kwargs
                )
            except NotImplementedError:
                docs = self.backend.similarity_search(query, k=k, **self.search_kwargs)
                pairs = [
                    (d, self.default_relevance * math.exp(-0.1 * i)) for i, d in enumerate(docs)
                ]
            return [_evidence_from_document(d, i, s, s) for i, (d, s) in enumerate(pairs[:k])]
        docs = self.backend.invoke(query, **self.search_kwargs)
        out = []
        for i, d in enumerate(docs[:k]):
            meta = getattr(d, "metadata", {}) or {}
            raw = meta.get("relevance_score", meta.get("score"))
            rel = (
                float(raw)
                if isinstance(raw, int | float)
                else self.default_relevance * math.exp(-0.1 * i)
            )
            out.append(_evidence_from_document(d, i, rel, rel))
        return out
