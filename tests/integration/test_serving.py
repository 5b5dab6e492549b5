"""The HTTP service against a real uvicorn process: LangServe routes, settings, bad input,
concurrency, the progress stream and /metrics (graph built with scripted fakes)."""

from __future__ import annotations

import asyncio
import json
import statistics
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.servers import read_sse, serving_app

pytestmark = [pytest.mark.integration]

BATTERY = "How long does the X100 battery last?"
BATTERY_24 = "Does the X100 battery last 24 hours?"
UNANSWERABLE = "What is the capital of Australia?"
CONTRACT = {"question", "status", "answer", "claims", "removed_claims", "sources", "attempts",
            "confidence", "grounding_score", "findings", "flags", "timings_ms", "language"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serving")
    with serving_app(tmp, checkpointer=f"sqlite:{tmp / 'checkpoints.sqlite'}",
                     GR_TEST_DELAY="0.05") as srv:
        yield srv


@pytest.fixture
def http(server):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def invoke(http, question, **settings):
    body = {"input": {"question": question}}
    if settings:
        body["config"] = {"configurable": settings}
    return http.post("/rag/invoke", json=body)


def metric_samples(text):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_healthz_and_page(http):
    health = http.get("/healthz")
    assert health.status_code == 200
    assert health.json()["status"] == "ok" and health.json()["checkpointer"] == "sqlite"
    page = http.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert 'id="question"' in page.text
    assert http.get("/web/app.js").status_code == 200
    assert http.get("/web/style.css").status_code == 200
    assert "cdn" not in page.text.lower() and "https://" not in page.text


def test_invoke_returns_the_output_contract(http):
    start = time.perf_counter()
    response = invoke(http, BATTERY)
    elapsed = time.perf_counter() - start
    assert response.status_code == 200, response.text
    out = response.json()["output"]
    assert CONTRACT <= set(out)
    assert out["status"] == "answered"
    assert out["answer"] == "The X100 battery lasts up to 10 hours on a single charge[1]."
    assert out["sources"][0]["id"] == "x100-spec#sec2"
    assert out["claims"][0]["verdict"] == "supported"
    assert response.headers["x-thread-id"]
    print(f"\n/rag/invoke with fakes: {elapsed * 1000:.0f} ms (includes 50 ms fake retrieval)")


def test_langserve_endpoints_all_answer(http):
    batch = http.post("/rag/batch", json={"inputs": [{"question": "What does item 1 weigh?"},
                                                     {"question": "What does item 2 weigh?"}]})
    assert batch.status_code == 200, batch.text
    assert [o["answer"] for o in batch.json()["output"]] == ["Item 1 weighs 1 kg[1].",
                                                             "Item 2 weighs 2 kg[1]."]
    with http.stream("POST", "/rag/stream", json={"input": {"question": BATTERY}}) as stream:
        assert stream.status_code == 200
        body = stream.read().decode()
    assert "event: data" in body and "event: end" in body
    events = http.post("/rag/stream_events", json={"input": {"question": BATTERY}})
    assert events.status_code == 200
    assert "on_chain_start" in events.text and "verify_claims" in events.text
    input_schema = http.get("/rag/input_schema").json()
    assert input_schema["$defs"]["InputState"]["properties"]["question"]["type"] == "string"
    assert "status" in json.dumps(http.get("/rag/output_schema").json())
    config_schema = json.dumps(http.get("/rag/config_schema").json())
    assert "max_retries" in config_schema and "Regenerations allowed" in config_schema
    playground = http.get("/rag/playground/")
    assert playground.status_code == 200 and "<html" in playground.text.lower()


def test_configurable_settings_reach_the_graph(http):
    strict = invoke(http, BATTERY_24, max_retries=0).json()["output"]
    assert strict["status"] == "abstained" and strict["attempts"] == 1
    lenient = invoke(http, BATTERY_24, max_retries=1).json()["output"]
    assert lenient["status"] == "answered" and lenient["attempts"] == 2
    assert lenient["removed_claims"][0]["text"] == "The X100 battery lasts 24 hours."
    picky = invoke(http, BATTERY, abstain_threshold=0.95).json()["output"]
    assert picky["status"] == "abstained"
    assert picky["findings"][0]["type"] == "weak_evidence"
    japanese = invoke(http, BATTERY, language="ja", abstain_threshold=0.95).json()["output"]
    assert japanese["answer"] == "資料からは確認できません。"
    assert len(invoke(http, "Taxi fares?", top_k=2).json()["output"]["sources"]) == 2


@pytest.mark.parametrize(("body", "field", "words"), [
    ({"input": {"question": ""}}, "question", "must not be empty"),
    ({"input": {"question": "   \n"}}, "question", "must not be empty"),
    ({"input": {"question": "x" * 2001}}, "question", "limit is 2000"),
    ({"input": {"question": 42}}, "question", "must be a string"),
    ({"input": {}}, "question", "must be a string"),
    ({"input": "just text"}, "input", "must be an object"),
    ({"input": {"question": "q"}, "config": {"configurable": {"colour": "red"}}}, "colour",
     "unknown setting"),
    ({"input": {"question": "q"}, "config": {"configurable": {"top_k": "many"}}}, "top_k",
     "invalid setting"),
    ({"input": {"question": "q"}, "config": {"configurable": {"top_k": 0}}}, "top_k", ">= 1"),
    ({"input": {"question": "q"}, "config": {"configurable": {"max_retries": -1}}},
     "max_retries", ">= 0"),
    ({"input": {"question": "q"}, "config": {"configurable": {"language": "fr"}}}, "language",
     "invalid setting"),
    ({"input": {"question": "q"}, "config": {"configurable": {"review_threshold": 3}}},
     "review_threshold", "between 0 and 1"),
    ({"input": {"question": "q"}, "config": {"configurable": {"store_dir": "/etc"}}},
     "store_dir", "set by the server"),
    ({"input": {"question": "q"}, "config": {"configurable": {"generator_model": "acme:x"}}},
     "generator_model", "unknown model spec"),
    ({"input": {"question": "q"}, "config": {"configurable": {"verifier_model": "local:/x"}}},
     "verifier_model", "only be chosen by the server"),
    ({"input": {"question": "q"}, "config": {"configurable": {
        "generator_model": "openai:m@http://10.0.0.1:8000/v1"}}},
     "generator_model", "only be chosen by the server"),
    ({"input": {"question": "q"}, "config": {"configurable": {"thread_id": 7}}}, "thread_id",
     "thread_id must be a string"),
])
def test_bad_requests_get_a_4xx_naming_the_field(http, body, field, words):
    response = http.post("/rag/invoke", json=body)
    assert response.status_code == 422, response.text
    detail = response.json()["detail"][0]
    assert detail["loc"][-1] == field
    assert words in detail["msg"]


def test_bad_batch_item_and_bad_json_and_the_server_keeps_serving(http):
    response = http.post("/rag/batch", json={"inputs": [{"question": "ok"}, {"question": ""}]})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "inputs", 1, "question"]
    assert http.post("/rag/invoke", content=b"{not json",
                     headers={"content-type": "application/json"}).status_code == 422
    streamed = http.post("/rag/stream", json={"input": {"question": ""}})
    assert streamed.status_code == 422
    assert http.post("/ask/stream", json={"question": ""}).status_code == 422
    assert http.post("/ask/stream", json={"question": "q", "settings": {"nope": 1}}).json()[
        "detail"][0]["loc"] == ["body", "settings", "nope"]
    assert invoke(http, BATTERY).status_code == 200
    assert http.get("/healthz").status_code == 200


