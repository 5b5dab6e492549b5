"""Graph nodes: one job each, verb_noun names, all settings read from the run's context."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from grounded_rag._structured import StructuredOutputFailure, invoke_structured
from grounded_rag.context import Context, default_model_spec, resolve_context
from grounded_rag.lang import detect_language, split_sentences, strip_markers
from grounded_rag.local import LOCAL_LLM_TYPE
from grounded_rag.models import (
    is_local_spec,
    resolve_answerability,
    resolve_chat_model,
    resolve_verifier,
)
from grounded_rag.prompts import extract as extract_prompts
from grounded_rag.prompts import feedback as feedback_prompts
from grounded_rag.prompts import generate as generate_prompts
from grounded_rag.questions import check_length
from grounded_rag.retrieval.base import Retriever
from grounded_rag.retrieval.calibration import clears_gate
from grounded_rag.retrieval.loaders import public_url
from grounded_rag.schemas import CitedAnswer, ExtractedClaims
from grounded_rag.state import State
from grounded_rag.types import (
    Citation,
    Claim,
    ClaimStatus,
    Draft,
    Evidence,
    Finding,
    Source,
)
from grounded_rag.verification.answerability import AnswerabilityJudge
from grounded_rag.verification.base import Verifier
from grounded_rag.verification.citations import check_citations
from grounded_rag.verification.handles import (
    SentenceView,
    cite_handles,
    number_sentences,
    render_view,
    select_sentences,
)
from grounded_rag.verification.modes import (
    UNCHECKED,
    failed_update,
    judge_claims,
    late_warnings,
    mark_unchecked,
    verification_state,
)
from grounded_rag.verification.on_question import off_question_findings
from grounded_rag.verification.sampling import select_claims
from grounded_rag.verification.scores import confidence_score, grounding_score

log = logging.getLogger(__name__)

_retrievers: dict[str, Retriever] = {}
_retrievers_lock = threading.Lock()


def _open_store(store_dir: str) -> Retriever:
    from grounded_rag.retrieval import open_retriever

    key = store_dir or ""
    with _retrievers_lock:
        if key not in _retrievers:
            _retrievers[key] = open_retriever(store_dir or None)
        return _retrievers[key]


@contextmanager
def _timed(stage: str, timings: dict[str, float]) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = round(timings.get(stage, 0.0) + (time.perf_counter() - start) * 1000, 3)


def _progress(stage: str, language: str, **fields: Any) -> None:
    """Emit a progress event on LangGraph's ``custom`` stream (a no-op outside streaming)."""
    template = feedback_prompts.PROGRESS[stage]
    message = template.get(language, template["en"]).format(**fields)
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a run
        return
    writer({"stage": stage, "message": message, **fields})


def _lang(state: State) -> str:
    return state.get("language") or "en"


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


