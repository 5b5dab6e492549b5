"""prepare_feedback: per-claim verdicts and citation problems as revision instructions."""

from __future__ import annotations

from typing import Any

from grounded_rag.nodes._shared import lang, progress
from grounded_rag.prompts import feedback as feedback_prompts
from grounded_rag.state import State
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
    record = {
        "attempt": attempts,
        "statements": (state.get("draft") or {"statements": []})["statements"],
        "claims": claims,
        "findings": state.get("findings", []),
    }
    return {"feedback": "\n".join(lines), "history": [*state.get("history", []), record]}
