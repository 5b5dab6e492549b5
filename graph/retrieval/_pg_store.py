"""The networked store: catalogue, generations and BM25 in Postgres, vectors on a Chroma server.

``--store postgresql://USER@HOST:PORT/DB?schema=NAME --chroma-url http://HOST:PORT`` (or
``$GROUNDED_RAG_STORE`` and ``$GROUNDED_RAG_CHROMA_URL``) opens it; nothing is kept on the
machine's disk, so any number of machines can ingest into it and answer from it.

The guarantees are the embedded store's (``store.py``):

* **Whole generations.** A commit replaces the changed documents' chunks, writes the BM25
  index of the new generation (``_pg_lexical``) and bumps the generation counter in one
  Postgres transaction. A query pins the generation it started on: its BM25 index and the
  chunk keys its vector search may return, held in memory once per generation as the
  embedded store does. Every chunk it returns is fetched by a statement that also reads the
  generation counter; when that is no longer the pinned one the fetch returns nothing and
  the query runs again on the new generation (``hybrid.GENERATION_RETRIES``). So no answer
  mixes two generations, whichever machine committed them.
* **Crash consistency.** Vectors are written to Chroma first under keys that no committed
  chunk uses; an interrupted ingest leaves the committed generations as they were, and
  vectors it wrote are reused when it runs again, then garbage-collected.
* **One ingest at a time**, across machines: a session-level advisory lock of the store's
  schema (released when the ingesting process ends, however it ends).

The BM25 index of the previous generation is kept until the next commit, so a worker that
read the generation counter just before a commit still finds the index it names.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from grounded_rag.retrieval._bm25 import BM25Index
from grounded_rag.retrieval._errors import RetrievalError, StoreMismatchError, StoreUnavailableError
from grounded_rag.retrieval._identity import EmbedderIdentity
from grounded_rag.retrieval._pg_catalog import PG_FORMAT, StoreURL, _PgCatalog
from grounded_rag.retrieval._pg_lexical import pack, unpack
from grounded_rag.retrieval._store_catalog import _TOKEN_SEP, CHROMA_ENV
from grounded_rag.retrieval._store_read import _LOAD_ATTEMPTS, Generation, _StoreReads
from grounded_rag.retrieval._store_vectors import _chroma_client
from grounded_rag.retrieval.chunking import Chunk

_FETCH = """
SELECT m.value, c.key, c.chunk_id, c.doc_id, c.title, c.url, c.section, c.text, c.start,
       c."end", c.tokens
