"""Fixtures of the store tests: ``backend`` runs a test on the embedded and the networked store."""

from tests.store_backends import backend, chroma_url, pg_store  # noqa: F401 - fixtures
