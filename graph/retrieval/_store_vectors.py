"""The store's Chroma side: its client and collections, with vectors written and read by key."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grounded_rag.retrieval._store_catalog import _StoreCatalog


def _chroma_client(path: Path, chroma_url: str | None) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if chroma_url:
        from urllib.parse import urlparse

        u = urlparse(chroma_url if "://" in chroma_url else f"http://{chroma_url}")
        return chromadb.HttpClient(
            host=u.hostname or "localhost",
            port=u.port or (443 if u.scheme == "https" else 8000),
            ssl=u.scheme == "https",
            settings=settings,
        )
    return chromadb.PersistentClient(path=str(path / "chroma"), settings=settings)


class _StoreVectors(_StoreCatalog):
    """Vector access of :class:`~grounded_rag.retrieval.store.Store` (client opened lazily)."""

    _client: Any
    _collection: Any
    _collection_name: str

    def _vector_client(self) -> Any:
        """The Chroma client, created on first use."""
        if self._client is None:
            self._client = _chroma_client(self.directory, self.chroma_url)
        return self._client

    def open_collection(self, name: str) -> Any:
        """A Chroma collection of this store by name (created when missing, cosine space)."""
        self._vector_client()
        return self._client.get_or_create_collection(
            name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )

    def drop_collection(self, name: str) -> None:
        """Delete a Chroma collection (missing ones are ignored)."""
        self._vector_client()
        with contextlib.suppress(Exception):
            self._client.delete_collection(name)

    @property
    def collection(self) -> Any:
        """The serving Chroma collection (created on first use, cosine space)."""
        name = self.meta("collection") or "grounded-rag"
        if self._collection is None or self._collection_name != name:
            self._collection = self.open_collection(name)
            self._collection_name = name
        return self._collection

    def add_vectors(
        self, keys: list[str], vectors: Any, doc_ids: list[str], *, collection: Any = None
    ) -> None:
        """Write vectors (invisible until the generation that lists them is committed)."""
        import numpy as np

        target = collection if collection is not None else self.collection
        batch = 1000
        for i in range(0, len(keys), batch):
            target.upsert(
                ids=keys[i : i + batch],
                embeddings=np.asarray(vectors[i : i + batch], dtype=np.float32),
                metadatas=[{"doc_id": d} for d in doc_ids[i : i + batch]],
            )

    def delete_vectors(self, keys: Sequence[str]) -> None:
        """Delete vectors by key (missing keys are ignored)."""
        for i in range(0, len(keys), 1000):
            self.collection.delete(ids=list(keys[i : i + 1000]))

    def existing_vector_keys(self, keys: Sequence[str], collection: Any = None) -> set[str]:
        """The subset of ``keys`` that already has a vector (written by an interrupted run)."""
        target = collection if collection is not None else self.collection
        found: set[str] = set()
        for i in range(0, len(keys), 1000):
            found.update(target.get(ids=list(keys[i : i + 1000]), include=[])["ids"])
        return found

    def all_vector_keys(self, collection: Any = None) -> list[str]:
        """Every key in a Chroma collection (default: the serving one)."""
        target = collection if collection is not None else self.collection
        out: list[str] = []
        offset = 0
        while True:
            got = target.get(include=[], limit=5000, offset=offset)
            out.extend(got["ids"])
            if len(got["ids"]) < 5000:
                return out
            offset += 5000
