"""The decision to write an answer, and the answer-level scores that follow it.

- The decision to write an answer: the stages' scores combined once, per language.
- Answer-level scores: grounding (how much of the answer is backed) and confidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from grounded_rag.types import Claim, Evidence

# ------------------------------------------------------------------------------------------
# The decision to write an answer: the stages' scores combined once, per language.
#
# Before an answer is written three stages have a view: retrieval (the best evidence's
# relevance over its gate), the answerability check (the trained head's best passage score,
# when it runs) and the generator itself, whose JSON reply opens with ``"answerable":`` — its
# log-odds of ``true`` over ``false`` there is a score like the others (the local model reports
# it; :class:`grounded_rag.local.chat.ChatLocal` ``decide``). Taking each stage's verdict in turn
# made the refusals compound (the 1.5B generator alone declined a third of the answerable
# small-corpus questions that every other stage let through); here a logistic combiner of the
# scores, fitted per language on the small-corpus dev collections
# (``benchmarks/fit_decision.py fit``), decides once. Since the generator's score comes last, the
# decision is handed to the generator as a log-odds threshold on its own ``answerable`` value:
# it writes an answer exactly when the combined probability reaches the operating point's cut.
#
# The answer is then still verified claim by claim; this decides only whether to write one.

GENERATOR_CLIP = 12.0
"""Generator log-odds are clipped to +-this (greedy JSON decoding can be near-certain)."""


def _logit(p: float) -> float:
    p = min(max(p, 1e-3), 1 - 1e-3)
    return math.log(p / (1 - p))


def stage_features(*, generator: float | None, answerability: float | None,
                   relevance: float | None, gate: float | None,
                   prompt_state: float | None = None) -> dict[str, float]:
    """The combiner's inputs, each clipped or logged onto a log-odds-like scale.

    Generator log-odds, answerability logit, log10 relevance/gate, and the prompt-state
    head's log-odds (``grounded_rag.local.prompt_state``).
    """
    rel = 0.0
    if relevance is not None and gate:
        rel = math.log10(max(relevance, 1e-9) / gate)
    return {
        "generator": max(-GENERATOR_CLIP, min(GENERATOR_CLIP, generator or 0.0)),
        "answerability": _logit(answerability) if answerability is not None else 0.0,
        "relevance": rel,
        "prompt_state": max(-GENERATOR_CLIP, min(GENERATOR_CLIP, prompt_state or 0.0)),
    }


@dataclass(frozen=True)
class Combiner:
    """One language's logistic combiner: P(answerable) = sigmoid(bias + sum w_i x_i)."""

    weights: dict[str, float]
    """Per feature of :func:`stage_features`; a feature left out is not used."""
    bias: float
    cut: float
    """The balanced operating point: the log-odds the combined score must reach."""

    def generator_threshold(self, features: dict[str, float], shift: float = 0.0) -> float:
        """The generator log-odds at which the combined score reaches the cut (+ ``shift``)."""
        w_gen = self.weights.get("generator", 0.0)
        rest = self.bias + sum(w * features.get(k, 0.0)
                               for k, w in self.weights.items() if k != "generator")
        if w_gen <= 0:  # the generator's score does not count: decided by the rest
            return -GENERATOR_CLIP if rest >= self.cut + shift else GENERATOR_CLIP
        t = (self.cut + shift - rest) / w_gen
        return max(-GENERATOR_CLIP, min(GENERATOR_CLIP, t))


