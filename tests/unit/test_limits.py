"""Limits that protect the service: body size, slots with a bounded queue, per-client count."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from grounded_rag.serving.limits import ENV_NAMES, Gate, Limits, LimitsMiddleware, Saturated


class HeldApp:
    """A Starlette app whose POST /work waits until the test releases it."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = 0
        self.bodies: list[bytes] = []

        async def work(request: Request) -> JSONResponse:
            self.bodies.append(await request.body())
            self.started += 1
            await self.release.wait()
            return JSONResponse({"ok": True})

        async def health(request: Request) -> JSONResponse:
            return JSONResponse({"status": "ok"})

        self.app = Starlette(routes=[Route("/work", work, methods=["POST"]),
                                     Route("/healthz", health)])


def limited(limits: Limits) -> tuple[HeldApp, LimitsMiddleware, httpx.AsyncClient]:
    held = HeldApp()
    middleware = LimitsMiddleware(held.app, limits, registry=CollectorRegistry())
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=middleware),
                               base_url="http://test")
    return held, middleware, client


async def until(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.005)


def rendered(registry: CollectorRegistry) -> dict[tuple[str, tuple], float]:
    from prometheus_client import generate_latest

    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(generate_latest(registry).decode())
            for s in family.samples}


# -- the gate ----------------------------------------------------------------------------------


async def test_gate_hands_slots_over_in_order_and_refuses_a_full_queue():
    gate = Gate(max_in_flight=2, max_queue=1, queue_timeout_s=5)
    await gate.acquire()
    await gate.acquire()
    assert gate.in_flight == 2
    waiter = asyncio.create_task(gate.acquire())
    await until(lambda: gate.queued == 1)
    with pytest.raises(Saturated) as refused:
        await gate.acquire()
    assert refused.value.reason == "queue_full"
    gate.release()
    await asyncio.wait_for(waiter, 1)
    assert (gate.in_flight, gate.queued) == (2, 0)
    gate.release()
    gate.release()
    assert gate.in_flight == 0


async def test_gate_wait_is_bounded_and_a_cancelled_waiter_leaks_no_slot():
    gate = Gate(max_in_flight=1, max_queue=4, queue_timeout_s=0.05)
    await gate.acquire()
    start = time.perf_counter()
    with pytest.raises(Saturated) as refused:
        await gate.acquire()
    assert refused.value.reason == "queue_timeout"
    assert time.perf_counter() - start < 1
    assert gate.queued == 0

    gate.queue_timeout_s = 5
    waiter = asyncio.create_task(gate.acquire())
    await until(lambda: gate.queued == 1)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert gate.queued == 0
    gate.release()
    assert gate.in_flight == 0
    await asyncio.wait_for(gate.acquire(), 1)  # the slot is free again


# -- the middleware ----------------------------------------------------------------------------


async def test_saturated_server_answers_503_with_retry_after_at_once():
    held, middleware, client = limited(Limits(max_in_flight=2, max_queue=1, queue_timeout_s=30,
                                              retry_after_s=3))
    async with client:
        running = [asyncio.create_task(client.post("/work", json={"i": i})) for i in range(3)]
        await until(lambda: held.started == 2 and middleware.gate.queued == 1)
        start = time.perf_counter()
        refused = await client.post("/work", json={"i": 9})
        assert time.perf_counter() - start < 1  # at once, not after the queue timeout
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "3"
        assert refused.json()["type"] == "queue_full"
        health = await client.get("/healthz")  # never limited
        assert health.status_code == 200
        metrics = rendered(middleware.metrics.registry)
        assert metrics[("rag_http_in_flight", ())] == 2
        assert metrics[("rag_http_queued", ())] == 1
        assert metrics[("rag_http_rejected_total", (("reason", "queue_full"),))] == 1
        held.release.set()
        statuses = [r.status_code for r in await asyncio.gather(*running)]
    assert statuses == [200, 200, 200]
    assert rendered(middleware.metrics.registry)[("rag_http_in_flight", ())] == 0


async def test_a_queued_request_waits_at_most_the_queue_timeout():
    held, middleware, client = limited(Limits(max_in_flight=1, max_queue=4,
                                              queue_timeout_s=0.2))
    async with client:
        first = asyncio.create_task(client.post("/work", json={}))
        await until(lambda: held.started == 1)
        start = time.perf_counter()
        late = await client.post("/work", json={})
        waited = time.perf_counter() - start
        assert late.status_code == 503 and late.json()["type"] == "queue_timeout"
        assert "retry-after" in late.headers
        assert 0.15 < waited < 2
        held.release.set()
        assert (await first).status_code == 200


async def test_body_size_limit_with_and_without_content_length():
    held, middleware, client = limited(Limits(max_body_bytes=100))
    async with client:
        held.release.set()
        small = await client.post("/work", content=b"x" * 100)
        assert small.status_code == 200 and held.bodies == [b"x" * 100]
        big = await client.post("/work", content=b"x" * 101)
        assert big.status_code == 413 and big.json()["type"] == "body_too_large"
        assert "retry-after" not in big.headers

        async def chunks(n):
            for _ in range(n):
                yield b"y" * 30

        streamed = await client.post("/work", content=chunks(3))  # chunked, 90 bytes
        assert streamed.status_code == 200 and held.bodies[-1] == b"y" * 90
        too_much = await client.post("/work", content=chunks(4))  # chunked, 120 bytes
        assert too_much.status_code == 413
    assert len(held.bodies) == 2  # the refused bodies never reached the app
    metrics = rendered(middleware.metrics.registry)
    assert metrics[("rag_http_rejected_total", (("reason", "body_too_large"),))] == 2


async def test_per_client_limit_by_header_or_address():
    held, middleware, client = limited(Limits(per_client=1, client_header="X-Client-Id",
                                              retry_after_s=2))
    async with client:
        first = asyncio.create_task(client.post("/work", headers={"X-Client-Id": "a"}))
        await until(lambda: held.started == 1)
        again = await client.post("/work", headers={"X-Client-Id": "a"})
        assert again.status_code == 429 and again.headers["retry-after"] == "2"
        assert again.json()["type"] == "client_limit"
        other = asyncio.create_task(client.post("/work", headers={"X-Client-Id": "b"}))
        await until(lambda: held.started == 2)
        # Without the header the client's address names it (the test transport's address).
        no_header = asyncio.create_task(client.post("/work"))
        await until(lambda: held.started == 3)
        held.release.set()
        assert [(await t).status_code for t in (first, other, no_header)] == [200, 200, 200]
        assert (await client.post("/work", headers={"X-Client-Id": "a"})).status_code == 200
    assert middleware._per_client == {}


# -- settings ----------------------------------------------------------------------------------


def test_limits_travel_through_the_environment_and_bad_values_are_refused():
    limits = Limits(max_body_bytes=10, max_in_flight=3, max_queue=0, queue_timeout_s=1.5,
                    per_client=2, client_header="X-Client-Id", retry_after_s=7)
    assert Limits.from_env(limits.to_env()) == limits
    assert Limits.from_env({}) == Limits()
    assert ENV_NAMES["max_in_flight"] == "GROUNDED_RAG_MAX_IN_FLIGHT"
    with pytest.raises(ValueError, match="GROUNDED_RAG_MAX_IN_FLIGHT"):
        Limits.from_env({"GROUNDED_RAG_MAX_IN_FLIGHT": "many"})
    with pytest.raises(ValueError, match="max_in_flight"):
        Limits(max_in_flight=0)
    with pytest.raises(ValueError, match="queue_timeout_s"):
        Limits(queue_timeout_s=0)
