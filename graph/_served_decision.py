"""The generator's answer-or-decline decision over an OpenAI-compatible server, from logprobs.

In process the local generator's ``answerable`` is decided at a log-odds threshold that the
earlier stages' scores set (:class:`grounded_rag.local.chat.ChatLocal` ``decide``,
:mod:`grounded_rag.verification.decision`). A ``ChatOpenAI`` generator's first draft is asked
with ``logprobs`` (top :data:`TOP_LOGPROBS`), and the same threshold is applied to the
log-odds read where the reply writes the value of ``"answerable"``:

* the threshold says answer but the server declined: asked once more, the same messages with
  a schema whose ``answerable`` can only be ``true`` (``enum: [true]``) and whose
  ``statements`` has an item (``minItems: 1``), the two things the local decoder enforces.
  llama.cpp's JSON-schema grammars take both keywords, and both are in the subset OpenAI's
  strict schemas take (the requests here are not strict);
* the threshold says decline but the server answered: declined (the ``generator_declined``
  finding gives the log-odds and the threshold);
* a server that refuses logprobs (llama-cpp-python's server started with
  ``--logits_all False`` answers HTTP 500 "logprobs is not supported for models created
  with logits_all=False"), or that sends none: the server's greedy choice stands, remembered
  per server and model for the process, with an ``info`` finding saying so. Never a crash.

Each side of the log-odds is the log-sum-exp over the position's listed tokens that write
that word (a leading space allowed; ``tr`` counts for ``true``, as the local decoder counts
every token that starts the word). A side missing from the top list is bounded by the
smallest listed logprob (each of its tokens is at most that likely): the log-odds is then a
bound, its size at least what is recorded.
"""

from __future__ import annotations

import math
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import Field, create_model

from grounded_rag._structured import (
    ModelServerError,
    StructuredOutputFailure,
    StructuredOutputUnsupported,
    invoke_structured_raw,
    server_of,
)
from grounded_rag.schemas import CitedAnswer, CitedStatement
from grounded_rag.types import Finding

TOP_LOGPROBS = 5
"""Alternatives asked for at each position (OpenAI allows up to 20)."""

DecidedAnswer = create_model(
    "CitedAnswer",
    __base__=CitedAnswer,
    __doc__=CitedAnswer.__doc__,
    answerable=(bool, Field(description="True: the sources contain the answer.",
                            json_schema_extra={"enum": [True]})),
    statements=(list[CitedStatement], Field(
        description="The answer as a list of cited sentences.",
        json_schema_extra={"minItems": 1})),
)
"""``CitedAnswer`` with the decision made: ``answerable`` true and at least one statement.

Same name as ``CitedAnswer`` (the tool and schema names the server sees); the constraints
are in the schema only, so a server that ignores them gives a reply that still validates."""

_KEY = re.compile(r'"answerable"\s*:\s*')

_refusals: dict[tuple[str, str], str] = {}
_refusals_lock = threading.Lock()


@dataclass
class ServedDecision:
    """The first draft's reply once decided, its log-odds (None: greedy) and what to report."""

    reply: CitedAnswer
    log_odds: float | None = None
    findings: list[Finding] = field(default_factory=list)
    calls: int = 1
    """Generator requests that returned a reply (2 when it was asked again)."""


def reads_logprobs(model: Any) -> bool:
    """Whether the generator's decision is read from logprobs (a ``ChatOpenAI``)."""
    return type(model).__name__ == "ChatOpenAI"


def _key(model: Any) -> tuple[str, str]:
    name = str(getattr(model, "model_name", "") or type(model).__name__)
    return server_of(model) or "OpenAI", name


def logprobs_refusal(model: Any) -> str | None:
    """Why this model's server gives no logprobs, if that was learned; else None."""
    with _refusals_lock:
        return _refusals.get(_key(model))


def forget_refusals() -> None:
    """Forget every server remembered as giving no logprobs (tests; an upgraded server)."""
    with _refusals_lock:
        _refusals.clear()


def _remember(model: Any, why: str) -> None:
    with _refusals_lock:
        _refusals[_key(model)] = why