FROM (SELECT value FROM {s}.meta WHERE key = 'generation') m
LEFT JOIN {s}.chunks c ON c.key = ANY(%s::text[])
"""


def _fail_point(name: str) -> None:
    from grounded_rag.retrieval import store

    store._fail_point(name)


class PostgresStore(_PgCatalog, _StoreReads):
    """Read and write access to one store in a Postgres schema, vectors on a Chroma server."""

    def __init__(self, url: str, *, chroma_url: str | None = None, create: bool = False):
        self.url = StoreURL.parse(url)
        self._lock = threading.RLock()
        self._open_tables(create)
        self._open_pool()
        try:
            self._start(chroma_url)
        except BaseException:
            self._pool.close()
            raise

    def _start(self, chroma_url: str | None) -> None:
        recorded = self.meta("chroma_url")
        self.chroma_url = chroma_url or os.environ.get(CHROMA_ENV) or recorded or None
        if not self.chroma_url:
            raise StoreMismatchError(
                f"the store at {self.url.shown} keeps its vectors on a Chroma server; pass "
                f"--chroma-url URL (or set {CHROMA_ENV})"
            )
        if self.meta("format") is None:
            with self._conn() as conn:
                conn.execute(
                    f"INSERT INTO {self.url.schema}.meta (key, value) SELECT * FROM "
                    "unnest(%s::text[], %s::text[]) ON CONFLICT (key) DO NOTHING",
                    (["format", "collection", "generation", "vectors_at", "chroma_url",
                      "lexical"],
                     [PG_FORMAT, f"grounded-rag-{uuid.uuid4().hex[:12]}", "0", "server",
                      self.chroma_url, ""]),
                )
        self._client: Any = None
        self._collection: Any = None
        self._collection_name = ""
        self._current: Generation | None = None
        self._loaded: tuple[str, BM25Index] | None = None
        self._pinned = threading.local()
        self._vector_client()  # an unreachable Chroma server is named now, not mid-query

    def close(self) -> None:
        """Close the database connections."""
        self._pool.close()

    def _vector_client(self) -> Any:
        if self._client is None:
            try:
                self._client = _chroma_client(Path(), self.chroma_url)
            except Exception as exc:  # chromadb raises ValueError, httpx errors, ...
                raise self._vectors_unavailable(exc) from exc
        return self._client

    def _vectors_unavailable(self, exc: BaseException) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"cannot reach the Chroma server at {self.chroma_url} (--chroma-url, "
            f"${CHROMA_ENV}) holding the vectors of {self.url.shown}: "
            f"{type(exc).__name__}: {str(exc).strip()}"
        )

    # -- readers ------------------------------------------------------------------------
    def generation(self) -> Generation:
        """The committed generation, its BM25 index loaded once per generation (thread-safe).

        A writer deletes the BM25 index of the generation before the previous one when it
        commits; a reader that read the counter before two commits finds its index gone,
        reads the counter again and loads the newer one.
        """
        error: Exception | None = None
        for _ in range(_LOAD_ATTEMPTS):
            meta = self._snapshot_meta()
            current = self._current
            if current is not None and current.number == meta.get("generation"):
                return current
            with self._lock:
                current = self._current
                if current is not None and current.number == meta.get("generation"):
                    return current
                lexical = meta.get("lexical") or ""
                try:
                    index = self._lexical(lexical) if lexical else None
                except LookupError as exc:
                    error = exc  # replaced by a newer generation meanwhile: look again
                    continue
                current = Generation.of(meta, index)
                self._current = current
                return current
        raise RetrievalError(f"could not load the BM25 index of the store at {self.url.shown}: "
                             f"{error}") from error

    def _lexical(self, lexical: str) -> BM25Index:
        """The BM25 index ``lexical`` (kept when a new generation serves the same one)."""
        if self._loaded is not None and self._loaded[0] == lexical:
            return self._loaded[1]
        parts = [r[0] for r in self._rows(  # binary: bytea in text form is twice as big
            "SELECT data FROM {s}.lexical WHERE id = %s ORDER BY part", (lexical,), binary=True)]
        if not parts:
            raise LookupError(f"BM25 index {lexical} was replaced")
        index = unpack(parts)
        self._loaded = (lexical, index)
        return index

    def _serving_collection(self, name: str) -> Any:
        with self._lock:
            if self._collection is None or self._collection_name != name:
                try:
                    self._collection = self._vector_client().get_collection(name)
                except Exception as exc:
                    if type(exc).__name__ == "NotFoundError" or "does not exist" in str(exc):
                        raise StoreMismatchError(
                            f"the Chroma server at {self.chroma_url} has no collection {name} "
                            f"of the store at {self.url.shown}: is it the server the store "
                            "was built against (--chroma-url)?"
                        ) from exc
                    raise self._vectors_unavailable(exc) from exc
                self._collection_name = name
            return self._collection

    def vector_search(self, vector: Sequence[float], n: int) -> list[tuple[str, float]]:
        """Top ``n`` (key, cosine) pairs of the generation this thread's query loaded."""
        import numpy as np

        current = self.pinned_generation()
        if not current.visible:
            return []
        collection = self._serving_collection(current.collection)
        try:
            res = collection.query(
                query_embeddings=[np.asarray(vector, dtype=np.float32)],
                n_results=min(n + 5, len(current.visible) + 5),
                include=["distances"],
            )
        except Exception as exc:
            raise self._vectors_unavailable(exc) from exc
        pairs = zip(res["ids"][0], res["distances"][0], strict=True)
        return [(k, 1.0 - float(d)) for k, d in pairs if k in current.visible][:n]

    def fetch(self, keys: Sequence[str]) -> dict[str, tuple[Chunk, list[str]]]:
        """Chunks and tokens for the given keys, only while the pinned generation is current."""
        if not keys:
            return {}
        rows = self._rows(_FETCH, (list(keys),))
        if not rows or rows[0][0] != self.pinned_generation().number:
            return {}  # a newer generation was committed: the query runs again on it
        return {
            r[1]: (Chunk(*r[2:10]), r[10].split(_TOKEN_SEP) if r[10] else [])
            for r in rows
            if r[1] is not None
        }

    def chunk_texts(self) -> list[tuple[str, str, str]]:
        """``(key, doc_id, embedded text)`` of every committed chunk, in document order."""
        from grounded_rag.retrieval.chunking import index_text

        rows = self._rows(
            'SELECT key, chunk_id, doc_id, title, url, section, text, start, "end" '
            "FROM {s}.chunks ORDER BY doc_id, ord"
        )
        return [(r[0], r[2], index_text(Chunk(*r[1:]))) for r in rows]

    # -- writers ------------------------------------------------------------------------
    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        """One ingest at a time on this store, from any machine (a Postgres advisory lock)."""
        with self._connect() as conn:
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", (self.url.lock_key,))
            if not got.fetchone()[0]:
                raise RetrievalError(
                    f"another ingest is running on {self.url.shown}; wait for it to finish"
                )
            try:
                yield
            finally:
                with contextlib.suppress(Exception):
                    conn.execute("SELECT pg_advisory_unlock(%s)", (self.url.lock_key,))

    def commit(
        self,
        new_docs: list[tuple[str, str, str, str, str, str, list[tuple[str, Chunk, list[str]]]]],
        removed: Sequence[str],
    ) -> list[str]:
        """Atomically replace documents and switch to the next generation and its BM25 index.

        Same contract as :meth:`Store.commit`: ``new_docs`` rows are ``(doc_id, hash,
        version, title, url, source, chunks)``, their vectors already written; returns the
        vector keys that became garbage.
        """
        s = self.url.schema
        replaced = [d[0] for d in new_docs] + list(removed)
        with self._conn() as conn, conn.transaction():
            state = dict(conn.execute(
                f"SELECT key, value FROM {s}.meta WHERE key IN ('generation', 'lexical') "
                "FOR UPDATE").fetchall())
            garbage = [r[0] for r in conn.execute(
                f"DELETE FROM {s}.chunks WHERE doc_id = ANY(%s) RETURNING key", (replaced,))]
            conn.execute(f"DELETE FROM {s}.documents WHERE doc_id = ANY(%s)", (replaced,))
            with conn.cursor().copy(f"COPY {s}.documents FROM STDIN") as copy:
                for doc_id, hash_, version, title, url, source, chunks in new_docs:
                    copy.write_row((doc_id, hash_, version, title, url, source, len(chunks)))
            with conn.cursor().copy(
                f'COPY {s}.chunks (key, chunk_id, doc_id, ord, title, url, section, text, '
                f'start, "end", tokens) FROM STDIN'
            ) as copy:
                for *_, chunks in new_docs:
                    for n, (key, c, toks) in enumerate(chunks):
                        copy.write_row((key, c.id, c.doc_id, n, c.title, c.url, c.section,
                                        c.text, c.start, c.end, _TOKEN_SEP.join(toks)))
            keys: list[str] = []
            tokens: list[list[str]] = []
            for key, toks in conn.execute(
                    f"SELECT key, tokens FROM {s}.chunks ORDER BY doc_id, ord"):
                keys.append(key)
                tokens.append(toks.split(_TOKEN_SEP) if toks else [])
            gen = str(int(state.get("generation") or 0) + 1)
            lexical = f"{gen}-{uuid.uuid4().hex[:6]}" if keys else ""
            if keys:
                with conn.cursor().copy(
                        f"COPY {s}.lexical (id, part, data) FROM STDIN (FORMAT BINARY)") as copy:
                    copy.set_types(["text", "int4", "bytea"])
                    for part, data in enumerate(pack(BM25Index.build(keys, tokens))):
                        copy.write_row((lexical, part, data))
            # the previous generation's index stays for readers that just read its name
            conn.execute(f"DELETE FROM {s}.lexical WHERE id <> ALL(%s)",
                         ([lexical, state.get("lexical") or ""],))
            self._put_meta(conn, {"generation": gen, "lexical": lexical})
            _fail_point("before_commit")
        new_keys = {key for d in new_docs for key, _, _ in d[6]}
        return [k for k in garbage if k not in new_keys]

    def switch_collection(self, name: str, identity: EmbedderIdentity) -> None:
        """Atomically serve the vectors of collection ``name``, written by ``identity``."""
        s = self.url.schema
        with self._conn() as conn, conn.transaction():
            state = dict(conn.execute(
                f"SELECT key, value FROM {s}.meta WHERE key IN "
                "('generation', 'collection', 'stale_collections') FOR UPDATE").fetchall())
            old = state.get("collection") or ""
            stale = json.loads(state.get("stale_collections") or "[]")
            values = {"collection": name, "embedding_model": identity.name,
                      "embedding_sha256": identity.weights_sha256,
                      "generation": str(int(state.get("generation") or 0) + 1)}
            if identity.dimension:
                values["dimension"] = str(identity.dimension)
            if old and old != name:
                values["stale_collections"] = json.dumps([*stale, old])
            self._put_meta(conn, values)
            conn.execute(f"DELETE FROM {s}.meta WHERE key IN "
                         "('reembed_collection', 'reembed_model')")
            _fail_point("before_switch")

    def collect_garbage(self) -> int:
        """Delete vectors and collections nothing committed refers to.

        (Commits already keep only the current and the previous BM25 index.)
        """
        for name in json.loads(self.meta("stale_collections") or "[]"):
            self.drop_collection(name)
        self.set_meta("stale_collections", "[]")
        committed = {r[0] for r in self._rows("SELECT key FROM {s}.chunks")}
        stale = [k for k in self.all_vector_keys() if k not in committed]
        self.delete_vectors(stale)
        return len(stale)


def drop_store(url: str, *, chroma_url: str | None = None) -> None:
    """Delete a Postgres store: its schema and its Chroma collections (tests, benchmarks)."""
    with contextlib.suppress(RetrievalError):
        store = PostgresStore(url, chroma_url=chroma_url)
        try:
            names = [store.meta("collection") or "", store.meta("reembed_collection") or "",
                     *json.loads(store.meta("stale_collections") or "[]")]
            for name in filter(None, names):
                store.drop_collection(name)
        finally:
            store.close()
    parsed = StoreURL.parse(url)
    import psycopg

    with psycopg.connect(parsed.conninfo, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {parsed.schema} CASCADE")
