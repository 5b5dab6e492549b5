"""finalize_answer: the answer text with [n] markers, the references and the scores."""

from __future__ import annotations

from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from grounded_rag.context import Context
from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes._shared import answer_flags, lang, progress, removed_claims, settled
from grounded_rag.retrieval.loaders import public_url
from grounded_rag.routing import answering_statements, kept_statements
from grounded_rag.state import State
from grounded_rag.types import Claim, Evidence, Finding, Source
from grounded_rag.verification.answer_language import reads_as_chinese, wrong_language
from grounded_rag.verification.partial import all_pass
from grounded_rag.verification.same_value import both_country_lead, same_value_lead
from grounded_rag.verification.yes_lead import yes_lead


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
    if keep is None and all_pass(claims):  # some statements only restate the question
        keep = answering_statements(state)
    if keep is not None:  # the revisions are spent, or needless: deliver the part that holds
        statements, claims, dropped = _verified_part(statements, claims, keep)
    answer, sources = _compose(statements, state.get("evidence", []), language)
    extra: list[Finding] = []
    if language == "en":
        answer, extra = _lead(state.get("question", ""), statements, answer)
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
    return {
        "status": "answered", "answer": answer, "sources": sources, **final,
        **({"draft": state.get("draft")} if earlier is not None else {}),
        **({"findings": [*state.get("findings", []), *extra]}
           if earlier is not None or extra else {}),
        "removed_claims": removed_claims([*state.get("history", []), {"claims": dropped}],
                                         final["claims"]),
        "flags": flags, "verification": verification,
        "checked_claims": state.get("checked_claims", len(final["claims"])),
        "verification_error": "", "warnings": [], "decided_by": "verification",
    }


def _lead(question: str, statements: list[Claim], answer: str) -> tuple[str, list[Finding]]:
    """A "Yes" / "No" the verified statements settle, in front of an English answer."""
    if yes_lead(question, statements):
        return f"Yes. {answer}", [{  # each compared thing's statement says what was asked
            "type": "yes_lead", "severity": "info", "claim_index": -1,
            "detail": "Each thing the question compares has a verified statement saying "
                      "what was asked of it: the answer opens with Yes."}]
    country = both_country_lead(question, statements)
    if country is not None:
        return f"{country}. {answer}", [{  # the asked country against each quoted one
            "type": "same_value_lead", "severity": "info", "claim_index": -1,
            "detail": "The quoted sources give a compared thing another country than the "
                      "one asked: the answer opens with No." if country == "No" else
                      "The quoted sources give each compared thing the country asked: the "
                      "answer opens with Yes."}]
    verdict = same_value_lead(question, statements)
    if verdict is None:
        return answer, []
    return f"{verdict}. {answer}", [{  # the two quoted values compared
        "type": "same_value_lead", "severity": "info", "claim_index": -1,
        "detail": f"The quoted sources give each compared thing one value of what the "
                  f"question compares, and they are {'' if verdict == 'Yes' else 'not '}"
                  f"the same: the answer opens with {verdict}."}]


def _earlier_in_other_language(state: State) -> dict[str, Any] | None:
    """The first attempt that held, written in the source's language, if the last is flagged.

    None when there is none. Such an attempt (every statement wholly in the other language:
    the sources' own sentences, for instance) was revised only to be rewritten in the
    question's language. When the revisions end still flagged (``answer_language``: the
    other language, or its words glued into the translation, "mayor of Long野 Prefecture"),
    the rewrite bought nothing and may have changed the facts on the way, while the earlier
    attempt's claims were verified in the sources' language: that attempt is delivered,
    with the flag and an info finding ``earlier_attempt``. A half-translated earlier attempt
    ("IUPAC naming法") is no better than the last one and is not chosen, nor is one that reads
    as Chinese (「…的作曲者是…」: the sources' language is Japanese).
    """
    findings = state.get("findings", [])
    claims = state.get("claims", [])
    if not any(f["type"] == "answer_language" for f in findings) or not all_pass(claims):
        return None
    language = lang(state)
    for record in state.get("history", []):
        kinds = {f["type"] for f in record["findings"]
                 if f["severity"] in ("critical", "major") or f["type"] == "off_question"}
        if (record["statements"] and kinds == {"answer_language"} and all_pass(record["claims"])
                and all(wrong_language(s["text"], language) and not reads_as_chinese(s["text"])
                        for s in record["statements"])):
            note: Finding = {
                "type": "earlier_attempt", "severity": "info", "claim_index": -1,
                "detail": f"The revisions did not write attempt {record['attempt']} in the "
                          "question's language; that attempt, verified in the sources' "
                          "language, is delivered."}
            return {"draft": {"answerable": True, "statements": record["statements"]},
                    "claims": record["claims"], "findings": [*record["findings"], note]}
    return None


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
