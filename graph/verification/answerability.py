"""The answerability seam: do the retrieved passages contain the answer at all?

Retrieval relevance says a passage is *about* the question; it cannot tell a passage that
answers it from a topically close one that does not (on NoMIRACL's hard negatives the
calibrated relevance separates them at AUROC 0.59). A judge that reads the top passages
with the question decides before any answer is written, so the graph can abstain early.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from typing_extensions import TypedDict

from grounded_rag.types import Evidence


class PassageScore(TypedDict):
    """The judge's score for one passage."""

    source_id: str
    """The passage's source id."""
    score: float
    """P(the passage contains the answer), in [0, 1]."""


class Answerability(TypedDict):
    """The judge's decision for one question."""

    answerable: bool
    """True when some passage scores at or above ``threshold``."""
    score: float
    """The best passage score."""
    threshold: float
    """The threshold the decision used."""
    passages: list[PassageScore]
    """Per-passage scores, best first."""


@runtime_checkable
class AnswerabilityJudge(Protocol):
    """Reads the question with its top passages and says whether an answer is there."""

    def covers(self, language: str) -> bool:
        """Whether this judge checks questions in ``language`` at all."""
        ...

    def assess(self, question: str, evidence: list[Evidence], *, language: str) -> Answerability:
        """Judge ``evidence`` (retrieval order) for ``question``."""
        ...


def decide(scores: list[PassageScore], threshold: float) -> Answerability:
    """Build the decision from per-passage scores (best first)."""
    ranked = sorted(scores, key=lambda s: s["score"], reverse=True)
    best = ranked[0]["score"] if ranked else 0.0
    return Answerability(answerable=best >= threshold, score=best, threshold=threshold,
                         passages=ranked)
