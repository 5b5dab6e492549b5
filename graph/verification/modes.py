"""Judging claims in the three verification modes: full, sampled and deferred.

- Judging claims in the three verification modes: full, sampled and deferred (after the answer).
- Sampled verification: which claims are most likely wrong, plus a seeded share of the rest.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from grounded_rag.prompts import verification as texts
from grounded_rag.types import Claim, Evidence, Finding, VerificationState
from grounded_rag.verification import coverage, rules
from grounded_rag.verification.base import ClaimToCheck, ClaimVerdict, Verifier
from grounded_rag.verification.cues import _COMMON_CAPS, _NEG_EN, _NEG_JA, _entities
from grounded_rag.verification.evidence import is_japanese
from grounded_rag.verification.values import extract_dates, extract_quantities, prepare

# ------------------------------------------------------------------------------------------
# Judging claims in the three verification modes: full, sampled and deferred (after the answer).
#
# The graph's ``verify_claims`` and ``verify_after_answer`` nodes share these steps: pick the
# evidence each claim is judged against, run the verifier (one batched call, or one call per
# claim in parallel), and write verdicts and findings back. Claims left out are marked
# ``unchecked`` with a reason the reader sees.

MAX_EVIDENCE_PER_CLAIM = 3
"""Chunks a claim is judged against: its cited ones first, then the best other ones."""

UNCHECKED: Literal["unchecked"] = "unchecked"
"""The verdict of a claim the verifier did not judge."""

_PARALLEL_MAX_WORKERS = 8


def claim_to_check(claim: Claim, evidence: list[Evidence], question: str = "") -> ClaimToCheck:
    """A claim with the evidence it is judged against: cited chunks, then the best others.

    A bare answer ("1839年", "Florida State University") says nothing on its own, so it is
    judged with the ``question`` it answers (the judges read the two as one statement);
    a claim that is a sentence is judged as written.
    """
    by_id = {e["source_id"]: e for e in evidence}
    cited = [by_id[c["source_id"]] for c in claim["citations"] if c["source_id"] in by_id]
    chosen = list({e["source_id"]: e for e in cited}.values())
    n_cited = len(chosen)
    for e in evidence:
        if len(chosen) >= MAX_EVIDENCE_PER_CLAIM:
            break
        if e not in chosen:
            chosen.append(e)
    item: ClaimToCheck = {"text": claim["text"], "evidence": chosen}
    if n_cited:
        item["cited"] = n_cited
    if question.strip():
        item["asked"] = question.strip()
    if question.strip() and is_bare_answer(claim["text"]):
        item["question"] = question.strip()
    return item


def is_bare_answer(text: str) -> bool:
    """A short answer without a sentence's end ("1839年", "R+h", "Florida State University")."""
    text = text.strip()
    if not text or text[-1] in ".!?。！？":
        return False
    return len(text) <= 15 if is_japanese(text) else len(text.split()) <= 5


def run_verifier(
    verifier: Verifier, items: list[ClaimToCheck], *, execution: str, language: str
) -> list[ClaimVerdict]:
    """One verdict per item: a single batched call, or one call per claim in parallel."""
    if not items:
        return []
    if execution == "parallel" and len(items) > 1:
        workers = min(_PARALLEL_MAX_WORKERS, len(items))
        # Carries callbacks/tracing context into the threads (imported here so that the
        # package loads without LangChain).
        from langchain_core.runnables.config import ContextThreadPoolExecutor

        with ContextThreadPoolExecutor(max_workers=workers) as pool:
            return [v[0] for v in pool.map(
                lambda item: verifier.verify([item], language=language), items)]
    verdicts = verifier.verify(items, language=language)
    if len(verdicts) != len(items):
        raise RuntimeError(f"the verifier returned {len(verdicts)} verdicts for "
                           f"{len(items)} claims")
    return verdicts


