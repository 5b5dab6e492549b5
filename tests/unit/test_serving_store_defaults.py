"""What ``grounded-rag serve`` makes of the store it is given: the Chroma server named on the
command line reaches the graph with one worker too, and a ``postgresql://`` store keeps its
checkpoints in its own database, never in a folder named after its URL."""

from __future__ import annotations

import argparse
import uuid

import httpx
import pytest

from grounded_rag.nodes import _parts
from grounded_rag.retrieval import _open
from grounded_rag.retrieval.store import CHROMA_ENV, STORE_ENV, EmptyStoreError, Store
from grounded_rag.serving.checkpoints import default_checkpointer
from grounded_rag.serving.cli import register, serve_command, serve_options
from grounded_rag.serving.factory import build_app
from tests.store_backends import POSTGRES, postgres_unreachable, store_url

CHROMA = "http://127.0.0.1:9"  # recorded in the store, never contacted
TEST_GRAPH = "tests.serving_app:build_test_graph"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["serve", *argv])


@pytest.fixture
def clean_env(monkeypatch):
    """No store or Chroma server from the environment; what ``serve`` sets is undone after."""
    for name in (CHROMA_ENV, STORE_ENV, "ORT_DISABLE_TELEMETRY", "ANONYMIZED_TELEMETRY",
                 "PROMETHEUS_MULTIPROC_DIR"):
        monkeypatch.setenv(name, "")  # remembered, so the test's changes are rolled back
        monkeypatch.delenv(name)


def test_one_worker_opens_the_store_on_the_chroma_server_given_to_serve(
        tmp_path, monkeypatch, clean_env):
    store_dir = tmp_path / "store"
    Store(store_dir, chroma_url=CHROMA, create=True).close()  # vectors recorded as on a server
    started: dict = {}
    monkeypatch.setattr("uvicorn.run", lambda app, **kwargs: started.update(app=app, **kwargs))
    assert serve_command(parse("--store", str(store_dir), "--chroma-url", CHROMA,
                               "--checkpointer", "memory", "--graph", TEST_GRAPH)) == 0
    assert "factory" not in started  # one worker: the app built in this process is served

    # The package's nodes open the store their store_dir setting names, as a request would.
    opened = []

    def recording_open_store(spec, **kwargs):
        opened.append(real_open_store(spec, **kwargs))
        return opened[-1]

    real_open_store = _open.open_store
    monkeypatch.setattr(_open, "open_store", recording_open_store)
    store_setting = started["app"].state.served.settings["store_dir"]
    # Without the server URL the store refuses to open (StoreMismatchError); with it, it
    # opens and only lacks documents.
    with pytest.raises(EmptyStoreError):
        _parts.open_store(store_setting)
    try:
        assert [store.chroma_url for store in opened] == [CHROMA]
    finally:
        for store in opened:
            store.close()


def test_the_default_checkpointer_follows_the_store(tmp_path, monkeypatch, clean_env):
    folder = tmp_path / "store"
    assert default_checkpointer(str(folder)) == f"sqlite:{folder / 'serving-checkpoints.sqlite'}"
    monkeypatch.setenv(STORE_ENV, "postgresql://grag@db:5432/grag?schema=handbook&sslmode=require")
    assert default_checkpointer(None) == "postgresql://grag@db:5432/grag?sslmode=require"


async def test_a_postgres_store_checkpoints_in_its_database_and_makes_no_folder(
        tmp_path, monkeypatch, clean_env):
    reason = postgres_unreachable()
    if reason:
        pytest.skip(reason)
    monkeypatch.chdir(tmp_path)
    url = store_url(f"grt_{uuid.uuid4().hex[:10]}")  # the store itself is not opened here
    options = serve_options(parse("--store", url, "--graph", TEST_GRAPH))
    assert options.checkpointer is None
    app = build_app(options)
    served = app.state.served

    async def no_recovery(saver):  # other tests' paused threads in the shared database
        return 0

    monkeypatch.setattr(served.deferred, "recover", no_recovery)
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        saver = type(served.graph.checkpointer).__name__
        health = (await client.get("/healthz")).json()
    assert list(tmp_path.iterdir()) == []  # no "postgresql:" folder, no SQLite file
    assert saver == "AsyncPostgresSaver"
    assert served.checkpointer_spec == POSTGRES  # the store's database, without ?schema=
    assert health["status"] == "ok" and health["checkpointer"] == "postgres"
    assert served.deferred.claims is not None  # workers claim deferred verifications
