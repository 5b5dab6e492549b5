"""Small helpers the nodes share: timing, progress, the run's language, claims, flags, scores."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from langgraph.config import get_stream_writer

from grounded_rag.context import Context
from grounded_rag.prompts import feedback as feedback_prompts
from grounded_rag.state import State
from grounded_rag.types import Claim, ClaimStatus, Finding
from grounded_rag.verification.decision import confidence_score, grounding_score
from grounded_rag.verification.evidence import order_sentences
from grounded_rag.verification.modes import UNCHECKED


@contextmanager
def timed(stage: str, timings: dict[str, float]) -> Iterator[None]:
    """Add the block's wall time, in ms, to ``timings[stage]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = round(timings.get(stage, 0.0) + (time.perf_counter() - start) * 1000, 3)


def progress(stage: str, language: str, **fields: Any) -> None:
    """Emit a progress event on LangGraph's ``custom`` stream (a no-op outside streaming)."""
    template = feedback_prompts.PROGRESS[stage]
    message = template.get(language, template["en"]).format(**fields)
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a run
        return
    writer({"stage": stage, "message": message, **fields})


def lang(state: State) -> str:
    """The language the run answers in."""
    return state.get("language") or "en"


def copy_claims(state: State) -> list[Claim]:
    """The state's claims as fresh dicts a node may update."""
    return [cast(Claim, dict(c)) for c in state.get("claims", [])]


def first_attempt_texts(state: State) -> set[str] | None:
    """Claim texts of the first attempt (None when there was only one)."""
    history = state.get("history", [])
    return {c["text"] for c in history[0]["claims"]} if history else None


def claim_status(claim: Claim, first_texts: set[str] | None, verification: str) -> ClaimStatus:
    """The badge of a final claim: verified / revised, or unchecked / pending / flagged."""
    verdict = claim.get("verdict")
    if verdict == UNCHECKED:
        return "pending" if verification == "pending" else "unchecked"
    if verdict != "supported":
        return "flagged"  # only a deferred verification lets an unsupported claim stand
    return "verified" if first_texts is None or claim["text"] in first_texts else "revised"


def regenerations(state: State) -> int:
    """How many times the answer was revised after the first attempt."""
    return max(0, state.get("attempts", 0) - 1)


def settled(
    claims: list[Claim], state: State, settings: Context, verification: str
) -> dict[str, Any]:
    """The final ``claims`` with their badges, ``confidence``, ``grounding_score``, ``review``.

    A review is required in review mode when the confidence is below the review threshold,
    and not while the verification is pending (it is reviewed once its claims are verified).
    """
    first_texts = first_attempt_texts(state)
    final = [cast(Claim, {**c, "status": claim_status(c, first_texts, verification)})
             for c in claims]
    confidence = confidence_score(final, state.get("evidence", []),
                                  regenerations=regenerations(state))
    review = (verification != "pending" and settings.review_mode
              and confidence < settings.review_threshold)
    return {
        "claims": final, "confidence": confidence,
        "grounding_score": grounding_score(final, quote_threshold=settings.quote_match_threshold),
        "review": {"required": True} if review else {},
    }


def removed_claims(
    history: list[dict[str, Any]], final: list[Claim], *, everything: bool = False
) -> list[Claim]:
    """Claims of earlier attempts that failed (or all, for an abstention) and were dropped."""
    kept = {c["text"] for c in final}
    removed: dict[str, Claim] = {}
    for i, record in enumerate(history):
        take_all = everything and i == len(history) - 1
        for claim in record["claims"]:
            failed = claim.get("verdict") != "supported"
            if (failed or take_all) and claim["text"] not in kept:
                removed[claim["text"]] = cast(Claim, {**claim, "status": "removed"})
    return list(removed.values())


def answer_flags(state: State) -> list[str]:
    """The answer's verification flags, from its evidence, findings and revisions."""
    evidence = state.get("evidence", [])
    findings = state.get("findings", [])
    flags: list[str] = []
    best = max((e["relevance"] for e in evidence), default=0.0)
    if evidence and best < 0.5:
        flags.append("low_relevance")
    if evidence and len(evidence) < 3:
        flags.append("few_sources")
    if any(order_sentences(e["text"]) for e in evidence):
        flags.append("instructions_in_sources")  # not shown to the model, not citable
    if regenerations(state):
        flags.append("revised")
    kinds = {f["type"] for f in findings}
    for kind in ("quote_drift", "quote_not_found", "quote_in_other_source", "phantom_source",
                 "malformed_output", "extractor_fallback", "weak_evidence",
                 "no_answer_in_sources", "off_question", "answer_language"):
        if kind in kinds:
            flags.append(kind)
    return flags


_DECIDING_FINDINGS = (
    ("empty_question", "retrieval"), ("no_content_words", "retrieval"),
    ("unsupported_language", "retrieval"),
    ("weak_evidence", "retrieval"), ("predicate_absent", "retrieval"),
    ("no_answer_in_sources", "answerability"), ("rejected_by_reviewer", "reviewer"),
    ("generator_declined", "generator"), ("empty_answer", "generator"),
    ("malformed_output", "generator"),
)


def deciding_stage(findings: list[Finding], claims: list[Claim]) -> str:
    """Which stage made a run abstain, read from its findings and last claims."""
    kinds = {f["type"] for f in findings if f["severity"] == "critical"}
    for kind, stage in _DECIDING_FINDINGS:
        if kind in kinds:
            return stage
    if kinds:
        return "citations"
    verdicts = [c.get("verdict") for c in claims]
    if verdicts and all(v in ("supported", UNCHECKED) for v in verdicts) and any(
        f["type"] == "off_question" for f in findings
    ):
        return "off_question"
    return "verification"


def chat_question(state: State) -> tuple[str, bool]:
    """The run's question and whether it came as chat (the last message, when a human one).

    Without a human last message the question is ``question``.
    A chat caller sends ``messages``; a thread that already holds a chat ends in the AI reply
    appended to it, so a later plain ``question`` on that thread is read as sent.
    """
    messages = state.get("messages") or []
    if messages and getattr(messages[-1], "type", "") == "human":
        return str(messages[-1].text).strip(), True
    return (state.get("question") or "").strip(), False


def chat_reply(state: State, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` plus its answer as an ``AIMessage`` when the run came in as chat messages.

    A reply this run already appended (an answer a reviewer then rejected) is replaced, not
    followed by a second one.
    """
    if not state.get("chat"):
        return result
    from langchain_core.messages import AIMessage

    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    reuse = {"id": last.id} if last is not None and last.type == "ai" and last.id else {}
    meta = {"status": result.get("status"), "confidence": result.get("confidence", 0.0),
            "sources": result.get("sources", []), "flags": result.get("flags", []),
            "decided_by": result.get("decided_by", "")}
    reply = AIMessage(content=result.get("answer", ""), response_metadata={"grounded_rag": meta},
                      **reuse)
    return {**result, "messages": [reply]}
