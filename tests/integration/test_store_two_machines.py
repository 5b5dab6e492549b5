"""Two "machines", one networked store: two ``grounded-rag serve`` processes, each in a working
folder (and home) of its own, nothing shared on disk, answer from the same store through
Postgres + a Chroma server. A re-ingest run on one machine is answered from by the other, and
killing either leaves the other answering. The chat model is scripted (it cites the top three
passages it is shown); retrieval, the store and the servers are real."""

from __future__ import annotations

import re
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.integration.servers import BIN, Server, base_env, free_port, kill
from tests.store_backends import POSTGRES, postgres_unreachable, store_url

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]

GRAPH = "tests.serving_app:build_store_graph"
ASK = {"top_k": 3, "abstain_threshold": 0.0, "max_retries": 0}


def corpus(root: Path, version: int) -> None:
    """Orchard notes; every chunk says which version wrote it."""
    for old in root.glob("*.md"):
        old.unlink()
    for i in range(4):
        (root / f"orchard{i}.md").write_text(
            f"# Orchard {i}\n\n## Fruit\nApples and pears grow in orchard {i}, version "
            f"{version}.\n\n## Price\nPears cost {version + 2} coins in orchard {i}, version "
            f"{version}.\n",
            encoding="utf-8")


def machine_env(home: Path) -> dict[str, str]:
    """A process environment whose home, caches and temporary files are the machine's own."""
    return base_env(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), TMPDIR=str(home))


def ingest(machine: Path, url: str, chroma: str) -> None:
    proc = subprocess.run(
        [str(BIN / "grounded-rag"), "ingest", "docs", "--store", url, "--chroma-url", chroma,
         "--prune", "--no-progress"],
        cwd=machine, env=machine_env(machine), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


@contextmanager
def serve(machine: Path, logs: Path, name: str, url: str, chroma: str) -> Iterator[Server]:
    port = free_port()
    argv = [str(BIN / "grounded-rag"), "serve", "--port", str(port), "--log-level", "warning",
            "--graph", GRAPH, "--store", url, "--chroma-url", chroma,
            "--checkpointer", POSTGRES]
    # the Chroma URL also comes through the environment: `serve` with one worker does not
    # hand --chroma-url to the app (reported); the store would find it recorded anyway
    env = {**machine_env(machine), "GROUNDED_RAG_CHROMA_URL": chroma}
    server = Server(argv, port=port, log=logs / f"{name}-{port}.log", cwd=machine, env=env,
                    ready_path="/healthz")
    try:
        server.wait_ready(180)
        yield server
    finally:
        server.stop()


def cited_versions(server: Server, orchard: int) -> set[str]:
    """The corpus versions named by the passages one answer cites."""
    response = httpx.post(server.url + "/rag/invoke", timeout=120, json={
        "input": {"question": f"What do pears cost in orchard {orchard}?"},
        "config": {"configurable": ASK}})
    assert response.status_code == 200, response.text
    out = response.json()["output"]
    assert out["status"] == "answered", out.get("findings")
    quotes = [c["quote"] for claim in out["claims"] for c in claim["citations"]]
    versions = {v for quote in quotes for v in re.findall(r"version (\d+)", quote)}
    assert versions, quotes
    return versions


def store_files(machine: Path) -> list[str]:
    """Anything that looks like a store, a catalogue or an index under ``machine``."""
    return sorted(str(p.relative_to(machine)) for p in machine.rglob("*")
                  if p.name in {"catalog.sqlite", "chroma", ".grounded-rag", ".lock"}
                  or p.name.startswith("bm25-") or p.suffix in {".sqlite", ".sqlite3"})


def test_two_machines_share_one_store_through_postgres_and_chroma(tmp_path, chroma_url):
    reason = postgres_unreachable()
    if reason:
        pytest.skip(reason)
    url = store_url(f"two_machines_{uuid.uuid4().hex[:8]}")
    a, b, logs = tmp_path / "machine-a", tmp_path / "machine-b", tmp_path / "logs"
    for folder in (a, b, logs):
        folder.mkdir()
    (a / "docs").mkdir()
    try:
        corpus(a / "docs", 1)
        ingest(a, url, chroma_url)
        with serve(a, logs, "a", url, chroma_url) as server_a:
            with serve(b, logs, "b", url, chroma_url) as server_b:
                assert cited_versions(server_a, 1) == {"1"}
                assert cited_versions(server_b, 2) == {"1"}
                # Machine A re-ingests; machine B answers from the new generation.
                corpus(a / "docs", 2)
                ingest(a, url, chroma_url)
                assert cited_versions(server_b, 1) == {"2"}
                assert cited_versions(server_a, 3) == {"2"}
                # A is lost: B keeps answering.
                kill(server_a)
                for orchard in range(3):
                    assert cited_versions(server_b, orchard) == {"2"}
        # Both again, fresh processes on the same folders; now B is lost: A answers alone.
        with serve(a, logs, "a-again", url, chroma_url) as server_a:
            with serve(b, logs, "b-again", url, chroma_url) as server_b:
                assert cited_versions(server_b, 0) == {"2"}
                kill(server_b)
                for orchard in range(3):
                    assert cited_versions(server_a, orchard) == {"2"}
        assert store_files(a) == [] and store_files(b) == []
        assert sorted(p.name for p in a.iterdir() if not p.name.startswith(".")) == ["docs"]
        assert [p.name for p in b.iterdir() if not p.name.startswith(".")] == []
    finally:
        from grounded_rag.retrieval._pg_store import drop_store

        drop_store(url, chroma_url=chroma_url)