def judge_claims(
    claims: list[Claim],
    indices: Sequence[int],
    evidence: list[Evidence],
    verifier: Verifier,
    *,
    execution: str,
    language: str,
    question: str = "",
    sources: str = "",
) -> list[Finding]:
    """Verify ``claims[i]`` for each index (updating those claims); findings for failures.

    A claim that names an identifier, name, value or topic the sentence it cites does not
    hold (``verification.coverage``) is decided neutral without the judge.

    ``sources``: the numbered sources block the local generator read, handed to each claim
    (``ClaimToCheck["sources"]``) so that a local judge can reuse that prompt's prefix.
    """
    # A claim that names what the sentence it cites does not is decided before any judge.
    early: dict[int, str] = {}
    by_id = {e["source_id"]: e for e in evidence}
    moved: list[Finding] = []
    for i in indices:
        if not rules.enabled("coverage"):
            continue
        missing, recited = coverage.claim_uncovered(claims[i], by_id, question=question)
        if missing:
            early[i] = coverage.reason(missing, language)
            rules.fired("coverage")
        elif recited is not None:
            rules.fired("coverage")
            before = "; ".join(c.get("quote", "") for c in claims[i]["citations"])
            claims[i]["citations"] = [recited]
            moved.append({"type": "citation_moved", "severity": "info", "claim_index": i,
                          "detail": f'Cited "{recited["quote"]}" ({recited["source_id"]}) '
                          f'instead of "{before}", which does not hold what the claim names.'})
    judged = [i for i in indices if i not in early]
    items = [claim_to_check(claims[i], evidence, question) for i in judged]
    if sources:
        for item in items:
            item["sources"] = sources
    verdicts = run_verifier(verifier, items, execution=execution, language=language)
    decided: list[tuple[int, ClaimVerdict]] = [
        (i, ClaimVerdict(verdict="neutral", reason=early[i], evidence_quote=" ".join(
            c.get("quote", "") for c in claims[i]["citations"]), support=0.0))
        for i in indices if i in early]
    findings: list[Finding] = moved
    for index, verdict in sorted([*zip(judged, verdicts, strict=True), *decided],
                                 key=lambda pair: pair[0]):
        verdict = dict(verdict)  # type: ignore[assignment]
        verdict.pop("judge", None)
        if verdict.pop("truncated", False):
            findings.append({"type": "evidence_truncated", "severity": "minor",
                             "claim_index": index,
                             "detail": "The evidence was cut to fit the judge's context; "
                             "the verdict read only its first part."})
        claims[index].update(verdict)  # type: ignore[typeddict-item]
        if verdict["verdict"] == "contradicted":
            findings.append({"type": "contradicted", "severity": "major",
                             "claim_index": index, "detail": verdict["reason"]})
        elif verdict["verdict"] == "neutral":
            findings.append({"type": "unsupported", "severity": "major",
                             "claim_index": index, "detail": verdict["reason"]})
    return findings


def mark_unchecked(claims: list[Claim], checked: Sequence[int], language: str, *,
                   pending: bool = False) -> None:
    """Mark every claim not in ``checked`` as unchecked, with the reason the reader sees."""
    reasons = texts.PENDING_REASON if pending else texts.UNCHECKED_REASON
    reason = reasons.get(language, reasons["en"])
    done = set(checked)
    for index, claim in enumerate(claims):
        if index in done:
            continue
        for key in ("support", "evidence_quote"):
            claim.pop(key, None)  # type: ignore[misc]
        claim.update({"verdict": UNCHECKED, "reason": reason})


def verification_state(claims: list[Claim], checked: int) -> VerificationState:
    """``complete`` when every claim was checked, ``partial`` when some were, ``none`` if none."""
    if not claims:
        return "none"
    return "complete" if checked >= len(claims) else "partial"


def late_warnings(claims: list[Claim], language: str) -> list[str]:
    """One warning per claim a deferred verification found contradicted or unsupported."""
    return [
        texts.late_warning(c["text"], c.get("verdict", "neutral"), c.get("reason", ""), language)
        for c in claims if c.get("verdict") in ("contradicted", "neutral")
    ]


def failed_update(values: Mapping[str, Any], error: str) -> dict[str, Any]:
    """The state update that records a deferred verification as failed with ``error``.

    Its claims stay unverified (``unchecked``), the answer stays as it was returned.
    """
    language = str(values.get("language") or "en")
    claims: list[Claim] = [dict(c) for c in values.get("claims") or []]  # type: ignore[misc]
    mark_unchecked(claims, [], language)
    flags = [f for f in values.get("flags") or [] if f != "verification_pending"]
    return {
        "claims": [{**c, "status": "unchecked"} for c in claims],
        "verification": "failed", "verification_error": error,
        "flags": [*flags, "verification_failed"],
    }