class Nodes:
    """The graph's node functions, bound to optionally injected parts.

    Anything not injected is resolved per run from the settings (``Context`` /
    ``config["configurable"]``), so one compiled graph serves every model and store.
    """

    def __init__(
        self,
        *,
        retriever: Retriever | None = None,
        generator: BaseChatModel | None = None,
        extractor: BaseChatModel | str | None = None,
        verifier: Verifier | BaseChatModel | None = None,
        answerability: AnswerabilityJudge | None = None,
    ) -> None:
        self.retriever = retriever
        self.generator = generator
        self.extractor = extractor
        self.verifier = verifier
        self.answerability = answerability

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def settings(runtime: Runtime[Context] | None, config: RunnableConfig | None) -> Context:
        """The effective settings of this run."""
        return resolve_context(runtime.context if runtime else None, config)

    def _generator_spec(self, settings: Context) -> str:
        return settings.generator_model or default_model_spec()

    def _generator(self, settings: Context) -> BaseChatModel:
        return resolve_chat_model(self.generator, self._generator_spec(settings))

    def _verifier(self, settings: Context) -> Verifier:
        if self.verifier is not None:
            return resolve_verifier(self.verifier, "")
        if settings.verifier_model:
            return resolve_verifier(settings.verifier_model, "")
        if self.generator is not None:
            return resolve_verifier(self.generator, "")
        return resolve_verifier(None, self._generator_spec(settings))

    def _generator_is_local(self, settings: Context) -> bool:
        if self.generator is not None:
            return getattr(self.generator, "_llm_type", "") == LOCAL_LLM_TYPE
        return is_local_spec(self._generator_spec(settings))

    def _answerability(self, settings: Context) -> AnswerabilityJudge | None:
        mode = settings.answerability_check
        if mode == "off":
            return None
        if self.answerability is not None:
            return self.answerability
        if mode == "auto" and not self._generator_is_local(settings):
            return None
        return resolve_answerability(self._generator_spec(settings))

    # -- nodes -----------------------------------------------------------------------------

    def retrieve_evidence(
        self, state: State, config: RunnableConfig, runtime: Runtime[Context]
    ) -> dict[str, Any]:
        """Retrieve top-k section-granular evidence; flag weak evidence for abstention."""
        settings = self.settings(runtime, config)
        timings: dict[str, float] = {}
        question = (state.get("question") or "").strip()
        check_length(question)  # the one limit every surface shares; an empty one abstains
        language = settings.language if settings.language != "auto" else detect_language(question)
        _progress("retrieving", language)
        findings: list[Finding] = []
        evidence: list[Evidence] = []
        with _timed("retrieve", timings):
            if not question:
                findings.append({"type": "empty_question", "severity": "critical",
                                 "claim_index": -1, "detail": "The question is empty."})
            else:
                retriever = self.retriever or _open_store(settings.store_dir)
                evidence = list(retriever.retrieve(question, settings.top_k))[: settings.top_k]
        # "other language" means other than the question's (``language`` may be forced to
        # the language the answer is written in)
        passes, best, cross = clears_gate(evidence, detect_language(question) if question
                                          else language, settings.abstain_threshold)
        if question and not passes:
            findings.append({
                "type": "weak_evidence", "severity": "critical", "claim_index": -1,
                "detail": f"Best evidence relevance {best:.2f} is below the abstain threshold "
                f"{settings.abstain_threshold:.2f} ({cross:.3f} for passages in the other "
                "language); no model was called.",
            })
        # Reset everything a previous run on the same thread may have left behind.
        return {
            "question": question, "language": language, "evidence": evidence,
            "findings": findings, "draft": None, "claims": [], "removed_claims": [],
            "history": [], "feedback": "", "attempts": 0, "review": {}, "flags": [],
            "max_retries": settings.max_retries, "timings_ms": timings,
            "verification": "none", "checked_claims": 0, "verification_error": "",
            "warnings": [],
        }

    def assess_answerability(
        self, state: State, config: RunnableConfig, runtime: Runtime[Context]
    ) -> dict[str, Any]:
        """Abstain early when none of the top passages contains the answer.

        One short Yes/No prompt per passage and no generation; a no-op when the check is off.
        """
        settings = self.settings(runtime, config)
        judge = self._answerability(settings)
        language = _lang(state)
        if judge is None or not judge.covers(language):
            return {}
        _progress("assessing", language)
        timings = dict(state.get("timings_ms") or {})
        evidence = state.get("evidence", [])[: settings.answerability_passages]
        with _timed("answerability", timings):
            result = judge.assess(state["question"], evidence, language=language)
        if result["answerable"]:
            return {"timings_ms": timings}
        best = result["passages"][0]["source_id"] if result["passages"] else "-"
        finding: Finding = {
            "type": "no_answer_in_sources", "severity": "critical", "claim_index": -1,
            "detail": (
                f"None of the top {len(evidence)} passages seems to contain the answer: best "
                f"answerability {result['score']:.2f} ({best}) is below {result['threshold']:.2f}; "
                "no answer was written."
            ),
        }
        return {"findings": [*state.get("findings", []), finding], "timings_ms": timings}

    def _write_answer(
        self, state: State, config: RunnableConfig, runtime: Runtime[Context], *, revise: bool
    ) -> dict[str, Any]:
        settings = self.settings(runtime, config)
        language = _lang(state)
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
            _progress("generating", language)
            user = generate_prompts.USER[language].format(
                sources=sources, question=state["question"]
            )
        messages = [SystemMessage(generate_prompts.SYSTEM[language]), HumanMessage(user)]
        # Unusable replies of earlier attempts stay on record, but no longer block.
        findings: list[Finding] = [
            {**f, "severity": "info"}
            for f in state.get("findings", []) if f["type"] == "malformed_output"
        ]
        draft: Draft | None
        with _timed("generate", timings):
            try:
                reply = invoke_structured(self._generator(settings), CitedAnswer, messages)
                draft = _draft_from_reply(reply, evidence, view)
            except StructuredOutputFailure as exc:
                draft = None
                findings.append({
                    "type": "malformed_output", "severity": "critical", "claim_index": -1,
                    "detail": f"The generator's structured reply was unusable: {exc}",
                })
        return {"draft": draft, "attempts": attempts, "findings": findings,
                "timings_ms": timings}

    def generate_answer(
        self, state: State, config: RunnableConfig, runtime: Runtime[Context]
    ) -> dict[str, Any]:
        """Write a structured, cited answer from the evidence."""
        return self._write_answer(state, config, runtime, revise=False)

    def revise_answer(
        self, state: State, config: RunnableConfig, runtime: Runtime[Context]
    ) -> dict[str, Any]:
        """Revise the previous draft from the per-claim findings (a targeted revision)."""
        return self._write_answer(state, config, runtime, revise=True)

    def check_citations(
        self, state: State, config: RunnableConfig, runtime: Runtime[Context]
    ) -> dict[str, Any]:
        """Deterministic checks: phantom ids, quotes, and answers that miss the question.

        Phantom source ids or handles, quotes located with offsets, wrong-source quotes, and
        (not for a reviewer's edit) statements that do not answer the question.
        """
        settings = self.settings(runtime, config)
        language = _lang(state)
        _progress("checking", language)
        timings = dict(state.get("timings_ms") or {})
        draft = state.get("draft") or {"answerable": False, "statements": []}
        evidence = state.get("evidence", [])
        with _timed("check_citations", timings):
            statements, findings = check_citations(
                draft["statements"], evidence, threshold=settings.quote_match_threshold,
            )
            if "human_edited" not in state.get("flags", []):
                findings += off_question_findings(state.get("question", ""), statements,
                                                  evidence, language)
        return {"draft": {**draft, "statements": statements}, "citation_findings": findings,
                "timings_ms": timings}

    def extract_claims(
        self, state: State, config: RunnableConfig, runtime: Runtime[Context]
    ) -> dict[str, Any]:
        """Split the answer into atomic claims (same language), each inheriting its citations."""
        settings = self.settings(runtime, config)
        language = _lang(state)
        _progress("extracting", language)
        timings = dict(state.get("timings_ms") or {})
        statements = (state.get("draft") or {"statements": []})["statements"]
        findings = [f for f in state.get("findings", []) if f["type"] == "malformed_output"]
        with _timed("extract_claims", timings):
            pieces, problem = self._split(statements, settings, language)
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
        self, statements: list[Claim], settings: Context, language: str
    ) -> tuple[list[tuple[int, str]], str]:
        """Atomic claims as (statement index, text); rules unless a model is configured."""
        rules = [
            (i, sentence)
            for i, st in enumerate(statements)
            for sentence in (split_sentences(st["text"], language) or [st["text"]])
        ]
        choice = self.extractor if self.extractor is not None else settings.extractor_model
        if choice == "rules" or not statements:
            return rules, ""
        if choice in ("auto", "", None):
            if self.generator is None and is_local_spec(self._generator_spec(settings)):
                return rules, ""
            model = self._generator(settings)
        else:
            model = resolve_chat_model(choice)
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

    def verify_claims(
        self, state: State, config: RunnableConfig, runtime: Runtime[Context]
    ) -> dict[str, Any]:
        """NLI-verify the claims the ``verify_mode`` asks for (all, a sample, or none yet)."""
        settings = self.settings(runtime, config)
        language = _lang(state)
        claims = _copy_claims(state)
        if settings.verify_mode == "deferred":
            # Returned once the citations pass; verify_after_answer judges the claims.
            mark_unchecked(claims, [], language, pending=True)
            return {"claims": claims, "verification": "pending" if claims else "none",
                    "checked_claims": 0}
        if settings.verify_mode == "sampled":
            indices = select_claims([c["text"] for c in claims], settings.verify_sample_rate)
        else:
            indices = list(range(len(claims)))
        _progress("verifying", language, n=len(indices))
        timings = dict(state.get("timings_ms") or {})
        findings = list(state.get("findings", []))
        with _timed("verify_claims", timings):
            findings += self._judge(claims, indices, state, settings)
        mark_unchecked(claims, indices, language)
        return {"claims": claims, "findings": findings, "timings_ms": timings,
                "verification": verification_state(claims, len(indices)),
                "checked_claims": len(indices)}

    def _judge(
        self, claims: list[Claim], indices: list[int], state: State, settings: Context
    ) -> list[Finding]:
        """Verify ``claims[i]`` for each index in place; findings for the failing ones."""
        return judge_claims(claims, indices, state.get("evidence", []), self._verifier(settings),
                            execution=settings.verify_execution, language=_lang(state))

    def verify_after_answer(
        self, state: State, config: RunnableConfig, runtime: Runtime[Context]
    ) -> dict[str, Any]:
        """Deferred verification: pause (the answer is out), then verify every claim.

        The pause is an interrupt, so the pending work lives in the checkpointer and survives
        a restart; resuming the thread (``Command(resume=...)``) runs the verifier. Without a
        checkpointer there is nothing to resume later, so the claims are verified right away.
        A verifier that crashes leaves ``verification="failed"`` with the error, not a hang.
        """
        settings = self.settings(runtime, config)
        language = _lang(state)
        claims = _copy_claims(state)
        findings = list(state.get("findings", []))
        info = getattr(runtime, "execution_info", None)
        if info is not None and info.thread_id is not None:
            interrupt({"verification": "pending", "question": state.get("question", ""),
                       "claims": len(claims)})
        else:
            findings.append({
                "type": "deferred_without_checkpointer", "severity": "info", "claim_index": -1,
                "detail": "verify_mode 'deferred' needs a checkpointer to return the answer "
                "before verifying it; the claims were verified before returning instead.",
            })
        _progress("verifying", language, n=len(claims))
        timings = dict(state.get("timings_ms") or {})
        flags = [f for f in state.get("flags", []) if f != "verification_pending"]
        try:
            with _timed("verify_after_answer", timings):
                findings += self._judge(claims, list(range(len(claims))), state, settings)
        except Exception as exc:  # a crash must end as "failed", never as a pending forever
            log.warning("deferred verification failed: %s", exc, exc_info=True)
            return {**failed_update(state, f"{type(exc).__name__}: {exc}"),
                    "findings": findings, "timings_ms": timings}
        first_texts = _first_attempt_texts(state)
        for claim in claims:
            claim["status"] = _claim_status(claim, first_texts, "complete")
        warnings = late_warnings(claims, language)
        regenerations = max(0, state.get("attempts", 1) - 1)
        confidence = confidence_score(claims, state.get("evidence", []),
                                      regenerations=regenerations)
        needs_review = settings.review_mode and confidence < settings.review_threshold
        flags.append("verified_after_answer")
        if warnings:
            flags.append("verification_warning")
        if needs_review:
            flags.append("needs_review")
        return {
            "claims": claims, "findings": findings, "timings_ms": timings, "flags": flags,
            "verification": "complete", "checked_claims": len(claims), "warnings": warnings,
            "verification_error": "", "confidence": confidence,
            "grounding_score": grounding_score(claims,
                                               quote_threshold=settings.quote_match_threshold),
            "review": {"required": True} if needs_review else {},
        }

    def prepare_feedback(self, state: State) -> dict[str, Any]:
        """Turn per-claim verdicts and citation problems into revision instructions."""
        language = _lang(state)
        attempts = state.get("attempts", 1)
        _progress("revising", language, attempt=attempts + 1,
                  total=state.get("max_retries", 0) + 1)
        lines: list[str] = []
        names = feedback_prompts.VERDICT_NAMES[language]
        claims = state.get("claims", [])
        for claim in claims:
            if claim.get("verdict", "neutral") in ("supported", UNCHECKED):
                continue
            quote = claim.get("evidence_quote", "")
            suffix = feedback_prompts.EVIDENCE_SUFFIX[language].format(quote=quote) if quote else ""
            lines.append(feedback_prompts.CLAIM_FINDING[language].format(
                claim=claim["text"], verdict=names[claim.get("verdict", "neutral")],
                reason=claim.get("reason", ""), evidence=suffix))
        for f in state.get("findings", []):
            if f["type"] in {"contradicted", "unsupported"}:
                continue  # already rendered per claim
            if f["severity"] in {"critical", "major"}:
                lines.append(feedback_prompts.GENERAL_FINDING[language].format(detail=f["detail"]))
        record = {
            "attempt": attempts,
            "statements": (state.get("draft") or {"statements": []})["statements"],
            "claims": claims,
            "findings": state.get("findings", []),
        }
        return {"feedback": "\n".join(lines), "history": [*state.get("history", []), record]}

    def finalize_answer(
        self, state: State, config: RunnableConfig, runtime: Runtime[Context]
    ) -> dict[str, Any]:
        """Compose the answer with [n] markers, the references list and the scores."""
        settings = self.settings(runtime, config)
        language = _lang(state)
        _progress("finalizing", language)
        evidence = state.get("evidence", [])
        by_id = {e["source_id"]: e for e in evidence}
        statements = (state.get("draft") or {"statements": []})["statements"]
        sources: list[Source] = []
        number: dict[str, int] = {}
        parts: list[str] = []
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
            parts.append(_attach_marks(st["text"], "".join(marks), language))
        answer = ("" if language == "ja" else " ").join(parts)

        history = state.get("history", [])
        first_texts = _first_attempt_texts(state)
        verification = state.get("verification") or "complete"
        claims: list[Claim] = [
            {**claim, "status": _claim_status(claim, first_texts, verification)}
            for claim in state.get("claims", [])
        ]
        removed = _removed_claims(history, claims)
        regenerations = max(0, state.get("attempts", 1) - 1)
        confidence = confidence_score(claims, evidence, regenerations=regenerations)
        findings = state.get("findings", [])
        flags = _flags(evidence, findings, regenerations)
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
            "grounding_score": grounding_score(claims,
                                               quote_threshold=settings.quote_match_threshold),
            "flags": flags + (["needs_review"] if needs_review else []),
            "review": {"required": True} if needs_review else {},
            "verification": verification,
            "checked_claims": state.get("checked_claims", len(claims)),
            "verification_error": "", "warnings": [],
        }

    def review_answer(self, state: State) -> dict[str, Any]:
        """Pause for a person: approve, edit (re-verified) or reject (abstain)."""
        _progress("reviewing", _lang(state))
        decision = interrupt({
            "question": state.get("question", ""),
            "answer": state.get("answer", ""),
            "claims": state.get("claims", []),
            "findings": state.get("findings", []),
            "sources": state.get("sources", []),
            "confidence": state.get("confidence", 0.0),
            "actions": ["approve", "edit", "reject"],
        })
        action, payload = _parse_review(decision)
        review = {"required": True, "action": action, "note": payload.get("note", "")}
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

    def abstain_answer(self, state: State) -> dict[str, Any]:
        """Say the sources do not answer, in the question's language, with the findings."""
        language = _lang(state)
        _progress("abstaining", language)
        # Every claim of the last attempt goes too: an abstention asserts nothing.
        last = {"claims": [{**c, "verdict": c.get("verdict", "neutral")}
                           for c in state.get("claims", [])]}
        removed = _removed_claims([*state.get("history", []), last], [], everything=True)
        return {
            "status": "abstained",
            "answer": feedback_prompts.ABSTAIN.get(language, feedback_prompts.ABSTAIN["en"]),
            "claims": [], "removed_claims": removed, "sources": [], "confidence": 0.0,
            "grounding_score": 0.0, "verification": "none", "checked_claims": 0,
            "flags": _flags(state.get("evidence", []), state.get("findings", []),
                            max(0, state.get("attempts", 0) - 1)) + ["abstained"],
        }


