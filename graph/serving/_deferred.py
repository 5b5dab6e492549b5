"""Deferred verification on the server: resume paused answers in the background, and recover.

A run with ``verify_mode="deferred"`` ends paused before ``verify_after_answer`` (an
interrupt, so the pending work is in the checkpointer). ``DeferredVerifications`` resumes
such threads as background tasks, lets the SSE stream and ``GET /answers/{thread_id}`` wait
for them, records a crash or a timeout as ``verification="failed"`` with the error, and at
start-up resumes every thread a previous server process left pending. Workers sharing a
Postgres checkpointer claim a thread before verifying it, so each runs once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from langgraph.types import Command

from grounded_rag.context import SETTING_NAMES, resolve_context
from grounded_rag.serving._claims import ThreadClaims
from grounded_rag.serving.checkpoints import OWNER, thread_owner
from grounded_rag.serving.metrics import LATE_VERIFICATION, RagMetrics
from grounded_rag.verification.modes import failed_update

log = logging.getLogger(__name__)

DEFERRED_NODE = "verify_after_answer"
"""The node a deferred answer pauses before."""

MARKER = "deferred_verification"
"""Checkpoint metadata key that marks runs whose verification is deferred (for recovery)."""

DEFAULT_TIMEOUT_S = 600.0
"""How long a deferred verification may run before it is recorded as failed."""

CLAIM_POLL_S = 0.5
"""How often a worker waiting on a verification another worker runs looks at the thread."""


def is_deferred(config: RunnableConfig) -> bool:
    """True when the settings in ``config`` defer verification until after the answer."""
    try:
        return resolve_context(None, config).verify_mode == "deferred"
    except ValueError:
        return False  # invalid settings fail the run itself, with their own message


def mark_deferred(config: RunnableConfig) -> RunnableConfig:
    """``config`` with the recovery marker in its metadata when verification is deferred."""
    if not is_deferred(config):
        return config
    return {**config, "metadata": {**(config.get("metadata") or {}), MARKER: True}}


def is_pending(snapshot: Any) -> bool:
    """True when a thread's state is paused before its deferred verification."""
    return bool(snapshot and snapshot.next == (DEFERRED_NODE,) and snapshot.interrupts)


