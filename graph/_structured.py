"""Structured output that never returns a silent None: retry, then report a finding.

It stays one module over 400 lines because the rule below is one ladder: choosing a method,
falling back, remembering the choice and classifying failures read the same reply.

How a structured reply is asked for (the rule, in order):

1. ``$GROUNDED_RAG_STRUCTURED_OUTPUT`` names one method (``json_schema``,
   ``function_calling`` or ``json``): only that one is used, for every model that takes it.
2. A ``ChatOpenAI`` pointed at another server (a base URL: ``openai:<model>@<url>``,
   ``$OPENAI_BASE_URL`` or ``ChatOpenAI(base_url=...)``) tries, per server and model, the
   ladder ``json_schema`` (``response_format`` with the schema) -> ``function_calling`` (one
   forced tool call) -> ``json`` (plain text: the schema in the prompt, the reply's JSON
   object cut out and repaired). A method the server refuses (HTTP 400/415/422/501, or a
   5xx whose message is a validation error naming what the method sends, as llama.cpp's
   server answers), or whose reply does not parse, passes to the next one, once each; the
   first that yields a valid object is remembered for that server and model (for the
   process), and later calls use it alone.
   If the server accepts none of the three requests, :class:`StructuredOutputUnsupported`
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

import json
import logging
import os
import re
import threading
import traceback
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel, ValidationError

from grounded_rag._console import EXIT_FAILED, CommandError

log = logging.getLogger(__name__)

SchemaT = TypeVar("SchemaT", bound=BaseModel)

STRUCTURED_ENV = "GROUNDED_RAG_STRUCTURED_OUTPUT"
"""``auto`` (default: the rule above), ``json_schema``, ``function_calling`` or ``json``."""
METHODS = ("json_schema", "function_calling", "json")
"""The ladder for OpenAI-compatible servers, in the order tried."""

# Reply-level failures of providers' own parsers (matched by name: the provider packages are
# optional). Transport errors, auth errors and rate limits are not in here: they propagate.
_MALFORMED_REPLY_ERRORS = frozenset({
    "OutputParserException",  # langchain_core parsers
    "StructuredOutputError",  # grounded_rag.local
    "JSONDecodeError",
    "LengthFinishReasonError",  # openai: reply cut off by max_tokens
    "ContentFilterFinishReasonError",  # openai: reply withheld
    "OpenAIRefusalError",  # langchain-openai: the model refused to fill the schema
})
_REFUSED_STATUS = frozenset({400, 415, 422, 501})
"""HTTP statuses that mean "this server does not take that request": try the next method."""


class StructuredOutputFailure(Exception):
    """All attempts to get a valid structured reply failed."""

    def __init__(self, schema: str, errors: list[str]) -> None:
        self.schema = schema
        self.errors = errors
        super().__init__(f"{schema}: no valid structured reply after {len(errors)} attempt(s): "
                         + " | ".join(errors))


class ModelServerError(CommandError):
    """A model server failed past its bounded retries (timeout, 429, 5xx, refused, unreadable).

    Raised, not turned into a finding: the run stops and the caller sees what failed. The
    command line prints it as one ``error:`` line (exit code 1).
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message, code=EXIT_FAILED, kind="model_server")
        self.status = status
        """The last HTTP status, or None (timeout, connection, unreadable reply)."""


class StructuredOutputUnsupported(ModelServerError):
    """The server refused every structured-output request shape the ladder tries."""


def server_of(model: Any) -> str | None:
    """The base URL of a ``ChatOpenAI`` aimed at another server than OpenAI's, else None."""
    if type(model).__name__ not in ("ChatOpenAI",):
        return None
    url = getattr(model, "openai_api_base", None) or os.environ.get("OPENAI_BASE_URL")
    return str(url).rstrip("/") if url else None


def _model_name(model: Any) -> str:
    return str(getattr(model, "model_name", "") or getattr(model, "model", "") or
               type(model).__name__)


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
        return _learned.get((server, _model_name(model)))