@dataclass(frozen=True)
class Decision:
    """Per-language combiners, and the operating points presets choose between."""

    combiners: dict[str, Combiner] = field(default_factory=dict)
    shifts: dict[str, float] = field(default_factory=dict)
    """Operating points as shifts of the cut (log-odds): > 0 abstains more."""
    uses_answerability: dict[str, bool] = field(default_factory=dict)
    """Whether the language's combiner reads the answerability head's score. When it does,
    the pass (``answerability_check="auto"``, local generator) reports its score as a
    feature and no longer refuses on its own threshold; when it does not, the pass is
    skipped for that language."""

    state_floors: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per language and operating point, the least prompt-state head log-odds
    (``grounded_rag.local.prompt_state``) with which an answer is written; an operating
    point left out has no floor. Read only where the head is (the default local model)."""

    def reads_state(self, language: str) -> bool:
        """True when ``language`` has a prompt-state floor at some operating point."""
        return bool(self.state_floors.get(language))

    def state_floor(self, language: str, operating_point: str = "balanced") -> float | None:
        """The prompt-state floor of ``language`` at ``operating_point``, or None."""
        return self.state_floors.get(language, {}).get(operating_point)

    def covers(self, language: str) -> bool:
        """True when ``language`` has a combiner."""
        return language in self.combiners

    def reads_answerability(self, language: str) -> bool:
        """True when ``language``'s combiner reads the answerability head's score."""
        return self.covers(language) and self.uses_answerability.get(language, False)

    def generator_threshold(self, language: str, *, answerability: float | None,
                            relevance: float | None, gate: float | None,
                            operating_point: str = "balanced",
                            prompt_state: float | None = None) -> float | None:
        """The log-odds threshold to hand the generator, or None (no combiner: greedy).

        With ``prompt_state`` (the head's log-odds) below the operating point's floor, the
        threshold is infinite: the generator cannot reach it and writes no answer.
        """
        combiner = self.combiners.get(language)
        if combiner is None:
            return None
        feats = stage_features(generator=None, answerability=answerability,
                               relevance=relevance, gate=gate, prompt_state=prompt_state)
        if prompt_state is not None:
            floor = self.state_floor(language, operating_point)
            if floor is not None and prompt_state < floor:
                return math.inf  # the prompt reads unanswerable: nothing is written
        return round(combiner.generator_threshold(feats, self.shifts.get(operating_point, 0.0)),
                     4)


DEFAULT_DECISION = Decision(
    combiners={
        "ja": Combiner(weights={"generator": 2.6393, "relevance": 1.6568}, bias=-4.1864,
                       cut=0.0),
        "en": Combiner(weights={"generator": 2.6393, "relevance": 2.0308}, bias=-5.1454,
                       cut=0.0),
    },
    shifts={"high_precision": 1.4, "balanced": 0.0, "cost_optimized": 0.0, "fast": -0.85},
    uses_answerability={"ja": False, "en": False},
    state_floors={"ja": {"balanced": -1.7428, "cost_optimized": -1.7428,
                         "high_precision": -1.2991},
                  "en": {"balanced": -1.8568, "cost_optimized": -1.8568,
                         "high_precision": -0.7372}},
)
"""Fitted by ``benchmarks/fit_decision.py fit`` on the small-corpus **dev** collections:
logit P(answerable | relevance, generator) = logit P(answerable | relevance) + LLR(generator),
the first a logistic fit per language on every dev question that clears the gate (318 ja,
300 en, at their real mix), the second the generator's log-likelihood ratio from a
class-balanced logistic fit on the 36 scored dev questions (pooled over languages; the two
stages read different things, so their evidence is added). The cut is P >= 0.5; presets
shift it (``high_precision`` P >= 0.8, ``fast`` P >= 0.3). The answerability head's score
is not in it: on the scored questions the generator and relevance already separated the
Japanese ones, so ``answerability_check="auto"`` skips that pass (one model pass over three
passages) where this decision covers the language. Held-out figures: docs/evaluation.md.
Refitting on NoMIRACL dev as well (``fit_decision.py fit --joint``) does not help with these two
scores, and the head that would costs 4-7 s a question (docs/decisions.md, "Decision
refit on NoMIRACL").

``state_floors``: with the default local generator, the prompt-state head
(``grounded_rag.local.prompt_state``, read on the first-draft prompt at no extra pass)
must also reach a floor, per language: halfway between out-of-fold head scores of the
training answerable questions, keeping 97% of them (``balanced``, ``cost_optimized``) or
90% (``high_precision``); ``fast`` has none. Fitted by
``benchmarks/fit_decision.py state --write`` on small-corpus dev and NoMIRACL dev minus the
30-query whole-loop sample. A floor rather than a fourth weight:
weighed into one logistic fit over both pools, the head let through English small-corpus
non-answers that relevance alone refuses (their relevance is informative there and
saturated on NoMIRACL); as a floor beside the combiner it refuses 10 of 41 Japanese and
5 of 39 English NoMIRACL non-answers out of fold (4 and 1 without it), at a cost of 2 of
44 Japanese answerable queries (docs/evaluation.md, "The generator's own prompt as a
floor")."""


# ------------------------------------------------------------------------------------------
# Answer-level scores: grounding (how much of the answer is backed) and confidence.

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
