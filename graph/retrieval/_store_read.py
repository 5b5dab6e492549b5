"""The store's readers: load the committed generation once and answer queries against it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from grounded_rag.retrieval._bm25 import BM25Index
from grounded_rag.retrieval._identity import EmbedderIdentity
from grounded_rag.retrieval._store_catalog import _TOKEN_SEP, _identity_from
from grounded_rag.retrieval._store_vectors import _StoreVectors
from grounded_rag.retrieval.chunking import Chunk

_LOAD_ATTEMPTS = 5


@dataclass(frozen=True)
class Generation:
    """One committed state of a store, as a query sees it from start to end."""

    number: str | None
    """The generation counter in the catalogue."""
    bm25: BM25Index | None
    """Its BM25 index (None when the store is empty)."""
    visible: frozenset[str]
    """Keys of its chunks: vectors outside this set are ignored."""
    collection: str
    """The Chroma collection holding its vectors."""
    embedder: EmbedderIdentity | None
    """The embedder that wrote those vectors."""

    @classmethod
    def of(cls, meta: dict[str, Any], index: BM25Index | None) -> Generation:
        """The generation a catalogue's ``meta`` describes, with its loaded BM25 ``index``."""
        return cls(
            number=meta.get("generation"),
            bm25=index,
            visible=frozenset(index.keys) if index else frozenset(),
            collection=meta.get("collection") or "grounded-rag",
            embedder=_identity_from(meta),
        )


class _StoreReads(_StoreVectors):
    """Query-side access of :class:`~grounded_rag.retrieval.store.Store`."""

    _current: Generation | None
    _pinned: Any

    def bm25_index(self) -> BM25Index | None:
        """The committed BM25 index, reloaded when another process committed a new one.

        Also pins that generation for the calling thread: its next :meth:`vector_search`
        filters by the same generation's keys, so one query never mixes two generations.
        """
        current = self.generation()
        self._pinned.generation = current
        return current.bm25

    def generation(self) -> Generation:
        """The committed generation, loaded once per generation (thread-safe).

        A writer deletes the previous generation's BM25 directory right after committing a
        new one; a reader that read the old name just before finds it gone, reads the
        catalogue again and loads the newer one instead of failing.
        """
        from grounded_rag.retrieval._errors import RetrievalError

        error: Exception | None = None
        for _ in range(_LOAD_ATTEMPTS):
            meta = dict(self._reader().execute("SELECT key, value FROM meta").fetchall())
            current = self._current
            if current is not None and current.number == meta.get("generation"):
                return current
            with self._lock:
                current = self._current
                if current is not None and current.number == meta.get("generation"):
                    return current
                name = meta.get("bm25_dir") or ""
                try:
                    index = BM25Index.load(self.directory / name) if name else None
                except (OSError, ValueError) as exc:
                    error = exc  # replaced by a newer generation meanwhile: look again
                    continue
                current = Generation.of(meta, index)
                self._current = current
                return current
        raise RetrievalError(f"could not load the BM25 index of the store at {self.directory}: "
                             f"{error}") from error

    def serving_embedder(self) -> EmbedderIdentity | None:
        """The embedder of the generation loaded by :meth:`bm25_index` (what queries use)."""
        return self.pinned_generation().embedder

    def pinned_generation(self) -> Generation:
        """The generation this thread's current (or last) query runs against."""
        pinned: Generation | None = getattr(self._pinned, "generation", None)
        if pinned is None:
            self.bm25_index()
            pinned = self._pinned.generation
        return pinned

    def vector_search(self, vector: Sequence[float], n: int) -> list[tuple[str, float]]:
        """Top ``n`` (key, cosine) pairs of the generation this thread's query loaded."""
        import numpy as np

        # No reload here: the query vector was made for the generation loaded when the
        # query started (a re-embed may switch embedders; the old collection outlives it).
        current = self.pinned_generation()
        if not current.visible:
            return []
        with self._lock:
            if self._collection is None or self._collection_name != current.collection:
                self._collection = self.open_collection(current.collection)
                self._collection_name = current.collection
            collection = self._collection
        res = collection.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32)],
            n_results=min(n + 5, len(current.visible) + 5),
            include=["distances"],
        )
        pairs = zip(res["ids"][0], res["distances"][0], strict=True)
        return [(k, 1.0 - float(d)) for k, d in pairs if k in current.visible][:n]

    def fetch(self, keys: Sequence[str]) -> dict[str, tuple[Chunk, list[str]]]:
        """Chunks and tokens for the given keys."""
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        rows = self._reader().execute(
            f'SELECT key, chunk_id, doc_id, title, url, section, text, start, "end", tokens '
            f"FROM chunks WHERE key IN ({marks})",
            list(keys),
        )
        return {
            r[0]: (
                Chunk(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]),
                r[9].split(_TOKEN_SEP) if r[9] else [],
            )
            for r in rows
        }

    def chunk_texts(self) -> list[tuple[str, str, str]]:
        """``(key, doc_id, embedded text)`` of every committed chunk, in document order."""
        from grounded_rag.retrieval.chunking import index_text

        rows = self._db.execute(
            'SELECT key, chunk_id, doc_id, title, url, section, text, start, "end" FROM chunks '
            "ORDER BY doc_id, ord"
        )
        return [(r[0], r[2], index_text(Chunk(*r[1:]))) for r in rows]
