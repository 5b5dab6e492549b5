"""Fixtures of the integration tests: a Chroma server, a Postgres schema per test, the shared
PostgreSQL server and a database of its own per test."""

import uuid

import pytest

from tests.integration.test_serving_reviews import POSTGRES, _postgres_reachable
from tests.store_backends import chroma_url, pg_store  # noqa: F401 - fixtures


@pytest.fixture(scope="module")
def postgres() -> str:
    """The machine's PostgreSQL server (skips when it is unreachable)."""
    reason = _postgres_reachable()
    if reason:
        pytest.skip(reason)
    return POSTGRES


@pytest.fixture
def own_database(postgres: str):
    """A database of its own on the shared server, dropped afterwards: every server started
    on a database resumes the deferred verifications it finds pending there, so servers of
    other tests on the shared one would otherwise finish this test's verification."""
    import psycopg

    name = f"grag_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield postgres.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
