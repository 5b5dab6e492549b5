"""Load test of the HTTP server on loopback: throughput, latency and the system's own overhead.

Usage::

    flock /tmp/grag-model.lock nice .venv/bin/python benchmarks/load_test.py --workers 1 4
    .venv/bin/python benchmarks/load_test.py --workers 1 2 --levels 1 32   # docs/serving.md
    .venv/bin/python benchmarks/load_test.py --quick --json /tmp/load.json  # CI size, ~20 s
    .venv/bin/python benchmarks/load_test.py --app-cost [--quick]          # in process only

``--quick`` (what ``run.py --quick`` runs) takes every step of the default run at its
smallest: 1 worker, levels 1 and 8, 20 requests each, then one burst of 8 bad requests
(after one not counted) on a server of 2 workers; its figures are not for reporting, and it
fails (exit 1) when a level has an error or no answer. Flags given with it win over its
sizes. ``--json FILE`` writes the figures printed (every level's row, the bad-input bursts,
the floor; or ``--app-cost``'s costs) to FILE, with the commit and the host's load.

It starts the real server (``grounded-rag serve --workers N``, uvicorn worker processes) on a
free loopback port for each ``--workers`` value, serving the real workflow with a scripted
model of fixed speed (``tests/serving_app.py``: the generator sleeps ``--model-ms``, the
verifier ``--verify-ms``), so what is measured is the system: HTTP, LangServe, the graph's
nodes, citation checks, the checkpointer (Postgres when reachable, else SQLite), limits.
For each concurrency level (default 1 8 32 64) it sends ``--requests`` ``/rag/invoke``
requests with that many clients at once and prints, per level: requests/s, p50/p95/p99
latency as the client sees it, errors (anything but 200, 429 and 503; a timeout is an
error), the count of 429/503 answers, and the overhead: client latency minus the scripted
model time of that request (one generator and one verifier call), and the p50 of the graph's
own stage timings (``timings_ms``, model time included). Every level stops at
``--level-cap`` seconds and the whole run at ``--time-cap`` seconds; requests not sent by
then are reported as not sent. The client runs on the same machine and takes CPU from it.

Then bad input (``--invalid-clients``, default 64, on ``--invalid-workers`` workers, default
2): ``--invalid-rounds`` bursts of that many requests at once, each on a new connection, each
invalid in one of the ways a client gets wrong (an unknown or invalid setting, a server-only
setting, an unknown model, a missing or too long question, an input that is not an object,
malformed JSON). Every answer must be a 4xx; it prints their latency (p50/p95/p99/max).

``--durability`` serves with that checkpoint durability (``grounded-rag serve
--durability``; left out, the server's default). ``uptime`` is printed before and after every
server's measurements.

The load generator shares the machine, so its own cost is latency too: by default it speaks
HTTP/1.1 directly over asyncio streams (``--client raw``), a fraction of a millisecond per
request; ``--client httpx`` uses httpx. ``--floor`` first sends the bad-input bursts to a bare
ASGI app under uvicorn with as many workers (it answers every POST with 422 at once): the
latency no server can go below with this client on this machine.

``--app-cost`` measures without a network or a server process: the app's own time per bad
request (each of the bad requests above called straight on the ASGI app, scripted graph,
memory checkpointer, next to the bare app), and the graph's own overhead: ``graph.ainvoke``
of the load test's question with the same scripted model (``--model-ms``, ``--verify-ms``)
and a memory checkpointer, no HTTP, p50 minus the model time. It prints both and exits.

``--floor-graph`` serves, instead of the scripted workflow, its floor (``_load.py``):
the same node and routing steps, nodes that only sleep the model's time and return the
recorded answer, so the overhead printed is what the stack alone costs for that shape of run
(``--app-cost`` prints the same floor in process, next to the workflow, and its steps over
a two-key state with no model: what LangGraph alone costs for that many steps).

The clients, the load levels and bad-input bursts, the in-process costs, the bare app and the
floor graph live in ``_load.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(Path(__file__).resolve().parent))  # the parts live next to this script

from _common import add_result_args, uptime, write_result  # noqa: E402
from _load import app_cost, graph_overhead, run_invalid, run_level  # noqa: E402

from tests.integration.servers import Server, base_env, free_port, worker_health  # noqa: E402

GRAPHS = {False: "tests.serving_app:build_test_graph",
          True: "benchmarks._load:build_floor_graph"}
"""What the server serves: the scripted workflow, or (``--floor-graph``) its floor."""

BARE_APP = "benchmarks._load:bare_app"
"""What ``--floor`` serves under uvicorn: a bare ASGI app that answers every POST with 422."""

SIZES: dict[str, tuple[Any, Any]] = {
    # option: (default, under --quick)
    "workers": ([1, 4], [1]),
    "levels": ([1, 8, 32, 64], [1, 8]),
    "requests": (200, 20),
    "level_cap": (60.0, 20.0),
    "time_cap": (600.0, 100.0),
    "invalid_clients": (64, 8),
    "invalid_workers": (2, 2),
    "invalid_rounds": (5, 1),
}
"""The run's sizes; an option left out takes its default, or under ``--quick`` the second."""