def forget_learned() -> None:
    """Forget every remembered method (tests; a server that was upgraded)."""
    with _learned_lock:
        _learned.clear()


def _structured_runnable(model: BaseChatModel, schema: type[BaseModel],
                         method: str = "json_schema", include_raw: bool = False) -> Any:
    raw = {"include_raw": True} if include_raw else {}
    try:
        return model.with_structured_output(schema, method=method, **raw)  # type: ignore[arg-type]
    except (TypeError, ValueError, NotImplementedError):
        # Some chat models (and the local one) only take the default method.
        return model.with_structured_output(schema, **raw)


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
    LangChain's chat models do); on an OpenAI-compatible server it is the ladder's reply.
    """
    forced = _forced_method()
    if server_of(model) is not None:
        return _invoke_on_server(model, schema, messages, attempts=attempts, forced=forced,
                                 raw=raw)
    if raw:
        runnable = (_structured_runnable(model, schema, forced, include_raw=True)
                    if forced in ("json_schema", "function_calling")
                    else model.with_structured_output(schema, include_raw=True))
    elif forced == "json":
        runnable = None
    else:
        runnable = _structured_runnable(model, schema, forced or "json_schema")
    errors: list[str] = []
    for attempt in range(1, attempts + 1):
        try:
            if runnable is None:
                return _plain_json(model, schema, messages)[0], None
            return _unwrapped(runnable.invoke(messages), schema, raw)
        except Exception as exc:
            if unreadable_reply(exc):
                raise _server_error(exc, model) from exc  # type: ignore[misc]
            if isinstance(exc, ValidationError | ValueError | KeyError | TypeError):
                errors.append(f"attempt {attempt}: {type(exc).__name__}: {str(exc)[:200]}")
                log.warning("structured output for %s failed (attempt %d): %s",
                            schema.__name__, attempt, exc)
                continue
            # provider-specific parse errors (OutputParserException, ...) are malformed replies
            if type(exc).__name__ not in _MALFORMED_REPLY_ERRORS:
                error = _server_error(exc, model)
                if error is None:
                    raise
                raise error from exc
            errors.append(f"attempt {attempt}: {type(exc).__name__}: {str(exc)[:200]}")
    raise StructuredOutputFailure(schema.__name__, errors)


def _unwrapped(reply: Any, schema: type[SchemaT], raw: bool) -> tuple[SchemaT,
                                                                    BaseMessage | None]:
    """The validated object, and the raw message of an ``include_raw`` reply."""
    message: BaseMessage | None = None
    if raw and isinstance(reply, dict) and "parsed" in reply:
        if reply.get("parsing_error") is not None:
            raise reply["parsing_error"]
        message, reply = reply.get("raw"), reply.get("parsed")
    return _validated(reply, schema), message


def _validated(reply: Any, schema: type[SchemaT]) -> SchemaT:
    if reply is None:
        raise ValueError("the model returned no parsable object")
    if isinstance(reply, dict):
        reply = schema.model_validate(reply)
    if not isinstance(reply, schema):
        reply = schema.model_validate(reply, from_attributes=True)
    return reply


def _invoke_on_server(model: BaseChatModel, schema: type[SchemaT],
                      messages: list[BaseMessage], *, attempts: int, forced: str,
                      raw: bool = False) -> tuple[SchemaT, BaseMessage | None]:
    """Structured output from an OpenAI-compatible server: the ladder, or the learned method.

    With ``raw``, also the reply message (else None).
    """
    server = server_of(model) or ""
    key = (server, _model_name(model))
    with _learned_lock:
        known = forced or _learned.get(key)
    plan = [(known, attempts)] if known else [(m, 1) for m in METHODS]
    errors: list[str] = []
    refused: list[str] = []
    for method, tries in plan:
        for attempt in range(1, tries + 1):
            try:
                message: BaseMessage | None
                if method == "json":
                    result, message = _plain_json(model, schema, messages)
                else:
                    result, message = _unwrapped(_structured_runnable(
                        model, schema, method, raw).invoke(messages), schema, raw)
            except Exception as exc:
                if unreadable_reply(exc):
                    raise _server_error(exc, model) from exc  # type: ignore[misc]
                label = f"{method} attempt {attempt}: {type(exc).__name__}: {str(exc)[:200]}"
                status = getattr(exc, "status_code", None)
                if _refused(exc, method):
                    refused.append(f"{method}: HTTP {status}: {_api_message(exc)}")
                    errors.append(label)
                    break  # the server does not take this request shape: next method
                if isinstance(exc, ValidationError | ValueError | KeyError | TypeError) or (
                        type(exc).__name__ in _MALFORMED_REPLY_ERRORS):
                    errors.append(label)
                    log.warning("structured output for %s from %s (%s) failed: %s",
                                schema.__name__, server, method, exc)
                    continue
                error = _server_error(exc, model)
                if error is None:
                    raise
                raise error from exc
            if not known:
                with _learned_lock:
                    _learned[key] = method
                log.info("structured output from %s (%s): using %s", server, key[1], method)
            return result, message if raw else None
    if len(refused) == len(plan):
        raise StructuredOutputUnsupported(
            f"the model server at {server} (model {key[1]!r}) refused every structured-output "
            f"request: {'; '.join(refused)}. Use a server that supports JSON schema "
            f"(response_format) or tool calls, or set {STRUCTURED_ENV}=json.",
            status=400)
    raise StructuredOutputFailure(schema.__name__, errors)


# -- plain JSON with repair --------------------------------------------------------------------

def _plain_json(model: BaseChatModel, schema: type[SchemaT],
                messages: list[BaseMessage]) -> tuple[SchemaT, BaseMessage]:
    """Ask for JSON in words (the schema in the prompt), then cut out, repair and validate.

    Returns the object and the reply message.
    """
    from grounded_rag.prompts.structured import JSON_ONLY

    instruction = JSON_ONLY.format(
        schema=json.dumps(schema.model_json_schema(), ensure_ascii=False, separators=(",", ":")))
    last = messages[-1]
    if isinstance(last, HumanMessage) and isinstance(last.content, str):
        asked = [*messages[:-1], HumanMessage(last.content + instruction)]
    else:
        asked = [*messages, HumanMessage(instruction.strip())]
    reply = model.invoke(asked)
    text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
    return parse_json_reply(text, schema), reply


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def parse_json_reply(text: str, schema: type[SchemaT]) -> SchemaT:
    """The ``schema`` object in a model's free-text reply, repaired where that is safe.

    Repairs: a code fence around it, prose before or after it, trailing commas, an object
    wrapped under the schema's name, a cut-off reply (open strings, arrays and objects
    closed). Anything else raises ``ValueError`` / ``ValidationError`` (a malformed reply).
    """
    fenced = _FENCE.search(text)
    body = fenced.group(1) if fenced else text
    start = body.find("{")
    if start < 0:
        raise ValueError(f"no JSON object in the reply: {text[:120]!r}")
    candidate = body[start:]
    end = candidate.rfind("}")
    value: Any = None
    for attempt in (candidate[: end + 1] if end >= 0 else "", *_close_open(candidate)):
        if not attempt:
            continue
        try:
            value = json.loads(_TRAILING_COMMA.sub(r"\1", attempt))
            break
        except json.JSONDecodeError:
            continue
    if value is None:
        raise ValueError(f"the reply's JSON does not parse: {candidate[:160]!r}")
    if isinstance(value, dict) and len(value) == 1 and schema.__name__ in value:
        value = value[schema.__name__]
    return schema.model_validate(value)


def _close_open(text: str) -> list[str]:
    """Repairs of a cut-off JSON text: cut back to a structural comma, close what is open.

    Only whole values are kept (a string cut in the middle is dropped with its element, never
    closed: a truncated sentence must not pass as a statement). Latest cut first.
    """
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []
    in_string = escaped = False
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and stack:
            stack.pop()
        elif char == ",":
            cuts.append((i, "".join(reversed(stack))))
    return [text[:i] + closing for i, closing in reversed(cuts[-50:])]


# -- transport errors --------------------------------------------------------------------------

_PROBED = {"json_schema": ("response_format", "json_schema"),
           "function_calling": ("tool", "function")}
"""Words in an error message that name what a ladder step sends (some servers, llama.cpp's
among them, answer an unknown request field with HTTP 500 and a validation message)."""


def _refused(exc: BaseException, method: str) -> bool:
    """Whether ``exc`` is the server refusing this request shape (then: the next method)."""
    status = getattr(exc, "status_code", None)
    if status in _REFUSED_STATUS:
        return True
    if isinstance(status, int) and status >= 500:
        text = f"{_api_message(exc)} {exc}".lower()
        return any(word in text for word in _PROBED.get(method, ())) and (
            "validation" in text or "literal" in text or "unsupported" in text
            or "not supported" in text or "invalid" in text)
    return False


def _api_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        detail = body.get("message") or body.get("detail") or body.get("error") or body
        return str(detail)[:200]
    return str(exc)[:200]


def unreadable_reply(exc: BaseException) -> bool:
    """True when ``exc`` came from reading the HTTP reply itself, not the model's text.

    A body that is not JSON, or JSON that is not a chat completion (a proxy's error page
    with status 200), fails inside the client (``httpx``'s ``json()``, the SDK's
    completion parser, langchain-openai's result builder): no retry can fix the model's
    words there, so it is a server error, not a malformed reply.
    """
    for frame in traceback.extract_tb(exc.__traceback__):
        path = frame.filename.replace("\\", "/")
        if frame.name == "json" and "/httpx" in path and path.endswith("_models.py"):
            return True
        if frame.name == "_create_chat_result" and "Unexpected response type" in str(exc):
            return True
        if frame.name == "parse_chat_completion" and isinstance(exc, AttributeError):
            return True
    return False


def _server_error(exc: BaseException, model: Any) -> ModelServerError | None:
    """A :class:`ModelServerError` for an OpenAI client's transport or status error, else None.

    Recognised by the class's module (the ``openai`` package is optional); other exceptions
    propagate unchanged.
    """
    if isinstance(exc, ModelServerError):
        return exc
    # langchain-openai re-raises the SDK's errors as subclasses of its own: read the SDK's.
    names = {k.__name__ for k in type(exc).__mro__ if k.__module__.split(".")[0] == "openai"}
    if not names and not unreadable_reply(exc):
        return None
    where = server_of(model) or "OpenAI"
    name = _model_name(model)
    retries = getattr(model, "max_retries", None)
    tried = (f" after {retries + 1} attempt(s)" if isinstance(retries, int) and names else "")
    status = getattr(exc, "status_code", None)
    kind = type(exc).__name__
    if "APITimeoutError" in names:
        timeout = getattr(model, "request_timeout", None)
        what = f"did not answer within {timeout} s" if timeout else "timed out"
    elif "APIConnectionError" in names:
        what = "could not be reached"
    elif status == 429:
        what = "kept answering 429 Too Many Requests (rate limited; Retry-After was honoured)"
    elif isinstance(status, int) and status >= 500:
        what = f"kept failing with HTTP {status}"
    elif isinstance(status, int) and status >= 400:
        what = f"refused the request with HTTP {status}"
    else:
        what = "sent a reply that is not a chat completion"
    message = (f"the model server at {where} (model {name!r}) {what}{tried}: "
               f"{kind}: {_api_message(exc)}")
    return ModelServerError(message, status=status if isinstance(status, int) else None)
