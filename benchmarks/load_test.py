"""Load test of the HTTP server on loopback: throughput, latency and the system's own overhead.

It stays one script over 400 lines because its parts (load levels, bad-input bursts, the
bare-app floor, the in-process costs) share one client, one way of starting the server and
one set of requests, and are compared with each other in docs/serving.md.

Usage::

    flock /tmp/grag-model.lock nice .venv/bin/python benchmarks/load_test.py --workers 1 4
    .venv/bin/python benchmarks/load_test.py --workers 1 2 --levels 1 32   # docs/serving.md

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
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.servers import Server, base_env, free_port, worker_health  # noqa: E402

POSTGRES = os.environ.get("GR_TEST_POSTGRES", "postgresql://127.0.0.1:5432/test")
QUESTION = "How long does the X100 battery last?"
"""Answered in one attempt by the scripted model: one generator and one verifier call."""

INVALID_BODIES: list[tuple[str, dict[str, Any] | bytes]] = [
    ("unknown setting", {"input": {"question": QUESTION},
                         "config": {"configurable": {"no_such_setting": 1}}}),
    ("question too long", {"input": {"question": "x" * 2001}}),
    ("no question", {"input": {}}),
    ("input not an object", {"input": "just a string"}),
    ("invalid setting value", {"input": {"question": QUESTION},
                               "config": {"configurable": {"top_k": "many"}}}),
    ("server-only setting", {"input": {"question": QUESTION},
                             "config": {"configurable": {"store_dir": "/etc"}}}),
    ("unknown model", {"input": {"question": QUESTION},
                       "config": {"configurable": {"generator_model": "acme:x"}}}),
    ("malformed JSON", b'{"input": '),
]
"""Requests a client gets wrong: each must be answered with a 4xx, without running the graph."""


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


class RawHTTP:
    """One keep-alive HTTP/1.1 connection, spoken directly over asyncio streams.

    The load generator shares the server's CPU: a full client library costs milliseconds of
    CPU per request, which would be counted as the server's latency (64 requests at once
    through httpx take ~380 ms at p99 here even from a bare ASGI app that answers 422 at
    once). This costs a fraction of that, so what is measured is the server.
    """

    def __init__(self, url: str) -> None:
        parsed = urlsplit(url)
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or 80
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """POST ``body`` as JSON; (status, response body)."""
        try:
            return await self._post(path, body)
        except BaseException:
            await self.aclose()  # a broken or abandoned exchange: next time, a new connection
            raise

    async def _post(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._reader, self._writer
        assert reader is not None
        writer.write(f"POST {path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\n"
                     f"content-type: application/json\r\ncontent-length: {len(body)}"
                     "\r\n\r\n".encode() + body)
        await writer.drain()
        status_line = await reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection")
        status = int(status_line.split()[1])
        length, chunked, close = None, False, False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding":
                chunked = "chunked" in value
            elif name == "connection":
                close = value == "close"
        if chunked:
            parts = []
            while size := int((await reader.readline()).split(b";")[0], 16):
                parts.append(await reader.readexactly(size + 2))
            await reader.readline()
            data = b"".join(part[:-2] for part in parts)
        elif length is not None:
            data = await reader.readexactly(length)
        else:
            data, close = await reader.read(), True
        if close:
            await self.aclose()
        return status, data

    async def aclose(self) -> None:
        """Close the connection (the next request opens a new one)."""
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


class HttpxPoster:
    """The same interface over a shared ``httpx.AsyncClient`` (``--client httpx``)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        """POST ``body`` as JSON; (status, response body)."""
        response = await self.client.post(path, content=body,
                                          headers={"content-type": "application/json"})
        return response.status_code, response.content

    async def aclose(self) -> None:
        """Nothing: the shared client closes its connections."""


@contextlib.asynccontextmanager
async def posters(url: str, kind: str, count: int) -> AsyncIterator[list[Any]]:
    """``count`` clients that each send one request at a time."""
    if kind == "raw":
        raw = [RawHTTP(url) for _ in range(count)]
        try:
            yield raw
        finally:
            for poster in raw:
                await poster.aclose()
        return
    import httpx

    limits = httpx.Limits(max_connections=count, max_keepalive_connections=count)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=None) as client:
        yield [HttpxPoster(client) for _ in range(count)]