POSTGRES = os.environ.get("GR_TEST_POSTGRES", "postgresql://127.0.0.1:5432/test")


def postgres_reachable(url: str) -> bool:
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("select 1")
        return True
    except Exception:
        return False


def start_server(workers: int, checkpointer: str, args: argparse.Namespace,
                 log_dir: Path) -> Server:
    port = free_port()
    argv = [str(Path(sys.executable).parent / "grounded-rag"), "serve", "--port", str(port),
            "--workers", str(workers), "--graph", GRAPHS[args.floor_graph],
            "--checkpointer", checkpointer, "--log-level", "warning",
            "--max-in-flight", str(args.max_in_flight), "--max-queue", str(args.max_queue)]
    if args.durability:
        argv += ["--durability", args.durability]
    env = base_env(GR_TEST_MODEL_DELAY=str(args.model_ms / 1000),
                   GR_TEST_VERIFY_DELAY=str(args.verify_ms / 1000))
    server = Server(argv, port=port, log=log_dir / f"load-{workers}w-{port}.log", cwd=ROOT,
                    env=env, ready_path="/healthz")
    server.wait_ready(120)
    worker_health(server, workers, timeout=120)
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", help="default 1 4 (--quick: 1)")
    parser.add_argument("--levels", type=int, nargs="+",
                        help="clients at once, per level: default 1 8 32 64 (--quick: 1 8)")
    parser.add_argument("--requests", type=int, help="requests per level (default 200)")
    parser.add_argument("--model-ms", type=float, default=20.0,
                        help="scripted generator time per call")
    parser.add_argument("--verify-ms", type=float, default=10.0,
                        help="scripted verifier time per call")
    parser.add_argument("--max-in-flight", type=int, default=32, help="per worker")
    parser.add_argument("--max-queue", type=int, default=64, help="per worker")
    parser.add_argument("--checkpointer", default="",
                        help="default: Postgres at $GR_TEST_POSTGRES when reachable, else "
                        "SQLite in a temporary directory")
    parser.add_argument("--level-cap", type=float, help="seconds per level (default 60)")
    parser.add_argument("--time-cap", type=float, help="seconds in all (default 600)")
    parser.add_argument("--durability", choices=["exit", "async", "sync"], default="",
                        help="the server's checkpoint durability (default: the server's own)")
    parser.add_argument("--invalid-clients", type=int,
                        help="invalid requests sent at once (default 64; 0: skip that part)")
    parser.add_argument("--invalid-workers", type=int, help="default 2")
    parser.add_argument("--invalid-rounds", type=int,
                        help="bursts of --invalid-clients requests (after one not counted; "
                        "default 5)")
    parser.add_argument("--client", choices=["raw", "httpx"], default="raw",
                        help="load generator: raw HTTP/1.1 over asyncio streams (default: "
                        "light, so the latency is the server's) or httpx")
    parser.add_argument("--floor", action="store_true",
                        help="first measure the bad-input bursts against a bare ASGI app")
    parser.add_argument("--app-cost", action="store_true",
                        help="only measure the app's own time per bad request, in process")
    parser.add_argument("--floor-graph", action="store_true",
                        help="serve the floor graph of _load.py instead of the scripted "
                        "workflow: the same steps, nodes that only sleep the model's time")
    add_result_args(parser)
    args = parser.parse_args(argv)
    for name, (default, quick) in SIZES.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else default)
    if args.app_cost:
        return measure_app_cost(args)

    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="grag-load-"))
    checkpointer = args.checkpointer or (
        POSTGRES if postgres_reachable(POSTGRES) else f"sqlite:{tmp / 'checkpoints.sqlite'}")
    print(f"load test: checkpointer {checkpointer.split('@')[-1]}, scripted model "
          f"{args.model_ms:g} ms + verifier {args.verify_ms:g} ms, {args.requests} requests "
          f"per level, durability {args.durability or 'server default'}, client "
          f"{args.client}; uptime before: "
          f"{uptime()}", file=sys.stderr)
    total_deadline = time.monotonic() + args.time_cap
    rows: list[dict[str, Any]] = []
    model_s = (args.model_ms + args.verify_ms) / 1000
    header = ("| workers | clients | ok | errors | 429/503 | req/s | p50 ms | p95 ms | p99 ms "
              "| overhead p50 ms | overhead p99 ms | graph stages p50 ms |")
    print(header)
    print("|" + "---|" * 12)
    invalid: dict[str, Any] | None = None
    floor: dict[str, Any] | None = None
    if args.floor and args.invalid_clients:
        port = free_port()
        bare = Server([sys.executable, "-m", "uvicorn", BARE_APP,
                       "--port", str(port), "--workers", str(args.invalid_workers),
                       "--log-level", "warning"], port=port, log=tmp / f"bare-{port}.log",
                      cwd=ROOT, env=base_env(), ready_path="/")
        try:
            bare.wait_ready(60)
            floor = measure_invalid(bare, args)
        finally:
            bare.stop()
    for workers in args.workers:
        if time.monotonic() > total_deadline:
            break
        server = start_server(workers, checkpointer, args, tmp)
        print(f"  {workers} worker(s) started; uptime: {uptime()}", file=sys.stderr)
        try:
            asyncio.run(run_level(server.url, 4, 20, 30, model_s, args.client))  # warm-up
            for level in args.levels:
                left = total_deadline - time.monotonic()
                if left <= 1:
                    break
                row = asyncio.run(run_level(server.url, level, args.requests,
                                            min(args.level_cap, left), model_s, args.client))
                row["workers"] = workers
                rows.append(row)
                print(f"| {workers} | {level} | {row['ok']} | {row['errors']} | "
                      f"{row['refused']} | {row['rps']} | {row['p50_ms']} | {row['p95_ms']} | "
                      f"{row['p99_ms']} | {row['overhead_p50_ms']} | "
                      f"{row['overhead_p99_ms']} | {row['graph_stages_p50_ms']} |", flush=True)
                if row["error_kinds"] or row["not_sent"]:
                    print(f"  errors {row['error_kinds']}, not sent {row['not_sent']}",
                          file=sys.stderr)
            if args.invalid_clients and workers == args.invalid_workers:
                invalid = measure_invalid(server, args)
        finally:
            print(f"  uptime after {workers} worker(s): {uptime()}", file=sys.stderr)
            server.stop()
    if args.invalid_clients and invalid is None and time.monotonic() < total_deadline:
        server = start_server(args.invalid_workers, checkpointer, args, tmp)
        print(f"  {args.invalid_workers} worker(s) started; uptime: {uptime()}", file=sys.stderr)
        try:
            invalid = measure_invalid(server, args)
        finally:
            print(f"  uptime after: {uptime()}", file=sys.stderr)
            server.stop()
    if invalid is not None or floor is not None:
        print()
        print("| workers | invalid requests at once | sent | 4xx | other | p50 ms | p95 ms "
              "| p99 ms | max ms |")
        print("|" + "---|" * 9)
    if invalid is not None:
        print(f"| {args.invalid_workers} | {invalid['clients']} | {invalid['sent']} | "
              f"{invalid['4xx']} | {invalid['other']} | {invalid['p50_ms']} | "
              f"{invalid['p95_ms']} | {invalid['p99_ms']} | {invalid['max_ms']} |")
        print(f"  statuses {invalid['statuses']}", file=sys.stderr)
    if floor is not None:
        print(f"| {args.invalid_workers} (bare ASGI app: the floor) | {floor['clients']} | "
              f"{floor['sent']} | {floor['4xx']} | {floor['other']} | {floor['p50_ms']} | "
              f"{floor['p95_ms']} | {floor['p99_ms']} | {floor['max_ms']} |")
    print(f"uptime after: {uptime()}; server logs in {tmp}", file=sys.stderr)
    failed = []
    if invalid is not None and invalid["other"]:
        failed.append(f"{invalid['other']} bad request(s) not answered with a 4xx")
    if args.quick:  # at this size an error is a fault, not a measurement
        failed += [f"{row['workers']} worker(s), {row['concurrency']} client(s): "
                   f"{row['ok']} answered, {row['errors']} error(s)"
                   for row in rows if row["errors"] or not row["ok"]]
        if not rows:
            failed.append("no level was run")
    for line in failed:
        print(f"FAILED: {line}", file=sys.stderr)
    write_result(args.json, "load_test", {
        "settings": {"checkpointer": checkpointer.split("@")[-1],
                     "model_ms": args.model_ms, "verify_ms": args.verify_ms,
                     "requests": args.requests, "workers": args.workers,
                     "levels": args.levels, "durability": args.durability or "server default",
                     "client": args.client, "max_in_flight": args.max_in_flight,
                     "max_queue": args.max_queue, "floor_graph": args.floor_graph,
                     "invalid_workers": args.invalid_workers},
        "levels": rows, "invalid": invalid, "floor": floor, "failed": failed,
    }, quick=args.quick)
    return 1 if failed else 0


