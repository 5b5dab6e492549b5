"""finalize_answer: the answer text with [n] markers, the references and the scores."""

from __future__ import annotations

from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from grounded_rag.context import Context
from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes._shared import (
    answer_flags,
    chat_reply,
    lang,
    progress,
    removed_claims,
    settled,
)
from grounded_rag.retrieval.loaders import public_url
from grounded_rag.routing import answering_statements, earlier_attempt, kept_statements
from grounded_rag.state import State
from grounded_rag.types import Claim, Evidence, Finding, Source
from grounded_rag.verification.on_question import all_pass


def finalize_answer(
    state: State, config: RunnableConfig, runtime: Runtime[Context], *, parts: Parts
) -> dict[str, Any]:
    """Compose the answer with [n] markers, the references list and the scores."""
    language = lang(state)
    progress("finalizing", language)
    earlier = _earlier_in_other_language(state)
    if earlier is not None:  # the revisions only had to change the language, and did not
        state = cast(State, {**state, **earlier})
    statements = (state.get("draft") or {"statements": []})["statements"]
    claims = state.get("claims", [])
    dropped: list[Claim] = []
    keep = kept_statements(state)
    restated = False
    if keep is None and all_pass(claims):  # some statements only restate the question
        keep = answering_statements(state)
        restated = keep is not None
    if restated and keep is not None:  # the answer left is on the question
        state = cast(State, {**state, "findings": _restatements_left_out(
            state.get("findings", []), keep)})
    if keep is not None:  # the revisions are spent, or needless: deliver the part that holds
        statements, claims, dropped = _verified_part(statements, claims, keep)
    answer, sources = _compose(statements, state.get("evidence", []), language)
    verification = state.get("verification") or "complete"
    final = settled(claims, state, parts.settings(runtime, config), verification)
    flags = answer_flags(state)
    if dropped:
        flags.append("partial_answer")
    if "human_edited" in state.get("flags", []):  # survives the re-verification of an edit
        flags.append("human_edited")
    if verification == "partial":
        flags.append("unchecked_claims")
    if verification == "pending":
        flags.append("verification_pending")
    if final["review"]:
        flags.append("needs_review")
    return chat_reply(state, {
        "status": "answered", "answer": answer, "sources": sources, **final,
        **({"draft": state.get("draft")} if earlier is not None else {}),
        **({"findings": state.get("findings", [])} if earlier is not None or restated else {}),
        "removed_claims": removed_claims([*state.get("history", []), {"claims": dropped}],
                                         final["claims"]),
        "flags": flags, "verification": verification,
        "checked_claims": state.get("checked_claims", len(final["claims"])),
        "verification_error": "", "warnings": [], "decided_by": "verification",
    })


def _restatements_left_out(findings: list[Finding], keep: list[int]) -> list[Finding]:
    """The ``off_question`` findings of statements left out, as info: the answer is on it.

    They stay visible (what was left out, and why), but neither flag the delivered answer
    ``off_question`` nor count as an off-question answer delivered.
    """
    out: list[Finding] = []
    for f in findings:
        if f["type"] == "off_question" and f["claim_index"] >= 0 and f["claim_index"] not in keep:
            f = {"type": "restatement_left_out", "severity": "info", "claim_index": -1,
                 "detail": f"Left out of the answer: {f['detail']}"}
        out.append(f)
    return out


def _earlier_in_other_language(state: State) -> dict[str, Any] | None:
    """The first attempt that held, written in the source's language, if the last is flagged.

    None when there is none (:func:`grounded_rag.routing.earlier_attempt`). The revisions
    only had to rewrite it in the question's language and did not: it is delivered, with the
    flag and an info finding ``earlier_attempt``.
    """
    record = earlier_attempt(state)
    if record is None:
        return None
    note: Finding = {
        "type": "earlier_attempt", "severity": "info", "claim_index": -1,
        "detail": f"The revisions did not write attempt {record['attempt']} in the "
                  "question's language; that attempt, verified in the sources' "
                  "language, is delivered."}
    return {"draft": {"answerable": True, "statements": record["statements"]},
            "claims": record["claims"], "findings": [*record["findings"], note]}


def _verified_part(statements: list[Claim], claims: list[Claim], keep: list[int]
                   ) -> tuple[list[Claim], list[Claim], list[Claim]]:
    """The kept statements, their claims (renumbered) and the claims dropped with the rest."""
    position = {old: new for new, old in enumerate(keep)}
    kept = [cast(Claim, {**c, "statement": position[c["statement"]]})
            for c in claims if c.get("statement", -1) in position]
    dropped = [c for c in claims if c.get("statement", -1) not in position]
    return [statements[i] for i in keep], kept, dropped


def _compose(
    statements: list[Claim], evidence: list[Evidence], language: str
) -> tuple[str, list[Source]]:
    """The statements joined with [n] markers, and the sources numbered in citing order."""
    by_id = {e["source_id"]: e for e in evidence}
    sources: list[Source] = []
    number: dict[str, int] = {}
    texts: list[str] = []
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
        texts.append(_attach_marks(st["text"], "".join(marks), language))
    return ("" if language == "ja" else " ").join(texts), sources


def _attach_marks(text: str, marks: str, language: str) -> str:
    if not marks:
        return text
    end_punct = "。．.！!？?"
    if text and text[-1] in end_punct:
        return text[:-1] + marks + text[-1]
    return text + marks + ("。" if language == "ja" else ".")
