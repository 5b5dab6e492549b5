"""Structured output that never returns a silent None: retry, then report a finding.

The ladder and its memory live here; failures are told apart in
:mod:`grounded_rag._structured_failures`, requests made and replies read in
:mod:`grounded_rag._structured_replies` (both re-exported).

How a structured reply is asked for (the rule, in order):

1. ``$GROUNDED_RAG_STRUCTURED_OUTPUT`` names one method (``json_schema``,
   ``json_object_schema``, ``function_calling`` or ``json``): only that one is used, for
   every model that takes it (``json_object_schema``: ``ChatOpenAI`` models only).
2. A ``ChatOpenAI`` pointed at another server (a base URL: ``openai:<model>@<url>``,
   ``$OPENAI_BASE_URL`` or ``ChatOpenAI(base_url=...)``) tries, per server and model, the
   ladder ``json_schema`` (``response_format`` with the schema) -> ``json_object_schema``
   (``response_format: {"type": "json_object", "schema": ...}``, the request the local
   model decodes under; llama.cpp servers build a grammar from the schema; the reply's
   text read as ``json`` reads it) -> ``function_calling`` (one forced tool call) ->
   ``json`` (plain text: the schema in the prompt, the reply's JSON object cut out and
   repaired). A method the server refuses (HTTP 400/415/422/501, or a 5xx whose message is
   a validation error naming what the method sends, as llama.cpp's server answers), or
   whose reply does not parse (a server that ignores the schema), passes to the next one,
   once each; the first that yields a valid object is remembered for that server and model
   (for the process), and later calls use it alone.
   If the server accepts none of the four requests, :class:`StructuredOutputUnsupported`
   says so, naming each refusal. If it accepts one but no reply parses, that is a
   :class:`StructuredOutputFailure` like any other (a finding: the loop regenerates or
   abstains).
3. Any other chat model (OpenAI itself, Gemini, the local model, injected models) uses
   ``json_schema`` where its ``with_structured_output`` takes it, else its own default.

Transport failures are not findings: after the client's own bounded retries (timeouts, 429
with ``Retry-After``, 5xx, lost connections; ``GROUNDED_RAG_MODEL_RETRIES``), the call raises
:class:`ModelServerError` naming the server, the model and the cause, and the run stops
there (nothing half-written: no answer is returned, a checkpointer keeps the last finished
step).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from grounded_rag._structured_failures import (
    ModelServerError,
    StructuredOutputFailure,
    StructuredOutputUnsupported,
    api_message,
    malformed,
    model_name,
    refused,
    server_error,
    server_of,
    unreadable_reply,
)
from grounded_rag._structured_replies import (
    SchemaT,
    ask,
    parse_json_reply,
    plain_json,
    structured_runnable,
    unwrapped,
)

__all__ = [
    "METHODS", "STRUCTURED_ENV", "ModelServerError", "StructuredOutputFailure",
    "StructuredOutputUnsupported", "forget_learned", "invoke_structured",
    "invoke_structured_raw", "learned_method", "parse_json_reply", "server_of",
    "unreadable_reply",
]

log = logging.getLogger(__name__)

STRUCTURED_ENV = "GROUNDED_RAG_STRUCTURED_OUTPUT"
"""``auto`` (default: the rule above), or one of :data:`METHODS`."""
METHODS = ("json_schema", "json_object_schema", "function_calling", "json")
"""The ladder for OpenAI-compatible servers, in the order tried."""


def _forced_method() -> str:
    raw = os.environ.get(STRUCTURED_ENV, "").strip().lower()
    if raw in ("", "auto"):
        return ""
    if raw not in METHODS:
        raise ValueError(f"{STRUCTURED_ENV} must be auto, {', '.join(METHODS)}; not {raw!r}")
    return raw


_learned: dict[tuple[str, str], str] = {}
_learned_lock = threading.Lock()


def learned_method(model: Any) -> str | None:
    """The structured-output method remembered for this model's server, if any."""
    server = server_of(model)
    if server is None:
        return None
    with _learned_lock:
        return _learned.get((server, model_name(model)))


def forget_learned() -> None:
    """Forget every remembered method (tests; a server that was upgraded)."""
    with _learned_lock:
        _learned.clear()


def invoke_structured(
    model: BaseChatModel,
    schema: type[SchemaT],
    messages: list[BaseMessage],
    *,
    attempts: int = 2,
) -> SchemaT:
    """Invoke ``model`` for a ``schema`` instance, retrying malformed or truncated replies.

    Raises:
        StructuredOutputFailure: when every attempt failed; callers turn it into a finding.
        ModelServerError: the server failed past its retries, or refused every method.
    """
    return invoke_structured_raw(model, schema, messages, attempts=attempts, raw=False)[0]


