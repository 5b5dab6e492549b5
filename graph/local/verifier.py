"""Local verifier: support = P(Yes) from the local model's logits, thresholded."""

from __future__ import annotations

import os

from grounded_rag.local.scorer import SupportScorer
from grounded_rag.prompts import local_verify
from grounded_rag.verification.base import ClaimToCheck, ClaimVerdict, statement_of
from grounded_rag.verification.evidence import select_evidence

DEFAULT_THRESHOLDS: dict[str, float] = {"en": 0.45, "ja": 0.45}
"""Support thresholds per language. English: calibrated on HaluEval-QA dev
(``benchmarks/verifier_calibrate.py``). Japanese was 0.32 (JNLI entailment vs not, 100
items); on 90 JNLI items in their natural label mix 0.45 gave 3-way accuracy 0.78 against
0.73, and on JHARS the best threshold lay higher still, so both languages now share 0.45."""


class LocalVerifier:
    """Implements the ``Verifier`` protocol with the offline model as a support scorer.

    Scores are read from next-token logits, never generated, so a verdict costs one prompt
    evaluation; claims that share evidence reuse its KV cache. The verdict is two-way:
    ``supported`` at or above the threshold, otherwise ``neutral`` (unsupported).
    Contradictions come from deterministic cues (see ``CascadeVerifier``).
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        threshold: float | None = None,
        *,
        thresholds: dict[str, float] | None = None,
        reuse_prefix: bool = True,
        scorer: SupportScorer | None = None,
    ) -> None:
        self.thresholds = dict(thresholds or DEFAULT_THRESHOLDS)
        if threshold is not None:
            self.thresholds = {lang: threshold for lang in ("en", "ja")}
        self.scorer = scorer or SupportScorer(model=model_path, reuse_prefix=reuse_prefix)

    def threshold_for(self, language: str) -> float:
        """Return the support threshold used for ``language``."""
        return self.thresholds.get(_lang(language), self.thresholds.get("en", 0.5))

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        """Return one verdict per claim, in order (one scoring pass for the whole batch)."""
        lang = _lang(language)
        statements = [statement_of(c, lang) for c in claims]
        selected = [
            select_evidence(text, claim["evidence"])
            for text, claim in zip(statements, claims, strict=True)
        ]
        todo = [i for i, s in enumerate(selected) if s.text]
        scores = self.scorer.score_many(
            [(selected[i].text, statements[i]) for i in todo], language=lang
        )
        by_index = dict(zip(todo, scores, strict=True))
        threshold = self.threshold_for(lang)
        out: list[ClaimVerdict] = []
        for i, sel in enumerate(selected):
            if i not in by_index:
                reason = (
                    local_verify.REASON_NO_EVIDENCE_JA
                    if lang == "ja"
                    else local_verify.REASON_NO_EVIDENCE_EN
                )
                out.append(
                    ClaimVerdict(verdict="neutral", reason=reason, evidence_quote="", support=0.0)
                )
                continue
            support = by_index[i]
            if support >= threshold:
                out.append(
                    ClaimVerdict(
                        verdict="supported",
                        reason="",
                        evidence_quote=sel.best_sentence,
                        support=support,
                    )
                )
            else:
                out.append(
                    ClaimVerdict(
                        verdict="neutral",
                        reason=unsupported_reason(statements[i], lang),
                        evidence_quote=sel.best_sentence,
                        support=support,
                    )
                )
        return out


def unsupported_reason(claim: str, language: str) -> str:
    """Deterministic reason for a claim the evidence does not support."""
    text = claim.strip()
    if _lang(language) == "ja":
        return local_verify.REASON_UNSUPPORTED_JA.format(claim=text.rstrip("。"))
    body = (
        text[:1].lower() + text[1:]
        if text[:2].istitle() or text[:1].isupper() and text[1:2].islower()
        else text
    )
    return local_verify.REASON_UNSUPPORTED_EN.format(claim=body.rstrip(".")) + "."


def _lang(language: str) -> str:
    return "ja" if (language or "").lower().startswith("ja") else "en"
