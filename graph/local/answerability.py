"""Local answerability judge: does a retrieved passage hold the answer to the question?"""

from __future__ import annotations

import os

from grounded_rag.local.features import PASSAGE_BUDGET_CHARS, lang_of, passage_input
from grounded_rag.local.heads import JudgeHead
from grounded_rag.local.scorer import SupportScorer
from grounded_rag.local.verifier import Judge, ShippedHead
from grounded_rag.types import Evidence
from grounded_rag.verification.base import Answerability, PassageScore, decide

__all__ = [
    "ANSWERABLE_HEAD",
    "SHIPPED_HEAD_UNCHECKED",
    "DEFAULT_ANSWERABLE_THRESHOLDS",
    "PASSAGE_BUDGET_CHARS",
    "LocalAnswerabilityJudge",
]

ANSWERABLE_HEAD = "answerable"
"""Name of the shipped answerability head (``grounded_rag/local/heads/answerable.*``)."""

DEFAULT_ANSWERABLE_THRESHOLDS: dict[str, float | None] = {"ja": 0.97, "en": None}
"""Thresholds of the plain Yes/No probe (``judge="logit"``): P(Yes) from which a passage
counts as containing the answer, per language; ``None`` skips the check for that language.
Measured with ``benchmarks/fit_judges.py answerability`` on all 197 NoMIRACL dev queries
(each query's own 10 passages; before generation, retrieval gate included):

- Japanese, 0.97: answers 61% of answerable queries and abstains on 85% of the others
  (the gate alone: 69% / 56%). AUROC of the best-of-3 score 0.82, of the top passage's 0.76.
- English is not checked. Its scores are noisy (AUROC 0.71 over all 98 queries: 0.82 on one
  half, 0.57 on the other). On NoMIRACL alone a threshold of 0.85 would help (73% / 53%
  against 84% / 21% for the gate alone), but on the bundled sample corpus the same probe
  scores plainly answerable English questions at 0.82-0.87 ("When are taxi fares
  reimbursed?": 0.82), so it would refuse answers the sources give.

The trained head (the default) carries its own per-language thresholds; the shipped one
checks Japanese only (``SHIPPED_HEAD_UNCHECKED``)."""


SHIPPED_HEAD_UNCHECKED: tuple[str, ...] = ("en",)
"""Languages the shipped answerability head does not check (no model call, as with the plain
probe). English: out of fold its query-level AUROC on NoMIRACL is 0.718 (answers 89% of
answerable queries, abstains on only 26% of the others), and it refused the sample corpus's
plainly answerable "The Aozora A1 battery lasts a full 24 hours, right?" (the sources say
10 hours), turning a premise the loop corrects into a refusal. Japanese (0.838; 80% / 79%)
is checked. A head passed in with ``head=`` is used for every language it has a threshold
for."""


SHIPPED_HEAD_THRESHOLDS: dict[str, float] = {"ja": 0.40}
"""Decision thresholds that replace the shipped head's fitted ones (ja 0.72).

The fitted threshold came from large-pool folds. With the pre-model gate now fitted on small
corpora, the answerability pass decides for many more questions, and at 0.72 it refused 17 of 59
answerable Japanese small-corpus dev questions (29%) that cleared the gate
(``benchmarks/answerability_skip_check.py --limit 60`` at e7fb647: 123 Japanese questions,
small-corpus dev + NoMIRACL ja dev, 9.7 s each, load 1.1 -> 1.9). 0.40 is the threshold with the
lowest balanced error over both sets (answerable refused: small-corpus 4/59, NoMIRACL 0/30;
unanswerable refused: small-corpus 4/4, NoMIRACL 15/30, against 22/30 at 0.72). NoMIRACL ja was
part of the head's training, so its figures are in-sample. On the held-out small-corpus
collections (never used for either choice; ``--split heldout --sets small-corpus``): 3 of 59
answerable refused at 0.40 against 17 of 59 at 0.72, and all 3 unanswerable that cleared the
gate refused at both.
"""


class LocalAnswerabilityJudge(ShippedHead):
    """Implements ``AnswerabilityJudge`` with the offline model, one short prompt per passage.

    Each of the top ``passages`` retrieved passages is cut to the sentences that best match
    the question and read on its own; the question is answerable when the best passage
    reaches the language's threshold. ``judge="head"`` (default with the bundled model)
    scores a passage with the trained head over the model's hidden states;
    ``judge="logit"`` uses P(Yes) alone. No generation either way.
    """

    head_task = ANSWERABLE_HEAD

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        passages: int = 3,
        thresholds: dict[str, float | None] | None = None,
        scorer: SupportScorer | None = None,
        judge: Judge | None = None,
        head: JudgeHead | None = None,
    ) -> None:
        self.passages = passages
        self.scorer = scorer or SupportScorer(model=model_path)
        if judge is None:
            judge = "head" if head is not None or model_path in (None, "local") else "logit"
            if thresholds is not None and head is None:
                judge = "logit"  # explicit probe thresholds mean the plain probe
        if judge not in ("head", "logit"):
            raise ValueError(f"judge must be 'head' or 'logit', not {judge!r}")
        self.judge: Judge = judge
        self._head = head
        self._shipped_head = head is None
        self._model_path = model_path
        self._thresholds = thresholds

    @property
    def thresholds(self) -> dict[str, float | None]:
        """Per-language thresholds in use (None: that language is not checked)."""
        if self._thresholds is not None:
            return dict(self._thresholds)
        if self.judge == "head":
            skip = SHIPPED_HEAD_UNCHECKED if self._shipped_head else ()
            chosen = SHIPPED_HEAD_THRESHOLDS if self._shipped_head else {}
            return {k: None if k in skip else float(chosen.get(k, v))
                    for k, v in self.head.thresholds.items()}
        return dict(DEFAULT_ANSWERABLE_THRESHOLDS)

    def threshold_for(self, language: str) -> float | None:
        """The threshold used for ``language`` (None: that language is not checked)."""
        return self.thresholds.get(lang_of(language))

    def covers(self, language: str) -> bool:
        """True when ``language`` has a threshold (the check runs for it)."""
        return self.threshold_for(language) is not None

    def assess(self, question: str, evidence: list[Evidence], *, language: str) -> Answerability:
        """Score the top passages for ``question``; see the class docstring."""
        lang = lang_of(language)
        threshold = self.threshold_for(lang)
        if threshold is None:  # not checked in this language: no model call
            return Answerability(answerable=True, score=1.0, threshold=0.0, passages=[])
        top = evidence[: self.passages]
        inputs = [passage_input(question, e, lang) for e in top]
        prompts = [(p.system, p.user) for p in inputs]
        if self.judge == "logit":
            scores = self.scorer.score_questions(prompts) if prompts else []
        else:
            head = self.head
            readings = self.scorer.read_questions(prompts) if prompts else []
            scores = [
                float(head.proba("answerable", head.inputs(r.hidden, r.layers, r.margin,
                                                           p.extras))[0])
                for r, p in zip(readings, inputs, strict=True)
            ]
        return decide(
            [PassageScore(source_id=e["source_id"], score=round(s, 4))
             for e, s in zip(top, scores, strict=True)],
            threshold,
        )
