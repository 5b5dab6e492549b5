"""LangServe run requests are checked as plain ASGI before routing (``RagRequestChecks``):
bad ones get the 422 naming the field, good ones reach the graph with their settings."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from langserve.lzstring import LZString

from grounded_rag.serving.app import create_app
from tests.serving_app import build_test_graph

BATTERY = "How long does the X100 battery last?"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(build_test_graph(), checkpointer="memory")
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://test") as http:
        yield http


def hashed(config: dict) -> str:
    return LZString.compressToEncodedURIComponent(json.dumps(config))


@pytest.mark.parametrize(("body", "loc"), [
    ({"input": {"question": BATTERY}, "config": {"configurable": {"no_such_setting": 1}}},
     ["body", "config", "configurable", "no_such_setting"]),
    ({"input": {"question": "x" * 2001}}, ["body", "input", "question"]),
    ({"input": {}}, ["body", "input", "question"]),
    ({"input": "just a string"}, ["body", "input"]),
    ({"input": {"question": BATTERY}, "config": {"configurable": {"top_k": "many"}}},
     ["body", "config", "configurable", "top_k"]),
    ({"input": {"question": BATTERY}, "config": {"configurable": {"store_dir": "/etc"}}},
     ["body", "config", "configurable", "store_dir"]),
    (["not", "an", "object"], ["body"]),
])
async def test_bad_run_requests_get_a_422_naming_the_field(client, body, loc):
    for path in ("/rag/invoke", "/rag/stream", "/rag/stream_events"):
        response = await client.post(path, json=body)
        assert response.status_code == 422, (path, response.text)
        assert response.json()["detail"][0]["loc"] == loc


async def test_malformed_json_is_left_to_langserve(client):
    response = await client.post("/rag/invoke", content=b'{"input": ',
                                 headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert response.json() == {"detail": ["Invalid JSON body"]}


async def test_a_chunked_body_is_read_whole_then_checked_or_passed_on(client):
    async def chunks(body: bytes):
        for i in range(0, len(body), 7):
            yield body[i:i + 7]

    bad = json.dumps({"input": {"question": BATTERY},
                      "config": {"configurable": {"no_such_setting": 1}}}).encode()
    response = await client.post("/rag/invoke", content=chunks(bad),
                                 headers={"content-type": "application/json"})
    assert response.status_code == 422
    good = json.dumps({"input": {"question": BATTERY},
                       "config": {"configurable": {"top_k": 1}}}).encode()
    response = await client.post("/rag/invoke", content=chunks(good),
                                 headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    assert response.json()["output"]["status"] == "answered"


async def test_batch_items_are_checked_one_by_one(client):
    response = await client.post("/rag/batch", json={
        "inputs": [{"question": BATTERY}, {"question": BATTERY}],
        "config": [{"configurable": {"top_k": 2}}, {"configurable": {"top_k": "x"}}]})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "config", 1, "configurable", "top_k"]
    empty = await client.post("/rag/batch", json={"inputs": []})
    assert empty.status_code == 422
    assert empty.json()["detail"][0]["loc"] == ["body", "inputs"]
    fine = await client.post("/rag/batch", json={"inputs": [{"question": BATTERY}] * 2})
    assert fine.status_code == 200
    assert [o["status"] for o in fine.json()["output"]] == ["answered", "answered"]


async def test_settings_in_a_config_hash_are_checked_too(client):
    bad = await client.post(f"/rag/c/{hashed({'configurable': {'no_such_setting': 1}})}/invoke",
                            json={"input": {"question": BATTERY}})
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"][-1] == "no_such_setting"
    garbled = await client.post("/rag/c/not-a-hash/invoke", json={"input": {"question": BATTERY}})
    assert garbled.status_code == 400
    good = await client.post(f"/rag/c/{hashed({'configurable': {'top_k': 1}})}/invoke",
                             json={"input": {"question": BATTERY}})
    assert good.status_code == 200, good.text
    assert len(good.json()["output"]["sources"]) == 1  # top_k=1 from the hash was used


async def test_other_routes_pass_untouched(client):
    assert (await client.get("/rag/input_schema")).status_code == 200
    assert (await client.get("/healthz")).status_code == 200
    review = await client.post("/reviews/nothing-here", json={"action": "approve"})
    assert review.status_code == 404
