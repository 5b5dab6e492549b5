"""generate_answer / revise_answer: the cited answer, written from numbered evidence sentences."""

from __future__ import annotations

import math
import re
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from grounded_rag._served_decision import decide_on_server, reads_logprobs
from grounded_rag._structured import StructuredOutputFailure, invoke_structured_raw
from grounded_rag.context import Context
from grounded_rag.lang import strip_markers
from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes._shared import lang, progress, timed
from grounded_rag.prompts import generate as generate_prompts
from grounded_rag.schemas import CitedAnswer
from grounded_rag.state import State
from grounded_rag.types import Citation, Claim, Draft, Evidence, Finding
from grounded_rag.verification.asked import gap_fillers, gap_unwritten
from grounded_rag.verification.citations import (
    SentenceView,
    cite_handles,
    number_sentences,
    render_view,
    select_sentences,
)
from grounded_rag.verification.decision import DEFAULT_DECISION

_HANDLES_ONLY = re.compile(r"\W*((?:[Ss]\d+(?:\.\d+)?[\s,、]*)+)[\W_]*")
"""A statement that is only sentence handles (``S1.2。``, ``S1.2, S1.3``)."""

_CITES_NOTE = re.compile(r"\s*\(\s*cites?\s*:[^)]*\)")
"""The revision prompt's citation note (``DRAFT_LINE``), when the model copies it."""

WRITE_DECIDED = -1e9
"""The generator threshold of a revision once the decision to write was made: ``true``."""


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
    view = evidence_view(state["question"], evidence, settings.evidence_tokens)
    if revise:
        view = _without_off_question_sentences(view, state, evidence)
    sources = render_view(view, evidence, header=generate_prompts.SOURCE_HEADER)
    model = parts.chat_model(settings)
    local = parts.generator_is_local(settings) and hasattr(model, "decide")
    served = not local and reads_logprobs(model)  # decided from logprobs: _served_decision
    scores = dict(state.get("stage_scores") or {})
    # The decision to write is made once, at the first draft; a revision of a draft that was
    # written rewrites it and does not decide again (the 1.5B model, told to drop what the
    # checker did not support, declined most revisions of first drafts that held the answer).
    # A served generator's first draft was decided so when its log-odds were read.
    previous_draft = state.get("draft")
    decided = (revise and (local or (served and "generator" in scores))
               and previous_draft is not None and previous_draft["answerable"])
    if decided and _only_off_question(state):
        # Every statement answered another case or kind of thing than the one asked, and
        # the model copies a draft it is shown: a fresh draft over the sentences left.
        messages = answer_messages(state["question"], sources, language)
    elif revise:
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
            closing=(generate_prompts.REVISE_CLOSING_DECIDED if decided
                     else generate_prompts.REVISE_CLOSING)[language],
        )
        messages = [SystemMessage(generate_prompts.SYSTEM[language]), HumanMessage(user)]
    else:
        progress("generating", language)
        messages = answer_messages(state["question"], sources, language)
    # Unusable replies of earlier attempts stay on record, but no longer block.
    findings: list[Finding] = [
        {**f, "severity": "info"}
        for f in state.get("findings", []) if f["type"] == "malformed_output"
    ]
    draft: Draft | None
    threshold = None
    pinned_draft = (_pinned_draft(state, evidence) if revise and previous_draft is not None
                    and previous_draft["answerable"] else None)
    if pinned_draft is not None:  # the source's own word, where the drafts kept missing it
        return {"draft": pinned_draft, "attempts": attempts, "timings_ms": timings,
                "stage_scores": scores, "findings": [*findings, {
                    "type": "pinned_rewrite", "severity": "info", "claim_index": -1,
                    "detail": "The draft did not write what the source sentence gives for "
                              "what was asked; the revision is that word, cited to the "
                              "sentence, with no model call."}]}
    pinned = None if revise or not local else pinned_answer(state["question"], evidence)
    if decided and local:
        model = model.model_copy(update={"decide": {"answerable": WRITE_DECIDED}})
    elif (local or served) and not revise:
        threshold = _generator_threshold(state, settings, language, scores,
                                         floor=pinned is None)
        if local:
            model = model.model_copy(update={"decide": {"answerable": threshold if pinned
                                     else _with_prompt_state(threshold, settings, language,
                                                             scores)}})
    if pinned and DEFAULT_DECISION.state_floor(language, settings.preset or "balanced") \
            is not None:
        findings.append({
            "type": "answer_pinned", "severity": "info", "claim_index": -1,
            "detail": f"A source sentence pins the answer ({pinned!r}): the generator's "
                      "prompt-state score is not read as a veto."})
    with timed("generate", timings):
        try:
            if served and not revise:
                served_reply = decide_on_server(model, messages, threshold)
                reply, chosen = served_reply.reply, {"answerable": served_reply.log_odds}
                findings.extend(served_reply.findings)
            else:
                reply, raw = invoke_structured_raw(model, CitedAnswer, messages, raw=local)
                chosen = (raw.response_metadata.get("choices") or {}) if raw is not None else {}
            score = chosen.get("answerable")
            if not revise and score is not None:
                scores["generator"] = float(score)
            state_score = chosen.get("prompt_state")
            if not revise and state_score is not None:
                scores["prompt_state"] = float(state_score)
                threshold = _generator_threshold(state, settings, language, scores,
                                                 floor=pinned is None)
            draft = _draft_from_reply(reply, evidence, view)
            if not draft["answerable"]:
                findings.append({
                    "type": "empty_answer" if reply.answerable else "generator_declined",
                    "severity": "critical", "claim_index": -1,
                    "detail": ("The generator said the evidence answers the question but wrote "
                               "no statement." if reply.answerable else
                               "The generator found no answer to the question in the evidence.")
                    + _decline_reason(threshold, scores, language,
                                      settings.preset or "balanced"),
                })
        except StructuredOutputFailure as exc:
            draft = None
            findings.append({
                "type": "malformed_output", "severity": "critical", "claim_index": -1,
                "detail": f"The generator's structured reply was unusable: {exc}",
            })
    return {"draft": draft, "attempts": attempts, "findings": findings, "timings_ms": timings,
            "stage_scores": scores}


