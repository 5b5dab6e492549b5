"""The floor of the serving stack: the same run shape, with nodes that do nothing but the model.

``build_floor_graph`` is served by ``load_test.py --floor-graph`` (``grounded-rag serve --graph
benchmarks._load_floor:build_floor_graph``): a LangGraph ``StateGraph`` with the workflow's
own state schemas and the node and routing steps that the load test's question takes through
the real workflow (read from a run of the scripted workflow when the graph is built). Its
nodes do no work. Those the real workflow runs in a worker thread (the store, the models)
run in one too, and sleep the scripted model's time (``$GR_TEST_MODEL_DELAY``,
``$GR_TEST_VERIFY_DELAY``); the others and the routers run on the event loop; the last node
returns the real workflow's output for that question, recorded beforehand (its
``timings_ms`` too, so the load test's "graph stages" column shows the recorded run's).
What the server, LangServe, LangGraph, the thread hand-offs and the checkpointer cost around
that is the least a workflow of this shape costs on this stack; the real workflow's overhead
above it is its nodes' own work.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any, TypedDict

# Served by uvicorn workers as ``benchmarks._load_floor``: its siblings import each other as
# top-level modules, as they do when load_test.py runs.
sys.path.append(str(Path(__file__).resolve().parent))

from _load_levels import QUESTION  # noqa: E402

THREAD_NODES = {"retrieve_evidence": "", "generate_answer": "GR_TEST_MODEL_DELAY",
                "revise_answer": "GR_TEST_MODEL_DELAY", "verify_claims": "GR_TEST_VERIFY_DELAY"}
"""Nodes that the real workflow runs in a worker thread (the store, the scripted models) in
async runs, and the delay variable each sleeps (none for the store). The rest run on the
event loop, as the real workflow's checks and routers do. Async runs only (served)."""


def recorded_run() -> tuple[list[str], dict[str, Any]]:
    """The node path of the load test's question through the scripted workflow, and its output."""
    from langgraph.checkpoint.memory import InMemorySaver

    from tests.serving_app import build_test_graph

    graph = build_test_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    path = [name for update in graph.stream({"question": QUESTION}, config,
                                            stream_mode="updates", durability="exit")
            for name in update]
    return path, dict(graph.get_state(config).values)


def build_floor_graph() -> Any:
    """The uncompiled floor graph (the server compiles it with its own checkpointer)."""
    from langgraph.graph import END, START, StateGraph

    from grounded_rag.context import Context
    from grounded_rag.state import InputState, OutputState, State

    path, output = recorded_run()
    final = {key: output[key] for key in OutputState.__annotations__ if key in output}
    builder = StateGraph(State, context_schema=Context, input_schema=InputState,
                         output_schema=OutputState)

    def thread_node(delay_env: str) -> Any:
        def node(state: dict[str, Any]) -> dict[str, Any]:
            if delay_env:
                time.sleep(float(os.environ.get(delay_env, "0")))
            return {}
        return node  # synchronous: LangGraph runs it in a worker thread, as the real ones

    async def plain_node(state: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def last_node(state: dict[str, Any]) -> dict[str, Any]:
        return final

    def router(target: str) -> Any:
        async def route(state: dict[str, Any]) -> str:
            return target
        return route

    seen: set[str] = set()
    for index, name in enumerate(path):
        if name in seen:
            raise RuntimeError(f"the recorded path visits {name} twice: {path}")
        seen.add(name)
        if index == len(path) - 1:
            builder.add_node(name, last_node)
        elif name in THREAD_NODES:
            builder.add_node(name, thread_node(THREAD_NODES[name]))
        else:
            builder.add_node(name, plain_node)
    builder.add_edge(START, path[0])
    for name, following in zip(path, [*path[1:], END], strict=True):
        # The real workflow routes out of most nodes with a function: so does the floor.
        builder.add_conditional_edges(name, router(following))
    return builder


class _Minimal(TypedDict, total=False):
    question: str
    answer: str


def build_minimal_graph() -> Any:
    """The floor's steps over a two-key state, every node on the event loop, no model time.

    What LangGraph alone costs for a run of that many steps, whatever the workflow's state
    holds (async runs only).
    """
    from langgraph.graph import END, START, StateGraph

    path, _ = recorded_run()
    builder = StateGraph(_Minimal)

    async def node(state: dict[str, Any]) -> dict[str, Any]:
        return {}

    def router(target: str) -> Any:
        async def route(state: dict[str, Any]) -> str:
            return target
        return route

    for name in path:
        builder.add_node(name, node)
    builder.add_edge(START, path[0])
    for name, following in zip(path, [*path[1:], END], strict=True):
        builder.add_conditional_edges(name, router(following))
    return builder
