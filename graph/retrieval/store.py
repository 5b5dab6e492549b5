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
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grounded_rag.retrieval._bm25 import BM25Index
from grounded_rag.retrieval._errors import EmptyStoreError, StoreMismatchError, StoreNotFoundError
from grounded_rag.retrieval._identity import EmbedderIdentity
from grounded_rag.retrieval.chunking import Chunk

DEFAULT_STORE_DIR = ".grounded-rag"
STORE_ENV = "GROUNDED_RAG_STORE"
CHROMA_ENV = "GROUNDED_RAG_CHROMA_URL"
"""A Chroma server URL used when none is passed (how every server worker finds it)."""
CATALOG = "catalog.sqlite"
FORMAT_VERSION = "1"
_TOKEN_SEP = "\x1f"
_LOAD_ATTEMPTS = 5

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


class Store:
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
            f"grounded-rag ingest --reembed --embedder {target} --store {self.directory}"
            if target
            else f"reembed_store({str(self.directory)!r}, embeddings=<your embeddings>)"
        )
        current = builtin_for(stored.name)
        keep = (
            f"--embedder {current} (or GROUNDED_RAG_EMBEDDER={current})"
            if current
            else "the embeddings it was built with"
        )
        return (
            f"the store at {self.directory} was built with embeddings {stored.describe()}, "
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

    # -- vectors --------------------------------------------------------------------------
    def open_collection(self, name: str) -> Any:
        """A Chroma collection of this store by name (created when missing, cosine space)."""
        if self._client is None:
            self._client = _chroma_client(self.directory, self.chroma_url)
        return self._client.get_or_create_collection(
            name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )

    def drop_collection(self, name: str) -> None:
        """Delete a Chroma collection (missing ones are ignored)."""
        if self._client is None:
            self._client = _chroma_client(self.directory, self.chroma_url)
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

    # -- reading --------------------------------------------------------------------------
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
                current = Generation(
                    number=meta.get("generation"),
                    bm25=index,
                    visible=frozenset(index.keys) if index else frozenset(),
                    collection=meta.get("collection") or "grounded-rag",
                    embedder=_identity_from(meta),
                )
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

    def require_documents(self) -> None:
        """Raise :class:`EmptyStoreError` when nothing has been ingested."""
        if self.document_count() == 0 or not self.meta("bm25_dir"):
            raise EmptyStoreError(
                f"the store at {self.directory.resolve()} holds no documents yet; add some "
                f"with `grounded-rag ingest PATH... --store {self.directory}`"
            )

    # -- writing --------------------------------------------------------------------------
    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        """Exclusive lock on the store directory for one ingest at a time."""
        import fcntl

        with open(self.directory / ".lock", "w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                from grounded_rag.retrieval._errors import RetrievalError

                raise RetrievalError(
                    f"another ingest is running on {self.directory}; wait for it to finish"
                ) from exc
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def commit(
        self,
        new_docs: list[tuple[str, str, str, str, str, str, list[tuple[str, Chunk, list[str]]]]],
        removed: Sequence[str],
    ) -> list[str]:
        """Atomically replace documents and switch to a freshly built BM25 generation.

        ``new_docs`` rows are ``(doc_id, hash, version, title, url, source, chunks)`` with
        chunks as ``(key, chunk, tokens)``; their vectors must already be written. Returns
        the vector keys that became garbage (old versions, removed documents).
        """
        db = self._db
        gen = str(int(self.meta("generation") or "0") + 1)
        old_dir = self.meta("bm25_dir") or ""
        new_dir = f"bm25-{gen}-{uuid.uuid4().hex[:6]}"
        replaced = [d[0] for d in new_docs] + list(removed)
        db.execute("BEGIN IMMEDIATE")
        try:
            garbage: list[str] = []
            for i in range(0, len(replaced), 500):
                part = replaced[i : i + 500]
                marks = ",".join("?" * len(part))
                garbage += [
                    r[0]
                    for r in db.execute(f"SELECT key FROM chunks WHERE doc_id IN ({marks})", part)
                ]
                db.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", part)
                db.execute(f"DELETE FROM documents WHERE doc_id IN ({marks})", part)
            for doc_id, hash_, version, title, url, source, chunks in new_docs:
                db.execute(
                    "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (doc_id, hash_, version, title, url, source, len(chunks)),
                )
                db.executemany(
                    "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            key,
                            c.id,
                            c.doc_id,
                            n,
                            c.title,
                            c.url,
                            c.section,
                            c.text,
                            c.start,
                            c.end,
                            _TOKEN_SEP.join(toks),
                        )
                        for n, (key, c, toks) in enumerate(chunks)
                    ],
                )
            new_keys = {key for d in new_docs for key, _, _ in d[6]}
            garbage = [k for k in garbage if k not in new_keys]
            keys: list[str] = []
            tokens: list[list[str]] = []
            for key, toks in db.execute("SELECT key, tokens FROM chunks ORDER BY doc_id, ord"):
                keys.append(key)
                tokens.append(toks.split(_TOKEN_SEP) if toks else [])
            if keys:
                BM25Index.build(keys, tokens).save(self.directory / new_dir)
            self.set_meta("bm25_dir", new_dir if keys else "")
            self.set_meta("generation", gen)
            _fail_point("before_commit")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            shutil.rmtree(self.directory / new_dir, ignore_errors=True)
            raise
        if old_dir:
            shutil.rmtree(self.directory / old_dir, ignore_errors=True)
        return garbage

    def switch_collection(self, name: str, identity: EmbedderIdentity) -> None:
        """Atomically serve the vectors of collection ``name``, written by ``identity``.

        The previous collection is kept until the next ingest finishes, so a reader that
        loaded the old generation a moment ago can still finish its query.
        """
        db = self._db
        old = self.meta("collection") or ""
        stale = json.loads(self.meta("stale_collections") or "[]")
        db.execute("BEGIN IMMEDIATE")
        try:
            self.set_meta("collection", name)
            self._record_identity(identity)
            if old and old != name:
                self.set_meta("stale_collections", json.dumps([*stale, old]))
            db.execute("DELETE FROM meta WHERE key IN ('reembed_collection', 'reembed_model')")
            self.set_meta("generation", str(int(self.meta("generation") or "0") + 1))
            _fail_point("before_switch")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def collect_garbage(self) -> int:
        """Delete vectors, collections and BM25 directories nothing committed refers to."""
        for name in json.loads(self.meta("stale_collections") or "[]"):
            self.drop_collection(name)
        self.set_meta("stale_collections", "[]")
        committed = {r[0] for r in self._db.execute("SELECT key FROM chunks")}
        stale = [k for k in self.all_vector_keys() if k not in committed]
        self.delete_vectors(stale)
        current = self.meta("bm25_dir") or ""
        for p in self.directory.glob("bm25-*"):
            if p.name != current:
                shutil.rmtree(p, ignore_errors=True)
        return len(stale)

    def close(self) -> None:
        """Close the catalogue connections."""
        with self._lock:
            for conn in self._reader_conns:
                conn.close()
            self._reader_conns.clear()
        self._db.close()


def _identity_from(meta: dict[str, str]) -> EmbedderIdentity | None:
    name = meta.get("embedding_model")
    if not name:
        return None
    dim = meta.get("dimension")
    return EmbedderIdentity(name, meta.get("embedding_sha256") or "", int(dim) if dim else None)


_FAIL_POINTS: set[str] = set()


def _fail_point(name: str) -> None:
    """Test hook: raise at a named point to prove crash consistency."""
    if name in _FAIL_POINTS:
        raise RuntimeError(f"injected failure at {name}")


def store_info(store: Store) -> dict[str, Any]:
    """A small JSON-able summary of a store."""
    return {
        "store": str(store.directory.resolve()),
        "documents": store.document_count(),
        "chunks": store.chunk_count(),
        "embedding_model": store.meta("embedding_model"),
        "embedding_sha256": store.meta("embedding_sha256") or "",
        "dimension": int(store.meta("dimension") or 0) or None,
        "generation": int(store.meta("generation") or 0),
        "collection": store.meta("collection"),
        "chroma": store.chroma_url or "embedded",
        "bm25": json.dumps(store.meta("bm25_dir")),
    }
