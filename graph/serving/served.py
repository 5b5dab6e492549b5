"""What the routes share: the served graph, its per-run config and its answers as the contract."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Literal, get_args

from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel

from grounded_rag.presets import layer_settings
from grounded_rag.serving._deferred import DeferredVerifications, mark_deferred
from grounded_rag.serving.checkpoints import NEW_THREAD, OWNER, thread_owner
from grounded_rag.serving.metrics import RagMetrics

__all__ = ["DEFAULT_DURABILITY", "Durability", "OUTPUT_KEYS", "OWNER", "Served",
           "check_durability", "compile_graph", "current_answer", "finished_result",
           "is_pending_review", "may_use", "pending_review", "run_result", "stream_keys",
           "thread_owner"]

Durability = Literal["exit", "async", "sync"]
"""LangGraph's durability modes: when a run's checkpoints are written."""

DEFAULT_DURABILITY: Durability = "exit"
"""Served runs checkpoint once, when they end (finished, paused for review or for a deferred
verification, or failed): nothing the server does reads a run's intermediate steps, and a
run interrupted by a crash is asked again from the start, not resumed from a step."""


def check_durability(value: str) -> Durability:
    """``value`` as a durability mode, or a ValueError naming the choices."""
    if value not in get_args(Durability):
        raise ValueError(f"durability must be one of {', '.join(get_args(Durability))}, got "
                         f"{value!r}")
    return value  # type: ignore[return-value]

OUTPUT_KEYS = ("question", "status", "answer", "claims", "removed_claims", "sources", "attempts",
               "confidence", "grounding_score", "findings", "flags", "timings_ms", "language",
               "verification", "checked_claims", "verification_error", "warnings", "decided_by",
               "stage_scores")
"""The output contract's keys, in display order."""


class Served:
    """What the routes share: the graph, its checkpointer, metrics and server settings."""

    def __init__(self, graph: Pregel, checkpointer: Any, settings: dict[str, Any],
                 metrics: RagMetrics, max_question_chars: int, store_dir: str | None,
                 durability: Durability = DEFAULT_DURABILITY) -> None:
        self.graph = graph
        self.durability = check_durability(durability)
        """When every served run writes its checkpoints (see ``DEFAULT_DURABILITY``)."""
        self.checkpointer_spec = checkpointer
        self.settings = settings
        self.metrics = metrics
        self.max_question_chars = max_question_chars
        self.store_dir = store_dir
        self.review_locks: dict[str, asyncio.Lock] = {}
        self.deferred = DeferredVerifications(graph, self.config, metrics=metrics,
                                              durability=self.durability)

    def config(self, settings: Mapping[str, Any], thread_id: str, *,
               new_thread: bool = False, owner: str | None = None) -> RunnableConfig:
        """A run's config: server settings under the request's, the thread, metrics.

        ``new_thread``: the server has just made ``thread_id`` up (nothing to read back).
        ``owner``: the key name the thread belongs to, kept in its checkpoints' metadata.
        """
        configurable = {**layer_settings(self.settings, settings), "thread_id": thread_id}
        if new_thread:
            configurable[NEW_THREAD] = True
        config: RunnableConfig = {"configurable": configurable,
                                  "callbacks": [self.metrics.observer()]}
        if owner is not None:
            config["metadata"] = {OWNER: owner}
        return mark_deferred(config)


def may_use(identity: Any, snapshot: Any, *, write: bool) -> bool:
    """Whether ``identity`` may read (``write=False``) or run on a thread.

    Without keys (``identity`` None) and on a thread with no answer yet, everyone may. A
    thread belongs to the key that started it; reviewers read every thread (they review
    them), admins also run on every thread; anyone else is told the thread does not exist.
    """
    if identity is None or not snapshot or not snapshot.values:
        return True
    if thread_owner(snapshot) == identity.name:
        return True
    return bool(identity.may("admin") or (not write and identity.may("reviewer")))


def compile_graph(graph: Any) -> Pregel:
    """The graph to serve: the package's workflow by default, a copy of a compiled one."""
    if graph is None:
        from grounded_rag.graph import builder

        graph = builder
    if isinstance(graph, StateGraph):
        return graph.compile(name="grounded-rag")
    if isinstance(graph, Pregel):
        return graph.copy()
    raise TypeError(f"graph must be a compiled graph or a StateGraph builder, got {type(graph)}")


def is_pending_review(snapshot: Any) -> bool:
    """Whether a thread's state is an answer paused for a person."""
    return bool(snapshot and snapshot.next == ("review_answer",) and snapshot.interrupts)


async def pending_review(graph: Pregel, thread_id: str) -> dict[str, Any] | None:
    """A thread's answer paused for review, with its interrupt id; ``None`` if none is."""
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    if not is_pending_review(snapshot):
        return None
    payload = dict(snapshot.interrupts[0].value)
    return {"thread_id": thread_id, "created_at": snapshot.created_at,
            "interrupt_id": snapshot.interrupts[0].id, **payload}


def stream_keys(graph: Pregel) -> list[str] | None:
    """The channels a streamed run's ``values`` should carry: the output's and ``review``.

    With them a finished run's result needs no read of its checkpoint
    (:func:`finished_result`); ``None`` when the graph has no ``review`` channel.
    """
    keys = graph.output_channels
    if isinstance(keys, str) or "review" not in graph.channels:
        return None
    return [*keys, "review"] if "review" not in keys else list(keys)


def finished_result(thread_id: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`run_result` of a run that ended without pausing, from its last streamed values.

    Streamed with :func:`stream_keys`, they are what its checkpoint holds: nothing to read.
    """
    out = _contract(thread_id, values)
    out["review"] = {"pending": False, **dict(values.get("review") or {})}
    return out


def _contract(thread_id: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The output contract's fields of ``values``, with the thread id."""
    return {**{k: values[k] for k in OUTPUT_KEYS if k in values}, "thread_id": thread_id}


async def run_result(graph: Pregel, thread_id: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The output contract plus the thread id and review status (read from the checkpoint)."""
    out = _contract(thread_id, values)
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    if is_pending_review(snapshot):
        out["review"] = {"pending": True, **dict(snapshot.interrupts[0].value)}
    else:
        review = dict((snapshot.values or {}).get("review") or {}) if snapshot else {}
        out["review"] = {"pending": False, **review}
    return out


async def current_answer(graph: Pregel, thread_id: str) -> dict[str, Any]:
    """The thread's current answer as the output contract (re-read from the checkpointer)."""
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    return await run_result(graph, thread_id, (snapshot.values if snapshot else None) or {})
