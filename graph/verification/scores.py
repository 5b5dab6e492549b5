"""Answer-level scores: grounding (how much of the answer is backed) and confidence."""

from __future__ import annotations

from grounded_rag.types import Claim, Evidence

QUOTE_OK = 0.85
"""Citation match at or above which a quote counts as located."""


def _citation_quality(claim: Claim) -> float:
    matches = [c.get("match", 0.0) for c in claim.get("citations", []) if c.get("start", -1) >= 0]
    return max(matches) if matches else 0.0


def grounding_score(claims: list[Claim], *, quote_threshold: float = QUOTE_OK) -> float:
    """Share of the answer's claim text (by characters) that is grounded.

    A claim is grounded when its verdict is ``supported`` and at least one of its quotes was
    located in the cited source at or above ``quote_threshold``. Weighting by length keeps a
    short hedge from counting as much as a long factual claim. No claims -> 0.0 (nothing was
    grounded).
    """
    total = sum(len(c["text"]) for c in claims)
    if not total:
        return 0.0
    grounded = sum(
        len(c["text"])
        for c in claims
        if c.get("verdict") == "supported" and _citation_quality(c) >= quote_threshold
    )
    return round(grounded / total, 4)


def confidence_score(claims: list[Claim], evidence: list[Evidence], *, regenerations: int) -> float:
    """Confidence in [0, 1] that the answer is right and fully backed.

    The weakest claim's support score, times the citation quality (mean of each claim's best
    located quote), times a retrieval factor (0.5 + 0.5 x best relevance), times 0.9 per
    regeneration the loop needed. A chain is as strong as its weakest claim, so the minimum,
    not the mean, of the support scores is used.
    """
    if not claims:
        return 0.0
    weakest = min(
        c.get("support", 1.0 if c.get("verdict") == "supported" else 0.0) for c in claims
    )
    quality = sum(_citation_quality(c) for c in claims) / len(claims)
    relevance = max((e["relevance"] for e in evidence), default=0.0)
    value = weakest * quality * (0.5 + 0.5 * relevance) * (0.9**regenerations)
    return round(max(0.0, min(1.0, value)), 4)