def measure_app_cost(args: argparse.Namespace) -> int:
    """``--app-cost``: the app's time per bad request and the graph's overhead, in process."""
    print(f"uptime before: {uptime()}", file=sys.stderr)
    app_ms = asyncio.run(app_cost(rounds=20 if args.quick else 200))
    for name, ms in app_ms.items():
        print(f"{name}: {ms:.3f} ms per bad request")
    os.environ["GR_TEST_MODEL_DELAY"] = str(args.model_ms / 1000)
    os.environ["GR_TEST_VERIFY_DELAY"] = str(args.verify_ms / 1000)
    model_s = (args.model_ms + args.verify_ms) / 1000
    overheads: dict[str, float] = {}
    for floor, name in (("", "graph"), ("floor", "floor graph"),
                        ("minimal", "its steps over a two-key state")):
        overhead = asyncio.run(graph_overhead(0 if floor == "minimal" else model_s,
                                              runs=10 if args.quick else 100, floor=floor))
        overheads[name] = round(overhead, 1)
        print(f"{name} alone (graph.ainvoke, memory checkpointer, no HTTP): "
              f"{overhead:.1f} ms p50 beyond the model")
    print(f"uptime after: {uptime()}", file=sys.stderr)
    write_result(args.json, "load_test", {
        "app_cost_ms_per_bad_request": {k: round(v, 3) for k, v in app_ms.items()},
        "graph_overhead_p50_ms": overheads,
        "settings": {"model_ms": args.model_ms, "verify_ms": args.verify_ms},
    }, quick=args.quick)
    return 0


def measure_invalid(server: Server, args: argparse.Namespace) -> dict[str, Any]:
    """The bad-input bursts against a running server (one burst first, not counted)."""
    asyncio.run(run_invalid(server.url, args.invalid_clients, 1, args.client))
    return asyncio.run(run_invalid(server.url, args.invalid_clients, args.invalid_rounds,
                                   args.client))


if __name__ == "__main__":
    raise SystemExit(main())