def pinned_answer(question: str, evidence: list[Evidence]) -> str | None:
    """The answer one source sentence gives by its own words, if any.

    The word that fills a Japanese question's gap, or the other form of a name asked about
    ("UNTAGの正式名称は" over "…国際連合ナミビア独立支援グループ (UNTAG)…"): ``asked.gap_fillers``.
    """
    fillers = gap_fillers(question, evidence)
    return max((f for f, _ in fillers), key=len) if fillers else None


def _pinned_draft(state: State, evidence: list[Evidence]) -> Draft | None:
    """The pinned word as the whole revision, when an off-question draft did not write it.

    A draft that answered, but not with the word one source sentence gives for what was
    asked (``asked.gap_fillers``: 「UNTAGの正式名称は」, 「中東は良質の優れた何が…」), is
    revised to that word, cited to that sentence: the 1.5B model, told the word in the
    feedback, mostly copies its draft again.
    """
    if not any(f["type"] == "off_question" for f in state.get("findings", [])):
        return None
    statements = (state.get("draft") or {"statements": []})["statements"]
    found = gap_fillers(state["question"], evidence)
    unwritten = gap_unwritten([s["text"] for s in statements], found)
    for filler, sentence in found:
        source = next((e for e in evidence if filler == unwritten and sentence in e["text"]),
                      None)
        if source is not None:
            start = source["text"].index(sentence)
            return {"answerable": True, "statements": [{"text": filler, "citations": [{
                "source_id": source["source_id"], "quote": sentence, "start": start,
                "end": start + len(sentence), "match": 1.0}]}]}
    return None


def _generator_threshold(state: State, settings: Context, language: str,
                         scores: dict[str, float], *, floor: bool = True) -> float | None:
    """The log-odds the generator's ``answerable`` must reach, from the earlier stages' scores.

    Also records the relevance the decision read in ``scores``. ``floor=False``: the
    prompt-state floor is not applied (a source sentence pins the answer).
    """
    from grounded_rag.lang import detect_language
    from grounded_rag.retrieval.calibration import best_by_language, gate_thresholds

    evidence = state.get("evidence", [])
    asked = detect_language(state["question"])
    same, cross = best_by_language(evidence, asked)
    same_gate, cross_gate = gate_thresholds(asked, settings.abstain_threshold)
    relevance = max(same / same_gate if same_gate else 0.0,
                    cross / cross_gate if cross_gate else 0.0)
    scores["relevance"] = round(relevance, 4)
    return DEFAULT_DECISION.generator_threshold(
        language, answerability=scores.get("answerability"), relevance=relevance, gate=1.0,
        operating_point=settings.preset or "balanced",
        prompt_state=scores.get("prompt_state") if floor else None)


def _decline_reason(threshold: float | None, scores: dict[str, float], language: str,
                    operating_point: str) -> str:
    """Which score kept the generator from writing, for the finding's detail."""
    if threshold is None or "generator" not in scores or scores["generator"] >= threshold:
        return ""
    if math.isinf(threshold):
        floor = DEFAULT_DECISION.state_floor(language, operating_point)
        return (f" Its own prompt reads unanswerable: the prompt-state score "
                f"{scores.get('prompt_state', float('nan')):.2f} is below the floor "
                f"{floor if floor is not None else float('nan'):.2f} (decided before writing).")
    return (f" Its answerable log-odds {scores['generator']:.2f} did not reach "
            f"{threshold:.2f}, the threshold the stage scores set.")


