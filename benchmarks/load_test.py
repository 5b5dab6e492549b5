"""Load test of the HTTP server on loopback: throughput, latency and the system's own overhead.

Usage::

    flock /tmp/grag-model.lock nice .venv/bin/python benchmarks/load_test.py --workers 1 4

It starts the real server (``grounded-rag serve --workers N``, uvicorn worker processes) on a
free loopback port for each ``--workers`` value, serving the real workflow with a scripted
model of fixed speed (``tests/serving_app.py``: the generator sleeps ``--model-ms``, the
verifier ``--verify-ms``), so what is measured is the system: HTTP, LangServe, the graph's
nodes, citation checks, the checkpointer (Postgres when reachable, else SQLite), limits.
For each concurrency level (default 1 8 32 64) it sends ``--requests`` ``/rag/invoke``
requests with that many clients at once and prints, per level: requests/s, p50/p95/p99
latency as the client sees it, errors (anything but 200, 429 and 503; a timeout is an
error), the count of 429/503 answers, and the overhead: client latency minus the scripted
model time of that request (one generator and one verifier call). Every level stops at
``--level-cap`` seconds and the whole run at ``--time-cap`` seconds; requests not sent by
then are reported as not sent. The client runs on the same machine and takes CPU from it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.servers import Server, base_env, free_port, worker_health  # noqa: E402

POSTGRES = os.environ.get("GR_TEST_POSTGRES", "postgresql://127.0.0.1:5432/test")
QUESTION = "How long does the X100 battery last?"
"""Answered in one attempt by the scripted model: one generator and one verifier call."""


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of ``values``; 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def postgres_reachable(url: str) -> bool:
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("select 1")
        return True
    except Exception:
        return False


async def run_level(url: str, concurrency: int, requests: int, cap_s: float,
                    model_s: float) -> dict[str, Any]:
    """Send ``requests`` requests, ``concurrency`` at a time, for at most ``cap_s`` seconds."""
    import httpx

    latencies: list[float] = []
    overheads: list[float] = []
    graph_ms: list[float] = []
    counts = {"ok": 0, "errors": 0, "refused": 0, "not_sent": 0}
    error_kinds: dict[str, int] = {}
    next_index = 0
    deadline = time.monotonic() + cap_s

    async def client_loop(client: httpx.AsyncClient) -> None:
        nonlocal next_index
        while next_index < requests and time.monotonic() < deadline:
            next_index += 1
            body = {"input": {"question": QUESTION}}
            start = time.perf_counter()
            try:
                response = await client.post("/rag/invoke", json=body,
                                             timeout=max(0.1, deadline - time.monotonic()))
            except httpx.HTTPError as exc:
                counts["errors"] += 1
                kind = type(exc).__name__
                error_kinds[kind] = error_kinds.get(kind, 0) + 1
                continue
            elapsed = time.perf_counter() - start
            if response.status_code in (429, 503):
                counts["refused"] += 1
                continue
            if response.status_code != 200:
                counts["errors"] += 1
                kind = f"HTTP {response.status_code}"
                error_kinds[kind] = error_kinds.get(kind, 0) + 1
                continue
            out = response.json()["output"]
            if out.get("attempts") != 1 or out.get("status") != "answered":
                counts["errors"] += 1
                error_kinds["unexpected answer"] = error_kinds.get("unexpected answer", 0) + 1
                continue
            counts["ok"] += 1
            latencies.append(elapsed)
            overheads.append(elapsed - model_s)
            graph_ms.append(sum(float(v) for v in (out.get("timings_ms") or {}).values()))

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=cap_s) as client:
        await asyncio.gather(*(client_loop(client) for _ in range(concurrency)))
    wall = time.perf_counter() - started
    counts["not_sent"] = max(0, requests - next_index)
    return {
        "concurrency": concurrency, "sent": next_index, **counts, "wall_s": round(wall, 2),
        "rps": round(counts["ok"] / wall, 1) if wall else 0.0,
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p95_ms": round(percentile(latencies, 95) * 1000, 1),
        "p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "overhead_p50_ms": round(percentile(overheads, 50) * 1000, 1),
        "overhead_p99_ms": round(percentile(overheads, 99) * 1000, 1),
        "graph_stages_p50_ms": round(statistics.median(graph_ms), 1) if graph_ms else 0.0,
        "error_kinds": error_kinds,
    }


def start_server(workers: int, checkpointer: str, args: argparse.Namespace,
                 log_dir: Path) -> Server:
    port = free_port()
    argv = [str(Path(sys.executable).parent / "grounded-rag"), "serve", "--port", str(port),
            "--workers", str(workers), "--graph", "tests.serving_app:build_test_graph",
            "--checkpointer", checkpointer, "--log-level", "warning",
            "--max-in-flight", str(args.max_in_flight), "--max-queue", str(args.max_queue)]
    env = base_env(GR_TEST_MODEL_DELAY=str(args.model_ms / 1000),
                   GR_TEST_VERIFY_DELAY=str(args.verify_ms / 1000))
    server = Server(argv, port=port, log=log_dir / f"load-{workers}w-{port}.log", cwd=ROOT,
                    env=env, ready_path="/healthz")
    server.wait_ready(120)
    worker_health(server, workers, timeout=120)
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--requests", type=int, default=200, help="requests per level")
    parser.add_argument("--model-ms", type=float, default=20.0,
                        help="scripted generator time per call")
    parser.add_argument("--verify-ms", type=float, default=10.0,
                        help="scripted verifier time per call")
    parser.add_argument("--max-in-flight", type=int, default=32, help="per worker")
    parser.add_argument("--max-queue", type=int, default=64, help="per worker")
    parser.add_argument("--checkpointer", default="",
                        help="default: Postgres at $GR_TEST_POSTGRES when reachable, else "
                        "SQLite in a temporary directory")
    parser.add_argument("--level-cap", type=float, default=60.0, help="seconds per level")
    parser.add_argument("--time-cap", type=float, default=600.0, help="seconds in all")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args(argv)

    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="grag-load-"))
    checkpointer = args.checkpointer or (
        POSTGRES if postgres_reachable(POSTGRES) else f"sqlite:{tmp / 'checkpoints.sqlite'}")
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"load test: checkpointer {checkpointer.split('@')[-1]}, scripted model "
          f"{args.model_ms:g} ms + verifier {args.verify_ms:g} ms, {args.requests} requests "
          f"per level; uptime before: {load}", file=sys.stderr)
    total_deadline = time.monotonic() + args.time_cap
    rows: list[dict[str, Any]] = []
    model_s = (args.model_ms + args.verify_ms) / 1000
    header = ("| workers | clients | ok | errors | 429/503 | req/s | p50 ms | p95 ms | p99 ms "
              "| overhead p50 ms | overhead p99 ms |")
    print(header)
    print("|" + "---|" * 11)
    for workers in args.workers:
        if time.monotonic() > total_deadline:
            break
        server = start_server(workers, checkpointer, args, tmp)
        try:
            asyncio.run(run_level(server.url, 4, 20, 30, model_s))  # warm-up, not counted
            for level in args.levels:
                left = total_deadline - time.monotonic()
                if left <= 1:
                    break
                row = asyncio.run(run_level(server.url, level, args.requests,
                                            min(args.level_cap, left), model_s))
                row["workers"] = workers
                rows.append(row)
                print(f"| {workers} | {level} | {row['ok']} | {row['errors']} | "
                      f"{row['refused']} | {row['rps']} | {row['p50_ms']} | {row['p95_ms']} | "
                      f"{row['p99_ms']} | {row['overhead_p50_ms']} | "
                      f"{row['overhead_p99_ms']} |", flush=True)
                if row["error_kinds"] or row["not_sent"]:
                    print(f"  errors {row['error_kinds']}, not sent {row['not_sent']}",
                          file=sys.stderr)
        finally:
            server.stop()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"uptime after: {load}; server logs in {tmp}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
