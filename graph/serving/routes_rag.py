"""Runs of the graph over HTTP: LangServe's ``/rag/*`` and the page's SSE ``/ask/stream``."""

from __future__ import annotations

import json
import logging
import re
import uuid
import warnings
from collections.abc import AsyncIterator, Sequence
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import Response
from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.runnables import RunnableBinding, RunnableConfig
from pydantic import BaseModel, Field, StrictStr

from grounded_rag.presets import layer_settings
from grounded_rag.serving._deferred import is_deferred, mark_deferred
from grounded_rag.serving.checkpoints import NEW_THREAD, OWNER
from grounded_rag.serving.checks import (
    THREAD_ID_MAX,
    check_question,
    check_rag_payload,
    check_settings,
)
from grounded_rag.serving.limits import _replay
from grounded_rag.serving.served import (
    Served,
    current_answer,
    finished_result,
    may_use,
    run_result,
    stream_keys,
    thread_owner,
)

log = logging.getLogger(__name__)

INTERRUPT = "__interrupt__"
"""The key of a run's pause in LangGraph's streamed values (with what the pause asks)."""

__all__ = ["AskRequest", "RagRequestChecks", "ThreadIdHeader", "register_ask_stream",
           "register_langserve"]


class AskRequest(BaseModel):
    """The page's question, with optional per-request settings."""

    question: Any = None
    settings: dict[str, Any] = Field(default_factory=dict)
    thread_id: StrictStr | None = Field(default=None, min_length=1, max_length=THREAD_ID_MAX)


def register_langserve(app: FastAPI, served: Served) -> None:
    """LangServe's routes under ``/rag``: a thread per run, metrics.

    Requests are checked by :class:`RagRequestChecks` before they get here.
    """
    from langserve import add_routes

    async def per_request_config(config: dict[str, Any], request: Request) -> dict[str, Any]:
        # LangServe's config model filled every default and dropped thread_id: rebuild the
        # configurable from what the client actually sent (validated above).
        pending: list[dict[str, Any]] = getattr(request.state, "rag_configurables", [])
        sent = pending.pop(0) if pending else {}
        configurable = layer_settings(served.settings, sent)
        owner = await _run_owner(served, request, configurable.get("thread_id"))
        if "thread_id" not in configurable and not request.scope["path"].endswith("/batch"):
            configurable["thread_id"] = str(uuid.uuid4())
            configurable[NEW_THREAD] = True
        if "thread_id" in configurable:
            request.state.thread_ids = [*getattr(request.state, "thread_ids", []),
                                        configurable["thread_id"]]
        out = {**config, "configurable": configurable}
        if owner is not None:
            out["metadata"] = {**(config.get("metadata") or {}), OWNER: owner}
        return out

    def per_run_config(config: RunnableConfig) -> RunnableConfig:
        # Batch items without a thread id get one each (never a shared thread).
        callbacks: list[BaseCallbackHandler] = [served.metrics.observer()]
        extra: RunnableConfig = {"callbacks": callbacks}
        thread_id = (config.get("configurable") or {}).get("thread_id")
        if not thread_id:
            thread_id = str(uuid.uuid4())
            extra["configurable"] = {"thread_id": thread_id, NEW_THREAD: True}
        if is_deferred(config):
            # Verify in the background once the run has returned its answer.
            callbacks.append(served.deferred.observer(thread_id))
            extra["metadata"] = mark_deferred(config).get("metadata", {})
        return extra

    # Every LangServe call (invoke, batch, stream, stream_events) passes these keyword
    # arguments on to the graph: its runs checkpoint as the server's durability says.
    runnable = _ServedGraph(bound=served.graph, config_factories=[per_run_config],
                            kwargs={"durability": served.durability}, config={})
    add_routes(app, runnable, path="/rag", per_req_config_modifier=per_request_config)


def register_ask_stream(app: FastAPI, served: Served) -> None:
    """``POST /ask/stream``: the page's endpoint, Server-Sent Events of one run."""
    served_graph = served.graph
    keys = stream_keys(served_graph)

    @app.post("/ask/stream", tags=["ask"])
    async def ask_stream(body: AskRequest, request: Request) -> Response:
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
        owner = await _run_owner(served, request, body.thread_id)
        config = served.config(settings, thread_id, new_thread=body.thread_id is None,
                               owner=owner)

        async def events() -> AsyncIterator[dict[str, str]]:
            yield _sse("start", {"thread_id": thread_id, "question": question})
            last: Any = {}
            paused = False
            try:
                async for mode, chunk in served_graph.astream(
                    {"question": question}, config, stream_mode=["custom", "values"],
                    durability=served.durability, output_keys=keys,
                ):
                    if mode == "custom":
                        yield _sse("progress", chunk)
                    elif isinstance(chunk, dict) and INTERRUPT in chunk:
                        paused = True  # for a reviewer or a deferred verification
                        last = {k: v for k, v in chunk.items() if k != INTERRUPT}
                    else:
                        last = chunk
                # A run that ended is all in its streamed values; where a run paused (for
                # whom) is in its checkpoint.
                result = (finished_result(thread_id, last) if keys and not paused
                          else await run_result(served_graph, thread_id, last))
                yield _sse("result", result)
                if result.get("verification") == "pending":
                    await served.deferred.wait(thread_id)
                    yield _sse("verification", await current_answer(served_graph, thread_id))
            except Exception as exc:
                log.exception("run %s failed", thread_id)
                yield _sse("error", {"message": f"{type(exc).__name__}: {exc}",
                                     "thread_id": thread_id})

        return EventSourceResponse(events(), ping=15)


