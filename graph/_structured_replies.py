"""One structured-output request by one method, and reading its reply into the schema.

The methods (:mod:`grounded_rag._structured` says which is used when): ``json_schema`` and
``function_calling`` through the chat model's ``with_structured_output``;
``json_object_schema`` (``response_format: {"type": "json_object", "schema": ...}``) and
``json`` (the schema in the prompt) read the reply's text with :func:`parse_json_reply`.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel

SchemaT = TypeVar("SchemaT", bound=BaseModel)


def ask(model: BaseChatModel, schema: type[SchemaT], messages: list[BaseMessage],
        method: str, raw: bool) -> tuple[SchemaT, BaseMessage | None]:
    """One request by ``method``: the validated object, and the reply message when ``raw``.

    The text methods (``json_object_schema``, ``json``) always return their reply.
    """
    if method == "json":
        return plain_json(model, schema, messages)
    if method == "json_object_schema":
        return json_object_schema(model, schema, messages)
    return unwrapped(structured_runnable(model, schema, method, raw).invoke(messages),
                     schema, raw)


def structured_runnable(model: BaseChatModel, schema: type[BaseModel],
                        method: str = "json_schema", include_raw: bool = False) -> Any:
    """``with_structured_output`` by ``method``, else the model's own default method."""
    raw = {"include_raw": True} if include_raw else {}
    try:
        return model.with_structured_output(schema, method=method, **raw)  # type: ignore[arg-type]
    except (TypeError, ValueError, NotImplementedError):
        # Some chat models (and the local one) only take the default method.
        return model.with_structured_output(schema, **raw)


def unwrapped(reply: Any, schema: type[SchemaT], raw: bool) -> tuple[SchemaT,
                                                                   BaseMessage | None]:
    """The validated object, and the raw message of an ``include_raw`` reply."""
    message: BaseMessage | None = None
    if raw and isinstance(reply, dict) and "parsed" in reply:
        if reply.get("parsing_error") is not None:
            raise reply["parsing_error"]
        message, reply = reply.get("raw"), reply.get("parsed")
    return validated(reply, schema), message


def validated(reply: Any, schema: type[SchemaT]) -> SchemaT:
    """``reply`` (an instance, a dict or an object with the fields) as a ``schema`` instance."""
    if reply is None:
        raise ValueError("the model returned no parsable object")
    if isinstance(reply, dict):
        reply = schema.model_validate(reply)
    if not isinstance(reply, schema):
        reply = schema.model_validate(reply, from_attributes=True)
    return reply


def json_object_schema(model: BaseChatModel, schema: type[SchemaT],
                       messages: list[BaseMessage]) -> tuple[SchemaT, BaseMessage]:
    """Ask with ``response_format: {"type": "json_object", "schema": <schema>}``.

    The request the local model decodes under (llama.cpp servers build a grammar from the
    schema); the messages go as they are, no schema in the prompt. The reply's text is read
    as :func:`plain_json` reads it. Returns the object and the reply message.
    """
    bound = model.bind(response_format={"type": "json_object",
                                        "schema": schema.model_json_schema()})
    reply = bound.invoke(messages)
    return parse_json_reply(_text(reply), schema), reply


def plain_json(model: BaseChatModel, schema: type[SchemaT],
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
    return parse_json_reply(_text(reply), schema), reply


def _text(reply: BaseMessage) -> str:
    return reply.content if isinstance(reply.content, str) else json.dumps(reply.content)


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