def invoke_structured_raw(
    model: BaseChatModel,
    schema: type[SchemaT],
    messages: list[BaseMessage],
    *,
    attempts: int = 2,
    raw: bool = True,
) -> tuple[SchemaT, BaseMessage | None]:
    """:func:`invoke_structured`, also returning the raw reply message when ``raw`` is set.

    The raw reply carries what the parsed object drops (the local model's
    ``response_metadata["choices"]`` scores, ``logprobs``, token usage). Only ask for it from
    models whose ``with_structured_output`` takes ``include_raw`` (the local one and
    LangChain's chat models do); on an OpenAI-compatible server it is the ladder's reply,
    whichever method gave it.
    """
    forced = _forced_method()
    if server_of(model) is not None:
        return _invoke_on_server(model, schema, messages, attempts=attempts, forced=forced,
                                 raw=raw)
    call = _direct(model, schema, forced, raw)
    errors: list[str] = []
    for attempt in range(1, attempts + 1):
        try:
            return call(messages)
        except Exception as exc:
            if unreadable_reply(exc):
                raise server_error(exc, model) from exc  # type: ignore[misc]
            if not malformed(exc):
                error = server_error(exc, model)
                if error is None:
                    raise
                raise error from exc
            errors.append(f"attempt {attempt}: {type(exc).__name__}: {str(exc)[:200]}")
            log.warning("structured output for %s failed (attempt %d): %s",
                        schema.__name__, attempt, exc)
    raise StructuredOutputFailure(schema.__name__, errors)


def _direct(model: BaseChatModel, schema: type[SchemaT], forced: str, raw: bool
            ) -> Callable[[list[BaseMessage]], tuple[SchemaT, BaseMessage | None]]:
    """One request to a model that is not on another server (rule 3, or the forced method)."""
    if forced == "json_object_schema" and type(model).__name__ == "ChatOpenAI":
        return lambda messages: _kept(ask(model, schema, messages, forced, raw), raw)
    if raw:
        runnable = (structured_runnable(model, schema, forced, include_raw=True)
                    if forced in ("json_schema", "function_calling")
                    else model.with_structured_output(schema, include_raw=True))
    elif forced == "json":
        return lambda messages: (plain_json(model, schema, messages)[0], None)
    else:
        method = forced if forced in ("json_schema", "function_calling") else "json_schema"
        runnable = structured_runnable(model, schema, method)
    return lambda messages: unwrapped(runnable.invoke(messages), schema, raw)


def _kept(result: tuple[SchemaT, BaseMessage | None], raw: bool
          ) -> tuple[SchemaT, BaseMessage | None]:
    return result if raw else (result[0], None)


def _invoke_on_server(model: BaseChatModel, schema: type[SchemaT],
                      messages: list[BaseMessage], *, attempts: int, forced: str,
                      raw: bool = False) -> tuple[SchemaT, BaseMessage | None]:
    """Structured output from an OpenAI-compatible server: the ladder, or the learned method.

    With ``raw``, also the reply message (else None).
    """
    server = server_of(model) or ""
    key = (server, model_name(model))
    with _learned_lock:
        known = forced or _learned.get(key)
    plan = [(known, attempts)] if known else [(m, 1) for m in METHODS]
    errors: list[str] = []
    refusals: list[str] = []
    for method, tries in plan:
        for attempt in range(1, tries + 1):
            try:
                result = ask(model, schema, messages, method, raw)
            except Exception as exc:
                if unreadable_reply(exc):
                    raise server_error(exc, model) from exc  # type: ignore[misc]
                label = f"{method} attempt {attempt}: {type(exc).__name__}: {str(exc)[:200]}"
                if refused(exc, method):
                    status = getattr(exc, "status_code", None)
                    refusals.append(f"{method}: HTTP {status}: {api_message(exc)}")
                    errors.append(label)
                    break  # the server does not take this request shape: next method
                if malformed(exc):
                    errors.append(label)
                    log.warning("structured output for %s from %s (%s) failed: %s",
                                schema.__name__, server, method, exc)
                    continue
                error = server_error(exc, model)
                if error is None:
                    raise
                raise error from exc
            if not known:
                with _learned_lock:
                    _learned[key] = method
                log.info("structured output from %s (%s): using %s", server, key[1], method)
            return _kept(result, raw)
    if len(refusals) == len(plan):
        raise StructuredOutputUnsupported(
            f"the model server at {server} (model {key[1]!r}) refused every structured-output "
            f"request: {'; '.join(refusals)}. Use a server that supports JSON schema "
            f"(response_format) or tool calls, or set {STRUCTURED_ENV}=json.",
            status=400)
    raise StructuredOutputFailure(schema.__name__, errors)
