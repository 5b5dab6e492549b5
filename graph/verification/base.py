"""The verifier seam: judge claims against evidence, three-way, with a reason."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from typing_extensions import TypedDict

from grounded_rag.types import Evidence, VerdictLabel


class ClaimToCheck(TypedDict):
    """A claim with the evidence it should be judged against (cited chunks first)."""

    text: str
    """The claim text."""
    evidence: list[Evidence]
    """Evidence to judge against; cited chunks come first."""


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


@runtime_checkable
class Verifier(Protocol):
    """Judges a batch of claims; one call per attempt, whatever the number of claims."""

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        """Return one verdict per claim, in order."""
        ...
