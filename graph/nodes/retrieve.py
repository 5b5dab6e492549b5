"""retrieve_evidence: top-k section-granular evidence, and the pre-model abstain gate."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from grounded_rag.context import Context
from grounded_rag.lang import detect_language, third_language
from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes._shared import chat_question, progress, timed
from grounded_rag.prompts import addresses
from grounded_rag.questions import check_length
from grounded_rag.retrieval.calibration import clears_gate
from grounded_rag.retrieval.hybrid import coverage_terms
from grounded_rag.retrieval.sentence_scores import annotate
from grounded_rag.state import State
from grounded_rag.types import Evidence, Finding
from grounded_rag.verification.on_question import predicate_absent


def retrieve_evidence(
    state: State, config: RunnableConfig, runtime: Runtime[Context], *, parts: Parts
) -> dict[str, Any]:
    """Retrieve top-k section-granular evidence; flag weak evidence for abstention."""
    settings = parts.settings(runtime, config)
    timings: dict[str, float] = {}
    question, chat = chat_question(state)
    check_length(question)  # the one limit every surface shares; an empty one abstains
    asked = detect_language(question)  # the gate's "other language" is the question's
    language = settings.language if settings.language != "auto" else asked
    progress("retrieving", language)
    findings: list[Finding] = []
    evidence: list[Evidence] = []
    embeddings = None  # the store's embedder, for the sentences of the other language
    with timed("retrieve", timings):
        if not question:
            findings.append({"type": "empty_question", "severity": "critical",
                             "claim_index": -1, "detail": "The question is empty."})
        elif settings.language == "auto" and (other := third_language(question)):
            # the checks read Japanese and English only; ``language`` answers it anyway
            findings.append({"type": "unsupported_language", "severity": "critical",
                             "claim_index": -1,
                             "detail": f"The question looks {other}: answers are written and "
                             "checked in Japanese or English only. Ask in either, or set "
                             "language to ja or en to answer it anyway; no model was called."})
        elif _only_function_words(question):
            # "?", "それは？", "What is it?": nothing to look for, so nothing can answer it
            findings.append({"type": "no_content_words", "severity": "critical",
                             "claim_index": -1,
                             "detail": "The question names nothing to look for (no content "
                             "words); no model was called."})
        else:
            retriever = parts.store(settings)
            embeddings = getattr(retriever, "embeddings", None)
            evidence = list(retriever.retrieve(question, settings.top_k))[: settings.top_k]
    # ``language`` may be forced to the language the answer is written in; the gate's
    # "other language" stays the question's
    passes, best, same_gate, cross_gate = clears_gate(
        evidence, asked if question else language, settings.abstain_threshold)
    if question and not passes and not findings:
        findings.append({
            "type": "weak_evidence", "severity": "critical", "claim_index": -1,
            "detail": f"Nothing in the store is about this question: best evidence relevance "
            f"{best:.4f} is below the abstain threshold {same_gate:g} ({cross_gate:g} for "
            "passages in the other language); no model was called.",
        })
    if question and passes and not findings and settings.predicate_check:
        absent = predicate_absent(question, evidence, asked)
        if absent:
            key = "ja" if asked == "ja" else "en"
            words = addresses.TERMS_SEPARATOR[key].join(dict.fromkeys(t.surface for t in absent))
            findings.append({
                "type": "predicate_absent", "severity": "critical", "claim_index": -1,
                "detail": addresses.PREDICATE_ABSENT[key].format(terms=words),
            })
    if evidence and not findings:
        # Passages in the other language: the embedder picks which of their sentences the
        # generator sees (word overlap cannot), counted as retrieval time.
        with timed("retrieve", timings):
            evidence = annotate(question, evidence, embeddings, asked, settings.evidence_tokens,
                                settings.abstain_threshold)
    # Reset everything a previous run on the same thread may have left behind.
    return {
        "question": question, "chat": chat, "language": language, "evidence": evidence,
        "findings": findings, "draft": None, "claims": [], "removed_claims": [],
        "history": [], "feedback": "", "attempts": 0, "review": {}, "flags": [],
        "max_retries": settings.max_retries, "keep_verified": settings.keep_verified,
        "timings_ms": timings,
        "verification": "none", "checked_claims": 0, "verification_error": "",
        "warnings": [], "stage_scores": {},
    }


def _only_function_words(question: str) -> bool:
    """Words, but none that names anything to look for ("それは？", "What is it?")."""
    from grounded_rag.verification.evidence import content_tokens

    if not any(ch.isalnum() for ch in question):  # "?", "…？"
        return True
    letters = sum(ch.isalpha() for ch in question)
    return letters >= 2 and not coverage_terms(question) and not content_tokens(question)
