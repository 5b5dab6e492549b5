"""Fixtures of the unit tests: ``backend`` runs a store test on the embedded and the networked
store; ``corpus`` is two small documents to ingest."""

from pathlib import Path

import pytest

from tests.store_backends import backend, chroma_url, pg_store  # noqa: F401 - fixtures


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Two small Markdown documents (a battery spec, a taxi rule) in ``tmp_path/docs``."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "battery.md").write_text("# X100\n\n## Battery\n\nThe X100 battery lasts up to 10 "
                                     "hours on a single charge.\n", encoding="utf-8")
    (docs / "taxi.md").write_text("# Travel\n\n## Taxis\n\nTaxi fares are reimbursed only "
                                  "after 22:00.\n", encoding="utf-8")
    return docs
