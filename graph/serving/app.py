"""The HTTP app: LangServe routes over the graph, human review, live progress, metrics, page.

``create_app()`` returns a FastAPI app with

- ``/rag/*``: LangServe (invoke, batch, stream, stream_log, stream_events, schemas,
  playground) over the compiled graph, nothing in between but request validation, a
  thread id per run (the checkpointer needs one) and a metrics callback;
- ``POST /ask/stream``: the page's endpoint, Server-Sent Events of the graph's custom
  progress events, then the final result;
- ``GET /reviews``, ``GET|POST /reviews/{thread_id}``: answers paused in review mode and
  the reviewer's decision (approve / edit / reject);
- ``GET /answers/{thread_id}``: a thread's latest answer, with its (deferred) verification;
- ``/healthz``, ``/metrics`` (Prometheus text) and the cited-answer page at ``/``.

Settings travel as ``config["configurable"]`` (LangServe's only channel). They are checked
against the raw request before LangServe sees it, because LangServe's own config model drops
unknown keys silently and fills in every default.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import uuid
import warnings
from collections.abc import AsyncIterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from langchain_core.runnables import RunnableBinding, RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command
from pydantic import BaseModel, Field, StrictStr

from grounded_rag import questions
from grounded_rag.context import SETTING_NAMES, validate_settings
from grounded_rag.presets import layer_settings
from grounded_rag.serving._deferred import (
    DEFAULT_TIMEOUT_S,
    DeferredVerifications,
    is_deferred,
    mark_deferred,
)
from grounded_rag.serving._deferred import is_pending as _verification_pending
from grounded_rag.serving.limits import Gate, Limits, LimitsMiddleware
from grounded_rag.serving.metrics import CONTENT_TYPE_LATEST, PriceTable, RagMetrics

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_MAX_QUESTION_CHARS", "OUTPUT_KEYS", "create_app", "open_checkpointer"]

DEFAULT_MAX_QUESTION_CHARS = questions.MAX_QUESTION_CHARS
"""Longest question accepted; longer ones get a 422 before any work is done."""

OUTPUT_KEYS = ("question", "status", "answer", "claims", "removed_claims", "sources", "attempts",
               "confidence", "grounding_score", "findings", "flags", "timings_ms", "language",
               "verification", "checked_claims", "verification_error", "warnings")
"""The output contract's keys (issue 2), in display order."""

SERVER_ONLY_SETTINGS = frozenset({"store_dir"})
"""Settings a request may not change: they name files on the server."""

_MODEL_SETTINGS = ("generator_model", "extractor_model", "verifier_model")
_THREAD_ID_MAX = 200


# -- checkpointer -----------------------------------------------------------------------------


def default_checkpoint_path(store_dir: str | None = None) -> Path:
    """Where the embedded SQLite checkpointer lives: next to the store."""
    base = store_dir or os.environ.get("GROUNDED_RAG_STORE") or ".grounded-rag"
    return Path(base) / "serving-checkpoints.sqlite"


def checkpointer_kind(spec: Any) -> str:
    """``sqlite``, ``postgres``, ``memory`` or the saver's class name."""
    if isinstance(spec, BaseCheckpointSaver):
        return type(spec).__name__
    if spec is None or str(spec).startswith("sqlite:"):
        return "sqlite"
    if str(spec).startswith(("postgresql://", "postgres://")):
        return "postgres"
    return str(spec)


