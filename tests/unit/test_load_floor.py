"""The load test's floor graph takes the scripted workflow's steps and returns its answer."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def floor(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GR_TEST_MODEL_DELAY", "0")
    monkeypatch.setenv("GR_TEST_VERIFY_DELAY", "0")
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import _load

    yield _load
    sys.modules.pop("_load", None)


def test_the_floor_takes_the_workflows_steps_and_returns_its_answer(floor) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    path, output = floor.recorded_run()
    assert path[0] == "retrieve_evidence" and "generate_answer" in path
    assert output["status"] == "answered"
    graph = floor.build_floor_graph().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}

    async def run() -> tuple[list[str], dict]:
        steps = [name async for update in graph.astream(
            {"question": floor.QUESTION}, config, stream_mode="updates") for name in update]
        return steps, (await graph.aget_state(config)).values

    steps, values = asyncio.run(run())
    assert steps == path
    assert values["answer"] == output["answer"]
    assert values["status"] == "answered"
