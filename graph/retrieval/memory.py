"""Retrieval over an in-memory list of documents: no disk, for tests, notebooks and eval."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from grounded_rag.retrieval._bm25 import BM25Index
from grounded_rag.retrieval.chunking import Chunk, Document, chunk_document, index_text
from grounded_rag.retrieval.hybrid import HybridRetriever, Mode
from grounded_rag.retrieval.rerank import Reranker
from grounded_rag.retrieval.text_analysis import tokenize
from grounded_rag.types import Evidence

if TYPE_CHECKING:
    from grounded_rag.retrieval.filters import ChunkFilter


class _MemoryBackend:
    def __init__(self, chunks: list[Chunk], embeddings: Any, chunk_docs: bool) -> None:
        import numpy as np

        texts = [index_text(c) for c in chunks]
        self.rows = {c.id: (c, tokenize(t)) for c, t in zip(chunks, texts, strict=True)}
        self.keys = [c.id for c in chunks]
        self.bm25 = (
            BM25Index.build(self.keys, [self.rows[k][1] for k in self.keys]) if chunks else None
        )
        self.matrix = None
        if embeddings is not None and chunks:
            self.matrix = np.asarray(embeddings.embed_documents(texts), dtype=np.float32)
            norms = np.linalg.norm(self.matrix, axis=1, keepdims=True)
            self.matrix /= np.clip(norms, 1e-12, None)

    def bm25_index(self) -> BM25Index | None:
        return self.bm25

    def vector_search(self, vector: Sequence[float], n: int) -> list[tuple[str, float]]:
        import numpy as np

        if self.matrix is None:
            return []
        q = np.asarray(vector, dtype=np.float32)
        q /= max(float(np.linalg.norm(q)), 1e-12)
        sims = self.matrix @ q
        order = np.argsort(-sims, kind="stable")[:n]
        return [(self.keys[i], float(sims[i])) for i in order]

    def fetch(self, keys: Sequence[str]) -> dict[str, tuple[Chunk, list[str]]]:
        return {k: self.rows[k] for k in keys if k in self.rows}


class InMemoryRetriever(HybridRetriever):
    """Hybrid (or BM25-only) retrieval over dicts ``{id, title, text, url}``.

    Documents are chunked like ingested files (section ids such as ``policy#sec2``). With
    ``mode="bm25"`` no embedding model is loaded at all. ``chunk=False`` indexes each
    document whole under the id ``<id>#sec0`` (passage-level evaluation sets).
    """

    def __init__(
        self,
        documents: Iterable[Mapping[str, Any]],
        *,
        mode: Mode = "hybrid",
        embeddings: Any = None,
        reranker: Reranker | None = None,
        n_candidates: int = 20,
        chunk: bool = True,
    ) -> None:
        chunks: list[Chunk] = []
        for i, d in enumerate(documents):
            doc_id = str(d.get("id") or f"doc{i}")
            text = str(d.get("text") or "")
            if not text.strip():
                continue
            title = str(d.get("title") or doc_id)
            url = str(d.get("url") or "")
            if chunk:
                chunks += chunk_document(Document(doc_id, title, text, url=url))
            else:
                chunks.append(Chunk(f"{doc_id}#sec0", doc_id, title, url, "", text, 0, len(text)))
        if mode != "bm25" and embeddings is None:
            from grounded_rag.retrieval.embeddings import default_embeddings

            embeddings = default_embeddings()
        backend = _MemoryBackend(chunks, embeddings if mode != "bm25" else None, chunk)
        super().__init__(
            backend, embeddings, mode=mode, n_candidates=n_candidates, reranker=reranker
        )
        self.chunks = chunks

    def retrieve(
        self, query: str, k: int = 5, *, chunk_filter: ChunkFilter | None = None
    ) -> list[Evidence]:
        """Return up to ``k`` chunks for ``query``, best first (``chunk_filter``: see base)."""
        return super().retrieve(query, k, chunk_filter=chunk_filter)
