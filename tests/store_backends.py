"""The store's two backends for tests that hold for both: embedded (a directory) and networked
(a Postgres schema of its own per test + a Chroma server shared by the session).

Use the ``backend`` fixture (import it into the test module): its ``postgres`` variant is
marked ``integration`` and skips when Postgres or the ``chroma`` CLI is not there.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

POSTGRES = os.environ.get("GR_TEST_POSTGRES", "postgresql://127.0.0.1:5432/test")
BACKENDS = ["embedded", pytest.param("postgres", marks=pytest.mark.integration)]


def postgres_unreachable() -> str | None:
    """Why the test database cannot be used, or None."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed"
    try:
        with psycopg.connect(POSTGRES, connect_timeout=3) as conn:
            conn.execute("select 1")
    except Exception as exc:  # any failure means: no database to test against
        return f"PostgreSQL at {POSTGRES} is unreachable: {exc}"
    return None


def store_url(schema: str) -> str:
    """The test database as a store URL with its own schema."""
    return f"{POSTGRES}{'&' if '?' in POSTGRES else '?'}schema={schema}"


@dataclass
class Backend:
    """One store under test: where it is, and the calls the tests make on it."""

    name: str
    spec: str
    """What ``--store`` gets: a directory or a ``postgresql://`` URL."""
    chroma_url: str | None = None
    _opened: list[Any] = field(default_factory=list)

    @property
    def networked(self) -> bool:
        return self.name == "postgres"

    def ingest(self, paths: list[Any], **kwargs: Any) -> Any:
        from grounded_rag.retrieval import ingest_paths

        return ingest_paths(paths, self.spec, chroma_url=self.chroma_url, progress=False,
                            **kwargs)

    def reembed(self, **kwargs: Any) -> Any:
        from grounded_rag.retrieval import reembed_store

        return reembed_store(self.spec, chroma_url=self.chroma_url, progress=False, **kwargs)

    def retriever(self, **kwargs: Any) -> Any:
        from grounded_rag.retrieval import open_retriever

        retriever = open_retriever(self.spec, chroma_url=self.chroma_url, **kwargs)
        self._opened.append(retriever.backend)
        return retriever

    def store(self) -> Any:
        """The store opened afresh (closed when the test ends)."""
        from grounded_rag.retrieval.store import open_store

        store = open_store(self.spec, chroma_url=self.chroma_url)
        self._opened.append(store)
        return store

    def committed(self) -> tuple[str, set[tuple[str, str]]]:
        """(generation, {(chunk id, text)}) as committed now, read in one snapshot."""
        store = self.store()
        if self.networked:
            rows = store._rows("SELECT (SELECT value FROM {s}.meta WHERE key = 'generation'), "
                               "chunk_id, text FROM {s}.chunks")
            gen = rows[0][0] if rows else store.meta("generation")
            return gen, {(r[1], r[2]) for r in rows}
        with store._db:  # one read transaction: meta and chunks of the same generation
            store._db.execute("BEGIN")
            gen = store.meta("generation")
            rows = store._db.execute("SELECT chunk_id, text FROM chunks").fetchall()
        return gen, {(r[0], r[1]) for r in rows}

    def close(self) -> None:
        for store in self._opened:
            with contextlib.suppress(Exception):
                store.close()


@pytest.fixture(scope="session")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Chroma server (``chroma run``) for the session."""
    from tests.integration.servers import chroma_server

    try:
        server = chroma_server(tmp_path_factory.mktemp("chroma"))
        url = server.__enter__()
    except (FileNotFoundError, RuntimeError) as exc:
        pytest.skip(f"no Chroma server: {exc}")
    try:
        yield url
    finally:
        server.__exit__(None, None, None)


@pytest.fixture
def pg_store(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """(store URL in a fresh schema, Chroma URL); the schema is dropped afterwards."""
    reason = postgres_unreachable()
    if reason:
        pytest.skip(reason)
    chroma = request.getfixturevalue("chroma_url")
    url = store_url(f"grt_{uuid.uuid4().hex[:10]}")
    try:
        yield url, chroma
    finally:
        from grounded_rag.retrieval._pg_store import drop_store

        drop_store(url, chroma_url=chroma)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """The embedded store in a temporary directory, or the networked one."""
    if request.param == "embedded":
        chosen = Backend("embedded", str(tmp_path / "store"))
    else:
        url, chroma = request.getfixturevalue("pg_store")
        chosen = Backend("postgres", url, chroma)
    try:
        yield chosen
    finally:
        chosen.close()
