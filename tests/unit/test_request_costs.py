"""What one served request pays for: the graph's thread hand-offs and the checkpoint reads
of a run and of ``/ask/stream`` (docs/serving.md, "The request path")."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import threading
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver

import grounded_rag.nodes as nodes_module
from grounded_rag import build_graph
from grounded_rag.serving.app import create_app
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev
from tests.serving_app import build_test_graph

BATTERY = "How long does the X100 battery last?"
SPEC = ev("spec#sec2", "Battery: The X100 battery lasts up to 10 hours on a single charge.")
NODES = ("retrieve_evidence", "assess_answerability", "generate_answer", "check_citations",
         "extract_claims", "verify_claims", "finalize_answer")


# -- where the graph's steps run ---------------------------------------------------------------

def _record_threads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Have every node note the thread it ran in (read when the graph is built)."""
    seen: dict[str, int] = {}
    for name in NODES:
        func = getattr(nodes_module, name)

        def noting(*args: Any, _func: Any = func, _name: str = name, **kwargs: Any) -> Any:
            seen[_name] = threading.get_ident()
            return _func(*args, **kwargs)

        monkeypatch.setattr(nodes_module, name, functools.wraps(func)(noting))
    return seen


def _graph(extractor: Any = "rules") -> Any:
    model = ScriptedChatModel(script={
        "CitedAnswer": [answer(("The X100 battery lasts up to 10 hours.", "spec#sec2"))],
        "ExtractedClaims": [{"claims": [{"statement": 0,
                                         "text": "The X100 battery lasts up to 10 hours."}]}]})
    return build_graph(retriever=StaticRetriever([SPEC]), generator=model,
                       extractor=model if extractor == "model" else extractor,
                       verifier=ScriptedVerifier())


async def _run_counting_hand_offs(graph: Any) -> tuple[dict[str, Any], int, int]:
    """The run's output, the loop's thread and how many calls it handed to worker threads."""
    loop = asyncio.get_running_loop()
    hand_offs = 0
    run_in_executor = loop.run_in_executor

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal hand_offs
        hand_offs += 1
        return run_in_executor(*args, **kwargs)

    loop.run_in_executor = counting  # type: ignore[method-assign]
    try:
        out = await graph.ainvoke({"question": BATTERY})
    finally:
        del loop.run_in_executor
    return out, threading.get_ident(), hand_offs


def test_async_runs_keep_only_the_store_and_the_models_in_worker_threads(monkeypatch):
    seen = _record_threads(monkeypatch)
    out, loop_thread, hand_offs = asyncio.run(_run_counting_hand_offs(_graph()))
    assert out["status"] == "answered"
    in_threads = {name for name, ident in seen.items() if ident != loop_thread}
    assert in_threads == {"retrieve_evidence", "generate_answer", "verify_claims"}
    # Those three and nothing else: the five routers and the four checks run on the loop.
    assert hand_offs == 3


def test_a_model_that_splits_claims_runs_in_a_worker_thread(monkeypatch):
    seen = _record_threads(monkeypatch)
    out, loop_thread, hand_offs = asyncio.run(_run_counting_hand_offs(_graph("model")))
    assert out["status"] == "answered"
    assert seen["extract_claims"] != loop_thread
    assert seen["check_citations"] == loop_thread
    assert hand_offs == 4


def test_sync_runs_and_async_runs_answer_the_same():
    graph = _graph()
    sync_out = graph.invoke({"question": BATTERY})
    async_out = asyncio.run(_graph().ainvoke({"question": BATTERY}))
    for out in (sync_out, async_out):
        out.pop("timings_ms")
    assert sync_out == async_out


# -- checkpoint reads of a served run ----------------------------------------------------------

class CountingSaver(InMemorySaver):
    """Counts the checkpoint reads that reach the saver."""

    reads = 0

    def get_tuple(self, config: Any) -> Any:
        self.reads += 1
        return super().get_tuple(config)


@contextlib.asynccontextmanager
async def served() -> AsyncIterator[tuple[httpx.AsyncClient, CountingSaver]]:
    saver = CountingSaver()
    app = create_app(build_test_graph(), checkpointer=saver)
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client, saver


def _events(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


async def _stream(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await client.post("/ask/stream", json={"question": BATTERY, **body})
    assert response.status_code == 200, response.text
    return {name: data for name, data in _events(response.text) if name != "progress"}


async def test_a_new_thread_is_not_read_back_before_or_after_its_run():
    async with served() as (client, saver):
        response = await client.post("/rag/invoke", json={"input": {"question": BATTERY}})
        assert response.status_code == 200 and saver.reads == 0
        events = await _stream(client)
        assert events["result"]["status"] == "answered"
        assert events["result"]["review"] == {"pending": False}
        assert saver.reads == 0  # the result came from the streamed values
        # What was written is there to read back.
        answer_ = await client.get(f"/answers/{events['result']['thread_id']}")
        assert answer_.json()["answer"] == events["result"]["answer"]


async def test_a_clients_thread_is_read_once_when_its_run_starts():
    async with served() as (client, saver):
        first = await _stream(client, thread_id="mine")
        assert saver.reads == 1  # the run looks for the thread's earlier state
        again = await _stream(client, thread_id="mine")
        assert saver.reads == 2
        assert again["result"]["answer"] == first["result"]["answer"]


async def test_a_stream_paused_for_review_or_deferred_verification_reports_it():
    async with served() as (client, _):
        paused = await _stream(client, settings={"review_mode": True, "review_threshold": 0.99})
        review = paused["result"]["review"]
        assert review["pending"] is True and review["actions"] == ["approve", "edit", "reject"]
        thread_id = paused["result"]["thread_id"]
        assert (await client.get(f"/reviews/{thread_id}")).json()["answer"] == review["answer"]
        deferred = await _stream(client, settings={"verify_mode": "deferred"})
        assert deferred["result"]["verification"] == "pending"
        assert deferred["result"]["review"] == {"pending": False}
        assert deferred["verification"]["verification"] == "complete"


async def test_a_client_cannot_pass_a_thread_off_as_new():
    async with served() as (client, _):
        body = {"input": {"question": BATTERY},
                "config": {"configurable": {"__grounded_rag_new_thread": True}}}
        assert (await client.post("/rag/invoke", json=body)).status_code == 422