def test_twenty_concurrent_requests_do_not_mix_state(server):
    async def one(client, i):
        start = time.perf_counter()
        config = {"configurable": {"max_retries": i % 3, "top_k": 1 + i % 4}}
        response = await client.post("/rag/invoke", json={
            "input": {"question": f"What does item {i} weigh?"}, "config": config})
        return i, response, time.perf_counter() - start

    async def run():
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            start = time.perf_counter()
            results = await asyncio.gather(*(one(client, i) for i in range(20)))
            return results, time.perf_counter() - start

    results, wall = asyncio.run(run())
    threads = set()
    for i, response, _ in results:
        assert response.status_code == 200, response.text
        out = response.json()["output"]
        assert out["question"] == f"What does item {i} weigh?"
        assert out["answer"] == f"Item {i} weighs {i} kg[1]."
        assert [s["id"] for s in out["sources"]] == [f"items#sec{i}"]
        assert out["claims"][0]["citations"][0]["quote"] == f"Item {i} weighs {i} kg, boxed."
        threads.add(response.headers["x-thread-id"])
    assert len(threads) == 20
    latencies = sorted(t for _, _, t in results)
    print(f"\n20 concurrent /rag/invoke: wall {wall * 1000:.0f} ms, median "
          f"{statistics.median(latencies) * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms")


