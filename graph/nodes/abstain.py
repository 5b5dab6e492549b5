"""abstain_answer: say the sources do not answer, with the findings that led there."""

from __future__ import annotations

from typing import Any

from grounded_rag.nodes._shared import (
    answer_flags,
    chat_reply,
    deciding_stage,
    lang,
    progress,
    removed_claims,
)
from grounded_rag.prompts import feedback as feedback_prompts
from grounded_rag.state import State


def abstain_answer(state: State) -> dict[str, Any]:
    """Say the sources do not answer, in the question's language, with the findings."""
    language = lang(state)
    progress("abstaining", language)
    # Every claim of the last attempt goes too: an abstention asserts nothing.
    last = {"claims": [{**c, "verdict": c.get("verdict", "neutral")}
                       for c in state.get("claims", [])]}
    removed = removed_claims([*state.get("history", []), last], [], everything=True)
    return chat_reply(state, {
        "status": "abstained",
        "answer": feedback_prompts.ABSTAIN.get(language, feedback_prompts.ABSTAIN["en"]),
        "claims": [], "removed_claims": removed, "sources": [], "confidence": 0.0,
        "grounding_score": 0.0, "verification": "none", "checked_claims": 0,
        "flags": answer_flags(state) + ["abstained"],
        "decided_by": deciding_stage(state.get("findings", []), state.get("claims", [])),
    })