async def run_level(url: str, concurrency: int, requests: int, cap_s: float,
                    model_s: float, client_kind: str = "raw") -> dict[str, Any]:
    """Send ``requests`` requests, ``concurrency`` at a time, for at most ``cap_s`` seconds."""
    latencies: list[float] = []
    overheads: list[float] = []
    graph_ms: list[float] = []
    counts = {"ok": 0, "errors": 0, "refused": 0, "not_sent": 0}
    error_kinds: dict[str, int] = {}
    next_index = 0
    deadline = time.monotonic() + cap_s
    body = json.dumps({"input": {"question": QUESTION}}).encode()

    def error(kind: str) -> None:
        counts["errors"] += 1
        error_kinds[kind] = error_kinds.get(kind, 0) + 1

    async def client_loop(poster: Any) -> None:
        nonlocal next_index
        while next_index < requests and time.monotonic() < deadline:
            next_index += 1
            start = time.perf_counter()
            try:
                status, data = await asyncio.wait_for(
                    poster.post("/rag/invoke", body), max(0.1, deadline - time.monotonic()))
            except Exception as exc:  # a timeout, a refused or broken connection
                error(type(exc).__name__)
                continue
            elapsed = time.perf_counter() - start
            if status in (429, 503):
                counts["refused"] += 1
                continue
            if status != 200:
                error(f"HTTP {status}")
                continue
            out = json.loads(data)["output"]
            if out.get("attempts") != 1 or out.get("status") != "answered":
                error("unexpected answer")
                continue
            counts["ok"] += 1
            latencies.append(elapsed)
            overheads.append(elapsed - model_s)
            graph_ms.append(sum(float(v) for v in (out.get("timings_ms") or {}).values()))

    started = time.perf_counter()
    async with posters(url, client_kind, concurrency) as clients:
        await asyncio.gather(*(client_loop(poster) for poster in clients))
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


async def run_invalid(url: str, clients: int, rounds: int,
                      client_kind: str = "raw") -> dict[str, Any]:
    """``rounds`` bursts of ``clients`` invalid requests at once, each on a new connection."""
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    bodies = [body if isinstance(body, bytes) else json.dumps(body).encode()
              for _, body in INVALID_BODIES]

    async def one(i: int, poster: Any) -> None:
        start = time.perf_counter()
        try:
            status, _ = await asyncio.wait_for(
                poster.post("/rag/invoke", bodies[i % len(bodies)]), 30)
        except Exception as exc:
            statuses[type(exc).__name__] = statuses.get(type(exc).__name__, 0) + 1
            return
        latencies.append(time.perf_counter() - start)
        statuses[str(status)] = statuses.get(str(status), 0) + 1

    for _ in range(rounds):
        async with posters(url, client_kind, clients) as burst:
            await asyncio.gather(*(one(i, poster) for i, poster in enumerate(burst)))
    client_errors = sum(n for code, n in statuses.items() if code.isdigit() and code[0] == "4")
    return {
        "clients": clients, "rounds": rounds, "sent": clients * rounds, "4xx": client_errors,
        "other": clients * rounds - client_errors, "statuses": statuses,
        "p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "p95_ms": round(percentile(latencies, 95) * 1000, 1),
        "p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "max_ms": round(max(latencies, default=0.0) * 1000, 1),
    }


async def bare_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An ASGI app that answers GET with 200 and POST (its body read) with 422, at once."""
    if scope["type"] != "http":
        return
    if scope["method"] == "POST":
        while (await receive()).get("more_body"):
            pass
    status = 422 if scope["method"] == "POST" else 200
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"{}"})


async def _asgi_post(app: Any, path: str, body: bytes) -> int:
    """Call an ASGI app with one POST, in process; its status."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 1),
             "server": ("127.0.0.1", 80), "state": {},
             "headers": [(b"host", b"bench"), (b"content-type", b"application/json"),
                         (b"content-length", str(len(body)).encode())]}
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    status = 0

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.sleep(3600)  # no disconnect while the app runs
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def graph_overhead(model_s: float, runs: int = 100) -> float:
    """p50 of ``graph.ainvoke`` (scripted model, memory checkpointer) minus the model time."""
    import uuid

    from langgraph.checkpoint.memory import InMemorySaver

    from tests.serving_app import build_test_graph

    graph = build_test_graph(checkpointer=InMemorySaver())
    latencies = []
    for i in range(runs + 10):
        config = {"configurable": {"thread_id": str(uuid.uuid4())}}
        start = time.perf_counter()
        await graph.ainvoke({"question": QUESTION}, config, durability="exit")
        if i >= 10:  # warm-up
            latencies.append(time.perf_counter() - start)
    return (statistics.median(latencies) - model_s) * 1000


