"""Limits on a real uvicorn process: saturation answered with 503 + Retry-After at once, a
too-large body with 413, and a client that leaves a stream mid-way frees its slot."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.servers import serving_app

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

BATTERY = "How long does the X100 battery last?"
UNANSWERABLE = "What is the capital of Australia?"


def metric(client: httpx.Client, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for s in family.samples:
            if s.name == name and s.labels == labels:
                return s.value
    return 0.0


def test_saturation_gets_503_with_retry_after_at_once_and_the_rest_are_served(tmp_path):
    with serving_app(tmp_path, checkpointer="memory", GR_TEST_VERIFY_DELAY="1.5",
                     GROUNDED_RAG_MAX_IN_FLIGHT="2", GROUNDED_RAG_MAX_QUEUE="2",
                     GROUNDED_RAG_QUEUE_TIMEOUT_S="30", GROUNDED_RAG_RETRY_AFTER_S="4",
                     GROUNDED_RAG_MAX_BODY_BYTES="4096") as server:

        async def one(client: httpx.AsyncClient, i: int) -> tuple[int, float, httpx.Response]:
            start = time.perf_counter()
            response = await client.post("/rag/invoke", json={
                "input": {"question": f"What does item {i} weigh?"}})
            return i, time.perf_counter() - start, response

        async def burst() -> list[tuple[int, float, httpx.Response]]:
            limits = httpx.Limits(max_connections=20)
            async with httpx.AsyncClient(base_url=server.url, timeout=60,
                                         limits=limits) as client:
                return await asyncio.gather(*(one(client, i) for i in range(10)))

        results = asyncio.run(burst())
        ok = [(i, t, r) for i, t, r in results if r.status_code == 200]
        refused = [(i, t, r) for i, t, r in results if r.status_code != 200]
        assert len(ok) == 4, [r.status_code for _, _, r in results]  # 2 in flight + 2 queued
        for i, _, response in ok:
            assert response.json()["output"]["answer"] == f"Item {i} weighs {i} kg[1]."
        for _, elapsed, response in refused:
            assert response.status_code == 503
            assert response.headers["retry-after"] == "4"
            assert response.json()["type"] == "queue_full"
            assert elapsed < 1.2, elapsed  # at once, not after a model call
        with httpx.Client(base_url=server.url, timeout=30) as client:
            assert metric(client, "rag_http_rejected_total", reason="queue_full") == 6
            assert metric(client, "rag_http_in_flight") == 0
            big = client.post("/rag/invoke", json={"input": {"question": "x" * 5000}})
            assert big.status_code == 413 and big.json()["type"] == "body_too_large"
            assert client.post("/rag/invoke", json={
                "input": {"question": UNANSWERABLE}}).status_code == 200


def test_a_client_leaving_a_stream_frees_its_slot_and_stops_the_run(tmp_path):
    with serving_app(tmp_path, checkpointer="memory", GR_TEST_VERIFY_DELAY="5",
                     GROUNDED_RAG_MAX_IN_FLIGHT="1", GROUNDED_RAG_MAX_QUEUE="0") as server, \
            httpx.Client(base_url=server.url, timeout=30) as client:
        answered = metric(client, "rag_queries_total", status="answered")
        with client.stream("POST", "/ask/stream", json={"question": BATTERY}) as stream:
            for line in stream.iter_lines():
                if "verifying" not in line:
                    continue
                # The run is now inside the 5 s verifier call, holding the only slot.
                assert client.get("/healthz").json()["in_flight"] == 1
                busy = client.post("/rag/invoke", json={"input": {"question": UNANSWERABLE}})
                assert busy.status_code == 503 and "retry-after" in busy.headers
                break  # leaving the loop closes the connection: the client is gone
        left = time.monotonic()  # the client has closed the stream
        while client.get("/healthz").json()["in_flight"]:
            assert time.monotonic() - left < 2.5, "the slot was not freed"
            time.sleep(0.05)
        freed_after = time.monotonic() - left
        served = client.post("/rag/invoke", json={"input": {"question": UNANSWERABLE}})
        assert served.status_code == 200, served.text
        time.sleep(max(0.0, 6.0 - (time.monotonic() - left)))  # past the verifier's 5 s
        # The abandoned run never finished: nothing was answered after the client left.
        assert metric(client, "rag_queries_total", status="answered") == answered
        print(f"\nslot freed {freed_after * 1000:.0f} ms after the client left the stream")
