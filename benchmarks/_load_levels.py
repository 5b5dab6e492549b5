"""What the load test sends at a server: load levels and bad-input bursts, with latencies."""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from typing import Any

from _load_http import posters

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
