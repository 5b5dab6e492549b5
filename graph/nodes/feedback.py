"""prepare_feedback: per-claim verdicts and citation problems as revision instructions."""

from __future__ import annotations

from typing import Any

from grounded_rag.nodes._shared import lang, progress
from grounded_rag.prompts import feedback as feedback_prompts
from grounded_rag.state import State
from grounded_rag.verification.asked import gap_fillers, gap_word
from grounded_rag.verification.modes import UNCHECKED


def prepare_feedback(state: State) -> dict[str, Any]:
    """Turn per-claim verdicts and citation problems into revision instructions."""
    language = lang(state)
    attempts = state.get("attempts", 1)
    progress("revising", language, attempt=attempts + 1, total=state.get("max_retries", 0) + 1)
    lines: list[str] = []
    names = feedback_prompts.VERDICT_NAMES[language]
    claims = state.get("claims", [])
    for claim in claims:
        if claim.get("verdict", "neutral") in ("supported", UNCHECKED):
            continue
        quote = claim.get("evidence_quote", "")
        suffix = feedback_prompts.EVIDENCE_SUFFIX[language].format(quote=quote) if quote else ""
        lines.append(feedback_prompts.CLAIM_FINDING[language].format(
            claim=claim["text"], verdict=names[claim.get("verdict", "neutral")],
            reason=claim.get("reason", ""), evidence=suffix))
    for f in state.get("findings", []):
        if f["type"] in {"contradicted", "unsupported"}:
            continue  # already rendered per claim
        if f["severity"] in {"critical", "major"}:
            lines.append(feedback_prompts.GENERAL_FINDING[language].format(detail=f["detail"]))
    lines += _gap_hint(state, language)
    record = {
        "attempt": attempts,
        "statements": (state.get("draft") or {"statements": []})["statements"],
        "claims": claims,
        "findings": state.get("findings", []),
    }
    return {"feedback": "\n".join(lines), "history": [*state.get("history", []), record]}


def _gap_hint(state: State, language: str) -> list[str]:
    """What fills the question's gap in a source sentence, when no statement wrote it.

    A question made from a source sentence (「中東は良質の優れた何が多い…」) is often answered by
    writing the sentence back, which only repeats the question; the word that fills its gap
    says what to write instead.
    """
    if language != "ja":
        return []
    question = state.get("question", "")
    found = gap_fillers(question, state.get("evidence", []))
    if not found:
        return []
    filler, sentence = max(found, key=lambda f: len(f[0]))
    statements = (state.get("draft") or {"statements": []})["statements"]
    if any(filler in s.get("text", "") for s in statements):
        return []
    return [feedback_prompts.GAP_HINT["ja"].format(
        sentence=sentence.strip(), word=gap_word(question), filler=filler)]
