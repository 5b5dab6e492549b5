"""Serving metrics: price table, result accounting, and the callback that reads usage."""

from __future__ import annotations

import json
import os

import pytest
from langchain_core.callbacks import UsageMetadataCallbackHandler
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from prometheus_client.parser import text_string_to_metric_families

from grounded_rag.serving.metrics import DEFAULT_PRICES, ModelPrice, PriceTable, RagMetrics
from tests.serving_app import build_test_graph


def samples(metrics: RagMetrics) -> dict:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(metrics.render().decode()) for s in f.samples}


def value(metrics, name, **labels):
    return samples(metrics).get((name, tuple(sorted(labels.items()))), 0.0)


def test_price_table_defaults_and_name_matching():
    table = PriceTable()
    assert table.lookup("gpt-4.1-mini") == ModelPrice(0.40, 1.60)
    assert table.lookup("openai:gpt-4.1-mini") == ModelPrice(0.40, 1.60)
    assert table.lookup("gpt-4.1-mini-2025-04-14") == ModelPrice(0.40, 1.60)  # not gpt-4.1
    assert table.lookup("gpt-4.1-2025-04-14") == DEFAULT_PRICES["gpt-4.1"]
    assert table.lookup("models/gemini-2.5-flash") == ModelPrice(0.30, 2.50)
    assert table.lookup("google_genai:gemini-2.5-flash") == ModelPrice(0.30, 2.50)
    assert table.lookup("local") == ModelPrice(0.0, 0.0)
    assert table.lookup("local:/models/x.gguf") == ModelPrice(0.0, 0.0)
    assert table.lookup("acme-9000") is None
    assert table.cost("gpt-4.1-mini", 1_000_000, 500_000) == pytest.approx(0.40 + 0.80)
    assert table.cost("acme-9000", 10, 10) is None


def test_price_table_from_dict_json_and_toml(tmp_path):
    assert PriceTable.load({"gpt-4.1-mini": {"input": 1, "output": 2}}).lookup(
        "gpt-4.1-mini") == ModelPrice(1.0, 2.0)
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"my-model": {"input": 3, "output": 4}}))
    table = PriceTable.load(path)
    assert table.lookup("my-model") == ModelPrice(3.0, 4.0)
    assert table.lookup("gemini-2.5-flash") == ModelPrice(0.30, 2.50)  # defaults stay
    toml = tmp_path / "prices.toml"
    toml.write_text('[prices."gemini-2.5-flash"]\ninput = 0.5\noutput = 3.0\n')
    assert PriceTable.load(str(toml)).lookup("gemini-2.5-flash") == ModelPrice(0.5, 3.0)
    with pytest.raises(ValueError, match="needs numeric 'input' and 'output'"):
        PriceTable.load({"x": {"input": 1}})
    bad = tmp_path / "bad.toml"
    bad.write_text("not = [toml")
    with pytest.raises(ValueError, match="not valid toml"):
        PriceTable.load(bad)


def test_each_instance_has_its_own_registry():
    a, b = RagMetrics(), RagMetrics()
    a.regenerations.inc(3)
    assert value(a, "rag_regenerations_total") == 3
    assert value(b, "rag_regenerations_total") == 0


def test_observe_result_counts_verdicts_hallucinations_and_latency():
    metrics = RagMetrics()
    metrics.observe_result({
        "status": "answered", "attempts": 3, "confidence": 0.9,
        "claims": [{"text": "a", "verdict": "supported"}, {"text": "b", "verdict": "supported"}],
        "removed_claims": [{"text": "c", "verdict": "contradicted"},
                           {"text": "d", "verdict": "neutral"}],
        "timings_ms": {"retrieve": 20.0, "generate": 1500.0},
    }, wall_s=1.6)
    assert value(metrics, "rag_queries_total", status="answered") == 1
    assert value(metrics, "rag_claim_verdicts_total", verdict="supported") == 2
    assert value(metrics, "rag_hallucination_total", kind="contradicted") == 1
    assert value(metrics, "rag_hallucination_total", kind="unsupported") == 1
    assert value(metrics, "rag_regenerations_total") == 2
    assert value(metrics, "rag_query_latency_seconds_sum", stage="generate") == 1.5
    assert value(metrics, "rag_query_latency_seconds_bucket", stage="retrieve", le="0.025") == 1
    assert value(metrics, "rag_query_latency_seconds_count", stage="total") == 1
    assert value(metrics, "rag_answer_confidence_count") == 1


