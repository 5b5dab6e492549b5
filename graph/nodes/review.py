"""review_answer: pause for a person to approve, edit (re-verified) or reject an answer."""

from __future__ import annotations

from typing import Any

from langgraph.types import interrupt

from grounded_rag.lang import split_sentences, strip_markers
from grounded_rag.nodes._shared import lang, progress
from grounded_rag.state import State
from grounded_rag.types import Finding


def review_answer(state: State) -> dict[str, Any]:
    """Pause for a person: approve, edit (re-verified) or reject (abstain)."""
    progress("reviewing", lang(state))
    decision = interrupt({
        "question": state.get("question", ""),
        "answer": state.get("answer", ""),
        "claims": state.get("claims", []),
        "findings": state.get("findings", []),
        "sources": state.get("sources", []),
        "confidence": state.get("confidence", 0.0),
        "actions": ["approve", "edit", "reject"],
    })
    action, payload = parse_review(decision)
    review = {"required": True, "action": action, "note": payload.get("note", ""),
              **{k: str(payload[k]) for k in ("by", "at") if payload.get(k)}}
    if action == "approve":
        flags = [f for f in state.get("flags", []) if f != "needs_review"]
        return {"review": review, "flags": [*flags, "human_approved"]}
    if action == "reject":
        finding: Finding = {"type": "rejected_by_reviewer", "severity": "critical",
                            "claim_index": -1,
                            "detail": payload.get("note") or "A reviewer rejected the answer."}
        return {"review": review, "findings": [*state.get("findings", []), finding]}
    statements = payload["statements"]
    return {"review": review, "draft": {"answerable": True, "statements": statements},
            "flags": ["human_edited"]}


def parse_review(decision: Any) -> tuple[str, dict[str, Any]]:
    """Validate a reviewer's resume value: ``{"action": ..., "answer"|"statements"?, "note"?}``."""
    if isinstance(decision, str):
        decision = {"action": decision}
    if not isinstance(decision, dict) or decision.get("action") not in {"approve", "edit",
                                                                         "reject"}:
        raise ValueError(
            "review decision must be {'action': 'approve'|'edit'|'reject', ...}; "
            f"got {decision!r}"
        )
    action = decision["action"]
    payload = dict(decision)
    if action == "edit":
        statements = decision.get("statements")
        if statements is None:
            text = str(decision.get("answer", "")).strip()
            if not text:
                raise ValueError("an 'edit' decision needs 'answer' text or 'statements'")
            statements = [{"text": s, "citations": []}
                          for s in split_sentences(strip_markers(text))]
        payload["statements"] = [
            {"text": str(s["text"]),
             "citations": [{"source_id": str(c["source_id"]), "quote": str(c.get("quote", "")),
                            "start": -1, "end": -1} for c in s.get("citations", [])]}
            for s in statements
        ]
    return action, payload
