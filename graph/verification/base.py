"""The verifier seams: claims judged three-way with a reason, and whether passages answer.

- The verifier seam: judge claims against evidence, three-way, with a reason.
- The answerability seam: do the retrieved passages contain the answer at all?
"""

from __future__ import annotations

from typing import NotRequired, Protocol, runtime_checkable

from typing_extensions import TypedDict

from grounded_rag.prompts.local_verify import qa_claim_for_language
from grounded_rag.types import Evidence, VerdictLabel

# ------------------------------------------------------------------------------------------
# The verifier seam: judge claims against evidence, three-way, with a reason.

class ClaimToCheck(TypedDict):
    """A claim with the evidence it should be judged against (cited chunks first)."""

    text: str
    """The claim text."""
    evidence: list[Evidence]
    """Evidence to judge against; cited chunks come first."""
    question: NotRequired[str]
    """The question this claim answers, when the claim is an answer rather than a
    self-contained statement ("physician" to "what other profession did he have?").
    Judges then read the two together, and cues ignore words the question already holds."""
    cited: NotRequired[int]
    """How many chunks at the head of ``evidence`` the claim cites (the rest are the best
    others). A name the claim adds must be read in those (``romaji``: Kyoto for 京都)."""
    asked: NotRequired[str]
    """The question of the answer the claim belongs to, whatever the claim's form: the
    names it holds are the premise, not what the claim adds (``romaji``)."""
    sources: NotRequired[str]
    """The numbered sources block the local generator read for this answer. The local plain
    judge then reads the claim right after it, on the generator's context, so the prompt
    prefix already evaluated for the draft is reused (cues still read ``evidence``)."""


class ClaimVerdict(TypedDict):
    """The verifier's judgement of one claim."""

    verdict: VerdictLabel
    """supported / contradicted / neutral."""
    reason: str
    """Short reason (may be empty for supported claims)."""
    evidence_quote: str
    """The evidence sentence that decided it ("" when nothing relevant was found)."""
    support: float
    """Support score in [0, 1]."""
    judge: NotRequired[str]
    """Which judge decided: ``head`` (trained head), ``logit`` (P(Yes) alone), ``copy`` (the
    claim is a whole source sentence: no model), ``cloze`` (a bare value that fills the gap
    one source sentence leaves in the question: no model,
    :mod:`grounded_rag.verification.cascade`), absent for API judges and deterministic cues."""
    truncated: NotRequired[bool]
    """True when the evidence had to be cut to fit the judge's context."""


def statement_of(claim: ClaimToCheck, language: str) -> str:
    """The text a judge reads: the claim itself, or question and answer as one sentence.

    For an answer (a claim with a ``question``) that sentence is 'The answer to the
    question "..." is: ...', in the claim's language.
    """
    question = (claim.get("question") or "").strip()
    if not question:
        return claim["text"]
    return qa_claim_for_language(language or "").format(
        question=question, answer=claim["text"].strip()
    )


@runtime_checkable
class Verifier(Protocol):
    """Judges a batch of claims; one call per attempt, whatever the number of claims."""

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        """Return one verdict per claim, in order."""
        ...


# ------------------------------------------------------------------------------------------
# The answerability seam: do the retrieved passages contain the answer at all?
#
# Retrieval relevance says a passage is *about* the question; it cannot tell a passage that
# answers it from a topically close one that does not (on NoMIRACL's hard negatives the
# calibrated relevance separates them at AUROC 0.59). A judge that reads the top passages
# with the question decides before any answer is written, so the graph can abstain early.

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