class DeferredVerifications:
    """Background tasks that finish deferred verifications, one per thread at a time.

    Args:
        graph: the served graph (with its checkpointer).
        config_for: builds a run config from settings and a thread id (the server's own).
        timeout_s: a verification still running after this long is recorded as failed.
        metrics: counts failures the graph could not record itself (timeouts, crashes).
    """

    def __init__(self, graph: Pregel,
                 config_for: Callable[[Mapping[str, Any], str], RunnableConfig],
                 timeout_s: float = DEFAULT_TIMEOUT_S, metrics: RagMetrics | None = None,
                 durability: Literal["exit", "async", "sync"] = "exit") -> None:
        self.graph = graph
        self.durability = durability
        """When the verification run writes its checkpoints: at its end by default (a crash
        midway leaves the thread pending, and it is verified again)."""
        self.metrics = metrics
        self.config_for = config_for
        self.timeout_s = timeout_s
        self.loop: asyncio.AbstractEventLoop | None = None
        self.claims: ThreadClaims | None = None
        """Set when several workers share the checkpointer: one of them runs each thread."""
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def share_with_workers(self, checkpointer: Any) -> None:
        """Claim each verification before running it when the checkpointer is Postgres."""
        if isinstance(checkpointer, str) and checkpointer.startswith(("postgresql://",
                                                                      "postgres://")):
            self.claims = ThreadClaims(checkpointer)

    def running(self, thread_id: str) -> bool:
        """True while a background verification of this thread is in flight here."""
        task = self._tasks.get(thread_id)
        return task is not None and not task.done()

    async def start_if_pending(self, thread_id: str) -> asyncio.Task[None] | None:
        """Start (or join) the verification of a paused thread; None when nothing is pending."""
        task = self._tasks.get(thread_id)
        if task is not None and not task.done():
            return task
        snapshot = await self.graph.aget_state({"configurable": {"thread_id": thread_id}})
        if not is_pending(snapshot):
            return None
        task = self._tasks.get(thread_id)  # another caller may have started it meanwhile
        if task is not None and not task.done():
            return task
        # Resume with the settings the run started with (checkpoint metadata has them).
        settings = {k: v for k, v in (snapshot.metadata or {}).items() if k in SETTING_NAMES}
        owner = thread_owner(snapshot)
        task = asyncio.create_task(self._run(thread_id, settings, owner),
                                   name=f"deferred-verification-{thread_id}")
        self._tasks[thread_id] = task
        task.add_done_callback(lambda done: self._forget(thread_id, done))
        return task

    def _forget(self, thread_id: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(thread_id) is task:
            del self._tasks[thread_id]

    async def wait(self, thread_id: str, timeout: float | None = None) -> bool:
        """Wait until the thread's verification is no longer pending; False on timeout.

        When another worker holds the thread's claim, this one looks again every
        ``CLAIM_POLL_S`` seconds until that worker has finished (or taken over if it died).
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            task = await self.start_if_pending(thread_id)
            if task is None:
                return True
            left = None if deadline is None else max(0.0, deadline - loop.time())
            try:
                await asyncio.wait_for(asyncio.shield(task), left)
            except TimeoutError:
                return False
            if self.claims is None:
                return True
            if deadline is not None and loop.time() >= deadline:
                return not is_pending(await self.graph.aget_state(
                    {"configurable": {"thread_id": thread_id}}))
            await asyncio.sleep(CLAIM_POLL_S)

    def start_soon(self, thread_id: str) -> None:
        """Thread-safe: schedule ``start_if_pending`` on the server's event loop."""
        loop = self.loop
        if loop is None or loop.is_closed():
            return

        def schedule() -> None:
            task = asyncio.ensure_future(self.start_if_pending(thread_id))
            task.add_done_callback(_log_failure)

        loop.call_soon_threadsafe(schedule)

    async def _run(self, thread_id: str, settings: Mapping[str, Any], owner: Any) -> None:
        if self.claims is None:
            await self._verify(thread_id, settings, owner)
            return
        if not await self.claims.claim(thread_id):
            log.info("thread %s is being verified by another worker", thread_id)
            return
        try:
            # Another worker may have finished it between our look and our claim.
            snapshot = await self.graph.aget_state({"configurable": {"thread_id": thread_id}})
            if is_pending(snapshot):
                await self._verify(thread_id, settings, owner)
        finally:
            await self.claims.release(thread_id)

    async def _verify(self, thread_id: str, settings: Mapping[str, Any], owner: Any) -> None:
        config = mark_deferred(self.config_for(settings, thread_id))
        config["metadata"] = {**(config.get("metadata") or {}), LATE_VERIFICATION: True}
        if owner is not None:
            config["metadata"][OWNER] = owner
        try:
            await asyncio.wait_for(self.graph.ainvoke(Command(resume={"verify": True}), config,
                                                      durability=self.durability),
                                   self.timeout_s)
        except TimeoutError:
            await self._record_failure(thread_id, f"TimeoutError: verification still running "
                                       f"after {self.timeout_s:g} s")
        except asyncio.CancelledError:
            raise  # server shutdown: the thread stays pending and is resumed on next start
        except Exception as exc:
            log.exception("deferred verification of thread %s failed", thread_id)
            await self._record_failure(thread_id, f"{type(exc).__name__}: {exc}")

    async def _record_failure(self, thread_id: str, error: str) -> None:
        if self.metrics is not None:
            self.metrics.deferred.labels(outcome="failed").inc()
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        try:
            snapshot = await self.graph.aget_state(config)
            if not is_pending(snapshot):
                return  # it finished after all (or another question replaced it)
            owner = thread_owner(snapshot)
            if owner is not None:
                config["metadata"] = {OWNER: owner}
            await self.graph.aupdate_state(config, failed_update(snapshot.values, error),
                                           as_node=DEFERRED_NODE)
        except Exception:
            log.exception("could not record the failed verification of thread %s", thread_id)

    async def recover(self, saver: BaseCheckpointSaver) -> int:
        """Resume every thread a previous process left paused before its verification."""
        # Collect the threads first: the SQLite saver holds its connection lock while listing.
        thread_ids: dict[str, None] = {}
        async for item in saver.alist(None, filter={MARKER: True}):
            thread_ids.setdefault(item.config["configurable"]["thread_id"], None)
        started = 0
        for thread_id in thread_ids:
            try:
                if await self.start_if_pending(thread_id) is not None:
                    started += 1
            except Exception:
                log.exception("could not resume the deferred verification of %s", thread_id)
        if started:
            log.info("resumed %d deferred verification(s) left pending", started)
        return started

    async def aclose(self) -> None:
        """Cancel the tasks in flight (their threads stay pending for the next start)."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.claims is not None:
            with contextlib.suppress(Exception):
                await self.claims.aclose()

    def observer(self, thread_id: str) -> BaseCallbackHandler:
        """A callback that starts the verification when a deferred run has paused."""
        return _StartWhenPaused(self, thread_id)


class _StartWhenPaused(BaseCallbackHandler):
    """Starts a thread's deferred verification when its run (the root chain) ends.

    Called inline: what it does is thread-safe and instant, and an async run would otherwise
    hand each of its callback events (every node's and router's start and end, no-ops
    here) to a worker thread and back.
    """

    run_inline = True

    def __init__(self, manager: DeferredVerifications, thread_id: str) -> None:
        self.manager = manager
        self.thread_id = thread_id

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kwargs: Any) -> None:
        """Schedule the check once the outermost run has ended (paused or not)."""
        if parent_run_id is None:
            self.manager.start_soon(self.thread_id)


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("could not start a deferred verification: %s", task.exception())
