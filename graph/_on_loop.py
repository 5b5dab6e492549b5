"""Where a synchronous node or router runs in an async run: on the event loop or in a thread.

LangGraph hands every synchronous node and routing function of an async run (``ainvoke``,
``astream``: every served request) to a worker thread and back. For the model calls and the
store that is what keeps the event loop free; for the pure routers and the checks that take
a fraction of a millisecond, the two thread switches cost more than the work (five routers
and four nodes per answered question). :func:`on_loop` runs such a function on the loop in
async runs; sync runs (``invoke``, the CLI) call it as before, and what it computes, its
callbacks and its stream events are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.runnables.config import run_in_executor

__all__ = ["on_loop"]


def _runnable_callable() -> Any:
    """LangGraph's wrapper of node functions (its public API has no "call it inline" form)."""
    try:
        from langgraph._internal._runnable import RunnableCallable
    except ImportError:  # pragma: no cover - a LangGraph that moved it: threads, as before
        return None
    return RunnableCallable


_RUNNABLE_CALLABLE = _runnable_callable()


def on_loop(func: Callable[..., Any], *, name: str | None = None, trace: bool = False,
            in_thread_if: Callable[..., bool] | None = None) -> Any:
    """``func`` as LangGraph would wrap it, except that async runs call it on the event loop.

    Args:
        func: a synchronous node or routing function (LangGraph injects ``config``,
            ``runtime`` ... into it by its signature, as for a plain function).
        name: the node's name (a routing function's run is named after the function).
        trace: ``True`` for a routing function (LangGraph traces those as runs of their
            own), ``False`` for a node (its run is the node's task).
        in_thread_if: called with the same arguments; when it returns True the call goes to
            a worker thread as before (a node that will call a model this time).
    """
    if _RUNNABLE_CALLABLE is None:
        return func

    async def call(*args: Any, **kwargs: Any) -> Any:
        if in_thread_if is not None and in_thread_if(*args, **kwargs):
            return await run_in_executor(None, func, *args, **kwargs)
        return func(*args, **kwargs)

    return _RUNNABLE_CALLABLE(func, call, name=name, trace=trace)