def answerable_log_odds(content: list[dict[str, Any]]) -> float | None:
    """Log P(true) - log P(false) where ``content`` (chat logprobs) writes ``answerable``.

    The position is the token that writes the value's first character; its alternatives
    are read against the text written before it. None when the reply has no such position
    or neither word is listed there.
    """
    tokens = [str(item.get("token") or "") for item in content]
    text = "".join(tokens)
    found = _KEY.search(text)
    if found is None or found.end() >= len(text):
        return None
    at = start = 0
    while start + len(tokens[at]) <= found.end():
        start += len(tokens[at])
        at += 1
    item, prefix = content[at], text[:start]
    listed: dict[str, float] = {}
    for alt in [*(item.get("top_logprobs") or []), item]:
        token, logprob = alt.get("token"), alt.get("logprob")
        if isinstance(token, str) and isinstance(logprob, int | float):
            listed.setdefault(token, float(logprob))
    sides: dict[str, list[float]] = {"true": [], "false": []}
    for token, logprob in listed.items():
        side = _side(prefix + token, found.start())
        if side is not None:
            sides[side].append(logprob)
    if not sides["true"] and not sides["false"]:
        return None
    floor = min(listed.values())
    yes = _lse(sides["true"]) if sides["true"] else floor
    no = _lse(sides["false"]) if sides["false"] else floor
    return round(yes - no, 4)


def _side(text: str, key_at: int) -> str | None:
    """``true``/``false`` when ``text`` has begun writing that value of ``answerable``."""
    match = _KEY.match(text, key_at)
    if match is None:
        return None
    value = text[match.end():]
    for word in ("true", "false"):
        if value and (word.startswith(value) or re.match(word + r"\b", value)):
            return word
    return None


def _lse(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def decide_on_server(model: BaseChatModel, messages: list[BaseMessage],
                     threshold: float | None) -> ServedDecision:
    """The first draft from a ``ChatOpenAI`` generator, decided at ``threshold`` (log-odds).

    ``threshold`` None records the log-odds and keeps the server's choice.

    Raises:
        StructuredOutputFailure: no valid reply (the caller's ``malformed_output`` finding).
        ModelServerError: the server failed past its retries, logprobs aside.
    """
    refused = logprobs_refusal(model)
    if refused is not None:
        reply = invoke_structured_raw(model, CitedAnswer, messages, raw=False)[0]
        return ServedDecision(reply, findings=[_greedy(refused + " (remembered)", threshold)])
    asking = model.model_copy(update={"logprobs": True, "top_logprobs": TOP_LOGPROBS})
    try:
        reply, raw = invoke_structured_raw(asking, CitedAnswer, messages)
    except ModelServerError as exc:
        if not (_names_logprobs(exc) or isinstance(exc, StructuredOutputUnsupported)):
            raise
        # Asked again without logprobs; only when that works was it the logprobs.
        reply = invoke_structured_raw(model, CitedAnswer, messages, raw=False)[0]
        why = f"the server refuses logprobs ({str(exc)[-300:]})"
        _remember(model, why)
        return ServedDecision(reply, findings=[_greedy(why, threshold)])
    logprobs = (raw.response_metadata.get("logprobs") if raw is not None else None) or {}
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:
        why = "the server sent no logprobs"
        _remember(model, why)
        return ServedDecision(reply, findings=[_greedy(why, threshold)])
    log_odds = answerable_log_odds(content)
    if log_odds is None:
        return ServedDecision(reply, findings=[_greedy(
            "its logprobs do not show where the reply writes answerable", threshold)])
    decision = ServedDecision(reply, log_odds)
    if threshold is None:
        return decision
    wrote = reply.answerable and bool(reply.statements)
    if log_odds >= threshold and not wrote:
        _ask_decided(model, messages, decision, threshold)
    elif log_odds < threshold and reply.answerable:
        decision.reply = CitedAnswer(answerable=False, statements=[])
    return decision


def _ask_decided(model: BaseChatModel, messages: list[BaseMessage],
                 decision: ServedDecision, threshold: float) -> None:
    """Ask once more with the decision to answer made; keep the first reply if that fails."""
    note = (f"The server's generator declined, but its answerable log-odds "
            f"{decision.log_odds:.2f} reached {threshold:.2f}, the threshold the stage scores "
            f"set: it was asked again with answerable fixed to true")
    try:
        again = invoke_structured_raw(model, DecidedAnswer, messages, raw=False)[0]
    except StructuredOutputFailure as exc:
        decision.findings.append({"type": "generator_decided", "severity": "info",
                                  "claim_index": -1,
                                  "detail": f"{note}, and its reply was unusable: {exc}"})
        return
    decision.calls = 2
    decision.reply = CitedAnswer.model_validate(again.model_dump())
    decision.findings.append({"type": "generator_decided", "severity": "info",
                              "claim_index": -1, "detail": f"{note} (2 generator calls)."})


def _names_logprobs(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if "logprob" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _greedy(why: str, threshold: float | None) -> Finding:
    applied = (f"; the threshold {threshold:.2f} the stage scores set was not applied"
               if threshold is not None else "")
    return {"type": "generator_decision_greedy", "severity": "info", "claim_index": -1,
            "detail": f"Whether to answer was the server's own greedy choice: {why}{applied}."}