async def _run_owner(served: Served, request: Request, thread_id: str | None) -> str | None:
    """The owner a run on ``thread_id`` records; 404 when the caller may not run on it.

    A new thread belongs to the caller's key; an existing one keeps its owner.
    """
    identity = getattr(request.state, "identity", None)
    if identity is None:
        return None
    if thread_id is None:
        return str(identity.name)
    snapshot = await served.graph.aget_state({"configurable": {"thread_id": thread_id}})
    if not may_use(identity, snapshot, write=True):
        raise HTTPException(404, f"no thread {thread_id!r}")
    return thread_owner(snapshot) if snapshot and snapshot.values else str(identity.name)


def _sse(event: str, data: Any) -> dict[str, str]:
    return {"event": event, "data": json.dumps(data, ensure_ascii=False, default=str)}


class _ServedGraph(RunnableBinding):  # type: ignore[type-arg]
    """The graph plus per-run config factories; its config schema is the graph's own.

    ``RunnableBinding`` builds its config schema from ``config_specs``, which a LangGraph
    graph leaves empty (its settings are its context schema), so LangServe's config schema
    and playground would show no settings without this.

    LangServe attaches an event aggregator to every invoke, batch and stream, even when its
    events are not returned (``include_callback_events``, off here): an asynchronous handler
    that copies every callback event, and in the graph's synchronous nodes (run in threads)
    starts a new event loop for each one. It is dropped before the graph runs.
    """

    def _merge_configs(self, *configs: RunnableConfig | None) -> RunnableConfig:
        config = super()._merge_configs(*configs)
        callbacks = config.get("callbacks")
        if isinstance(callbacks, list):
            kept = [cb for cb in callbacks if not _is_event_aggregator(cb)]
            if len(kept) != len(callbacks):
                config["callbacks"] = kept
        elif isinstance(callbacks, BaseCallbackManager) and any(
                _is_event_aggregator(h) for h in callbacks.handlers):
            manager = callbacks.copy()
            for handler in [h for h in manager.handlers if _is_event_aggregator(h)]:
                manager.remove_handler(handler)
            config["callbacks"] = manager
        return config

    def config_schema(self, *, include: Sequence[str] | None = None) -> type[BaseModel]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # LangServe needs this API
            return self.bound.config_schema(include=include)


def _is_event_aggregator(handler: Any) -> bool:
    from langserve.callbacks import AsyncEventAggregatorCallback

    return isinstance(handler, AsyncEventAggregatorCallback)


_RUN_ENDPOINT = re.compile(r"/(?:c/(?P<config_hash>[^/]+)/)?"
                           r"(?P<endpoint>invoke|batch|stream|stream_log|stream_events)")


class RagRequestChecks:
    """Checks the question and settings of every LangServe run request, as plain ASGI.

    A ``POST /rag/{invoke,batch,stream,stream_log,stream_events}`` (and their
    ``/rag/c/{config_hash}/...`` forms) has its body read and checked before routing: a bad
    one is answered 422 naming the field, the way FastAPI would, without routing or
    dependency resolution (a burst of bad requests costs little); a good one goes on with its
    body replayed and its checked settings in ``scope["state"]["rag_configurables"]``.
    Malformed JSON goes on too: LangServe answers it.
    """

    def __init__(self, app: Any, *, max_question_chars: int, prefix: str = "/rag") -> None:
        self.app = app
        self.max_question_chars = max_question_chars
        self.prefix = prefix + "/"

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Check a run request's body; pass everything else through untouched."""
        path = scope.get("path", "")
        if (scope["type"] != "http" or scope.get("method") != "POST"
                or not path.startswith(self.prefix)):
            await self.app(scope, receive, send)
            return
        match = _RUN_ENDPOINT.fullmatch(path, len(self.prefix) - 1)
        if match is None:
            await self.app(scope, receive, send)
            return
        messages: list[dict[str, Any]] = []
        chunks: list[bytes] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break  # the client left: let the app see it
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        try:
            body = json.loads(b"".join(chunks))
        except (json.JSONDecodeError, UnicodeDecodeError):
            pass  # LangServe answers invalid JSON itself
        else:
            try:
                checked = check_rag_payload(
                    body, batch=match["endpoint"] == "batch",
                    config_hash=match["config_hash"] or "",
                    max_question_chars=self.max_question_chars)
            except HTTPException as exc:
                await _send_json(send, exc.status_code, {"detail": exc.detail})
                return
            scope.setdefault("state", {})["rag_configurables"] = checked
        await self.app(scope, _replay(messages, receive), send)


async def _send_json(send: Any, status: int, content: Any) -> None:
    body = json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


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
