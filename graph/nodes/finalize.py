"""finalize_answer: the answer text with [n] markers, the references and the scores."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from grounded_rag.context import Context
from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes._shared import (
    answer_flags,
    claim_status,
    first_attempt_texts,
    lang,
    progress,
    removed_claims,
)
from grounded_rag.retrieval.loaders import public_url
from grounded_rag.state import State
from grounded_rag.types import Claim, Source
from grounded_rag.verification.scores import confidence_score, grounding_score


def finalize_answer(
    state: State, config: RunnableConfig, runtime: Runtime[Context], *, parts: Parts
) -> dict[str, Any]:
    """Compose the answer with [n] markers, the references list and the scores."""
    settings = parts.settings(runtime, config)
    language = lang(state)
    progress("finalizing", language)
    evidence = state.get("evidence", [])
    by_id = {e["source_id"]: e for e in evidence}
    statements = (state.get("draft") or {"statements": []})["statements"]
    sources: list[Source] = []
    number: dict[str, int] = {}
    parts_text: list[str] = []
    for st in statements:
        marks = []
        for c in st["citations"]:
            if c["source_id"] not in by_id:
                continue
            if c["source_id"] not in number:
                e = by_id[c["source_id"]]
                sources.append({"id": e["source_id"], "title": e.get("title", ""),
                                "url": public_url(e.get("url", ""))})
                number[c["source_id"]] = len(sources)
            mark = f"[{number[c['source_id']]}]"
            if mark not in marks:
                marks.append(mark)
        parts_text.append(_attach_marks(st["text"], "".join(marks), language))
    answer = ("" if language == "ja" else " ").join(parts_text)

    history = state.get("history", [])
    first_texts = first_attempt_texts(state)
    verification = state.get("verification") or "complete"
    claims: list[Claim] = [
        {**claim, "status": claim_status(claim, first_texts, verification)}
        for claim in state.get("claims", [])
    ]
    removed = removed_claims(history, claims)
    regenerations = max(0, state.get("attempts", 1) - 1)
    confidence = confidence_score(claims, evidence, regenerations=regenerations)
    findings = state.get("findings", [])
    flags = answer_flags(evidence, findings, regenerations)
    if "human_edited" in state.get("flags", []):  # survives the re-verification of an edit
        flags.append("human_edited")
    if verification == "partial":
        flags.append("unchecked_claims")
    # A deferred answer is reviewed (if at all) once its claims have been verified.
    needs_review = (settings.review_mode and verification != "pending"
                    and confidence < settings.review_threshold)
    if verification == "pending":
        flags.append("verification_pending")
    return {
        "status": "answered", "answer": answer, "claims": claims, "removed_claims": removed,
        "sources": sources, "confidence": confidence,
        "grounding_score": grounding_score(claims, quote_threshold=settings.quote_match_threshold),
        "flags": flags + (["needs_review"] if needs_review else []),
        "review": {"required": True} if needs_review else {},
        "verification": verification,
        "checked_claims": state.get("checked_claims", len(claims)),
        "verification_error": "", "warnings": [], "decided_by": "verification",
    }


def _attach_marks(text: str, marks: str, language: str) -> str:
    if not marks:
        return text
    end_punct = "。．.！!？?"
    if text and text[-1] in end_punct:
        return text[:-1] + marks + text[-1]
    return text + marks + ("。" if language == "ja" else ".")