async def app_cost(rounds: int = 200) -> dict[str, float]:
    """Milliseconds per bad request called straight on the serving app and on the bare app."""
    from grounded_rag.serving.app import create_app
    from tests.serving_app import build_test_graph

    app = create_app(build_test_graph(), checkpointer="memory")
    bodies = [body if isinstance(body, bytes) else json.dumps(body).encode()
              for _, body in INVALID_BODIES]
    out: dict[str, float] = {}
    async with app.router.lifespan_context(app):
        for name, target in (("grounded-rag app", app), ("bare ASGI app", bare_app)):
            for body in bodies:  # warm-up
                await _asgi_post(target, "/rag/invoke", body)
            start = time.perf_counter()
            for _ in range(rounds):
                for body in bodies:
                    status = await _asgi_post(target, "/rag/invoke", body)
                    assert 400 <= status < 500, status
            out[name] = (time.perf_counter() - start) / (rounds * len(bodies)) * 1000
    return out


def uptime() -> str:
    """``uptime``'s line (the load average goes next to every timing)."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def start_server(workers: int, checkpointer: str, args: argparse.Namespace,
                 log_dir: Path) -> Server:
    port = free_port()
    argv = [str(Path(sys.executable).parent / "grounded-rag"), "serve", "--port", str(port),
            "--workers", str(workers), "--graph", "tests.serving_app:build_test_graph",
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
    parser.add_argument("--durability", choices=["exit", "async", "sync"], default="",
                        help="the server's checkpoint durability (default: the server's own)")
    parser.add_argument("--invalid-clients", type=int, default=64,
                        help="invalid requests sent at once (0: skip that part)")
    parser.add_argument("--invalid-workers", type=int, default=2)
    parser.add_argument("--invalid-rounds", type=int, default=5,
                        help="bursts of --invalid-clients requests (after one not counted)")
    parser.add_argument("--client", choices=["raw", "httpx"], default="raw",
                        help="load generator: raw HTTP/1.1 over asyncio streams (default: "
                        "light, so the latency is the server's) or httpx")
    parser.add_argument("--floor", action="store_true",
                        help="first measure the bad-input bursts against a bare ASGI app")
    parser.add_argument("--app-cost", action="store_true",
                        help="only measure the app's own time per bad request, in process")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args(argv)
    if args.app_cost:
        print(f"uptime before: {uptime()}", file=sys.stderr)
        for name, ms in asyncio.run(app_cost()).items():
            print(f"{name}: {ms:.3f} ms per bad request")
        os.environ["GR_TEST_MODEL_DELAY"] = str(args.model_ms / 1000)
        os.environ["GR_TEST_VERIFY_DELAY"] = str(args.verify_ms / 1000)
        overhead = asyncio.run(graph_overhead((args.model_ms + args.verify_ms) / 1000))
        print(f"graph alone (graph.ainvoke, memory checkpointer, no HTTP): {overhead:.1f} ms "
              "p50 beyond the model")
        print(f"uptime after: {uptime()}", file=sys.stderr)
        return 0

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
        bare = Server([sys.executable, "-m", "uvicorn", "benchmarks.load_test:bare_app",
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
    if args.json:
        print(json.dumps({"levels": rows, "invalid": invalid, "floor": floor}, indent=2))
    return 0 if invalid is None or invalid["other"] == 0 else 1


def measure_invalid(server: Server, args: argparse.Namespace) -> dict[str, Any]:
    """The bad-input bursts against a running server (one burst first, not counted)."""
    asyncio.run(run_invalid(server.url, args.invalid_clients, 1, args.client))
    return asyncio.run(run_invalid(server.url, args.invalid_clients, args.invalid_rounds,
                                   args.client))


if __name__ == "__main__":
    raise SystemExit(main())
