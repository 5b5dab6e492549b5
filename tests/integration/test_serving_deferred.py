"""Deferred verification over HTTP: the answer first, then a ``verification`` event on the same
stream, ``GET /answers/{thread_id}``, crashes reported as ``failed``, and a server restart."""

from __future__ import annotations

import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.servers import kill, read_sse, serving_app

pytestmark = [pytest.mark.integration]

BATTERY_24 = "Does the X100 battery last 24 hours?"
FRAGILE = "How long does the fragile X100 battery last?"
DEFERRED = {"verify_mode": "deferred"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("deferred")
    with serving_app(tmp, checkpointer=f"sqlite:{tmp / 'checkpoints.sqlite'}",
                     GR_TEST_VERIFY_DELAY="0.3") as srv:
        yield srv


@pytest.fixture
def http(server):
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def deferred_metric(client, outcome):
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for s in family.samples:
            if s.name == "rag_deferred_verifications_total" and s.labels["outcome"] == outcome:
                return s.value
    return 0.0


@pytest.mark.parametrize("settings", [DEFERRED, {"preset": "fast"}])
def test_answer_first_then_the_verification_event_on_the_same_stream(http, settings):
    warnings_before = deferred_metric(http, "warning")
    response = http.post("/ask/stream", json={"question": BATTERY_24, "settings": settings})
    assert response.status_code == 200
    events = read_sse(response)
    names = [name for name, _ in events]
    assert names[0] == "start" and names[-2:] == ["result", "verification"]
    thread_id = events[0][1]["thread_id"]

    result = events[-2][1]
    # Returned once the citations passed: no verifier verdict yet, no revision.
    assert result["status"] == "answered" and result["verification"] == "pending"
    assert result["attempts"] == 1 and result["checked_claims"] == 0
    assert [c["status"] for c in result["claims"]] == ["pending", "pending"]
    assert {c["verdict"] for c in result["claims"]} == {"unchecked"}
    assert "24 hours" in result["answer"] and "verification_pending" in result["flags"]

    late = events[-1][1]
    assert late["thread_id"] == thread_id and late["answer"] == result["answer"]
    assert late["verification"] == "complete" and late["checked_claims"] == 2
    verdicts = {c["text"]: (c["verdict"], c["status"]) for c in late["claims"]}
    assert verdicts == {"The X100 battery lasts 24 hours.": ("contradicted", "flagged"),
                        "Charging takes 2 hours.": ("supported", "verified")}
    assert len(late["warnings"]) == 1 and "24 hours" in late["warnings"][0]
    assert any(f["type"] == "contradicted" and f["claim_index"] == 0 for f in late["findings"])
    assert {"verified_after_answer", "verification_warning"} <= set(late["flags"])
    assert "verification_pending" not in late["flags"]
    assert "verify_after_answer" in late["timings_ms"]

    stored = http.get(f"/answers/{thread_id}").json()
    assert stored["verification"] == "complete" and stored["claims"] == late["claims"]
    assert deferred_metric(http, "warning") == warnings_before + 1


def test_a_crashing_verifier_ends_as_failed_with_the_error_everywhere(http):
    failed_before = deferred_metric(http, "failed")
    events = read_sse(http.post("/ask/stream", json={"question": FRAGILE,
                                                     "settings": DEFERRED}))
    assert [name for name, _ in events][-2:] == ["result", "verification"]
    assert events[-2][1]["verification"] == "pending"
    late = events[-1][1]
    assert late["status"] == "answered" and late["verification"] == "failed"
    assert late["verification_error"] == "RuntimeError: the judge is unavailable"
    assert "verification_failed" in late["flags"]
    assert [c["status"] for c in late["claims"]] == ["unchecked"]
    stored = http.get(f"/answers/{late['thread_id']}?wait=5").json()
    assert stored["verification"] == "failed"
    assert stored["verification_error"] == late["verification_error"]
    assert deferred_metric(http, "failed") == failed_before + 1


def test_a_langserve_run_is_verified_in_the_background(http):
    response = http.post("/rag/invoke", json={"input": {"question": BATTERY_24},
                                              "config": {"configurable": DEFERRED}})
    assert response.status_code == 200, response.text
    out = response.json()["output"]
    assert out["verification"] == "pending"
    thread_id = response.headers["x-thread-id"]
    # Nobody asks for it: the run's own callback starts the verification.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        stored = http.get(f"/answers/{thread_id}").json()
        if stored["verification"] != "pending":
            break
        time.sleep(0.2)
    assert stored["verification"] == "complete"
    assert [c["verdict"] for c in stored["claims"]] == ["contradicted", "supported"]


def test_full_and_sampled_answers_report_what_was_checked(http):
    full = http.post("/rag/invoke", json={"input": {"question": "Taxi fares and the battery?"}})
    out = full.json()["output"]
    assert out["verification"] == "complete" and out["checked_claims"] == len(out["claims"]) == 3
    sampled = http.post("/rag/invoke", json={
        "input": {"question": "Taxi fares and the battery?"},
        "config": {"configurable": {"verify_mode": "sampled", "verify_sample_rate": 0}}})
    out = sampled.json()["output"]
    # "Charging takes 2 hours." and the others carry numbers: every claim is risky here.
    assert out["verification"] == "complete" and out["checked_claims"] == 3
    stored = http.get(f"/answers/{sampled.headers['x-thread-id']}").json()
    assert stored["checked_claims"] == 3


@pytest.mark.parametrize(("settings", "field", "words"), [
    ({"preset": "turbo"}, "preset", "high_precision, balanced, fast, cost_optimized"),
    ({"verify_mode": "sometimes"}, "verify_mode", "full, sampled, deferred"),
    ({"verify_sample_rate": 1.5}, "verify_sample_rate", "between 0 and 1"),
    ({"verify_execution": "swarm"}, "verify_execution", "batch, parallel"),
])
def test_bad_preset_or_mode_gets_a_422_naming_field_and_allowed_values(http, settings, field,
                                                                       words):
    for response in (
        http.post("/ask/stream", json={"question": BATTERY_24, "settings": settings}),
        http.post("/rag/invoke", json={"input": {"question": BATTERY_24},
                                       "config": {"configurable": settings}}),
    ):
        assert response.status_code == 422
        detail = response.json()["detail"][0]
        assert detail["loc"][-1] == field and words in detail["msg"], detail


def test_unknown_thread_is_a_404(http):
    response = http.get("/answers/no-such-thread")
    assert response.status_code == 404 and "no-such-thread" in response.json()["detail"]


def test_a_pending_verification_survives_a_server_crash(tmp_path):
    checkpointer = f"sqlite:{tmp_path / 'deferred.sqlite'}"
    with serving_app(tmp_path, checkpointer=checkpointer, name="before",
                     GR_TEST_VERIFY_DELAY="300") as first:
        with httpx.Client(base_url=first.url, timeout=30) as client:
            response = client.post("/rag/invoke", json={
                "input": {"question": BATTERY_24}, "config": {"configurable": DEFERRED}})
            assert response.json()["output"]["verification"] == "pending"
            thread_id = response.headers["x-thread-id"]
            time.sleep(0.5)  # the background verification has started (and sleeps)
            assert client.get(f"/answers/{thread_id}").json()["verification"] == "pending"
        kill(first)  # mid-verification, no shutdown

    with serving_app(tmp_path, checkpointer=checkpointer, name="after") as second:
        with httpx.Client(base_url=second.url, timeout=30) as client:
            # Resumed at start-up, before anyone asks (the metric is read, nothing started).
            deadline = time.monotonic() + 30
            while deferred_metric(client, "warning") < 1 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert deferred_metric(client, "warning") == 1
            stored = client.get(f"/answers/{thread_id}").json()
            assert stored["verification"] == "complete" and stored["checked_claims"] == 2
            assert [c["status"] for c in stored["claims"]] == ["flagged", "verified"]
            assert len(stored["warnings"]) == 1
