"""``GET /answers/{thread_id}``: a thread's latest answer, waiting for a deferred verification."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException, Request

from grounded_rag.serving._deferred import is_pending as _verification_pending
from grounded_rag.serving.served import Served, current_answer, may_use

__all__ = ["register_answers"]


def register_answers(app: FastAPI, served: Served) -> None:
    """Add the answers route."""
    served_graph = served.graph

    @app.get("/answers/{thread_id}", tags=["ask"])
    async def get_answer(thread_id: str, request: Request, wait: float = 0.0) -> dict[str, Any]:
        """A thread's latest answer; ``wait`` (seconds, at most 300) waits for its verification.

        A pending deferred verification that nobody runs (a restart, a client that left) is
        started here. ``verification`` is ``pending`` while it runs, then ``complete`` (with
        verdicts, findings and ``warnings``) or ``failed`` (with ``verification_error``).
        With API keys, another asker's thread is 404 (reviewers and admins read every one).
        """
        snapshot = await served_graph.aget_state({"configurable": {"thread_id": thread_id}})
        if (not snapshot or not snapshot.values or
                not may_use(getattr(request.state, "identity", None), snapshot, write=False)):
            raise HTTPException(404, f"no answer on thread {thread_id!r}")
        if _verification_pending(snapshot):
            await served.deferred.wait(thread_id, timeout=max(0.0, min(wait, 300.0)))
        return await current_answer(served_graph, thread_id)
