"""The HTTP app: LangServe routes over the graph, human review, live progress, metrics, page.

``create_app()`` returns a FastAPI app with

- ``/rag/*``: LangServe (invoke, batch, stream, stream_log, stream_events, schemas,
  playground) over the compiled graph, nothing in between but request validation, a
  thread id per run (the checkpointer needs one) and a metrics callback
  (:mod:`~grounded_rag.serving.routes_rag`);
- ``POST /ask/stream``: the page's endpoint, Server-Sent Events of the graph's custom
  progress events, then the final result (:mod:`~grounded_rag.serving.routes_rag`);
- ``GET /reviews``, ``GET|POST /reviews/{thread_id}``: answers paused in review mode and
  the reviewer's decision (approve / edit / reject) (:mod:`~grounded_rag.serving.routes_reviews`);
- ``GET /answers/{thread_id}``: a thread's latest answer, with its (deferred) verification
  (:mod:`~grounded_rag.serving.routes_answers`);
- ``/healthz``, ``/metrics`` (Prometheus text) and the cited-answer page at ``/``
  (:mod:`~grounded_rag.serving.routes_ops`).

Settings travel as ``config["configurable"]`` (LangServe's only channel); they are checked
against the raw request first (:mod:`~grounded_rag.serving.checks`). This module only
assembles: server settings, the checkpointer's lifetime, middleware, error handlers, routes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel

from grounded_rag import questions
from grounded_rag.context import validate_settings
from grounded_rag.serving._deferred import DEFAULT_TIMEOUT_S
from grounded_rag.serving.checkpoints import (
    checkpointer_kind,
    database_errors,
    default_checkpoint_path,
    default_checkpointer,
    open_checkpointer,
    skip_new_thread_reads,
)
from grounded_rag.serving.checks import (
    DEFAULT_MAX_QUESTION_CHARS,
    SERVER_ONLY_SETTINGS,
    check_question,
    check_settings,
)
from grounded_rag.serving.limits import Gate, Limits, LimitsMiddleware
from grounded_rag.serving.metrics import PriceTable, RagMetrics
from grounded_rag.serving.routes_answers import register_answers
from grounded_rag.serving.routes_ops import package_version, register_ops
from grounded_rag.serving.routes_rag import (
    RagRequestChecks,
    ThreadIdHeader,
    register_ask_stream,
    register_langserve,
)
from grounded_rag.serving.routes_reviews import register_reviews
from grounded_rag.serving.served import (
    DEFAULT_DURABILITY,
    OUTPUT_KEYS,
    Durability,
    Served,
    check_durability,
)
from grounded_rag.serving.served import compile_graph as _compile

log = logging.getLogger(__name__)

# The first four are the app's own names; the rest moved to the modules above and stay
# importable from here.
__all__ = ["DEFAULT_MAX_QUESTION_CHARS", "OUTPUT_KEYS", "create_app", "open_checkpointer",
           "SERVER_ONLY_SETTINGS", "check_question", "check_settings", "checkpointer_kind",
           "default_checkpoint_path"]


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
    durability: Durability = DEFAULT_DURABILITY,
    title: str = "grounded-rag",
    warm_up: bool = False,
    keys: str | None = None,
) -> FastAPI:
    """Build the serving app.

    Args:
        graph: a compiled graph or an uncompiled builder; default: the package's workflow
            (store and models from the settings).
        checkpointer: ``None`` (SQLite next to a store directory; the store's own database
            for a ``postgresql://`` store), ``"sqlite:PATH"``, ``"postgresql://..."``,
            ``"memory"`` or a saver object. A compiled graph that already has a
            checkpointer keeps it when this is ``None``.
        store_dir: the store served by default (sets the ``store_dir`` setting).
        settings: server defaults for every run; requests override all but ``store_dir``.
        prices: model price table (dict or JSON/TOML path) overlaid on the defaults.
        metrics: a ``RagMetrics`` to record into (default: a fresh one).
        max_question_chars: longest question accepted.
        deferred_timeout_s: a deferred verification still running after this long is
            recorded as failed.
        limits: body size, runs in flight, queue and per-client limits (default:
            ``Limits()``; see :mod:`grounded_rag.serving.limits`).
        durability: when served runs write checkpoints: ``"exit"`` (default: once, when the
            run ends, paused or not), ``"async"`` (after every step, in the background) or
            ``"sync"`` (after every step, before the next). Review mode and deferred
            verification need only the checkpoint a paused run ends on.
        title: the OpenAPI title.
        warm_up: answer a throwaway question per language in the background at start, when
            the generator is the local model (see :func:`warm_up_graph`); no checkpoint,
            metric or thread is left behind.
        keys: an API key file (:mod:`~grounded_rag.serving.auth`): every request but health,
            metrics and the page needs a live key, reviews a reviewer's. None: open.
    """
    # LangServe comes with the serve extra: without it, fail before anything is checked or built.
    import langserve  # noqa: F401

    if not 0 < max_question_chars <= questions.MAX_QUESTION_CHARS:
        raise ValueError(f"max_question_chars must be between 1 and "
                         f"{questions.MAX_QUESTION_CHARS} (the graph's own limit)")
    served_graph = _compile(graph)
    if checkpointer is None and isinstance(graph, Pregel) and graph.checkpointer:
        checkpointer = graph.checkpointer  # type: ignore[assignment]
    if checkpointer is None:  # named now: the log, /healthz and worker claims see the real one
        checkpointer = default_checkpointer(store_dir)
    defaults = dict(validate_settings(dict(settings or {})))
    if store_dir:
        defaults["store_dir"] = store_dir
    served = Served(served_graph, checkpointer, defaults, metrics or RagMetrics(prices),
                    max_question_chars, store_dir, durability=check_durability(durability))
    served.deferred.timeout_s = deferred_timeout_s

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_checkpointer(checkpointer, store_dir=store_dir) as saver:
            served_graph.checkpointer = skip_new_thread_reads(saver)
            log.info("serving %s with a %s checkpointer", served_graph.name,
                     checkpointer_kind(checkpointer))
            served.deferred.loop = asyncio.get_running_loop()
            served.deferred.share_with_workers(checkpointer)
            try:
                await served.deferred.recover(saver)
            except Exception:  # an unreadable old checkpoint must not keep the server down
                log.exception("could not look for deferred verifications left pending")
            served.metrics.worker_started()
            warming = None
            if warm_up and _local_generator(defaults):
                warming = asyncio.create_task(asyncio.to_thread(warm_up_graph, served_graph,
                                                                defaults))
            try:
                yield
            finally:
                served.metrics.worker_stopped()
                await served.deferred.aclose()
                if warming is not None and not warming.done():
                    log.info("stopping before the warm-up finished")

    app = FastAPI(title=title, version=package_version(), lifespan=lifespan,
                  description="Answers from your documents with verified citations, or an "
                  "abstention.")
    app.state.served = served
    app.add_middleware(RagRequestChecks, max_question_chars=max_question_chars)
    app.add_middleware(ThreadIdHeader)
    if keys:  # inside the limits, outside everything that reads a body
        from grounded_rag.serving.auth import AuthMiddleware, KeyStore

        app.add_middleware(AuthMiddleware, keys=KeyStore(keys))
    # Outermost: a request refused for size or load costs nothing further.
    limits = limits or Limits()
    gate = Gate.for_limits(limits)
    app.add_middleware(LimitsMiddleware, limits=limits, registry=served.metrics.registry,
                       gate=gate)

    # Registration order is the route order and the OpenAPI order.
    register_langserve(app, served)
    _register_error_handlers(app, retry_after=str(limits.retry_after_s))
    register_ops(app, served, gate)
    register_ask_stream(app, served)
    register_answers(app, served)
    register_reviews(app, served)
    return app


def _register_error_handlers(app: FastAPI, *, retry_after: str) -> None:
    """Errors a user can fix: say what happened and what to do (not a bare 500)."""
    from grounded_rag.models import MissingExtraError
    from grounded_rag.retrieval import RetrievalError

    async def unavailable(request: Request, exc: Exception) -> JSONResponse:
        log.warning("%s %s: %s", request.method, request.url.path, exc)
        return JSONResponse({"detail": str(exc), "type": type(exc).__name__}, status_code=503,
                            headers={"Retry-After": retry_after})

    app.add_exception_handler(RetrievalError, unavailable)
    app.add_exception_handler(MissingExtraError, unavailable)
    for error in database_errors():  # the checkpointer's database is away (restart, network)
        app.add_exception_handler(error, unavailable)


WARM_UP_QUESTIONS = ("この資料には何が書かれていますか？", "What do these documents say?")
"""One throwaway question per language: they load the model, the store and the embedders and
evaluate each language's prompts, whatever the store holds."""


def _local_generator(settings: Mapping[str, Any]) -> bool:
    from grounded_rag.models import default_model_spec, is_local_spec

    return is_local_spec(str(settings.get("generator_model") or default_model_spec()))


def warm_up_graph(graph: Any, settings: Mapping[str, Any]) -> float:
    """Answer :data:`WARM_UP_QUESTIONS` with ``graph`` (no checkpointer); the seconds taken.

    The gate is opened and revisions are off, so each question reaches the generator and
    the judge once. A failure is logged, never raised: the server serves regardless.
    """
    start = time.perf_counter()
    quiet = graph.copy(update={"checkpointer": None})
    config = {"configurable": {**settings, "abstain_threshold": 0.0, "max_retries": 0,
                               "predicate_check": False, "review_mode": False}}
    try:
        for question in WARM_UP_QUESTIONS:
            quiet.invoke({"question": question}, config)
    except Exception:
        log.exception("warm-up failed; the first question will load what it needs")
        return time.perf_counter() - start
    took = time.perf_counter() - start
    log.info("warmed up in %.1f s: the model, the store and both languages' prompts", took)
    return took
