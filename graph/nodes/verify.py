"""verify_claims / verify_after_answer: NLI verdicts for the claims, now or after the answer."""

from __future__ import annotations

import logging
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from grounded_rag.context import Context
from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes._shared import copy_claims, lang, progress, settled, timed
from grounded_rag.nodes.write import evidence_view
from grounded_rag.prompts import generate as generate_prompts
from grounded_rag.state import State
from grounded_rag.types import Claim, Finding
from grounded_rag.verification.citations import render_view
from grounded_rag.verification.modes import (
    failed_update,
    judge_claims,
    late_warnings,
    mark_unchecked,
    select_claims,
    verification_state,
)

log = logging.getLogger(__name__)


def verify_claims(
    state: State, config: RunnableConfig, runtime: Runtime[Context], *, parts: Parts
) -> dict[str, Any]:
    """NLI-verify the claims the ``verify_mode`` asks for (all, a sample, or none yet)."""
    settings = parts.settings(runtime, config)
    language = lang(state)
    claims = copy_claims(state)
    if settings.verify_mode == "deferred":
        # Returned once the citations pass; verify_after_answer judges the claims.
        mark_unchecked(claims, [], language, pending=True)
        return {"claims": claims, "verification": "pending" if claims else "none",
                "checked_claims": 0}
    if settings.verify_mode == "sampled":
        indices = select_claims([c["text"] for c in claims], settings.verify_sample_rate)
    else:
        indices = list(range(len(claims)))
    progress("verifying", language, n=len(indices))
    timings = dict(state.get("timings_ms") or {})
    findings = list(state.get("findings", []))
    with timed("verify_claims", timings):
        findings += _judge(claims, indices, state, parts, settings)
    mark_unchecked(claims, indices, language)
    return {"claims": claims, "findings": findings, "timings_ms": timings,
            "verification": verification_state(claims, len(indices)),
            "checked_claims": len(indices), **recited_draft(state, claims, findings)}


def recited_draft(state: State, claims: list[Claim], findings: list[Finding]) -> dict[str, Any]:
    """The draft with the citations the coverage check moved (``{}`` when none moved).

    The answer's [n] markers then point where the claims were judged.
    A statement whose claims all moved cites where they moved; one with other claims keeps
    its citations and adds the new ones.
    """
    moved = {f["claim_index"] for f in findings if f["type"] == "citation_moved"}
    draft = state.get("draft")
    if not moved or not draft:
        return {}
    statements: list[Claim] = [cast(Claim, dict(st)) for st in draft["statements"]]
    for index in sorted(moved):
        if not 0 <= index < len(claims):
            continue
        s_index = claims[index].get("statement", -1)
        if not 0 <= s_index < len(statements):
            continue
        siblings = [c for c in claims if c.get("statement") == s_index]
        new = list(claims[index]["citations"])
        if all(i in moved for i, c in enumerate(claims) if c.get("statement") == s_index):
            cites = [cit for c in siblings for cit in c["citations"]]
        else:
            cites = list(statements[s_index]["citations"]) + new
        unique = {(c["source_id"], c.get("start", -1), c.get("end", -1)): c for c in cites}
        statements[s_index]["citations"] = list(unique.values())
    return {"draft": {**draft, "statements": statements}}


def verify_after_answer(
    state: State, config: RunnableConfig, runtime: Runtime[Context], *, parts: Parts
) -> dict[str, Any]:
    """Deferred verification: pause (the answer is out), then verify every claim.

    The pause is an interrupt, so the pending work lives in the checkpointer and survives
    a restart; resuming the thread (``Command(resume=...)``) runs the verifier. Without a
    checkpointer there is nothing to resume later, so the claims are verified right away.
    A verifier that crashes leaves ``verification="failed"`` with the error, not a hang.
    """
    settings = parts.settings(runtime, config)
    language = lang(state)
    claims = copy_claims(state)
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
    progress("verifying", language, n=len(claims))
    timings = dict(state.get("timings_ms") or {})
    flags = [f for f in state.get("flags", []) if f != "verification_pending"]
    try:
        with timed("verify_after_answer", timings):
            findings += _judge(claims, list(range(len(claims))), state, parts, settings)
    except Exception as exc:  # a crash must end as "failed", never as a pending forever
        log.warning("deferred verification failed: %s", exc, exc_info=True)
        return {**failed_update(state, f"{type(exc).__name__}: {exc}"),
                "findings": findings, "timings_ms": timings}
    final = settled(claims, state, settings, "complete")
    warnings = late_warnings(final["claims"], language)
    flags.append("verified_after_answer")
    if warnings:
        flags.append("verification_warning")
    if final["review"]:
        flags.append("needs_review")
    return {
        **final, "findings": findings, "timings_ms": timings, "flags": flags,
        "verification": "complete", "checked_claims": len(claims), "warnings": warnings,
        "verification_error": "",
    }


def _judge(
    claims: list[Claim], indices: list[int], state: State, parts: Parts, settings: Context
) -> list[Finding]:
    """Verify ``claims[i]`` for each index in place; findings for the failing ones.

    With the local generator, the claims carry the first draft's sources block: a local
    judge reads them after it and reuses the generator's evaluated prompt.
    """
    evidence = state.get("evidence", [])
    sources = ""
    if indices and evidence and parts.generator_is_local(settings):
        view = evidence_view(state.get("question", ""), evidence, settings.evidence_tokens)
        sources = render_view(view, evidence, header=generate_prompts.SOURCE_HEADER)
    return judge_claims(claims, indices, evidence, parts.judge(settings),
                        execution=settings.verify_execution, language=lang(state),
                        question=state.get("question", ""), sources=sources)
