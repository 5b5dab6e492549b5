"""generate_answer / revise_answer: the cited answer, written from numbered evidence sentences."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from grounded_rag._structured import StructuredOutputFailure, invoke_structured
from grounded_rag.context import Context
from grounded_rag.lang import strip_markers
from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes._shared import lang, progress, timed
from grounded_rag.prompts import generate as generate_prompts
from grounded_rag.schemas import CitedAnswer
from grounded_rag.state import State
from grounded_rag.types import Citation, Claim, Draft, Evidence, Finding
from grounded_rag.verification.handles import (
    SentenceView,
    cite_handles,
    number_sentences,
    render_view,
    select_sentences,
)


def generate_answer(
    state: State, config: RunnableConfig, runtime: Runtime[Context], *, parts: Parts
) -> dict[str, Any]:
    """Write a structured, cited answer from the evidence."""
    return _write_answer(state, config, runtime, parts, revise=False)


def revise_answer(
    state: State, config: RunnableConfig, runtime: Runtime[Context], *, parts: Parts
) -> dict[str, Any]:
    """Revise the previous draft from the per-claim findings (a targeted revision)."""
    return _write_answer(state, config, runtime, parts, revise=True)


def _write_answer(
    state: State, config: RunnableConfig, runtime: Runtime[Context], parts: Parts, *,
    revise: bool,
) -> dict[str, Any]:
    settings = parts.settings(runtime, config)
    language = lang(state)
    timings = dict(state.get("timings_ms") or {})
    attempts = state.get("attempts", 0) + 1
    evidence = state.get("evidence", [])
    view = number_sentences(
        evidence, select_sentences(state["question"], evidence, settings.evidence_tokens))
    sources = render_view(view, evidence, header=generate_prompts.SOURCE_HEADER)
    if revise:
        previous = (state.get("draft") or {"statements": []})["statements"]
        ids = [e["source_id"] for e in evidence]
        draft_text = "\n".join(
            generate_prompts.DRAFT_LINE.format(
                text=s["text"], citations=_cited_handles(s["citations"], view, ids)
            )
            for s in previous
        ) or "-"
        user = generate_prompts.REVISE[language].format(
            sources=sources, question=state["question"],
            draft=_to_handles(draft_text, evidence),
            feedback=_to_handles(state.get("feedback", ""), evidence),
        )
    else:
        progress("generating", language)
        user = generate_prompts.USER[language].format(sources=sources, question=state["question"])
    messages = [SystemMessage(generate_prompts.SYSTEM[language]), HumanMessage(user)]
    # Unusable replies of earlier attempts stay on record, but no longer block.
    findings: list[Finding] = [
        {**f, "severity": "info"}
        for f in state.get("findings", []) if f["type"] == "malformed_output"
    ]
    draft: Draft | None
    with timed("generate", timings):
        try:
            reply = invoke_structured(parts.chat_model(settings), CitedAnswer, messages)
            draft = _draft_from_reply(reply, evidence, view)
            if not draft["answerable"]:
                findings.append({
                    "type": "generator_declined", "severity": "critical", "claim_index": -1,
                    "detail": "The generator found no answer to the question in the evidence"
                    + (" (it cited nothing usable)." if reply.answerable else "."),
                })
        except StructuredOutputFailure as exc:
            draft = None
            findings.append({
                "type": "malformed_output", "severity": "critical", "claim_index": -1,
                "detail": f"The generator's structured reply was unusable: {exc}",
            })
    return {"draft": draft, "attempts": attempts, "findings": findings, "timings_ms": timings}


def _handle(index: int) -> str:
    """Short handle of a passage (``S1``, ``S2``, ...); its sentences are ``S1.1``, ``S1.2``.

    Small models mangle long ids such as ``valid:コンゴ共和国:15#sec0``; a short handle is
    copied reliably and mapped back to the section-granular id deterministically.
    """
    return f"S{index + 1}"


def _to_handles(text: str, evidence: list[Evidence]) -> str:
    """Rewrite real ids in feedback text as the handles the generator saw."""
    for i, e in sorted(enumerate(evidence), key=lambda p: -len(p[1]["source_id"])):
        text = text.replace(e["source_id"], _handle(i))
    return text


def _draft_from_reply(reply: CitedAnswer, evidence: list[Evidence], view: SentenceView) -> Draft:
    """The generator's statements with their handles turned into copied, located quotes."""
    statements: list[Claim] = []
    for st in reply.statements:
        text = strip_markers(st.text)
        if not text:
            continue
        statements.append({"text": text,
                           "citations": cite_handles(st.citations, view, evidence, text)})
    return {"answerable": bool(reply.answerable and statements), "statements": statements}


def _cited_handles(citations: list[Citation], view: SentenceView, ids: list[str]) -> str:
    """A previous draft's citations as the generator wrote them (``S1.2, S1.3``)."""
    out: list[str] = []
    for c in citations:
        out.extend(view.handles_of(c, ids) or [c["source_id"]])
    return ", ".join(dict.fromkeys(out))
