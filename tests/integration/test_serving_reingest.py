"""Re-ingest while 32 clients ask two server workers: every answer cites chunks of one
committed generation, and no request fails. Store on disk, vectors on a Chroma server,
reviews and threads in Postgres, ingests by the ``grounded-rag ingest`` command."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.integration.servers import BIN, base_env, chroma_server, grounded_rag_serve
from tests.integration.test_serving_reviews import POSTGRES, _postgres_reachable

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]

VERSIONS = 4


def corpus(root: Path, version: int) -> None:
    """Documents added, changed and removed from one version to the next."""
    for old in root.glob("*.md"):
        old.unlink()
    for i in range(version % 3, 6 + version % 4):
        (root / f"doc{i}.md").write_text(
            f"# Doc {i}\n\n## Fruit\nApples and pears grow in orchard {i}, version {version}."
            f"\n\n## Price\nPears cost {version + 2} coins in orchard {i}.\n", encoding="utf-8")


def ingest(docs: Path, store: Path, chroma: str) -> None:
    proc = subprocess.run([str(BIN / "grounded-rag"), "ingest", str(docs), "--store",
                           str(store), "--chroma-url", chroma, "--prune", "--no-progress"],
                          env=base_env(), capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr


def committed(store: Path) -> tuple[str, dict[str, str]]:
    """(generation, {chunk id: text}) as committed now (read-only)."""
    conn = sqlite3.connect(f"file:{store / 'catalog.sqlite'}?mode=ro", uri=True)
    try:
        with conn:  # one read transaction: meta and chunks of the same generation
            gen = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0]
            chunks = dict(conn.execute("SELECT chunk_id, text FROM chunks").fetchall())
        return gen, chunks
    finally:
        conn.close()


def test_reingest_while_32_clients_ask_two_workers(tmp_path):
    reason = _postgres_reachable()
    if reason:
        pytest.skip(reason)
    docs, store = tmp_path / "docs", tmp_path / "store"
    docs.mkdir()
    try:
        servers = chroma_server(tmp_path)
        chroma = servers.__enter__()
    except (FileNotFoundError, RuntimeError) as exc:
        pytest.skip(str(exc))
    try:
        corpus(docs, 0)
        ingest(docs, store, chroma)
        generations = dict([committed(store)])
        with grounded_rag_serve(tmp_path, "--workers", "2", "--graph",
                                "tests.serving_app:build_store_graph", "--store", str(store),
                                "--chroma-url", chroma, "--checkpointer", POSTGRES) as server:
            stop = asyncio.Event()
            answers: list[dict] = []
            failures: list[str] = []

            async def client_loop(client: httpx.AsyncClient, n: int) -> None:
                while not stop.is_set():
                    try:
                        response = await client.post("/rag/invoke", json={
                            "input": {"question": f"What does orchard {n % 7} say about pears?"},
                            "config": {"configurable": {"top_k": 3, "abstain_threshold": 0.0,
                                                        "max_retries": 0}}})
                    except httpx.HTTPError as exc:
                        failures.append(f"{type(exc).__name__}: {exc}")
                        continue
                    if response.status_code != 200:
                        failures.append(f"{response.status_code}: {response.text[:300]}")
                        continue
                    answers.append(response.json()["output"])

            async def reingest() -> None:
                for version in range(1, VERSIONS + 1):
                    corpus(docs, version)
                    await asyncio.to_thread(ingest, docs, store, chroma)
                    gen, chunks = committed(store)
                    generations[gen] = chunks
                    await asyncio.sleep(1.0)

            async def run() -> None:
                limits = httpx.Limits(max_connections=32)
                async with httpx.AsyncClient(base_url=server.url, timeout=120,
                                             limits=limits) as client:
                    clients = [asyncio.create_task(client_loop(client, n)) for n in range(32)]
                    try:
                        await reingest()
                    finally:
                        stop.set()
                        await asyncio.gather(*clients)

            started = time.monotonic()
            asyncio.run(run())
            elapsed = time.monotonic() - started
        assert failures == [], failures[:5]
        assert len(generations) == VERSIONS + 1
        assert len(answers) >= 32
        versions_seen = set()
        for out in answers:
            assert out["status"] == "answered", out.get("findings")
            cited = [(c["source_id"], c["quote"]) for claim in out["claims"]
                     for c in claim["citations"]]
            assert len(cited) == 3, out["claims"]
            # One committed generation holds every chunk this answer cites.
            holders = [gen for gen, chunks in generations.items()
                       if all(source in chunks and quote in chunks[source]
                              for source, quote in cited)]
            assert holders, cited
            versions_seen.update(holders)
        assert len(versions_seen) >= 3, versions_seen  # answers came from several generations
        print(f"\n{len(answers)} answers in {elapsed:.0f} s across {VERSIONS} re-ingests, "
              f"0 failures; generations cited: {sorted(versions_seen)}")
    finally:
        servers.__exit__(None, None, None)
