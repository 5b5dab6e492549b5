"""The persisted store: SQLite catalogue + Chroma vectors + a bm25s index, side by side.

Layout of the store directory (default ``./.grounded-rag/`` or ``$GROUNDED_RAG_STORE``)::

    catalog.sqlite    documents, chunks (text, offsets, BM25 tokens), settings
    chroma/           Chroma PersistentClient (unless a Chroma server URL is given)
    bm25-<gen>/       the bm25s index of generation <gen> plus its key list

Visibility rule: a chunk is visible only when its key is in the committed BM25 key list.
Chroma keys are ``<chunk id>@<document hash prefix>``, so a changed document's new
vectors never overwrite the old ones; everything is written first, and one SQLite
transaction then switches to the new generation. A crash at any point leaves either the
old or the new state visible, never a mix; leftovers are garbage-collected by the next
ingest that finishes (vectors an interrupted run already wrote are reused when it resumes).

The store records which embedder wrote its vectors (name, weight sha256, dimension).
Re-embedding writes a new Chroma collection next to the serving one and switches the
collection and the recorded embedder in the same kind of single transaction, so readers
never see a half-re-embedded store.

:class:`Store` is assembled from four parts, one module each: the SQLite catalogue
(``_store_catalog``: schema, settings, recorded embedder), the Chroma vectors
(``_store_vectors``), the readers (``_store_read``: one committed :class:`Generation` per
query) and the writers (``_store_write``: the ingest lock and the single-transaction
commits). This module opens a store directory and holds the crash-test fail points.

A ``postgresql://`` URL instead of a directory opens the networked store
(:class:`~grounded_rag.retrieval._pg_store.PostgresStore`: catalogue, generations and BM25
in Postgres, vectors on a Chroma server) with the same interface and guarantees;
:func:`open_store` picks one by what it is given.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

# Names defined in the part modules, re-exported so ``store.X`` keeps working everywhere.
from grounded_rag.retrieval._bm25 import BM25Index as BM25Index
from grounded_rag.retrieval._errors import EmptyStoreError as EmptyStoreError
from grounded_rag.retrieval._errors import StoreMismatchError as StoreMismatchError
from grounded_rag.retrieval._errors import StoreNotFoundError
from grounded_rag.retrieval._identity import EmbedderIdentity as EmbedderIdentity
from grounded_rag.retrieval._store_catalog import _SCHEMA, CATALOG, FORMAT_VERSION
from grounded_rag.retrieval._store_catalog import _TOKEN_SEP as _TOKEN_SEP
from grounded_rag.retrieval._store_catalog import CHROMA_ENV as CHROMA_ENV
from grounded_rag.retrieval._store_catalog import DEFAULT_STORE_DIR as DEFAULT_STORE_DIR
from grounded_rag.retrieval._store_catalog import STORE_ENV as STORE_ENV
from grounded_rag.retrieval._store_catalog import _identity_from as _identity_from
from grounded_rag.retrieval._store_catalog import resolve_store_dir as resolve_store_dir
from grounded_rag.retrieval._store_read import _LOAD_ATTEMPTS as _LOAD_ATTEMPTS
from grounded_rag.retrieval._store_read import Generation, _StoreReads
from grounded_rag.retrieval._store_vectors import _chroma_client as _chroma_client
from grounded_rag.retrieval._store_write import _StoreWrites
from grounded_rag.retrieval.chunking import Chunk as Chunk

if TYPE_CHECKING:
    from grounded_rag.retrieval._pg_store import PostgresStore


class Store(_StoreReads, _StoreWrites):
    """Read and write access to one store directory."""

    def __init__(self, directory: Path, *, chroma_url: str | None = None, create: bool = False):
        self.directory = directory
        self.chroma_url = chroma_url or os.environ.get(CHROMA_ENV) or None
        catalog = directory / CATALOG
        if not catalog.exists():
            if not create:
                raise StoreNotFoundError(
                    f"no grounded-rag store at {directory.resolve()}; build one with "
                    f"`grounded-rag ingest PATH... --store {directory}` (or set {STORE_ENV})"
                )
            directory.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(catalog), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.RLock()
        if self.meta("format") is None:
            self.set_meta("format", FORMAT_VERSION)
            self.set_meta("collection", f"grounded-rag-{uuid.uuid4().hex[:12]}")
            self.set_meta("generation", "0")
            self.set_meta("vectors_at", "server" if self.chroma_url else "embedded")
        self._check_vectors_at()
        self._client: Any = None
        self._collection: Any = None
        self._collection_name = ""
        self._current: Generation | None = None
        self._pinned = threading.local()
        self._readers = threading.local()
        self._reader_conns: list[sqlite3.Connection] = []

    def close(self) -> None:
        """Close the catalogue connections."""
        with self._lock:
            for conn in self._reader_conns:
                conn.close()
            self._reader_conns.clear()
        self._db.close()


_FAIL_POINTS: set[str] = set()


def _fail_point(name: str) -> None:
    """Test hook: raise at a named point to prove crash consistency."""
    if name in _FAIL_POINTS:
        raise RuntimeError(f"injected failure at {name}")


AnyStore: TypeAlias = "Store | PostgresStore"
"""The embedded store or the networked one: ingest, re-embed and search take either."""


def is_store_url(spec: object) -> bool:
    """True when ``spec`` names a networked (Postgres) store rather than a directory."""
    return str(spec).startswith(("postgresql://", "postgres://"))


def resolve_store(spec: str | os.PathLike[str] | None) -> str | Path:
    """The store to open: a ``postgresql://`` URL as given, else :func:`resolve_store_dir`.

    ``$GROUNDED_RAG_STORE`` may hold either.
    """
    chosen = spec or os.environ.get(STORE_ENV)
    if chosen is not None and is_store_url(chosen):
        return str(chosen)
    return resolve_store_dir(chosen)


def store_label(where: str | Path) -> str:
    """How reports name a resolved store: its directory, or its URL with the password hidden."""
    if isinstance(where, str):
        from grounded_rag.retrieval._pg_catalog import StoreURL

        return StoreURL.parse(where).shown
    return str(where)


def open_store(
    spec: str | os.PathLike[str] | None, *, chroma_url: str | None = None, create: bool = False
) -> AnyStore:
    """The store ``spec`` names: a directory (embedded) or ``postgresql://...?schema=NAME``."""
    where = resolve_store(spec)
    if isinstance(where, str):
        from grounded_rag.retrieval._pg_store import PostgresStore

        return PostgresStore(where, chroma_url=chroma_url, create=create)
    return Store(where, chroma_url=chroma_url, create=create)


def store_info(store: AnyStore) -> dict[str, Any]:
    """A small JSON-able summary of a store."""
    embedded = isinstance(store, Store)
    return {
        "store": str(store.directory.resolve()) if isinstance(store, Store) else store.location,
        "documents": store.document_count(),
        "chunks": store.chunk_count(),
        "embedding_model": store.meta("embedding_model"),
        "embedding_sha256": store.meta("embedding_sha256") or "",
        "dimension": int(store.meta("dimension") or 0) or None,
        "generation": int(store.meta("generation") or 0),
        "collection": store.meta("collection"),
        "chroma": store.chroma_url or ("embedded" if embedded else None),
        "bm25": json.dumps(store.meta("bm25_dir")) if embedded else "postgres",
    }
