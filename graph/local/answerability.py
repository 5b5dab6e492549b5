"""Local answerability probe: P(Yes) for "does this passage contain the answer?"."""

from __future__ import annotations

import os

from grounded_rag.local.scorer import SupportScorer
from grounded_rag.prompts import local_verify
from grounded_rag.types import Evidence
from grounded_rag.verification.answerability import Answerability, PassageScore, decide
from grounded_rag.verification.evidence import select_evidence

DEFAULT_ANSWERABLE_THRESHOLDS: dict[str, float | None] = {"ja": 0.97, "en": None}
"""P(Yes) from which a passage counts as containing the answer, per language; ``None``
skips the check for that language. The question is answerable when the best of the top
``passages`` (3) reaches it. Measured with ``benchmarks/answerability_calibrate.py`` on all
197 NoMIRACL dev queries (each query's own 10 passages; before generation, retrieval gate
included):

- Japanese, 0.97: answers 61% of answerable queries and abstains on 85% of the others
  (the gate alone: 69% / 56%). AUROC of the best-of-3 score 0.82, of the top passage's 0.76.
- English is not checked. Its scores are noisy (AUROC 0.71 over all 98 queries: 0.82 on one
  half, 0.57 on the other). On NoMIRACL alone a threshold of 0.85 would help (73% / 53%
  against 84% / 21% for the gate alone), but on the bundled sample corpus the same probe
  scores plainly answerable English questions at 0.82-0.87 ("When are taxi fares
  reimbursed?": 0.82), so it would refuse answers the sources give."""

PASSAGE_BUDGET_CHARS = {"ja": 400, "en": 900}
"""Text of each passage the probe reads: its sentences closest to the question."""


class LocalAnswerabilityJudge:
    """Implements ``AnswerabilityJudge`` with the offline model's next-token Yes/No score.

    Each of the top ``passages`` retrieved passages is cut to the sentences that best match
    the question (``select_evidence``) and scored on its own; the question is answerable when
    the best passage reaches the language's threshold. Costs one short prompt per passage
    and no generation.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        passages: int = 3,
        thresholds: dict[str, float | None] | None = None,
        scorer: SupportScorer | None = None,
    ) -> None:
        self.passages = passages
        self.thresholds = dict(thresholds or DEFAULT_ANSWERABLE_THRESHOLDS)
        self.scorer = scorer or SupportScorer(model=model_path)

    def threshold_for(self, language: str) -> float | None:
        """The threshold used for ``language`` (None: that language is not checked)."""
        return self.thresholds.get(_lang(language))

    def covers(self, language: str) -> bool:
        """True when ``language`` has a threshold (the check runs for it)."""
        return self.threshold_for(language) is not None

    def assess(self, question: str, evidence: list[Evidence], *, language: str) -> Answerability:
        """Score the top passages for ``question``; see the class docstring."""
        lang = _lang(language)
        threshold = self.threshold_for(lang)
        if threshold is None:  # not checked in this language: no model call
            return Answerability(answerable=True, score=1.0, threshold=0.0, passages=[])
        system, user = local_verify.answerable_for_language(lang)
        top = evidence[: self.passages]
        prompts = []
        for e in top:
            selected = select_evidence(question, [e], budget_chars=PASSAGE_BUDGET_CHARS[lang])
            text = selected.text or e["text"][: PASSAGE_BUDGET_CHARS[lang]]
            passage = f"{e['title']}\n{text}" if e.get("title") else text
            prompts.append((system, user.format(passage=passage, question=question)))
        scores = self.scorer.score_questions(prompts) if prompts else []
        return decide(
            [PassageScore(source_id=e["source_id"], score=round(s, 4))
             for e, s in zip(top, scores, strict=True)],
            threshold,
        )


def _lang(language: str) -> str:
    return "ja" if (language or "").lower().startswith("ja") else "en"
