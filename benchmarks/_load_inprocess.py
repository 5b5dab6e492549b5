"""The load test's costs measured without a network: the bare app, the app, the graph.

:func:`bare_app` is also what ``--floor`` serves under uvicorn (as
``benchmarks.load_test:bare_app``): it answers every POST with 422 at once.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from typing import Any

from _load_levels import INVALID_BODIES, QUESTION


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

    ``floor``: ``"floor"``, the floor graph of ``_load_floor.py`` (same steps and state,
    nodes that do nothing but the model's sleep), or ``"minimal"``, the same steps over a
    two-key state with no model time (pass ``model_s=0``), instead of the scripted workflow.
    """
    import uuid

    from langgraph.checkpoint.memory import InMemorySaver

    if floor:
        from _load_floor import build_floor_graph, build_minimal_graph

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
