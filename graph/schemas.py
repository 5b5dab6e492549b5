"""Pydantic schemas the models fill through structured output (all providers and the local one)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class CitedStatement(BaseModel):
    """One sentence of the answer with the numbered source sentences that support it."""

    text: str = Field(description="One sentence of the answer, in the question's language.")
    citations: list[str] = Field(
        description="Handles of the numbered source sentences that support this sentence, "
        "e.g. ['S2.3'] or ['S1.2', 'S1.3']."
    )


class CitedAnswer(BaseModel):
    """A cited answer; ``answerable`` is false when the sources do not answer the question."""

    answerable: bool = Field(description="False if the sources do not contain the answer.")
    statements: list[CitedStatement] = Field(
        description="The answer as a list of cited sentences; empty when not answerable."
    )


class ExtractedClaim(BaseModel):
    """One atomic claim with the statement it came from."""

    statement: int = Field(description="Index (0-based) of the statement the claim comes from.")
    text: str = Field(description="The atomic claim, self-contained, in the statement's language.")


class ExtractedClaims(BaseModel):
    """Atomic claims of an answer."""

    claims: list[ExtractedClaim] = Field(description="Atomic, checkable claims, in order.")


class JudgedClaim(BaseModel):
    """The verdict on one claim."""

    claim: int = Field(description="Index (0-based) of the claim.")
    verdict: Literal["supported", "contradicted", "neutral"] = Field(
        description="supported: the evidence states it; contradicted: the evidence says "
        "otherwise; neutral: the evidence does not say."
    )
    reason: str = Field(description="One short sentence explaining the verdict.")
    evidence_quote: str = Field(
        description="The evidence sentence that decided the verdict, copied verbatim, or ''."
    )


class JudgedClaims(BaseModel):
    """Verdicts for all claims of an answer, in one reply."""

    verdicts: list[JudgedClaim] = Field(description="One verdict per claim.")
