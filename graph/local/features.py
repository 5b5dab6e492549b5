"""What the local judges read: prompt inputs and cheap text features, shared with training.

The claim judge and the answerability judge each turn their inputs into (a) one Yes/No
prompt for the local model, whose P(Yes) and hidden states the scorer reads, and (b) a few
model-free numbers (lexical overlap, the deterministic cues). The training command builds
its examples through these same functions, so a head learns from exactly what it reads at
run time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grounded_rag.prompts import local_verify
from grounded_rag.types import Evidence
from grounded_rag.verification.base import ClaimToCheck, statement_of
from grounded_rag.verification.cues import CueReport, check_claim
from grounded_rag.verification.evidence import (
    SelectedEvidence,
    content_tokens,
    overlap,
    select_evidence,
)

CLAIM_EXTRAS: tuple[str, ...] = (
    "is_ja",
    "has_question",
    "best_overlap",
    "coverage",
    "unseen_words",
    "cue_negation",
    "cue_altered_copy",
    "cue_quantity_missing",
    "cue_date_missing",
    "cue_entity_missing",
    "cue_words_missing",
    "log_claim_chars",
    "log_evidence_chars",
)
"""Names of the model-free claim features, in vector order."""

ANSWERABLE_EXTRAS: tuple[str, ...] = (
    "is_ja",
    "best_overlap",
    "coverage",
    "log_question_chars",
    "log_passage_chars",
)
"""Names of the model-free answerability features, in vector order."""

PASSAGE_BUDGET_CHARS = {"ja": 400, "en": 900}
"""Text of each passage the answerability probe reads: its sentences closest to the question."""


def lang_of(language: str) -> str:
    """``ja`` or ``en``."""
    return "ja" if (language or "").lower().startswith("ja") else "en"


@dataclass(frozen=True)
class ClaimInput:
    """One claim as the local judge reads it."""

    statement: str
    """The text judged: the claim, or question and answer as one sentence."""
    selected: SelectedEvidence
    """The evidence sentences shown to the model."""
    extras: dict[str, float]
    """Model-free features (``CLAIM_EXTRAS``)."""


def claim_input(claim: ClaimToCheck, language: str, report: CueReport | None = None) -> ClaimInput:
    """Build what the judge reads for ``claim`` (evidence selection, statement, extras)."""
    lang = lang_of(language)
    statement = statement_of(claim, lang)
    selected = select_evidence(statement, claim["evidence"])
    if report is None and selected.text:
        report = check_claim(claim["text"], [selected.text], language=lang,
                             question=claim.get("question", ""))
    kinds = {c.kind for c in (report.cues if report else ())}
    unseen = max((len(c.words) for c in (report.cues if report else ())
                  if c.kind == "words_missing"), default=0)
    claim_tokens = content_tokens(claim["text"])
    question_tokens = content_tokens(claim.get("question", ""))
    own = claim_tokens - question_tokens or claim_tokens
    extras = {
        "is_ja": float(lang == "ja"),
        "has_question": float(bool((claim.get("question") or "").strip())),
        "best_overlap": float(selected.best_score),
        "coverage": overlap(own, selected.text) if selected.text else 0.0,
        "unseen_words": float(min(unseen, 5)),
        "cue_negation": float("negation_mismatch" in kinds),
        "cue_altered_copy": float("altered_copy" in kinds),
        "cue_quantity_missing": float("quantity_missing" in kinds),
        "cue_date_missing": float("date_missing" in kinds),
        "cue_entity_missing": float("entity_missing" in kinds),
        "cue_words_missing": float("words_missing" in kinds),
        "log_claim_chars": math.log1p(len(claim["text"])),
        "log_evidence_chars": math.log1p(len(selected.text)),
    }
    return ClaimInput(statement=statement, selected=selected, extras=extras)


@dataclass(frozen=True)
class PassageInput:
    """One (question, passage) pair as the answerability judge reads it."""

    system: str
    """System message of the probe."""
    user: str
    """User message: the passage's selected text, then the question."""
    passage: str
    """The passage text shown (title and selected sentences)."""
    extras: dict[str, float]
    """Model-free features (``ANSWERABLE_EXTRAS``)."""


def passage_input(question: str, evidence: Evidence, language: str) -> PassageInput:
    """Build the answerability probe's prompt and features for one retrieved passage."""
    lang = lang_of(language)
    system, user = local_verify.answerable_for_language(lang)
    budget = PASSAGE_BUDGET_CHARS[lang]
    selected = select_evidence(question, [evidence], budget_chars=budget)
    text = selected.text or evidence["text"][:budget]
    passage = f"{evidence['title']}\n{text}" if evidence.get("title") else text
    q_tokens = content_tokens(question)
    extras = {
        "is_ja": float(lang == "ja"),
        "best_overlap": float(selected.best_score),
        "coverage": overlap(q_tokens, passage),
        "log_question_chars": math.log1p(len(question)),
        "log_passage_chars": math.log1p(len(passage)),
    }
    return PassageInput(system=system, user=user.format(passage=passage, question=question),
                        passage=passage, extras=extras)


FEATURE_CODE_VERSION = 1
"""Bump when what the judges read changes in a way the texts below do not show."""


def prompt_fingerprint(task: str) -> str:
    """Hash of everything that shapes what a judge reads for ``task`` (besides the model).

    A trained head records it; a head whose fingerprint differs from the running code's
    was trained on other inputs and is refused.
    """
    import hashlib

    from grounded_rag.verification.evidence import EN_BUDGET_CHARS, JA_BUDGET_CHARS

    if task == "claim":
        parts = [local_verify.SYSTEM_EN, local_verify.USER_EN, local_verify.SYSTEM_JA,
                 local_verify.USER_JA, local_verify.QA_CLAIM_EN, local_verify.QA_CLAIM_JA,
                 str(JA_BUDGET_CHARS), str(EN_BUDGET_CHARS), *CLAIM_EXTRAS]
    elif task == "answerable":
        parts = [local_verify.ANSWERABLE_SYSTEM_EN, local_verify.ANSWERABLE_USER_EN,
                 local_verify.ANSWERABLE_SYSTEM_JA, local_verify.ANSWERABLE_USER_JA,
                 json_budgets(), *ANSWERABLE_EXTRAS]
    elif task == "prompt_state":  # the generator's first-draft prompt
        from grounded_rag.prompts import generate

        parts = [generate.SYSTEM["ja"], generate.SYSTEM["en"], generate.USER["ja"],
                 generate.USER["en"], generate.SOURCE_HEADER, "is_ja"]
    else:
        raise ValueError(f"unknown judge task {task!r}")
    digest = hashlib.sha256()
    for part in [str(FEATURE_CODE_VERSION), *parts]:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def json_budgets() -> str:
    """The answerability passage budgets as a stable string."""
    return ",".join(f"{k}={v}" for k, v in sorted(PASSAGE_BUDGET_CHARS.items()))