def _with_prompt_state(threshold: float | None, settings: Context, language: str,
                       scores: dict[str, float]) -> Any:
    """``threshold``, or a rule the local generator decides from its own prompt state.

    Where the decision reads the prompt-state head for ``language``, the threshold is set
    once the generator has read its prompt (``grounded_rag.local.prompt_state``); a model
    without the head falls back to ``threshold``.
    """
    if not DEFAULT_DECISION.reads_state(language):
        return threshold
    from functools import partial

    from grounded_rag.local.prompt_state import StateThreshold

    rule = partial(_state_threshold, language=language, scores=dict(scores),
                   operating_point=settings.preset or "balanced")
    return StateThreshold(language=language, rule=rule, fallback=threshold)


def _state_threshold(score: float, *, language: str, scores: dict[str, float],
                     operating_point: str) -> float:
    t = DEFAULT_DECISION.generator_threshold(
        language, answerability=scores.get("answerability"), relevance=scores.get("relevance"),
        gate=1.0, operating_point=operating_point, prompt_state=score)
    return 0.0 if t is None else t


def evidence_view(question: str, evidence: list[Evidence], budget: int) -> SentenceView:
    """The numbered evidence sentences the generator reads (``budget``: evidence tokens)."""
    return number_sentences(evidence, select_sentences(question, evidence, budget))


def answer_messages(question: str, sources: str, language: str) -> list[Any]:
    """The first-draft prompt: system rules, the numbered ``sources`` and the question."""
    user = generate_prompts.USER[language].format(sources=sources, question=question)
    return [SystemMessage(generate_prompts.SYSTEM[language]), HumanMessage(user)]


def _off_question_statements(state: State) -> tuple[list[Claim], set[int]]:
    """The previous draft's statements, and the indices of those off the question."""
    statements = (state.get("draft") or {"statements": []})["statements"]
    off = {f["claim_index"] for f in state.get("findings", [])
           if f["type"] == "off_question" and f["claim_index"] >= 0}
    return statements, off


def _only_off_question(state: State) -> bool:
    """True when every statement of the draft is off the question and no claim failed.

    The draft's content held (no claim contradicted or unsupported); it answered something
    else than what was asked.
    """
    statements, off = _off_question_statements(state)
    failing = any(c.get("verdict") in ("contradicted", "neutral")
                  for c in state.get("claims", []))
    return bool(statements) and off >= set(range(len(statements))) and not failing


def _without_off_question_sentences(view: SentenceView, state: State,
                                    evidence: list[Evidence]) -> SentenceView:
    """The view less the sentences cited by statements that did not answer the question.

    Told that a statement answers another case than the one asked, the 1.5B generator
    rewrites the same statement from the same sentence; without that sentence in view it
    turns to the others (the view keeps every other sentence and every handle's number).
    """
    statements, off = _off_question_statements(state)
    ids = [e["source_id"] for e in evidence]
    drop = {h for i, st in enumerate(statements) if i in off
            for c in st["citations"] for h in view.handles_of(c, ids)}
    if not drop:
        return view
    keep = {(n.passage, n.number) for shown in view.passages for n in shown
            if n.handle not in drop}
    return number_sentences(evidence, keep) if keep else view


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
        # "(cites: S1.1)" is how the revision prompt shows a previous draft's citations;
        # copied into a statement, it is not part of the answer.
        text = strip_markers(_CITES_NOTE.sub("", st.text))
        if not text:
            continue
        handles = _HANDLES_ONLY.fullmatch(text)
        if handles:
            # "S1.2。": the model named the sentence that answers instead of writing it; the
            # statement is that sentence, copied (a handle is never an answer's text).
            cited = [h for h in re.split(r"[\s,、]+", handles.group(1)) if h]
            citations = cite_handles(list(dict.fromkeys([*cited, *st.citations])), view,
                                     evidence, "")
            text = " ".join(c["quote"] for c in citations if c.get("quote"))
            if not text:
                continue
        else:
            citations = cite_handles(st.citations, view, evidence, text)
        statements.append({"text": text, "citations": citations})
    return {"answerable": bool(reply.answerable and statements), "statements": statements}


def _cited_handles(citations: list[Citation], view: SentenceView, ids: list[str]) -> str:
    """A previous draft's citations as the generator wrote them (``S1.2, S1.3``)."""
    out: list[str] = []
    for c in citations:
        out.extend(view.handles_of(c, ids) or [c["source_id"]])
    return ", ".join(dict.fromkeys(out))
