"""extract_claims: split the answer into atomic claims, each inheriting its citations."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from grounded_rag._structured import StructuredOutputFailure, invoke_structured
from grounded_rag.context import Context
from grounded_rag.lang import split_sentences
from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes._shared import lang, progress, timed
from grounded_rag.prompts import extract as extract_prompts
from grounded_rag.schemas import ExtractedClaims
from grounded_rag.state import State
from grounded_rag.types import Claim


def extract_claims(
    state: State, config: RunnableConfig, runtime: Runtime[Context], *, parts: Parts
) -> dict[str, Any]:
    """Split the answer into atomic claims (same language), each inheriting its citations."""
    settings = parts.settings(runtime, config)
    language = lang(state)
    progress("extracting", language)
    timings = dict(state.get("timings_ms") or {})
    statements = (state.get("draft") or {"statements": []})["statements"]
    findings = [f for f in state.get("findings", []) if f["type"] == "malformed_output"]
    with timed("extract_claims", timings):
        pieces, problem = _split(statements, parts, settings, language)
    if problem:
        findings.append({"type": "extractor_fallback", "severity": "minor",
                         "claim_index": -1, "detail": problem})
    claims: list[Claim] = []
    first_claim_of: dict[int, int] = {}
    for s_index, text in pieces:
        first_claim_of.setdefault(s_index, len(claims))
        claims.append({"text": text, "citations": statements[s_index]["citations"],
                       "statement": s_index})
    for f in state.get("citation_findings", []):
        findings.append({**f, "claim_index": first_claim_of.get(f["claim_index"], -1)})
    return {"claims": claims, "findings": findings, "timings_ms": timings}


def _split(
    statements: list[Claim], parts: Parts, settings: Context, language: str
) -> tuple[list[tuple[int, str]], str]:
    """Atomic claims as (statement index, text); rules unless a model is configured."""
    rules = [
        (i, sentence)
        for i, st in enumerate(statements)
        for sentence in (split_sentences(st["text"], language) or [st["text"]])
    ]
    if not statements:
        return rules, ""
    model = parts.claim_extractor(settings)
    if model is None:
        return rules, ""
    numbered = "\n".join(f"{i}. {st['text']}" for i, st in enumerate(statements))
    messages = [
        SystemMessage(extract_prompts.SYSTEM[language]),
        HumanMessage(extract_prompts.USER[language].format(statements=numbered)),
    ]
    try:
        reply = invoke_structured(model, ExtractedClaims, messages)
    except StructuredOutputFailure as exc:
        return rules, f"Claim extraction failed, fell back to sentence splitting: {exc}"
    pieces = [
        (c.statement, c.text.strip())
        for c in reply.claims
        if 0 <= c.statement < len(statements) and c.text.strip()
    ]
    # A statement the extractor skipped would escape verification: keep it whole.
    covered = {i for i, _ in pieces}
    pieces += [(i, st["text"]) for i, st in enumerate(statements) if i not in covered]
    return sorted(pieces, key=lambda p: p[0]), ""
