"""Answer-level scores: grounding (how much of the answer is backed) and confidence."""

from __future__ import annotations

from grounded_rag.types import Claim, Evidence

QUOTE_OK = 0.85
"""Citation match at or above which a quote counts as located."""

UNCHECKED_SUPPORT = 0.5
"""Support assumed for the weakest claim when no claim was verified (unknown: even odds)."""


def _citation_quality(claim: Claim) -> float:
    matches = [c.get("match", 0.0) for c in claim.get("citations", []) if c.get("start", -1) >= 0]
    return max(matches) if matches else 0.0


def grounding_score(claims: list[Claim], *, quote_threshold: float = QUOTE_OK) -> float:
    """Share of the answer's claim text (by characters) that is grounded.

    A claim is grounded when its verdict is ``supported`` and at least one of its quotes was
    located in the cited source at or above ``quote_threshold``. Weighting by length keeps a
    short hedge from counting as much as a long factual claim. Claims left ``unchecked``
    (sampled or deferred verification) count in the total but never as grounded, so a
    partly verified answer scores at most the share that was verified. No claims -> 0.0
    (nothing was grounded).
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
    not the mean, of the support scores is used. Claims left ``unchecked`` have no support
    score: the weakest is taken over the verified ones, and is ``UNCHECKED_SUPPORT`` when
    none was verified.
    """
    if not claims:
        return 0.0
    checked = [c for c in claims if c.get("verdict") != "unchecked"]
    weakest = min(
        (c.get("support", 1.0 if c.get("verdict") == "supported" else 0.0) for c in checked),
        default=UNCHECKED_SUPPORT,
    )
    quality = sum(_citation_quality(c) for c in claims) / len(claims)
    relevance = max((e["relevance"] for e in evidence), default=0.0)
    value = weakest * quality * (0.5 + 0.5 * relevance) * (0.9**regenerations)
    return round(max(0.0, min(1.0, value)), 4)