def test_ask_stream_sends_progress_then_the_result(http):
    response = http.post("/ask/stream", json={"question": BATTERY_24,
                                              "settings": {"max_retries": 2}})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = read_sse(response)
    names = [name for name, _ in events]
    assert names[0] == "start" and names[-1] == "result"
    stages = [data["stage"] for name, data in events if name == "progress"]
    assert stages[:5] == ["retrieving", "generating", "checking", "extracting", "verifying"]
    messages = [data["message"] for name, data in events if name == "progress"]
    assert "verifying 2 claims" in messages and "revising, attempt 2 of 3" in messages
    result = events[-1][1]
    assert result["status"] == "answered" and result["attempts"] == 2
    assert result["thread_id"] == events[0][1]["thread_id"]
    assert result["review"] == {"pending": False}
    statuses = sorted(c["status"] for c in result["claims"])
    assert statuses == ["revised", "verified"]
    assert result["removed_claims"][0]["status"] == "removed"


def test_metrics_count_stages_hallucinations_abstentions_and_cost(http):
    before = metric_samples(http.get("/metrics").text)
    assert invoke(http, BATTERY_24, max_retries=1).json()["output"]["status"] == "answered"
    assert invoke(http, UNANSWERABLE).json()["output"]["status"] == "abstained"
    response = http.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain")
    after = metric_samples(response.text)

    def delta(name, **labels):
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert delta("rag_hallucination_total", kind="contradicted") == 1
    assert delta("rag_claim_verdicts_total", verdict="contradicted") == 1
    assert delta("rag_claim_verdicts_total", verdict="supported") == 2
    assert delta("rag_regenerations_total") == 1
    assert delta("rag_abstentions_total", reason="weak_evidence") == 1
    assert delta("rag_queries_total", status="answered") == 1
    assert delta("rag_queries_total", status="abstained") == 1
    assert delta("rag_query_latency_seconds_count", stage="generate") == 1
    assert delta("rag_query_latency_seconds_count", stage="retrieve") == 2
    assert delta("rag_query_latency_seconds_count", stage="total") == 2
    assert delta("rag_tokens_total", model="gpt-4.1-mini", direction="input") > 0
    assert delta("rag_tokens_total", model="gpt-4.1-mini", direction="output") > 0
    assert delta("rag_cost_usd_total", model="gpt-4.1-mini") > 0
    assert delta("rag_query_cost_usd_count", model="gpt-4.1-mini") == 1


def test_grounded_rag_serve_command_runs_the_real_app(tmp_path):
    """The console script with the default graph: page, health, and a clear 503 on no store."""
    import sys
    from pathlib import Path

    from tests.integration.servers import ROOT, Server, base_env, free_port

    port = free_port()
    store = tmp_path / "empty-store"
    argv = [str(Path(sys.executable).parent / "grounded-rag"), "serve", "--port", str(port),
            "--checkpointer", f"sqlite:{tmp_path / 'cli.sqlite'}", "--store", str(store),
            "--log-level", "warning"]
    server = Server(argv, port=port, log=tmp_path / "cli.log", cwd=ROOT, env=base_env(),
                    ready_path="/healthz")
    try:
        server.wait_ready()
        with httpx.Client(base_url=server.url, timeout=30) as client:
            assert client.get("/").status_code == 200
            assert client.get("/metrics").status_code == 200
            response = client.post("/rag/invoke", json={"input": {"question": BATTERY}})
            assert response.status_code == 503, response.text
            assert str(store) in response.json()["detail"]
            assert client.get("/healthz").status_code == 200
    finally:
        server.stop()
    assert (tmp_path / "cli.sqlite").exists()