# ------------------------------------------------------------------------------------------
# Sampled verification: which claims are most likely wrong, plus a seeded share of the rest.
#
# Claims that carry a number, date, amount, unit, negation or named entity are where a
# generator's errors concentrate (a swapped figure, a dropped "not", the wrong name), so
# ``verify_mode="sampled"`` always checks those. Of the remaining claims a share
# ``rate`` is checked too, chosen by a hash of the claim text and a seed: the same claim is
# always sampled the same way, across attempts, processes and machines.

_NUMBER_WORDS = re.compile(
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|dozen|half|twice|thrice|percent|first|"
    r"second|third|once)\b|[一二三四五六七八九十百千万億]+(?:つ|度|倍|割|番|位|等)|半分|数[十百千万]",
    re.IGNORECASE,
)
_DATE_WORDS = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|tomorrow|"
    r"today)\b|[月火水木金土日]曜|昨日|明日|今日|昨年|来年|今年|先月|来月|毎[日週月年]",
    re.IGNORECASE,
)
# Kanji names rarely stand out by script: catch the common name-forming suffixes instead.
_JA_NAME = re.compile(
    r"[\u3400-\u9fff]{1,8}(?:株式会社|会社|大学|銀行|病院|研究所|協会|財団|省|庁|県|府|都|市|区|"
    r"町|村|駅|港|空港|川|山|島|寺|神社|氏|さん|様|社長|選手|監督|教授|博士)"
    r"|株式会社[\u3040-\u9fff\u30a0-\u30ffA-Za-z]+"
)

_SHORT_ANSWER_WORDS = 4


def _bare_name(text: str) -> bool:
    """A short answer that is, or starts with, a name ("Pennsylvania", "Rolls-Royce Merlin").

    Sentence-initial capitals are not names in a sentence, but a bare answer of a few words
    (no closing punctuation, or every word capitalised) has no sentence around it.
    """
    stripped = text.strip()
    words = stripped.rstrip(".!?").split()
    if not 0 < len(words) <= _SHORT_ANSWER_WORDS or words[0] in _COMMON_CAPS:
        return False
    if not words[0][:1].isupper():
        return False
    return stripped[-1:] not in ".!?" or all(w[:1].isupper() for w in words)


RISK_KINDS = ("number", "date", "negation", "entity")
"""What makes a claim risky, in the order ``risk_markers`` reports them."""


def risk_markers(text: str) -> list[str]:
    """The risk kinds a claim carries (``number``, ``date``, ``negation``, ``entity``)."""
    prepared = prepare(text)
    dates, rest = extract_dates(prepared)
    found: list[str] = []
    if extract_quantities(rest) or _NUMBER_WORDS.search(prepared):
        found.append("number")
    if dates or _DATE_WORDS.search(prepared):
        found.append("date")
    if _NEG_EN.search(prepared) or _NEG_JA.search(prepared):
        found.append("negation")
    if _entities(text) or _JA_NAME.search(text) or _bare_name(text):
        found.append("entity")
    return found


def sampled_in(text: str, rate: float, *, seed: int = 0) -> bool:
    """True when a claim without risk markers falls in the random share ``rate`` (0-1)."""
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    digest = hashlib.sha256(f"{seed}\x1f{text.strip()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def select_claims(texts: Sequence[str], rate: float, *, seed: int = 0) -> list[int]:
    """Indices of the claims to verify: every risky one, and a seeded share of the rest.

    Args:
        texts: the claim texts, in order.
        rate: share (0-1) of the claims without a risk marker that are verified anyway.
        seed: changes which of those claims are drawn (same seed, same draw).

    Raises:
        ValueError: ``rate`` is outside [0, 1].
    """
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"verify_sample_rate must be between 0 and 1, got {rate!r}")
    return [i for i, text in enumerate(texts)
            if risk_markers(text) or sampled_in(text, rate, seed=seed)]
