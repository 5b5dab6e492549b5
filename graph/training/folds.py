"""Per-fold heads for honest whole-loop evaluation on a set the heads were trained on.

``grounded-rag train-judge`` fits, for every cross-validation fold, an answerability head on
the other folds (with thresholds chosen on the other folds' out-of-fold scores) and writes
them with a map from each training question to its fold. ``FoldedAnswerabilityJudge``
judges every question with the head that never saw it, so an end-to-end NoMIRACL run can
use the trained head without scoring it on its own training queries.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grounded_rag.local.answerability import SHIPPED_HEAD_UNCHECKED, LocalAnswerabilityJudge
from grounded_rag.local.heads import load_head
from grounded_rag.local.scorer import SupportScorer
from grounded_rag.types import Evidence
from grounded_rag.verification.base import Answerability

FOLDS_FILE = "answerable-folds.json"
"""Index of the fold heads inside a training output folder."""


class FoldedAnswerabilityJudge:
    """An ``AnswerabilityJudge`` that routes each question to the head of its fold."""

    def __init__(self, judges: dict[int, LocalAnswerabilityJudge], fold_of: dict[str, int],
                 fallback: LocalAnswerabilityJudge, label: str = "folded") -> None:
        self.judges = judges
        self.fold_of = fold_of
        self.fallback = fallback
        self.model_label = label
        """Label used in evaluation cache keys and reports."""
        self.routed: dict[str, int] = {"fold": 0, "fallback": 0}
        """How many questions went to a fold head and to the fallback (all-data) head."""

    @classmethod
    def from_dir(cls, folder: str | Path, *, unchecked: Sequence[str] = SHIPPED_HEAD_UNCHECKED,
                 ) -> FoldedAnswerabilityJudge:
        """Load ``folder/answerable-folds.json`` and the heads it names.

        ``unchecked``: languages left unchecked, as the product leaves them with the shipped
        head (default), so a whole-loop run measures what users get.
        """
        root = Path(folder)
        index_path = root / FOLDS_FILE
        if not index_path.exists():
            raise ValueError(f"{index_path} not found: run `grounded-rag train-judge` with "
                             f"--out {root} first")
        index = json.loads(index_path.read_text(encoding="utf-8"))
        scorer = SupportScorer()

        def judge(name: str) -> LocalAnswerabilityJudge:
            head = load_head(root / name)
            thresholds: dict[str, float | None] = {
                lang: None if lang in unchecked else float(value)
                for lang, value in head.thresholds.items()}
            return LocalAnswerabilityJudge(scorer=scorer, head=head, thresholds=thresholds)

        judges = {int(f): judge(name) for f, name in index["heads"].items()}
        fallback = judge(index["all"])
        return cls(judges, {q: int(f) for q, f in index["fold_of_question"].items()}, fallback,
                   label=f"folded:{index.get('digest', '')}")

    def _judge(self, question: str) -> LocalAnswerabilityJudge:
        fold = self.fold_of.get(question.strip())
        if fold is None or fold not in self.judges:
            self.routed["fallback"] += 1
            return self.fallback
        self.routed["fold"] += 1
        return self.judges[fold]

    def covers(self, language: str) -> bool:
        """Whether questions in ``language`` are checked (the fallback head decides)."""
        return self.fallback.covers(language)

    def assess(self, question: str, evidence: list[Evidence], *, language: str) -> Answerability:
        """Judge with the head of ``question``'s fold (the all-data head if it has none)."""
        return self._judge(question).assess(question, evidence, language=language)

    def __repr__(self) -> str:
        return self.model_label


def write_fold_index(folder: Path, heads: dict[int, str], fold_of_question: dict[str, int],
                     all_head: str, digest: str) -> None:
    """Write the fold index read by ``FoldedAnswerabilityJudge.from_dir``."""
    payload: dict[str, Any] = {"heads": {str(k): v for k, v in heads.items()}, "all": all_head,
                               "fold_of_question": fold_of_question, "digest": digest}
    (folder / FOLDS_FILE).write_text(json.dumps(payload, ensure_ascii=False, indent=1),
                                     encoding="utf-8")
