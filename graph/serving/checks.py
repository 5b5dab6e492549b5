"""Request checks: questions, per-request settings and LangServe bodies, answered as 422s.

Settings travel as ``config["configurable"]`` (LangServe's only channel). They are checked
against the raw request before LangServe sees it, because LangServe's own config model drops
unknown keys silently and fills in every default.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fastapi import HTTPException, Request

from grounded_rag import questions
from grounded_rag.context import SETTING_NAMES, validate_settings

__all__ = ["DEFAULT_MAX_QUESTION_CHARS", "SERVER_ONLY_SETTINGS", "THREAD_ID_MAX",
           "check_question", "check_rag_payload", "check_settings", "request_error",
           "validate_rag_body"]

DEFAULT_MAX_QUESTION_CHARS = questions.MAX_QUESTION_CHARS
"""Longest question accepted; longer ones get a 422 before any work is done."""

SERVER_ONLY_SETTINGS = frozenset({"store_dir"})
"""Settings a request may not change: they name files on the server."""

THREAD_ID_MAX = 200
"""Longest thread id a request may name."""

_MODEL_SETTINGS = ("generator_model", "extractor_model", "verifier_model")


def request_error(status: int, loc: list[str | int], msg: str, kind: str) -> HTTPException:
    """An HTTPException shaped like FastAPI's and LangServe's own validation errors."""
    return HTTPException(status, detail=[{"loc": loc, "msg": msg, "type": kind}])


def check_question(value: Any, loc: list[str | int], max_chars: int) -> str:
    """The stripped question, or a 422 that says what is wrong with it (the CLI's words)."""
    try:
        return questions.check_question(value, max_chars)
    except questions.QuestionError as exc:
        raise request_error(422, loc, str(exc), exc.kind) from None


def check_settings(values: Any, loc: list[str | int]) -> dict[str, Any]:
    """Validate request settings one by one so the error names the field."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise request_error(422, loc, "configurable must be an object of settings", "type_error")
    checked: dict[str, Any] = {}
    for name, value in values.items():
        field_loc = [*loc, name]
        if name == "thread_id":
            if not isinstance(value, str) or not 0 < len(value) <= THREAD_ID_MAX:
                raise request_error(422, field_loc, f"thread_id must be a string of "
                                    f"1-{THREAD_ID_MAX} characters", "invalid_setting")
            checked[name] = value
            continue
        if name not in SETTING_NAMES:
            raise request_error(422, field_loc, f"unknown setting {name!r}; known settings: "
                                f"{', '.join(sorted(SETTING_NAMES - SERVER_ONLY_SETTINGS))}",
                                "unknown_setting")
        if name in SERVER_ONLY_SETTINGS:
            raise request_error(422, field_loc, f"{name} is set by the server and cannot be "
                                "changed per request", "server_only_setting")
        try:
            checked.update(validate_settings({name: value}))
        except ValueError as exc:
            raise request_error(422, field_loc, str(exc), "invalid_setting") from None
        if name in _MODEL_SETTINGS:
            _check_model_spec(name, checked[name], field_loc)
    return checked


def _check_model_spec(name: str, spec: str, loc: list[str | int]) -> None:
    from grounded_rag.models import _PROVIDERS

    if spec in ("", "local") or (name == "extractor_model" and spec in ("auto", "rules")):
        return
    if spec.startswith("local:"):
        raise request_error(422, loc, f"{name}: a local model file can only be chosen by the "
                            "server", "server_only_setting")
    if "@" in spec.partition(":")[2]:
        # openai:<model>@<url> would let a request make the server call any address
        raise request_error(422, loc, f"{name}: a model server URL can only be chosen by the "
                            "server", "server_only_setting")
    provider, _, model = spec.partition(":")
    if provider not in _PROVIDERS or not model:
        known = ", ".join(["local", *(f"{p}:<model>" for p in _PROVIDERS)])
        raise request_error(422, loc, f"unknown model spec {spec!r} for {name}; use one of: "
                            f"{known}", "invalid_setting")


async def validate_rag_body(request: Request, max_question_chars: int) -> None:
    """Check inputs and settings of a LangServe request before LangServe runs it.

    The checked settings of each run are left in ``request.state.rag_configurables``.
    (The server checks raw requests with :class:`~grounded_rag.serving.routes_rag.
    RagRequestChecks` instead; this is the same check for a FastAPI dependency.)
    """
    if request.method != "POST":
        return
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return  # LangServe answers invalid JSON itself
    request.state.rag_configurables = check_rag_payload(
        body, batch=request.scope["path"].endswith("/batch"),
        config_hash=request.path_params.get("config_hash") or "",
        max_question_chars=max_question_chars)


def check_rag_payload(body: Any, *, batch: bool, config_hash: str,
                      max_question_chars: int) -> list[dict[str, Any]]:
    """The checked settings of each run of a LangServe request body, or a 422 naming the field.

    ``batch``: the body is ``/batch``'s (``inputs`` and one config or one per input);
    ``config_hash``: the ``/c/{config_hash}/...`` path part, if any.
    """
    if not isinstance(body, dict):
        raise request_error(422, ["body"], "the request body must be a JSON object",
                            "type_error")
    configs: list[Any]
    if batch:
        inputs = body.get("inputs")
        if not isinstance(inputs, list) or not inputs:
            raise request_error(422, ["body", "inputs"], "inputs must be a non-empty list",
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
            raise request_error(422, input_loc, "input must be an object like "
                                "{\"question\": \"...\"}", "type_error")
        check_question(value.get("question"), [*input_loc, "question"], max_question_chars)
    hashed: dict[str, Any] = {}
    if config_hash:
        from langserve.api_handler import _config_from_hash

        hashed = (_config_from_hash(config_hash).get("configurable") or {})
    checked = []
    for i, config in enumerate(configs):
        if config is not None and not isinstance(config, dict):
            raise request_error(422, ["body", "config"], "config must be an object",
                                "type_error")
        configurable = {**hashed, **((config or {}).get("configurable") or {})}
        loc: list[str | int] = ["body", "config", "configurable"]
        if len(configs) > 1:
            loc = ["body", "config", i, "configurable"]
        checked.append(check_settings(configurable, loc))
    return checked
