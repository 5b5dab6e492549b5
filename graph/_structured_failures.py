"""How a structured-output request failed: refused, malformed, or the server itself.

Three kinds, told apart here and nowhere else (:mod:`grounded_rag._structured` states the
rule): a **refusal** (the server does not take that request shape: the ladder's next
method), a **malformed reply** (retried, then a :class:`StructuredOutputFailure`, which the
loop turns into a finding) and a **server failure** past the client's own bounded retries
(:class:`ModelServerError`: the run stops).
"""

from __future__ import annotations

import os
import traceback
from typing import Any

from pydantic import ValidationError

from grounded_rag._console import EXIT_FAILED, CommandError

# Reply-level failures of providers' own parsers (matched by name: the provider packages are
# optional). Transport errors, auth errors and rate limits are not in here: they propagate.
MALFORMED_REPLY_ERRORS = frozenset({
    "OutputParserException",  # langchain_core parsers
    "StructuredOutputError",  # grounded_rag.local
    "JSONDecodeError",
    "LengthFinishReasonError",  # openai: reply cut off by max_tokens
    "ContentFilterFinishReasonError",  # openai: reply withheld
    "OpenAIRefusalError",  # langchain-openai: the model refused to fill the schema
})
REFUSED_STATUS = frozenset({400, 415, 422, 501})
"""HTTP statuses that mean "this server does not take that request": try the next method."""

_PROBED = {"json_schema": ("response_format", "json_schema"),
           "json_object_schema": ("response_format", "json_object"),
           "function_calling": ("tool", "function")}
"""Words in an error message that name what a ladder step sends (some servers, llama.cpp's
among them, answer an unknown request field with HTTP 500 and a validation message)."""


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


def model_name(model: Any) -> str:
    """The model's name as its server knows it (the class name when it has none)."""
    return str(getattr(model, "model_name", "") or getattr(model, "model", "") or
               type(model).__name__)


def malformed(exc: BaseException) -> bool:
    """Whether ``exc`` is a reply that did not parse or validate (retry; then a finding)."""
    return isinstance(exc, ValidationError | ValueError | KeyError | TypeError) or (
        type(exc).__name__ in MALFORMED_REPLY_ERRORS)


def refused(exc: BaseException, method: str) -> bool:
    """Whether ``exc`` is the server refusing this request shape (then: the next method)."""
    status = getattr(exc, "status_code", None)
    if status in REFUSED_STATUS:
        return True
    if isinstance(status, int) and status >= 500:
        text = f"{api_message(exc)} {exc}".lower()
        return any(word in text for word in _PROBED.get(method, ())) and (
            "validation" in text or "literal" in text or "unsupported" in text
            or "not supported" in text or "invalid" in text or "must be one of" in text)
    return False


def api_message(exc: BaseException) -> str:
    """The message of an API error body, else the exception's text (200 characters)."""
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


def server_error(exc: BaseException, model: Any) -> ModelServerError | None:
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
    name = model_name(model)
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
               f"{kind}: {api_message(exc)}")
    return ModelServerError(message, status=status if isinstance(status, int) else None)
