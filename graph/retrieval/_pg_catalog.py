"""The networked store's catalogue in Postgres: its URL, tables, connections and settings.

A store URL is a libpq URL plus one parameter of ours, the schema that holds the store's
tables (several stores, or test runs, share one database without colliding)::

    postgresql://USER@HOST:5432/DB?schema=handbook      (default schema: grounded_rag)

Tables (all in that schema): ``meta`` (settings, the generation counter, which lexical
index serves), ``documents``, ``chunks`` (text, offsets, BM25 tokens) and ``lexical`` (the
BM25 index of a generation, in parts: ``_pg_lexical``). One transaction writes them per
commit, so readers see whole generations (``_pg_store``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from grounded_rag.retrieval._errors import (
    EmptyStoreError,
    RetrievalError,
    StoreMismatchError,
    StoreNotFoundError,
    StoreUnavailableError,
)

PG_FORMAT = "pg-1"
"""Layout version of the Postgres tables; a store of another version is refused."""
DEFAULT_SCHEMA = "grounded_rag"
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
POOL_SIZE = 8
"""Most connections one process holds to the store's database (queries run in threads).
``$GROUNDED_RAG_PG_TIMEOUT`` (default 10 s, as for the serving checkpointer) bounds the wait
for one; then the query fails with :class:`StoreUnavailableError` (a 503 when serving)."""

_DDL = """
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE IF NOT EXISTS {s}.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS {s}.documents (
    doc_id text PRIMARY KEY, hash text NOT NULL, version text NOT NULL, title text NOT NULL,
    url text NOT NULL, source text NOT NULL, n_chunks integer NOT NULL
);
CREATE TABLE IF NOT EXISTS {s}.chunks (
    key text COLLATE "C" PRIMARY KEY, chunk_id text NOT NULL, doc_id text COLLATE "C" NOT NULL,
    ord integer NOT NULL, title text NOT NULL, url text NOT NULL, section text NOT NULL,
    text text NOT NULL, start integer NOT NULL, "end" integer NOT NULL, tokens text NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON {s}.chunks (doc_id, ord);
CREATE TABLE IF NOT EXISTS {s}.lexical (
    id text NOT NULL, part integer NOT NULL, data bytea NOT NULL, PRIMARY KEY (id, part)
);
ALTER TABLE {s}.lexical ALTER COLUMN data SET STORAGE EXTERNAL;
"""


@dataclass(frozen=True)
class StoreURL:
    """A parsed store URL: what libpq connects to, the schema, and a form safe to print."""

    conninfo: str
    schema: str
    shown: str

    @classmethod
    def parse(cls, url: str) -> StoreURL:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
        schema = next((v for k, v in query if k == "schema"), DEFAULT_SCHEMA)
        if not _SCHEMA_NAME.match(schema):
            raise StoreMismatchError(
                f"schema {schema!r} in the store URL is not a plain lower-case name "
                "(letters, digits, _; at most 63)"
            )
        rest = urlencode([(k, v) for k, v in query if k != "schema"])
        conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, ""))
        netloc = parts.netloc
        if parts.password is not None:  # never print a password
            netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
        shown_query = urlencode([*[(k, v) for k, v in query if k != "schema"],
                                 ("schema", schema)])
        shown = urlunsplit((parts.scheme, netloc, parts.path, shown_query, ""))
        return cls(conninfo, schema, shown)

    @property
    def lock_key(self) -> int:
        """The advisory-lock number of this store (one ingest at a time, on any machine)."""
        digest = hashlib.sha256(f"grounded-rag:{self.schema}".encode()).digest()
        return int.from_bytes(digest[:8], "big", signed=True)


def _require_psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise RetrievalError(
            "a postgresql:// store needs psycopg and psycopg-pool: "
            "pip install 'grounded-rag[serve]'"
        ) from exc
    return psycopg


class _PgCatalog:
    """Connections and catalogue access of the Postgres store (``_pg_store.PostgresStore``)."""

    url: StoreURL
    _pool: Any
    _lock: threading.RLock

    @property
    def location(self) -> str:
        """The store URL as given to ``--store`` (password hidden)."""
        return self.url.shown

    def _unavailable(self, exc: BaseException) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"cannot reach the Postgres store at {self.url.shown} (--store, "
            f"$GROUNDED_RAG_STORE): {type(exc).__name__}: {str(exc).strip()}"
        )

    def _connect(self) -> Any:
        """A connection of its own (not from the pool), autocommit."""
        psycopg = _require_psycopg()
        try:
            return psycopg.connect(self.url.conninfo, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise self._unavailable(exc) from exc

    def _open_tables(self, create: bool) -> None:
        """Check (or create) the schema's tables and refuse another layout version."""
        with self._connect() as conn:
            found = conn.execute("SELECT to_regclass(%s)", (f"{self.url.schema}.meta",))
            if found.fetchone()[0] is None:
                if not create:
                    raise StoreNotFoundError(
                        f"no grounded-rag store at {self.url.shown}; build one with "
                        f"`grounded-rag ingest PATH... --store {self.url.shown} --chroma-url URL`"
                    )
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.url.lock_key,))
                    conn.execute(_DDL.format(s=self.url.schema).encode())
            row = conn.execute(
                f"SELECT value FROM {self.url.schema}.meta WHERE key = 'format'"
            ).fetchone()
        if row is not None and row[0] != PG_FORMAT:
            raise StoreMismatchError(
                f"the store at {self.url.shown} has table layout {row[0]!r}; this grounded-rag "
                f"reads {PG_FORMAT!r} and does not migrate it in place. Build the store again "
                f"in a new schema (documents are re-read): grounded-rag ingest PATH... --store "
                f"{_with_schema(self.url.shown, self.url.schema + '_v2')} --chroma-url URL"
            )

    def _open_pool(self) -> None:
        from psycopg_pool import ConnectionPool

        self._pool = ConnectionPool(
            self.url.conninfo, min_size=1, max_size=POOL_SIZE, open=True,
            timeout=float(os.environ.get("GROUNDED_RAG_PG_TIMEOUT", "10")),
            kwargs={"autocommit": True}, name=f"grounded-rag-store-{self.url.schema}",
        )

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        """A pooled connection; an unreachable database becomes :class:`StoreUnavailableError`."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise self._unavailable(exc) from exc

    def _rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = (), *,
              binary: bool = False) -> list[Any]:
        """Rows of one read-only statement (``binary``: results in binary format).

        Tried twice: a restarted database breaks each pooled connection once.
        """
        for attempt in (1, 2):
            try:
                with self._conn() as conn:
                    sql = sql.replace("{s}", self.url.schema)
                    return list(conn.execute(sql, params, binary=binary))
            except StoreUnavailableError:
                if attempt == 2:
                    raise
                with contextlib.suppress(Exception):
                    self._pool.check()  # replace every dead idle connection at once
        raise AssertionError("unreachable")

    # -- settings ---------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        """A stored setting, or None."""
        rows = self._rows("SELECT value FROM {s}.meta WHERE key = %s", (key,))
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Write a setting (committed at once)."""
        with self._conn() as conn:
            self._put_meta(conn, {key: value})

    def _put_meta(self, conn: Any, values: dict[str, str]) -> None:
        conn.execute(
            f"INSERT INTO {self.url.schema}.meta (key, value) "
            "SELECT * FROM unnest(%s::text[], %s::text[]) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (list(values), list(values.values())),
        )

    def _snapshot_meta(self) -> dict[str, str]:
        """All settings read in one statement (a consistent view of one generation)."""
        return {k: v for k, v in self._rows("SELECT key, value FROM {s}.meta")}

    # -- counts -----------------------------------------------------------------------
    def document_count(self) -> int:
        """Number of committed documents."""
        return int(self._rows("SELECT count(*) FROM {s}.documents")[0][0])

    def chunk_count(self) -> int:
        """Number of committed chunks."""
        return int(self._rows("SELECT count(*) FROM {s}.chunks")[0][0])

    def documents(self) -> dict[str, tuple[str, str, str]]:
        """``doc_id -> (hash, version, source)`` for committed documents."""
        rows = self._rows("SELECT doc_id, hash, version, source FROM {s}.documents")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def require_documents(self) -> None:
        """Raise :class:`EmptyStoreError` when nothing has been ingested."""
        if self.document_count() == 0:
            raise EmptyStoreError(
                f"the store at {self.url.shown} holds no documents yet; add some with "
                f"`grounded-rag ingest PATH... --store {self.url.shown} --chroma-url URL`"
            )


def _with_schema(shown: str, schema: str) -> str:
    parts = urlsplit(shown)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "schema"] + [("schema", schema)]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
