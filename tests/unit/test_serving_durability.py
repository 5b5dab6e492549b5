"""Served runs checkpoint once, when they end (LangGraph durability "exit"): review mode and
deferred verification still find the pause they need; and LangServe's unused event
aggregator never reaches the graph."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langgraph.checkpoint.memory import InMemorySaver

from grounded_rag.serving.app import create_app
from tests.serving_app import build_test_graph

BATTERY = "How long does the X100 battery last?"


@contextlib.asynccontextmanager
async def served(durability: str = "exit") -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    saver = InMemorySaver()
    app = create_app(build_test_graph(), checkpointer=saver, durability=durability)  # type: ignore[arg-type]
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client, saver


async def ask(client: httpx.AsyncClient, **settings: Any) -> tuple[str, dict[str, Any]]:
    body: dict[str, Any] = {"input": {"question": BATTERY}}
    if settings:
        body["config"] = {"configurable": settings}
    response = await client.post("/rag/invoke", json=body)
    assert response.status_code == 200, response.text
    return response.headers["x-thread-id"], response.json()["output"]


def checkpoints(saver: InMemorySaver, thread_id: str) -> int:
    return len(list(saver.list({"configurable": {"thread_id": thread_id}})))


async def test_a_served_run_writes_one_checkpoint_when_it_ends():
    async with served("exit") as (client, saver):
        thread_id, out = await ask(client)
        assert out["status"] == "answered"
        assert checkpoints(saver, thread_id) == 1
        # The thread's answer is there to read back.
        answer = (await client.get(f"/answers/{thread_id}")).json()
        assert answer["status"] == "answered" and answer["answer"] == out["answer"]
    async with served("async") as (client, saver):
        thread_id, _ = await ask(client)
        assert checkpoints(saver, thread_id) > 5  # one per step of the graph


async def test_review_mode_pauses_and_resumes_with_checkpoints_at_exit():
    async with served("exit") as (client, saver):
        thread_id, out = await ask(client, review_mode=True, review_threshold=0.99)
        assert "needs_review" in out["flags"]
        assert checkpoints(saver, thread_id) == 1
        pending = await client.get(f"/reviews/{thread_id}")
        assert pending.status_code == 200 and pending.json()["answer"] == out["answer"]
        listed = (await client.get("/reviews")).json()["reviews"]
        assert [r["thread_id"] for r in listed] == [thread_id]
        decided = await client.post(f"/reviews/{thread_id}", json={"action": "approve"})
        assert decided.status_code == 200, decided.text
        assert "human_approved" in decided.json()["flags"]
        assert (await client.post(f"/reviews/{thread_id}",
                                  json={"action": "approve"})).status_code == 404


async def test_deferred_verification_finds_its_pause_with_checkpoints_at_exit():
    async with served("exit") as (client, _):
        thread_id, out = await ask(client, verify_mode="deferred")
        assert out["verification"] == "pending"
        answer = (await client.get(f"/answers/{thread_id}", params={"wait": 30})).json()
        assert answer["verification"] == "complete", answer
        assert answer["claims"][0]["verdict"] == "supported"


def test_an_unknown_durability_is_refused():
    with pytest.raises(ValueError, match="durability must be one of exit, async, sync"):
        create_app(build_test_graph(), checkpointer="memory", durability="never")  # type: ignore[arg-type]


class _Seen(BaseCallbackHandler):
    pass


def test_langserves_event_aggregator_is_dropped_before_the_graph_runs():
    from langserve.callbacks import AsyncEventAggregatorCallback

    from grounded_rag.serving.routes_rag import _ServedGraph

    bound = build_test_graph()
    runnable = _ServedGraph(bound=bound, config_factories=[], kwargs={}, config={})
    mine = _Seen()
    merged = runnable._merge_configs({"callbacks": [AsyncEventAggregatorCallback(), mine]})
    assert merged["callbacks"] == [mine]
    manager = CallbackManager(handlers=[AsyncEventAggregatorCallback(), mine])
    merged = runnable._merge_configs({"callbacks": manager})
    assert merged["callbacks"].handlers == [mine]
    assert len(manager.handlers) == 2  # the caller's manager is left as it was