def _copy_claims(state: State) -> list[Claim]:
    """The state's claims as fresh dicts a node may update."""
    return [cast(Claim, dict(c)) for c in state.get("claims", [])]


def _first_attempt_texts(state: State) -> set[str] | None:
    """Claim texts of the first attempt (None when there was only one)."""
    history = state.get("history", [])
    return {c["text"] for c in history[0]["claims"]} if history else None


def _claim_status(claim: Claim, first_texts: set[str] | None, verification: str) -> ClaimStatus:
    """The badge of a final claim: verified / revised, or unchecked / pending / flagged."""
    verdict = claim.get("verdict")
    if verdict == UNCHECKED:
        return "pending" if verification == "pending" else "unchecked"
    if verdict != "supported":
        return "flagged"  # only a deferred verification lets an unsupported claim stand
    return "verified" if first_texts is None or claim["text"] in first_texts else "revised"


def _attach_marks(text: str, marks: str, language: str) -> str:
    if not marks:
        return text
    end_punct = "。．.！!？?"
    if text and text[-1] in end_punct:
        return text[:-1] + marks + text[-1]
    return text + marks + ("。" if language == "ja" else ".")


def _removed_claims(
    history: list[dict[str, Any]], final: list[Claim], *, everything: bool = False
) -> list[Claim]:
    """Claims of earlier attempts that failed (or all, for an abstention) and were dropped."""
    kept = {c["text"] for c in final}
    removed: dict[str, Claim] = {}
    for i, record in enumerate(history):
        take_all = everything and i == len(history) - 1
        for claim in record["claims"]:
            failed = claim.get("verdict") != "supported"
            if (failed or take_all) and claim["text"] not in kept:
                removed[claim["text"]] = {**claim, "status": "removed"}
    return list(removed.values())


def _flags(evidence: list[Evidence], findings: list[Finding], regenerations: int) -> list[str]:
    flags: list[str] = []
    best = max((e["relevance"] for e in evidence), default=0.0)
    if evidence and best < 0.5:
        flags.append("low_relevance")
    if evidence and len(evidence) < 3:
        flags.append("few_sources")
    if regenerations:
        flags.append("revised")
    kinds = {f["type"] for f in findings}
    for kind in ("quote_drift", "quote_not_found", "quote_in_other_source", "phantom_source",
                 "malformed_output", "extractor_fallback", "weak_evidence",
                 "no_answer_in_sources", "off_question"):
        if kind in kinds:
            flags.append(kind)
    return flags


def _parse_review(decision: Any) -> tuple[str, dict[str, Any]]:
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
