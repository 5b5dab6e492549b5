"""Pure routing functions: the loop's decisions depend on the state alone."""

from __future__ import annotations

from typing import Any, Literal

from grounded_rag.state import State
from grounded_rag.verification.on_question import (
    all_pass,
    answering_part,
    reads_as_chinese,
    verified_part,
    wrong_language,
)


def _has_critical(state: State) -> bool:
    return any(f["severity"] == "critical" for f in state.get("findings", []))


def _can_retry(state: State) -> bool:
    return max(0, state.get("attempts", 1) - 1) < state.get("max_retries", 0)


def _retry_or_abstain(state: State) -> Literal["prepare_feedback", "abstain_answer"]:
    return "prepare_feedback" if _can_retry(state) else "abstain_answer"


def _stalled(state: State) -> bool:
    """The revision repeated the previous draft word for word, citations included.

    Its prompt would be the same again (the same draft, the same findings), so another
    revision would give the same draft: the loop ends here instead of spending the budget.
    """
    history = state.get("history", [])
    statements = (state.get("draft") or {"statements": []})["statements"]
    return bool(history and statements) and statements == history[-1]["statements"]


def route_after_retrieve(state: State) -> Literal["assess_answerability", "abstain_answer"]:
    """Abstain before any model call when the evidence is weak (or the question is empty)."""
    if not state.get("evidence") or _has_critical(state):
        return "abstain_answer"
    return "assess_answerability"


def route_after_assess(state: State) -> Literal["generate_answer", "abstain_answer"]:
    """Abstain when no top passage contains the answer; otherwise write one."""
    if _has_critical(state):
        return "abstain_answer"
    return "generate_answer"


def route_after_generate(
    state: State,
) -> Literal["check_citations", "prepare_feedback", "abstain_answer"]:
    """Check a usable draft; retry an unusable reply; abstain when the model says it can't."""
    draft = state.get("draft")
    if draft is None:
        return _retry_or_abstain(state)
    if not draft["answerable"]:
        return "abstain_answer"
    return "check_citations"


def route_after_verify(
    state: State,
) -> Literal["finalize_answer", "prepare_feedback", "abstain_answer"]:
    """Finalize when every checked claim holds; else revise while the budget lasts; else abstain.

    Claims the mode left ``unchecked`` (sampled out, or deferred) do not block: a deferred
    answer goes out as soon as its citations pass the deterministic checks. A supported
    answer with an ``off_question`` finding (its statements do not address what was asked:
    the predicate of a yes/no question, the kind of value asked for) is revised while the
    budget lasts, then abstains: true sentences that do not answer are not an answer. A
    statement in another language than the question's (``answer_language``) is revised
    while the budget lasts, then delivered with the flag (or the earlier attempt in the
    sources' language, :func:`earlier_attempt`); a last draft that reads as Chinese, in
    neither language, abstains when there is no such attempt. When the budget is spent and some
    statements hold and still answer the question, those are delivered (``keep_verified``,
    :func:`kept_statements`). A revision that repeats the previous draft word for word ends
    the loop as a spent budget does (:func:`_stalled`).
    """
    claims = state.get("claims", [])
    if all_pass(claims) and not _has_critical(state):
        kinds = {f["type"] for f in state.get("findings", [])}
        if "off_question" in kinds:
            if answering_statements(state) is not None:
                return "finalize_answer"  # the others only restate the question: left out
            return "abstain_answer" if _stalled(state) else _retry_or_abstain(state)
        if "answer_language" in kinds:
            if _can_retry(state) and not _stalled(state):
                return "prepare_feedback"  # rewritten in the question's language, else flagged
            if _in_chinese(state) and earlier_attempt(state) is None:
                return "abstain_answer"  # in neither language, and nothing else held
        return "finalize_answer"
    spent = not _can_retry(state) or _stalled(state)
    if spent and not _has_critical(state) and kept_statements(state):
        return "finalize_answer"
    return "abstain_answer" if _stalled(state) else _retry_or_abstain(state)


def earlier_attempt(state: State) -> dict[str, Any] | None:
    """The first attempt that held in the sources' language, when the last is flagged.

    The last draft is flagged ``answer_language``; None when there is no such attempt. Such
    an attempt (the sources' own sentences, for instance) was revised only to be rewritten
    in the question's language. When the revisions end still flagged (the other language,
    or its words glued into the translation, "mayor of Long野 Prefecture"), the rewrite
    bought nothing and may have changed the facts on the way, while the earlier
    attempt's claims were verified in the sources' language. A half-translated earlier
    attempt ("IUPAC naming法") is no better than the last one and is not chosen, nor is one
    that reads as Chinese (「…的作曲者是…」: the sources' language is Japanese).
    """
    findings = state.get("findings", [])
    if not any(f["type"] == "answer_language" for f in findings) or not all_pass(
            state.get("claims", [])):
        return None
    language = state.get("language") or "en"
    for record in state.get("history", []):
        kinds = {f["type"] for f in record["findings"]
                 if f["severity"] in ("critical", "major") or f["type"] == "off_question"}
        if (record["statements"] and kinds == {"answer_language"} and all_pass(record["claims"])
                and all(wrong_language(s["text"], language) and not reads_as_chinese(s["text"])
                        for s in record["statements"])):
            return dict(record)
    return None


def _in_chinese(state: State) -> bool:
    """Whether a statement of the last draft reads as Chinese (in neither language)."""
    statements = (state.get("draft") or {"statements": []})["statements"]
    return any(reads_as_chinese(s["text"]) for s in statements)


def kept_statements(state: State) -> list[int] | None:
    """The statements of a failed last draft that hold and answer (None: none, or not asked)."""
    if not _may_keep_part(state):
        return None
    statements = (state.get("draft") or {"statements": []})["statements"]
    return verified_part(statements, state.get("claims", []), state.get("question", ""),
                         state.get("evidence", []), state.get("language") or "en")


def _may_keep_part(state: State) -> bool:
    """Whether part of a draft may be delivered (not switched off, not a person's edit)."""
    return state.get("keep_verified", True) and "human_edited" not in state.get("flags", [])


def answering_statements(state: State) -> list[int] | None:
    """The statements of a verified draft that answer, when the others restate the question."""
    if not _may_keep_part(state):
        return None
    statements = (state.get("draft") or {"statements": []})["statements"]
    return answering_part(statements, state.get("question", ""), state.get("evidence", []),
                          state.get("language") or "en")


def route_after_finalize(
    state: State,
) -> Literal["verify_after_answer", "review_answer", "__end__"]:
    """Verify a deferred answer after returning it; pause for a person when review flagged it."""
    if state.get("verification") == "pending":
        return "verify_after_answer"
    return route_after_deferred(state)


def route_after_deferred(state: State) -> Literal["review_answer", "__end__"]:
    """Pause for a person when review mode flagged the answer."""
    review = state.get("review") or {}
    if review.get("required") and not review.get("action"):
        return "review_answer"
    return "__end__"


def route_after_review(state: State) -> Literal["check_citations", "abstain_answer", "__end__"]:
    """Approve ends the run, reject abstains, an edit is verified again."""
    action = (state.get("review") or {}).get("action")
    if action == "reject":
        return "abstain_answer"
    if action == "edit":
        return "check_citations"
    return "__end__"
