"""Runs of the graph over HTTP: LangServe's ``/rag/*`` and the page's SSE ``/ask/stream``."""

from __future__ import annotations

import json
import logging
import uuid
import warnings
from collections.abc import AsyncIterator, Sequence
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import Response
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableBinding, RunnableConfig
from pydantic import BaseModel, Field, StrictStr

from grounded_rag.presets import layer_settings
from grounded_rag.serving._deferred import is_deferred, mark_deferred
from grounded_rag.serving.checks import (
    THREAD_ID_MAX,
    check_question,
    check_settings,
    validate_rag_body,
)
from grounded_rag.serving.served import Served, current_answer, run_result

log = logging.getLogger(__name__)

__all__ = ["AskRequest", "ThreadIdHeader", "register_ask_stream", "register_langserve"]


class AskRequest(BaseModel):
    """The page's question, with optional per-request settings."""

    question: Any = None
    settings: dict[str, Any] = Field(default_factory=dict)
    thread_id: StrictStr | None = Field(default=None, min_length=1, max_length=THREAD_ID_MAX)


def register_langserve(app: FastAPI, served: Served) -> None:
    """LangServe's routes under ``/rag``: request checks, a thread per run, metrics."""
    from langserve import add_routes

    async def validate_rag_request(request: Request) -> None:
        await validate_rag_body(request, served.max_question_chars)

    def per_request_config(config: dict[str, Any], request: Request) -> dict[str, Any]:
        # LangServe's config model filled every default and dropped thread_id: rebuild the
        # configurable from what the client actually sent (validated above).
        pending: list[dict[str, Any]] = getattr(request.state, "rag_configurables", [])
        sent = pending.pop(0) if pending else {}
        configurable = layer_settings(served.settings, sent)
        if "thread_id" not in configurable and not request.url.path.endswith("/batch"):
            configurable["thread_id"] = str(uuid.uuid4())
        if "thread_id" in configurable:
            request.state.thread_ids = [*getattr(request.state, "thread_ids", []),
                                        configurable["thread_id"]]
        return {**config, "configurable": configurable}

    def per_run_config(config: RunnableConfig) -> RunnableConfig:
        # Batch items without a thread id get one each (never a shared thread).
        callbacks: list[BaseCallbackHandler] = [served.metrics.observer()]
        extra: RunnableConfig = {"callbacks": callbacks}
        thread_id = (config.get("configurable") or {}).get("thread_id")
        if not thread_id:
            thread_id = str(uuid.uuid4())
            extra["configurable"] = {"thread_id": thread_id}
        if is_deferred(config):
            # Verify in the background once the run has returned its answer.
            callbacks.append(served.deferred.observer(thread_id))
            extra["metadata"] = mark_deferred(config).get("metadata", {})
        return extra

    runnable = _ServedGraph(bound=served.graph, config_factories=[per_run_config],
                            kwargs={}, config={})
    add_routes(app, runnable, path="/rag", per_req_config_modifier=per_request_config,
               dependencies=[Depends(validate_rag_request)])


def register_ask_stream(app: FastAPI, served: Served) -> None:
    """``POST /ask/stream``: the page's endpoint, Server-Sent Events of one run."""
    served_graph = served.graph

    @app.post("/ask/stream", tags=["ask"])
    async def ask_stream(body: AskRequest) -> Response:
        """Run one question; SSE ``start``, ``progress`` (per stage), then ``result``.

        With ``verify_mode="deferred"`` the ``result`` comes with ``verification:
        "pending"`` and the stream stays open for one more event, ``verification``: the
        same answer with its verdicts, findings and warnings (or ``"failed"`` and the error).
        """
        from sse_starlette import EventSourceResponse

        question = check_question(body.question, ["body", "question"],
                                  served.max_question_chars)
        settings = check_settings(body.settings, ["body", "settings"])
        thread_id = body.thread_id or str(uuid.uuid4())
        config = served.config(settings, thread_id)

        async def events() -> AsyncIterator[dict[str, str]]:
            yield _sse("start", {"thread_id": thread_id, "question": question})
            last: Any = {}
            try:
                async for mode, chunk in served_graph.astream(
                    {"question": question}, config, stream_mode=["custom", "values"]
                ):
                    if mode == "custom":
                        yield _sse("progress", chunk)
                    else:
                        last = chunk
                result = await run_result(served_graph, thread_id, last)
                yield _sse("result", result)
                if result.get("verification") == "pending":
                    await served.deferred.wait(thread_id)
                    yield _sse("verification", await current_answer(served_graph, thread_id))
            except Exception as exc:
                log.exception("run %s failed", thread_id)
                yield _sse("error", {"message": f"{type(exc).__name__}: {exc}",
                                     "thread_id": thread_id})

        return EventSourceResponse(events(), ping=15)


def _sse(event: str, data: Any) -> dict[str, str]:
    return {"event": event, "data": json.dumps(data, ensure_ascii=False, default=str)}


class _ServedGraph(RunnableBinding):  # type: ignore[type-arg]
    """The graph plus per-run config factories; its config schema is the graph's own.

    ``RunnableBinding`` builds its config schema from ``config_specs``, which a LangGraph
    graph leaves empty (its settings are its context schema), so LangServe's config schema
    and playground would show no settings without this.
    """

    def config_schema(self, *, include: Sequence[str] | None = None) -> type[BaseModel]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # LangServe needs this API
            return self.bound.config_schema(include=include)


class ThreadIdHeader:
    """Adds ``X-Thread-Id`` to /rag responses so a client can find its run (and review)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Pass the request on; add the header once the response starts."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                ids = (scope.get("state") or {}).get("thread_ids") or []
                if len(ids) == 1:
                    headers = list(message.get("headers", []))
                    headers.append((b"x-thread-id", ids[0].encode()))
                    message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_header)