def test_observe_abstention_reason_and_ignore_unfinished():
    metrics = RagMetrics()
    metrics.observe_result({"status": "abstained", "attempts": 0, "findings": [
        {"type": "weak_evidence", "severity": "critical", "claim_index": -1, "detail": ""}]})
    metrics.observe_result({"status": "abstained", "attempts": 1, "findings": []})
    metrics.observe_result({"question": "still running"})
    assert value(metrics, "rag_abstentions_total", reason="weak_evidence") == 1
    assert value(metrics, "rag_abstentions_total", reason="not_answerable") == 1
    assert value(metrics, "rag_queries_total", status="abstained") == 2


def test_observer_reads_usage_and_results_from_a_real_run():
    metrics = RagMetrics(prices={"gpt-4.1-mini": {"input": 1_000_000, "output": 0}})
    reference = UsageMetadataCallbackHandler()
    graph = build_test_graph()
    out = graph.invoke({"question": "Does the X100 battery last 24 hours?"},
                       {"callbacks": [metrics.observer(), reference]})
    assert out["status"] == "answered" and out["attempts"] == 2
    usage = reference.usage_metadata["gpt-4.1-mini"]
    # Same token totals as langchain_core's own usage handler.
    assert value(metrics, "rag_tokens_total", model="gpt-4.1-mini",
                 direction="input") == usage["input_tokens"]
    assert value(metrics, "rag_tokens_total", model="gpt-4.1-mini",
                 direction="output") == usage["output_tokens"]
    # 1 USD per input token in this table: the cost is the input token count.
    assert value(metrics, "rag_cost_usd_total", model="gpt-4.1-mini") == pytest.approx(
        usage["input_tokens"])
    assert value(metrics, "rag_query_cost_usd_count", model="gpt-4.1-mini") == 1
    assert value(metrics, "rag_hallucination_total", kind="contradicted") == 1
    assert value(metrics, "rag_regenerations_total") == 1
    assert value(metrics, "rag_query_latency_seconds_count", stage="verify_claims") == 1


def test_unknown_model_counts_tokens_but_no_cost(caplog):
    metrics = RagMetrics()
    assert metrics.observe_usage("acme-9000", 10, 5) == 0.0
    assert metrics.observe_usage("acme-9000", 10, 5) == 0.0
    assert value(metrics, "rag_tokens_total", model="acme-9000", direction="input") == 20
    assert value(metrics, "rag_cost_usd_total", model="acme-9000") == 0
    assert sum("no price for model 'acme-9000'" in r.message for r in caplog.records) == 1


def test_reviews_are_counted_once_per_event():
    metrics = RagMetrics()
    graph = build_test_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "r", "review_mode": True, "review_threshold": 0.99}}
    paused = graph.invoke({"question": "How long does the X100 battery last?"},
                          {**config, "callbacks": [metrics.observer()]})
    assert "needs_review" in paused["flags"]
    assert value(metrics, "rag_reviews_total", event="requested") == 1
    assert value(metrics, "rag_queries_total", status="answered") == 0  # not finished yet
    done = graph.invoke(Command(resume={"action": "approve"}),
                        {**config, "callbacks": [metrics.observer()]})
    assert done["status"] == "answered"
    assert value(metrics, "rag_reviews_total", event="approved") == 1
    assert value(metrics, "rag_queries_total", status="answered") == 1
    assert value(metrics, "rag_query_latency_seconds_count", stage="total") == 0  # resumed run


# -- several worker processes ----------------------------------------------------------------

_WORKER = """
import os, sys
from grounded_rag.serving.metrics import RagMetrics
from grounded_rag.serving.limits import Gate, _LimitMetrics
metrics = RagMetrics()
assert metrics.multiprocess_dir == os.environ["PROMETHEUS_MULTIPROC_DIR"], metrics.multiprocess_dir
gate = Gate(4, 4, 1.0)
_LimitMetrics(metrics.registry, gate)
metrics.worker_started()
for _ in range(int(sys.argv[1])):
    metrics.observe_result({"status": "answered", "attempts": 1, "confidence": 0.9,
                            "timings_ms": {"generate": 5.0}}, wall_s=0.02)
metrics.observe_result({"status": "abstained", "attempts": 0, "findings": [
    {"type": "weak_evidence", "severity": "critical", "claim_index": -1, "detail": ""}]})
gate.in_flight = 2  # two requests running when it stops
gate._changed()
if sys.argv[2] == "graceful":
    metrics.worker_stopped()
else:
    os._exit(0)  # like a SIGKILL: nothing runs on the way out
"""