@contextlib.asynccontextmanager
async def open_checkpointer(
    spec: str | BaseCheckpointSaver | None, *, store_dir: str | None = None
) -> AsyncIterator[BaseCheckpointSaver]:
    """Open the checkpointer a spec names, for the lifetime of the ``async with``.

    ``None`` -> SQLite next to the store; ``"sqlite:PATH"``; ``"postgresql://..."`` (a pool,
    tables created on first use); ``"memory"`` (nothing survives a restart); or a saver
    object, used as is.
    """
    if isinstance(spec, BaseCheckpointSaver):
        yield spec
        return
    if spec == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
        return
    if spec is None or spec.startswith("sqlite:"):
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = Path(spec.split(":", 1)[1]) if spec else default_checkpoint_path(store_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(str(path))
        try:
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            yield saver
        finally:
            await conn.close()
        return
    if spec.startswith(("postgresql://", "postgres://")):
        from grounded_rag.serving._postgres import postgres_saver

        async with postgres_saver(spec) as pg_saver:
            yield pg_saver
        return
    raise ValueError(
        f"unknown checkpointer {spec!r}: use 'sqlite:PATH', 'postgresql://USER@HOST/DB' or "
        "'memory'"
    )


# -- request validation -----------------------------------------------------------------------


def _error(status: int, loc: list[str | int], msg: str, kind: str) -> HTTPException:
    """An HTTPException shaped like FastAPI's and LangServe's own validation errors."""
    return HTTPException(status, detail=[{"loc": loc, "msg": msg, "type": kind}])


def check_question(value: Any, loc: list[str | int], max_chars: int) -> str:
    """The stripped question, or a 422 that says what is wrong with it (the CLI's words)."""
    try:
        return questions.check_question(value, max_chars)
    except questions.QuestionError as exc:
        raise _error(422, loc, str(exc), exc.kind) from None


def check_settings(values: Any, loc: list[str | int]) -> dict[str, Any]:
    """Validate request settings one by one so the error names the field."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise _error(422, loc, "configurable must be an object of settings", "type_error")
    checked: dict[str, Any] = {}
    for name, value in values.items():
        field_loc = [*loc, name]
        if name == "thread_id":
            if not isinstance(value, str) or not 0 < len(value) <= _THREAD_ID_MAX:
                raise _error(422, field_loc, f"thread_id must be a string of 1-{_THREAD_ID_MAX} "
                             "characters", "invalid_setting")
            checked[name] = value
            continue
        if name not in SETTING_NAMES:
            raise _error(422, field_loc, f"unknown setting {name!r}; known settings: "
                         f"{', '.join(sorted(SETTING_NAMES - SERVER_ONLY_SETTINGS))}",
                         "unknown_setting")
        if name in SERVER_ONLY_SETTINGS:
            raise _error(422, field_loc, f"{name} is set by the server and cannot be changed "
                         "per request", "server_only_setting")
        try:
            checked.update(validate_settings({name: value}))
        except ValueError as exc:
            raise _error(422, field_loc, str(exc), "invalid_setting") from None
        if name in _MODEL_SETTINGS:
            _check_model_spec(name, checked[name], field_loc)
    return checked


def _check_model_spec(name: str, spec: str, loc: list[str | int]) -> None:
    from grounded_rag.models import _PROVIDERS

    if spec in ("", "local") or (name == "extractor_model" and spec in ("auto", "rules")):
        return
    if spec.startswith("local:"):
        raise _error(422, loc, f"{name}: a local model file can only be chosen by the server",
                     "server_only_setting")
    provider, _, model = spec.partition(":")
    if provider not in _PROVIDERS or not model:
        known = ", ".join(["local", *(f"{p}:<model>" for p in _PROVIDERS)])
        raise _error(422, loc, f"unknown model spec {spec!r} for {name}; use one of: {known}",
                     "invalid_setting")


# -- the app ----------------------------------------------------------------------------------


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


class AskRequest(BaseModel):
    """The page's question, with optional per-request settings."""

    question: Any = None
    settings: dict[str, Any] = Field(default_factory=dict)
    thread_id: StrictStr | None = Field(default=None, min_length=1, max_length=_THREAD_ID_MAX)


class _Served:
    """What the routes share: the graph, its checkpointer, metrics and server settings."""

    def __init__(self, graph: Pregel, checkpointer: Any, settings: dict[str, Any],
                 metrics: RagMetrics, max_question_chars: int, store_dir: str | None) -> None:
        self.graph = graph
        self.checkpointer_spec = checkpointer
        self.settings = settings
        self.metrics = metrics
        self.max_question_chars = max_question_chars
        self.store_dir = store_dir
        self.review_locks: dict[str, asyncio.Lock] = {}
        self.deferred = DeferredVerifications(graph, self.config, metrics=metrics)

    def config(self, settings: Mapping[str, Any], thread_id: str) -> RunnableConfig:
        configurable = {**layer_settings(self.settings, settings), "thread_id": thread_id}
        return mark_deferred({"configurable": configurable,
                              "callbacks": [self.metrics.observer()]})


def _compile(graph: Any) -> Pregel:
    if graph is None:
        from grounded_rag.graph import builder

        graph = builder
    if isinstance(graph, StateGraph):
        return graph.compile(name="grounded-rag")
    if isinstance(graph, Pregel):
        return graph.copy()
    raise TypeError(f"graph must be a compiled graph or a StateGraph builder, got {type(graph)}")


def create_app(
    graph: Any = None,
    *,
    checkpointer: str | BaseCheckpointSaver | None = None,
    store_dir: str | None = None,
    settings: Mapping[str, Any] | None = None,
    prices: PriceTable | str | Path | Mapping[str, Any] | None = None,
    metrics: RagMetrics | None = None,
    max_question_chars: int = DEFAULT_MAX_QUESTION_CHARS,
    deferred_timeout_s: float = DEFAULT_TIMEOUT_S,
    limits: Limits | None = None,
    title: str = "grounded-rag",
) -> FastAPI:
    """Build the serving app.

    Args:
        graph: a compiled graph or an uncompiled builder; default: the package's workflow
            (store and models from the settings).
        checkpointer: ``None`` (SQLite next to the store), ``"sqlite:PATH"``,
            ``"postgresql://..."``, ``"memory"`` or a saver object. A compiled graph that
            already has a checkpointer keeps it when this is ``None``.
        store_dir: the store served by default (sets the ``store_dir`` setting).
        settings: server defaults for every run; requests override all but ``store_dir``.
        prices: model price table (dict or JSON/TOML path) overlaid on the defaults.
        metrics: a ``RagMetrics`` to record into (default: a fresh one).
        max_question_chars: longest question accepted.
        deferred_timeout_s: a deferred verification still running after this long is
            recorded as failed.
        limits: body size, runs in flight, queue and per-client limits (default:
            ``Limits()``; see :mod:`grounded_rag.serving.limits`).
        title: the OpenAPI title.
    """
    from langserve import add_routes

    if not 0 < max_question_chars <= questions.MAX_QUESTION_CHARS:
        raise ValueError(f"max_question_chars must be between 1 and "
                         f"{questions.MAX_QUESTION_CHARS} (the graph's own limit)")
    served_graph = _compile(graph)
    if checkpointer is None and isinstance(graph, Pregel) and graph.checkpointer:
        checkpointer = graph.checkpointer  # type: ignore[assignment]
    defaults = dict(validate_settings(dict(settings or {})))
    if store_dir:
        defaults["store_dir"] = store_dir
    served = _Served(served_graph, checkpointer, defaults, metrics or RagMetrics(prices),
                     max_question_chars, store_dir)
    served.deferred.timeout_s = deferred_timeout_s

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_checkpointer(checkpointer, store_dir=store_dir) as saver:
            served_graph.checkpointer = saver
            log.info("serving %s with a %s checkpointer", served_graph.name,
                     checkpointer_kind(checkpointer))
            served.deferred.loop = asyncio.get_running_loop()
            served.deferred.share_with_workers(checkpointer)
            try:
                await served.deferred.recover(saver)
            except Exception:  # an unreadable old checkpoint must not keep the server down
                log.exception("could not look for deferred verifications left pending")
            try:
                yield
            finally:
                await served.deferred.aclose()

    app = FastAPI(title=title, version=_version(), lifespan=lifespan,
                  description="Answers from your documents with verified citations, or an "
                  "abstention.")
    app.state.served = served
    app.add_middleware(_ThreadIdHeader)
    # Outermost: a request refused for size or load costs nothing further.
    limits = limits or Limits()
    gate = Gate.for_limits(limits)
    app.add_middleware(LimitsMiddleware, limits=limits, registry=served.metrics.registry,
                       gate=gate)

    # -- LangServe -----------------------------------------------------------------------
    async def validate_rag_request(request: Request) -> None:
        await _validate_rag_body(request, served)

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
        extra: RunnableConfig = {"callbacks": [served.metrics.observer()]}
        thread_id = (config.get("configurable") or {}).get("thread_id")
        if not thread_id:
            thread_id = str(uuid.uuid4())
            extra["configurable"] = {"thread_id": thread_id}
        if is_deferred(config):
            # Verify in the background once the run has returned its answer.
            extra["callbacks"] = [*extra["callbacks"], served.deferred.observer(thread_id)]
            extra["metadata"] = mark_deferred(config).get("metadata", {})
        return extra

    runnable = _ServedGraph(bound=served_graph, config_factories=[per_run_config],
                            kwargs={}, config={})
    add_routes(app, runnable, path="/rag", per_req_config_modifier=per_request_config,
               dependencies=[Depends(validate_rag_request)])

    # -- errors a user can fix: say what happened and what to do (not a bare 500) ---------
    from grounded_rag.models import MissingExtraError
    from grounded_rag.retrieval import RetrievalError

    retry_after = str(limits.retry_after_s)

    async def unavailable(request: Request, exc: Exception) -> JSONResponse:
        log.warning("%s %s: %s", request.method, request.url.path, exc)
        return JSONResponse({"detail": str(exc), "type": type(exc).__name__}, status_code=503,
                            headers={"Retry-After": retry_after})

    app.add_exception_handler(RetrievalError, unavailable)
    app.add_exception_handler(MissingExtraError, unavailable)
    for error in _database_errors():  # the checkpointer's database is away (restart, network)
        app.add_exception_handler(error, unavailable)

    # -- page, health, metrics -------------------------------------------------------------
    web_dir = _web_dir()
    if web_dir.is_dir():
        app.mount("/web", StaticFiles(directory=str(web_dir)), name="web")

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        page = web_dir / "index.html"
        if not page.is_file():
            raise HTTPException(404, "the page is not installed (grounded_rag/web is missing)")
        return FileResponse(page, media_type="text/html; charset=utf-8")

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> JSONResponse:
        """Liveness plus a checkpointer round trip; this worker's pid and load."""
        saver = served_graph.checkpointer
        body: dict[str, Any] = {"status": "ok", "graph": served_graph.name,
                                "checkpointer": checkpointer_kind(checkpointer),
                                "version": _version(), "pid": os.getpid(),
                                "in_flight": gate.in_flight, "queued": gate.queued}
        try:
            if not isinstance(saver, BaseCheckpointSaver):
                raise RuntimeError("no checkpointer is open")
            await asyncio.wait_for(saver.aget_tuple({"configurable": {
                "thread_id": "__healthz__", "checkpoint_ns": ""}}), timeout=5)
        except Exception as exc:  # report, don't crash: this is what health checks are for
            body.update(status="unavailable", error=f"{type(exc).__name__}: {exc}")
            return JSONResponse(body, status_code=503)
        return JSONResponse(body)

    @app.get("/metrics", tags=["ops"])
    async def metrics_endpoint() -> Response:
        """Prometheus text exposition."""
        return Response(served.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    # -- the page's streamed ask ----------------------------------------------------------------
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
                result = await _result(served_graph, thread_id, last)
                yield _sse("result", result)
                if result.get("verification") == "pending":
                    await served.deferred.wait(thread_id)
                    yield _sse("verification", await _answer(served_graph, thread_id))
            except Exception as exc:
                log.exception("run %s failed", thread_id)
                yield _sse("error", {"message": f"{type(exc).__name__}: {exc}",
                                     "thread_id": thread_id})

        return EventSourceResponse(events(), ping=15)

    # -- answers and their deferred verification --------------------------------------------
    @app.get("/answers/{thread_id}", tags=["ask"])
    async def get_answer(thread_id: str, wait: float = 0.0) -> dict[str, Any]:
        """A thread's latest answer; ``wait`` (seconds, at most 300) waits for its verification.

        A pending deferred verification that nobody runs (a restart, a client that left) is
        started here. ``verification`` is ``pending`` while it runs, then ``complete`` (with
        verdicts, findings and ``warnings``) or ``failed`` (with ``verification_error``).
        """
        snapshot = await served_graph.aget_state({"configurable": {"thread_id": thread_id}})
        if not snapshot or not snapshot.values:
            raise HTTPException(404, f"no answer on thread {thread_id!r}")
        if _verification_pending(snapshot):
            await served.deferred.wait(thread_id, timeout=max(0.0, min(wait, 300.0)))
        return await _answer(served_graph, thread_id)

    # -- human review -----------------------------------------------------------------------
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
            pending = await _pending_review(served_graph, thread_id)
            if pending:
                reviews.append(pending)
        reviews.sort(key=lambda r: r.get("created_at") or "", reverse=True)
        return {"reviews": reviews[:limit]}

    @app.get("/reviews/{thread_id}", tags=["review"])
    async def get_review(thread_id: str) -> dict[str, Any]:
        """One paused answer."""
        pending = await _pending_review(served_graph, thread_id)
        if not pending:
            raise HTTPException(404, f"no pending review for thread {thread_id!r}")
        return pending

    @app.post("/reviews/{thread_id}", tags=["review"])
    async def decide_review(thread_id: str, decision: ReviewDecision) -> dict[str, Any]:
        """Approve, edit (verified again) or reject (abstain) a paused answer."""
        if decision.action == "edit" and not (decision.statements or
                                              (decision.answer or "").strip()):
            raise _error(422, ["body", "answer"], "an edit needs 'answer' text or "
                         "'statements'", "missing")
        lock = served.review_locks.setdefault(thread_id, asyncio.Lock())
        async with lock:
            snapshot = await served_graph.aget_state({"configurable": {"thread_id": thread_id}})
            if not _is_pending(snapshot):
                raise HTTPException(404, f"no pending review for thread {thread_id!r}")
            # Resume with the settings the run started with (checkpoint metadata has them).
            original = {k: v for k, v in (snapshot.metadata or {}).items()
                        if k in SETTING_NAMES}
            config = served.config(original, thread_id)
            resume = decision.model_dump(exclude_none=True)
            values = await served_graph.ainvoke(Command(resume=resume), config)
            result = await _result(served_graph, thread_id, values)
            if result.get("verification") == "pending":  # an edit, verified after the answer
                await served.deferred.start_if_pending(thread_id)
            return result

    return app


# -- helpers ----------------------------------------------------------------------------------


async def _validate_rag_body(request: Request, served: _Served) -> None:
    """Check inputs and settings of a LangServe request before LangServe runs it."""
    if request.method != "POST":
        return
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return  # LangServe answers invalid JSON itself
    if not isinstance(body, dict):
        raise _error(422, ["body"], "the request body must be a JSON object", "type_error")
    configs: list[Any]
    if request.url.path.endswith("/batch"):
        inputs = body.get("inputs")
        if not isinstance(inputs, list) or not inputs:
            raise _error(422, ["body", "inputs"], "inputs must be a non-empty list",
                         "type_error")
        raw = body.get("config")
        configs = raw if isinstance(raw, list) else [raw]
        locs: list[list[str | int]] = [["body", "inputs", i] for i in range(len(inputs))]
    else:
        inputs = [body.get("input")]
        configs = [body.get("config")]
        locs = [["body", "input"]]
    for value, input_loc in zip(inputs, locs, strict=True):
        if not isinstance(value, dict):
            raise _error(422, input_loc, "input must be an object like {\"question\": \"...\"}",
                         "type_error")
        check_question(value.get("question"), [*input_loc, "question"],
                       served.max_question_chars)
    hashed: dict[str, Any] = {}
    config_hash = request.path_params.get("config_hash")
    if config_hash:
        from langserve.api_handler import _config_from_hash

        hashed = (_config_from_hash(config_hash).get("configurable") or {})
    checked = []
    for i, config in enumerate(configs):
        if config is not None and not isinstance(config, dict):
            raise _error(422, ["body", "config"], "config must be an object", "type_error")
        configurable = {**hashed, **((config or {}).get("configurable") or {})}
        loc: list[str | int] = ["body", "config", "configurable"]
        if len(configs) > 1:
            loc = ["body", "config", i, "configurable"]
        checked.append(check_settings(configurable, loc))
    request.state.rag_configurables = checked


def _is_pending(snapshot: Any) -> bool:
    return bool(snapshot and snapshot.next == ("review_answer",) and snapshot.interrupts)


async def _pending_review(graph: Pregel, thread_id: str) -> dict[str, Any] | None:
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    if not _is_pending(snapshot):
        return None
    payload = dict(snapshot.interrupts[0].value)
    return {"thread_id": thread_id, "created_at": snapshot.created_at,
            "interrupt_id": snapshot.interrupts[0].id, **payload}


async def _result(graph: Pregel, thread_id: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The output contract plus the thread id and review status."""
    out: dict[str, Any] = {k: values[k] for k in OUTPUT_KEYS if k in values}
    out["thread_id"] = thread_id
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    if _is_pending(snapshot):
        out["review"] = {"pending": True, **dict(snapshot.interrupts[0].value)}
    else:
        review = dict((snapshot.values or {}).get("review") or {}) if snapshot else {}
        out["review"] = {"pending": False, **review}
    return out


async def _answer(graph: Pregel, thread_id: str) -> dict[str, Any]:
    """The thread's current answer as the output contract (re-read from the checkpointer)."""
    snapshot = await graph.aget_state({"configurable": {"thread_id": thread_id}})
    return await _result(graph, thread_id, (snapshot.values if snapshot else None) or {})


def _database_errors() -> list[type[Exception]]:
    """Errors of an unreachable checkpointer database: answered 503 + Retry-After, not 500."""
    errors: list[type[Exception]] = []
    with contextlib.suppress(ImportError):
        import psycopg

        errors.append(psycopg.OperationalError)
    with contextlib.suppress(ImportError):
        from psycopg_pool import PoolTimeout

        errors.append(PoolTimeout)
    return errors


def _sse(event: str, data: Any) -> dict[str, str]:
    return {"event": event, "data": json.dumps(data, ensure_ascii=False, default=str)}


def _web_dir() -> Path:
    return Path(str(resources.files("grounded_rag") / "web"))


def _version() -> str:
    from grounded_rag import __version__

    return __version__


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


class _ThreadIdHeader:
    """Adds ``X-Thread-Id`` to /rag responses so a client can find its run (and review)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
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

