"""check_citations: phantom ids, located quotes, and statements that miss the question."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from grounded_rag.context import Context
from grounded_rag.lang import detect_language
from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes._shared import lang, progress, timed
from grounded_rag.state import State
from grounded_rag.verification import rules
from grounded_rag.verification.citations import check_citations as check_statement_citations
from grounded_rag.verification.on_question import (
    below_gate_statements,
    language_findings,
    off_question_findings,
    other_case_statements,
    source_findings,
    unrelated_statements,
)


def check_citations(
    state: State, config: RunnableConfig, runtime: Runtime[Context], *, parts: Parts
) -> dict[str, Any]:
    """Deterministic checks: phantom ids, quotes, and answers that miss the question.

    Phantom source ids or handles, quotes located with offsets, wrong-source quotes, and
    (not for a reviewer's edit) statements that do not answer the question or are not in
    its language.
    """
    settings = parts.settings(runtime, config)
    language = lang(state)
    progress("checking", language)
    timings = dict(state.get("timings_ms") or {})
    draft = state.get("draft") or {"answerable": False, "statements": []}
    evidence = state.get("evidence", [])
    with timed("check_citations", timings):
        kept, dropped, elsewhere, ungated = list(draft["statements"]), [], [], []
        question = state.get("question", "")
        asked = detect_language(question)
        if "human_edited" not in state.get("flags", []):
            unrelated = set(unrelated_statements(question, kept))
            dropped = [s for i, s in enumerate(kept) if i in unrelated]
            kept = [s for i, s in enumerate(kept) if i not in unrelated]
            other = (set(other_case_statements(question, kept))
                     if rules.enabled("other_case") else set())
            rules.fired("other_case", len(other))
            elsewhere = [s for i, s in enumerate(kept) if i in other]
            kept = [s for i, s in enumerate(kept) if i not in other]
            gated = set(below_gate_statements(kept, evidence, asked, settings.abstain_threshold))
            if len(gated) < len(kept):  # when all are, they are sent back (below)
                ungated = [s for i, s in enumerate(kept) if i in gated]
                kept = [s for i, s in enumerate(kept) if i not in gated]
        statements, findings = check_statement_citations(
            kept, evidence, threshold=settings.quote_match_threshold,
        )
        findings += [{"type": "unrelated_statement", "severity": "info", "claim_index": -1,
                      "detail": f"Dropped a statement that has nothing to do with the question "
                                f"or the rest of the answer: {s['text']!r}"} for s in dropped]
        findings += [{"type": "other_case_statement", "severity": "info", "claim_index": -1,
                      "detail": f"Dropped a statement about other cases than the one asked, "
                                f"beside one that answers it: {s['text']!r}"} for s in elsewhere]
        findings += [{"type": "unrelated_source", "severity": "info", "claim_index": -1,
                      "detail": f"Dropped a statement whose sources are not about the "
                                f"question (below the relevance gate): {s['text']!r}"}
                     for s in ungated]
        if "human_edited" not in state.get("flags", []):
            findings += off_question_findings(question, statements, evidence, language)
            findings += source_findings(statements, evidence, asked, settings.abstain_threshold,
                                        language)
            findings += language_findings(statements, language)
    return {"draft": {**draft, "statements": statements}, "citation_findings": findings,
            "timings_ms": timings}
