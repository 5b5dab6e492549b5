"""Human review: the answers paused in review mode and a reviewer's approve, edit or reject."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Request
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command
from pydantic import BaseModel, Field, StrictStr

from grounded_rag.context import SETTING_NAMES
from grounded_rag.serving.checks import request_error
from grounded_rag.serving.served import (
    Served,
    is_pending_review,
    pending_review,
    run_result,
    thread_owner,
)

__all__ = ["ReviewDecision", "StatementIn", "register_reviews"]


class StatementIn(BaseModel):
    """One edited answer sentence with its citations."""

    text: StrictStr = Field(min_length=1, max_length=4000)
    citations: list[dict[str, StrictStr]] = Field(default_factory=list)


class ReviewDecision(BaseModel):
    """A reviewer's decision on a paused answer."""

    action: Literal["approve", "edit", "reject"]
    answer: StrictStr | None = Field(default=None, max_length=20000)
    statements: list[StatementIn] | None = None
    note: StrictStr = Field(default="", max_length=2000)


def register_reviews(app: FastAPI, served: Served) -> None:
    """``GET /reviews``, ``GET|POST /reviews/{thread_id}``."""
    served_graph = served.graph

    @app.get("/reviews", tags=["review"])
    async def list_reviews(limit: int = 100) -> dict[str, Any]:
        """Answers paused for a person (review mode), newest first."""
        limit = max(1, min(limit, 1000))
        saver = served_graph.checkpointer
        assert isinstance(saver, BaseCheckpointSaver)
        # Only runs made with review mode on can pause; their checkpoints carry the setting.
        # Collect the threads first: the SQLite saver holds its connection lock while listing.
        thread_ids: dict[str, None] = {}
        async for item in saver.alist(None, filter={"review_mode": True}):
            thread_ids.setdefault(item.config["configurable"]["thread_id"], None)
        reviews: list[dict[str, Any]] = []
        for thread_id in thread_ids:
            pending = await pending_review(served_graph, thread_id)
            if pending:
                reviews.append(pending)
        reviews.sort(key=lambda r: r.get("created_at") or "", reverse=True)
        return {"reviews": reviews[:limit]}

    @app.get("/reviews/{thread_id}", tags=["review"])
    async def get_review(thread_id: str) -> dict[str, Any]:
        """One paused answer."""
        pending = await pending_review(served_graph, thread_id)
        if not pending:
            raise HTTPException(404, f"no pending review for thread {thread_id!r}")
        return pending

    @app.post("/reviews/{thread_id}", tags=["review"])
    async def decide_review(thread_id: str, decision: ReviewDecision,
                            request: Request) -> dict[str, Any]:
        """Approve, edit (verified again) or reject (abstain) a paused answer.

        With API keys, the decision records the reviewer's key name (``review.by``) and the
        time (``review.at``), kept in the thread's checkpoint.
        """
        if decision.action == "edit" and not (decision.statements or
                                              (decision.answer or "").strip()):
            raise request_error(422, ["body", "answer"], "an edit needs 'answer' text or "
                                "'statements'", "missing")
        lock = served.review_locks.setdefault(thread_id, asyncio.Lock())
        async with lock:
            snapshot = await served_graph.aget_state({"configurable": {"thread_id": thread_id}})
            if not is_pending_review(snapshot):
                raise HTTPException(404, f"no pending review for thread {thread_id!r}")
            # Resume with the settings the run started with (checkpoint metadata has them).
            original = {k: v for k, v in (snapshot.metadata or {}).items()
                        if k in SETTING_NAMES}
            config = served.config(original, thread_id, owner=thread_owner(snapshot))
            resume = decision.model_dump(exclude_none=True)
            identity = getattr(request.state, "identity", None)
            if identity is not None:
                resume["by"] = identity.name
            resume["at"] = datetime.now(UTC).isoformat(timespec="seconds")
            values = await served_graph.ainvoke(Command(resume=resume), config,
                                                durability=served.durability)
            result = await run_result(served_graph, thread_id, values)
            if result.get("verification") == "pending":  # an edit, verified after the answer
                await served.deferred.start_if_pending(thread_id)
            return result
