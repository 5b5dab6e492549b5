"""The store's SQLite catalogue: schema, settings, the recorded embedder and document counts."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from grounded_rag.retrieval._errors import EmptyStoreError, StoreMismatchError
from grounded_rag.retrieval._identity import EmbedderIdentity

DEFAULT_STORE_DIR = ".grounded-rag"
STORE_ENV = "GROUNDED_RAG_STORE"
CHROMA_ENV = "GROUNDED_RAG_CHROMA_URL"
"""A Chroma server URL used when none is passed (how every server worker finds it)."""
CATALOG = "catalog.sqlite"
FORMAT_VERSION = "1"
_TOKEN_SEP = "\x1f"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, hash TEXT NOT NULL, version TEXT NOT NULL, title TEXT NOT NULL,
    url TEXT NOT NULL, source TEXT NOT NULL, n_chunks INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    key TEXT PRIMARY KEY, chunk_id TEXT NOT NULL, doc_id TEXT NOT NULL, ord INTEGER NOT NULL,
    title TEXT NOT NULL, url TEXT NOT NULL, section TEXT NOT NULL, text TEXT NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, tokens TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
"""


def resolve_store_dir(store_dir: str | os.PathLike[str] | None) -> Path:
    """The store directory: the argument, else ``$GROUNDED_RAG_STORE``, else ``./.grounded-rag``."""
    return Path(store_dir or os.environ.get(STORE_ENV) or DEFAULT_STORE_DIR)


def _identity_from(meta: dict[str, str]) -> EmbedderIdentity | None:
    name = meta.get("embedding_model")
    if not name:
        return None
    dim = meta.get("dimension")
    return EmbedderIdentity(name, meta.get("embedding_sha256") or "", int(dim) if dim else None)


class _StoreCatalog:
    """Catalogue access of :class:`~grounded_rag.retrieval.store.Store` (opened by its init)."""

    directory: Path
    chroma_url: str | None
    _db: sqlite3.Connection
    _lock: threading.RLock
    _readers: threading.local
    _reader_conns: list[sqlite3.Connection]

    @property
    def location(self) -> str:
        """Where the store is, as given to ``--store`` (in messages)."""
        return str(self.directory)

    def _check_vectors_at(self) -> None:
        """Refuse to open a store's vectors in the other place than where they were written.

        A store built against a Chroma server and opened without ``--chroma-url`` would
        otherwise find an empty embedded collection and answer nothing (or the reverse).
        Stores written before this was recorded are not checked.
        """
        where = self.meta("vectors_at")
        if where == "server" and not self.chroma_url:
            self._db.close()
            raise StoreMismatchError(
                f"the store at {self.directory} keeps its vectors on a Chroma server; pass "
                f"--chroma-url URL (or set {CHROMA_ENV}) to open it"
            )
        if where == "embedded" and self.chroma_url:
            self._db.close()
            raise StoreMismatchError(
                f"the store at {self.directory} keeps its vectors in its own directory, not "
                f"on the Chroma server {self.chroma_url}; open it without --chroma-url (and "
                f"unset {CHROMA_ENV}), or build a new store against the server"
            )

    # -- settings ---------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        """A stored setting, or None."""
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Write a setting (inside the current transaction when one is open)."""
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def embedder(self) -> EmbedderIdentity | None:
        """The embedder recorded for the serving vectors (None before the first ingest)."""
        return _identity_from(self._snapshot_meta())

    def mismatch_error(self, stored: EmbedderIdentity, wanted: EmbedderIdentity) -> str:
        """The message for a store opened with another embedder than the one that built it."""
        from grounded_rag.retrieval.embeddings import builtin_for

        target = builtin_for(wanted.name)
        command = (
            f"grounded-rag ingest --reembed --embedder {target} --store {self.location}"
            if target
            else f"reembed_store({self.location!r}, embeddings=<your embeddings>)"
        )
        current = builtin_for(stored.name)
        keep = (
            f"--embedder {current} (or GROUNDED_RAG_EMBEDDER={current})"
            if current
            else "the embeddings it was built with"
        )
        return (
            f"the store at {self.location} was built with embeddings {stored.describe()}, "
            f"not {wanted.describe()}; vectors of two models are never mixed. Either use "
            f"{keep}, or re-embed the stored chunks (documents are not re-read; queries keep "
            f"working meanwhile) with: {command}"
        )

    def check_embeddings(self, identity: EmbedderIdentity) -> None:
        """Record the embedder on first use; refuse a different one later."""
        stored = self.embedder()
        if stored is None:
            self._record_identity(identity)
            return
        if not stored.same_model(identity):
            raise StoreMismatchError(self.mismatch_error(stored, identity))
        if (identity.weights_sha256 and not stored.weights_sha256) or (
            identity.dimension and not stored.dimension
        ):
            # Stores written before hashes were recorded: fill in what is now known.
            self._record_identity(
                EmbedderIdentity(
                    stored.name,
                    stored.weights_sha256 or identity.weights_sha256,
                    stored.dimension or identity.dimension,
                )
            )

    def _record_identity(self, identity: EmbedderIdentity) -> None:
        self.set_meta("embedding_model", identity.name)
        self.set_meta("embedding_sha256", identity.weights_sha256)
        if identity.dimension:
            self.set_meta("dimension", str(identity.dimension))

    def _snapshot_meta(self) -> dict[str, str]:
        """All settings read in one statement (a consistent view of one generation)."""
        return dict(self._db.execute("SELECT key, value FROM meta").fetchall())

    def _reader(self) -> sqlite3.Connection:
        """This thread's own read connection to the catalogue.

        Queries never share a connection between threads: SQLite keeps one read snapshot
        per connection while any of its statements is active, so threads taking turns on one
        connection would keep reading a generation that was replaced long ago.
        """
        conn: sqlite3.Connection | None = getattr(self._readers, "conn", None)
        if conn is None:
            conn = sqlite3.connect(str(self.directory / CATALOG), check_same_thread=False,
                                   isolation_level=None)
            conn.execute("PRAGMA query_only=ON")
            self._readers.conn = conn
            with self._lock:
                self._reader_conns.append(conn)
        return conn

    # -- counts -----------------------------------------------------------------------------
    def document_count(self) -> int:
        """Number of committed documents."""
        return int(self._db.execute("SELECT COUNT(*) FROM documents").fetchone()[0])

    def chunk_count(self) -> int:
        """Number of committed chunks."""
        return int(self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def documents(self) -> dict[str, tuple[str, str, str]]:
        """``doc_id -> (hash, version, source)`` for committed documents."""
        rows = self._db.execute("SELECT doc_id, hash, version, source FROM documents")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def require_documents(self) -> None:
        """Raise :class:`EmptyStoreError` when nothing has been ingested."""
        if self.document_count() == 0 or not self.meta("bm25_dir"):
            raise EmptyStoreError(
                f"the store at {self.directory.resolve()} holds no documents yet; add some "
                f"with `grounded-rag ingest PATH... --store {self.directory}`"
            )
