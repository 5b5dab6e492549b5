"""Fixtures of the networked-store tests: a Chroma server, a Postgres schema per test."""

from tests.store_backends import chroma_url, pg_store  # noqa: F401 - fixtures
