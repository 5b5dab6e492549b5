"""Structured output that never returns a silent None: retry, then report a finding."""

from __future__ import annotations

import logging
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ValidationError

log = logging.getLogger(__name__)

SchemaT = TypeVar("SchemaT", bound=BaseModel)

# Reply-level failures of providers' own parsers (matched by name: the provider packages are
# optional). Transport errors, auth errors and rate limits are not in here: they propagate.
_MALFORMED_REPLY_ERRORS = frozenset({
    "OutputParserException",  # langchain_core parsers
    "StructuredOutputError",  # grounded_rag.local
    "JSONDecodeError",
    "LengthFinishReasonError",  # openai: reply cut off by max_tokens
    "ContentFilterFinishReasonError",  # openai: reply withheld
})


class StructuredOutputFailure(Exception):
    """All attempts to get a valid structured reply failed."""

    def __init__(self, schema: str, errors: list[str]) -> None:
        self.schema = schema
        self.errors = errors
        super().__init__(f"{schema}: no valid structured reply after {len(errors)} attempt(s): "
                         + " | ".join(errors))


def _structured_runnable(model: BaseChatModel, schema: type[BaseModel]) -> Any:
    try:
        return model.with_structured_output(schema, method="json_schema")
    except (TypeError, ValueError, NotImplementedError):
        # Some chat models (and the local one) only take the default method.
        return model.with_structured_output(schema)


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
    """
    runnable = _structured_runnable(model, schema)
    errors: list[str] = []
    for attempt in range(1, attempts + 1):
        try:
            reply = runnable.invoke(messages)
            if reply is None:
                raise ValueError("the model returned no parsable object")
            if isinstance(reply, dict):
                reply = schema.model_validate(reply)
            if not isinstance(reply, schema):
                reply = schema.model_validate(reply, from_attributes=True)
            return reply
        except (ValidationError, ValueError, KeyError, TypeError) as exc:
            errors.append(f"attempt {attempt}: {type(exc).__name__}: {str(exc)[:200]}")
            log.warning("structured output for %s failed (attempt %d): %s",
                        schema.__name__, attempt, exc)
        except Exception as exc:  # provider-specific parse errors (OutputParserException, ...)
            if type(exc).__name__ not in _MALFORMED_REPLY_ERRORS:
                raise
            errors.append(f"attempt {attempt}: {type(exc).__name__}: {str(exc)[:200]}")
    raise StructuredOutputFailure(schema.__name__, errors)
