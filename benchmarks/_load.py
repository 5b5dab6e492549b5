"""The load test's parts (``load_test.py`` is the script): clients, load, in-process costs, floor.

- The clients: :class:`RawHTTP`, HTTP/1.1 spoken directly over asyncio streams, or
  :class:`HttpxPoster` over httpx (:func:`posters`).
- What is sent at a server: :func:`run_level` (a load level, with latencies) and
  :func:`run_invalid` (bad-input bursts, :data:`INVALID_BODIES`).
- The costs measured without a network: :func:`app_cost` (the app's own time per bad request,
  next to :func:`bare_app`) and :func:`graph_overhead` (``graph.ainvoke`` alone).
  :func:`bare_app` is also what ``load_test.py --floor`` serves under uvicorn (as
  ``benchmarks._load:bare_app``): it answers every POST with 422 at once.
- The floor of the serving stack: :func:`build_floor_graph`, served by ``load_test.py
  --floor-graph`` (``grounded-rag serve --graph benchmarks._load:build_floor_graph``): a
  LangGraph ``StateGraph`` with the workflow's own state schemas and the node and routing
  steps that the load test's question takes through the real workflow (read from a run of
  the scripted workflow when the graph is built). Its nodes do no work. Those the real
  workflow runs in a worker thread (the store, the models) run in one too, and sleep the
  scripted model's time (``$GR_TEST_MODEL_DELAY``, ``$GR_TEST_VERIFY_DELAY``); the others and
  the routers run on the event loop; the last node returns the real workflow's output for
  that question, recorded beforehand (its ``timings_ms`` too, so the load test's "graph
  stages" column shows the recorded run's). What the server, LangServe, LangGraph, the
  thread hand-offs and the checkpointer cost around that is the least a workflow of this
  shape costs on this stack; the real workflow's overhead above it is its nodes' own work.
  :func:`build_minimal_graph` takes the same steps over a two-key state, no model time.

Imported as ``_load`` by ``load_test.py`` and the tests, and as ``benchmarks._load`` by the
servers it starts: it imports nothing from its siblings.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, TypedDict
from urllib.parse import urlsplit

# -- the clients ---------------------------------------------------------------------------


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


# -- what is sent at a server: load levels and bad-input bursts ----------------------------


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


# -- the costs measured without a network --------------------------------------------------


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


async def graph_overhead(model_s: float, runs: int = 100, *, floor: str = "") -> float:
    """p50 of ``graph.ainvoke`` (scripted model, memory checkpointer) minus the model time.

    ``floor``: ``"floor"``, the floor graph (:func:`build_floor_graph`: same steps and state,
    nodes that do nothing but the model's sleep), or ``"minimal"``, the same steps over a
    two-key state with no model time (pass ``model_s=0``), instead of the scripted workflow.
    """
    from langgraph.checkpoint.memory import InMemorySaver

    if floor:
        builder = build_floor_graph() if floor == "floor" else build_minimal_graph()
        graph = builder.compile(checkpointer=InMemorySaver())
    else:
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


# -- the floor graph -----------------------------------------------------------------------


THREAD_NODES = {"retrieve_evidence": "", "generate_answer": "GR_TEST_MODEL_DELAY",
                "revise_answer": "GR_TEST_MODEL_DELAY", "verify_claims": "GR_TEST_VERIFY_DELAY"}
"""Nodes that the real workflow runs in a worker thread (the store, the scripted models) in
async runs, and the delay variable each sleeps (none for the store). The rest run on the
event loop, as the real workflow's checks and routers do. Async runs only (served)."""


def recorded_run() -> tuple[list[str], dict[str, Any]]:
    """The node path of the load test's question through the scripted workflow, and its output."""
    from langgraph.checkpoint.memory import InMemorySaver

    from tests.serving_app import build_test_graph

    graph = build_test_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    path = [name for update in graph.stream({"question": QUESTION}, config,
                                            stream_mode="updates", durability="exit")
            for name in update]
    return path, dict(graph.get_state(config).values)


def build_floor_graph() -> Any:
    """The uncompiled floor graph (the server compiles it with its own checkpointer)."""
    from langgraph.graph import END, START, StateGraph

    from grounded_rag.context import Context
    from grounded_rag.state import InputState, OutputState, State

    path, output = recorded_run()
    final = {key: output[key] for key in OutputState.__annotations__ if key in output}
    builder = StateGraph(State, context_schema=Context, input_schema=InputState,
                         output_schema=OutputState)

    def thread_node(delay_env: str) -> Any:
        def node(state: dict[str, Any]) -> dict[str, Any]:
            if delay_env:
                time.sleep(float(os.environ.get(delay_env, "0")))
            return {}
        return node  # synchronous: LangGraph runs it in a worker thread, as the real ones

    async def plain_node(state: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def last_node(state: dict[str, Any]) -> dict[str, Any]:
        return final

    def router(target: str) -> Any:
        async def route(state: dict[str, Any]) -> str:
            return target
        return route

    seen: set[str] = set()
    for index, name in enumerate(path):
        if name in seen:
            raise RuntimeError(f"the recorded path visits {name} twice: {path}")
        seen.add(name)
        if index == len(path) - 1:
            builder.add_node(name, last_node)
        elif name in THREAD_NODES:
            builder.add_node(name, thread_node(THREAD_NODES[name]))
        else:
            builder.add_node(name, plain_node)
    builder.add_edge(START, path[0])
    for name, following in zip(path, [*path[1:], END], strict=True):
        # The real workflow routes out of most nodes with a function: so does the floor.
        builder.add_conditional_edges(name, router(following))
    return builder


class _Minimal(TypedDict, total=False):
    question: str
    answer: str


def build_minimal_graph() -> Any:
    """The floor's steps over a two-key state, every node on the event loop, no model time.

    What LangGraph alone costs for a run of that many steps, whatever the workflow's state
    holds (async runs only).
    """
    from langgraph.graph import END, START, StateGraph

    path, _ = recorded_run()
    builder = StateGraph(_Minimal)

    async def node(state: dict[str, Any]) -> dict[str, Any]:
        return {}

    def router(target: str) -> Any:
        async def route(state: dict[str, Any]) -> str:
            return target
        return route

    for name in path:
        builder.add_node(name, node)
    builder.add_edge(START, path[0])
    for name, following in zip(path, [*path[1:], END], strict=True):
        builder.add_conditional_edges(name, router(following))
    return builder
