"""Sampled verification: which claims are most likely wrong, plus a seeded share of the rest.

Claims that carry a number, date, amount, unit, negation or named entity are where a
generator's errors concentrate (a swapped figure, a dropped "not", the wrong name), so
``verify_mode="sampled"`` always checks those. Of the remaining claims a share
``rate`` is checked too, chosen by a hash of the claim text and a seed: the same claim is
always sampled the same way, across attempts, processes and machines.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from grounded_rag.verification.cues import (
    _COMMON_CAPS,
    _NEG_EN,
    _NEG_JA,
    _entities,
)
from grounded_rag.verification.values import extract_dates, extract_quantities, prepare

_NUMBER_WORDS = re.compile(
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|dozen|half|twice|thrice|percent|first|"
    r"second|third|once)\b|[一二三四五六七八九十百千万億]+(?:つ|度|倍|割|番|位|等)|半分|数[十百千万]",
    re.IGNORECASE,
)
_DATE_WORDS = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|tomorrow|"
    r"today)\b|[月火水木金土日]曜|昨日|明日|今日|昨年|来年|今年|先月|来月|毎[日週月年]",
    re.IGNORECASE,
)
# Kanji names rarely stand out by script: catch the common name-forming suffixes instead.
_JA_NAME = re.compile(
    r"[\u3400-\u9fff]{1,8}(?:株式会社|会社|大学|銀行|病院|研究所|協会|財団|省|庁|県|府|都|市|区|"
    r"町|村|駅|港|空港|川|山|島|寺|神社|氏|さん|様|社長|選手|監督|教授|博士)"
    r"|株式会社[\u3040-\u9fff\u30a0-\u30ffA-Za-z]+"
)

_SHORT_ANSWER_WORDS = 4


def _bare_name(text: str) -> bool:
    """A short answer that is, or starts with, a name ("Pennsylvania", "Rolls-Royce Merlin").

    Sentence-initial capitals are not names in a sentence, but a bare answer of a few words
    (no closing punctuation, or every word capitalised) has no sentence around it.
    """
    stripped = text.strip()
    words = stripped.rstrip(".!?").split()
    if not 0 < len(words) <= _SHORT_ANSWER_WORDS or words[0] in _COMMON_CAPS:
        return False
    if not words[0][:1].isupper():
        return False
    return stripped[-1:] not in ".!?" or all(w[:1].isupper() for w in words)


RISK_KINDS = ("number", "date", "negation", "entity")
"""What makes a claim risky, in the order ``risk_markers`` reports them."""


def risk_markers(text: str) -> list[str]:
    """The risk kinds a claim carries (``number``, ``date``, ``negation``, ``entity``)."""
    prepared = prepare(text)
    dates, rest = extract_dates(prepared)
    found: list[str] = []
    if extract_quantities(rest) or _NUMBER_WORDS.search(prepared):
        found.append("number")
    if dates or _DATE_WORDS.search(prepared):
        found.append("date")
    if _NEG_EN.search(prepared) or _NEG_JA.search(prepared):
        found.append("negation")
    if _entities(text) or _JA_NAME.search(text) or _bare_name(text):
        found.append("entity")
    return found


def sampled_in(text: str, rate: float, *, seed: int = 0) -> bool:
    """True when a claim without risk markers falls in the random share ``rate`` (0-1)."""
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    digest = hashlib.sha256(f"{seed}\x1f{text.strip()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def select_claims(texts: Sequence[str], rate: float, *, seed: int = 0) -> list[int]:
    """Indices of the claims to verify: every risky one, and a seeded share of the rest.

    Args:
        texts: the claim texts, in order.
        rate: share (0-1) of the claims without a risk marker that are verified anyway.
        seed: changes which of those claims are drawn (same seed, same draw).

    Raises:
        ValueError: ``rate`` is outside [0, 1].
    """
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"verify_sample_rate must be between 0 and 1, got {rate!r}")
    return [i for i, text in enumerate(texts)
            if risk_markers(text) or sampled_in(text, rate, seed=seed)]