def _run_worker(tmp_path, directory, answered: int, how: str) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)}
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    subprocess.run([sys.executable, str(script), str(answered), how], env=env, check=True,
                   timeout=120)


def test_several_processes_add_up_and_a_dead_ones_gauges_go(tmp_path):
    from grounded_rag.serving.metrics import clean_multiprocess_dir, render_multiprocess

    directory, made = clean_multiprocess_dir(str(tmp_path / "metrics"))
    assert not made
    _run_worker(tmp_path, directory, 3, "graceful")
    _run_worker(tmp_path, directory, 5, "killed")
    text = render_multiprocess(directory).decode()
    found = {(s.name, tuple(sorted(s.labels.items()))): s.value
             for f in text_string_to_metric_families(text) for s in f.samples}
    # Counters and histograms: every process that served, the dead ones included.
    assert found[("rag_queries_total", (("status", "answered"),))] == 8
    assert found[("rag_queries_total", (("status", "abstained"),))] == 2
    assert found[("rag_abstentions_total", (("reason", "weak_evidence"),))] == 2
    assert found[("rag_query_latency_seconds_count", (("stage", "total"),))] == 8
    assert found[("rag_query_latency_seconds_bucket", (("le", "+Inf"), ("stage", "total")))] == 8
    assert found[("rag_query_latency_seconds_bucket", (("le", "0.025"), ("stage", "total")))] == 8
    # Live gauges: neither process is alive (one stopped, one was killed and swept).
    assert found.get(("rag_workers", ()), 0.0) == 0
    assert found.get(("rag_http_in_flight", ()), 0.0) == 0


def test_live_gauges_of_running_processes_are_summed(tmp_path):
    import os

    from prometheus_client import values
    from prometheus_client.mmap_dict import MmapedDict, mmap_key

    from grounded_rag.serving.metrics import render_multiprocess, sweep_dead_processes

    directory = tmp_path / "metrics"
    directory.mkdir()
    # Two live processes (this one and its parent) each report 3 requests in flight; a
    # third file belongs to a process that no longer exists.
    dead = 2 ** 22 + 12345  # above the default pid_max: no such process
    for pid, value in ((os.getpid(), 3.0), (os.getppid(), 3.0), (dead, 7.0)):
        d = MmapedDict(str(directory / f"gauge_livesum_{pid}.db"))
        d.write_value(mmap_key("rag_http_in_flight", "rag_http_in_flight", (), (),
                               "Graph-running requests being served now."), value, 0.0)
        d.close()
    assert values.ValueClass is values.MutexValue  # this test process is not in that mode
    assert sweep_dead_processes(str(directory)) == [dead]
    assert not (directory / f"gauge_livesum_{dead}.db").exists()
    text = render_multiprocess(str(directory)).decode()
    assert "rag_http_in_flight 6.0" in text


def test_clean_multiprocess_dir_empties_a_given_directory_or_makes_one(tmp_path):
    from grounded_rag.serving.metrics import clean_multiprocess_dir, remove_multiprocess_dir

    given = tmp_path / "given"
    given.mkdir()
    (given / "counter_123.db").write_bytes(b"stale")
    (given / "README").write_text("not ours")
    path, made = clean_multiprocess_dir(str(given))
    assert (path, made) == (str(given), False)
    assert sorted(p.name for p in given.iterdir()) == ["README"]
    fresh, made = clean_multiprocess_dir()
    assert made and os.path.isdir(fresh) and not os.listdir(fresh)
    remove_multiprocess_dir(fresh)
    assert not os.path.exists(fresh)


async def test_in_flight_and_queued_gauges_follow_the_gate():
    import asyncio

    from grounded_rag.serving.limits import Gate, _LimitMetrics

    metrics = RagMetrics()
    gate = Gate(max_in_flight=1, max_queue=2, queue_timeout_s=5)
    _LimitMetrics(metrics.registry, gate)
    await gate.acquire()
    waiting = asyncio.create_task(gate.acquire())
    await asyncio.sleep(0.01)
    assert value(metrics, "rag_http_in_flight") == 1
    assert value(metrics, "rag_http_queued") == 1
    gate.release()  # the slot moves to the waiter
    await waiting
    assert value(metrics, "rag_http_in_flight") == 1
    assert value(metrics, "rag_http_queued") == 0
    gate.release()
    assert value(metrics, "rag_http_in_flight") == 0
    assert gate.admitted == 2
