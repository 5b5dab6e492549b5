"""The U.S. state a passage gives, for an English question that asks "in what state".

"In what state did Olivia Newton-John perform Summer Nights?" over the passage "Summer
Nights is the debut residency show by … Olivia Newton-John. The show takes place in the
Donny & Marie Showroom, at the Flamingo Las Vegas. Flamingo Las Vegas … is a hotel and casino
located on the Las Vegas Strip in Paradise, Nevada." was answered with the showroom and the
hotel, true and cited, but no state. When the question asks for a U.S. state ("what state",
"which state", "which U.S. state") and the passage that holds most of the question's content
words (at least :data:`MIN_COVERAGE` of them, and more than half of the names it writes)
names exactly one state that the question does not name, that state fills the question's
gap (``gap.gap_fillers``): an answer that does not write it is off the question, the
revision is told it, and a bare answer equal to it is settled without the model (``cloze``).

Screened on HaluEval-QA dev's 18 right-answer questions of this kind, each against its own
knowledge paragraph (``benchmarks/place_check.py``, no model): a state for 9, each the gold
answer (Ohio where the gold writes "OH"); none for 9 (two states named, none, or too few of
the question's names); no pin over any of the 2,021 other paragraphs alone. Written while
reading those questions (the share of names came from an Olivia Newton-John question pinned
to Texas over a paragraph about another of her songs), so in-sample.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from grounded_rag.types import Evidence
from grounded_rag.verification.evidence import content_tokens, split_sentences

__all__ = ["US_STATES", "asks_state", "state_fillers", "states_in"]

US_STATES = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut",
    "Delaware", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa",
    "Kansas", "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan",
    "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire",
    "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota", "Ohio",
    "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota",
    "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington", "West Virginia",
    "Wisconsin", "Wyoming",
)
"""The fifty states, as written (capitalised: "washington" the word is no state)."""

_STATE = re.compile(r"(?<![\w.])(?:" + "|".join(
    re.escape(s) for s in sorted(US_STATES, key=len, reverse=True)) + r")(?![\w])")
# "New York City", "Washington, D.C.", "Georgia" the country, "Washington" a person's name
_NOT_STATE = re.compile(
    r"\bNew York City\b|\bWashington,?\s+D\.?\s?C\.?|\bD\.C\.|\bGeorgia\s+\((?:country)\)"
    r"|\b(?:George|Denzel|Booker\s+T\.)\s+Washington\b|\bWashington\s+(?:Irving|Post)\b")
_ASKS = re.compile(r"\b(?:what|which)\s+(?:U\.?S\.?\s+|American\s+)?state\b", re.I)

MIN_COVERAGE = 0.5
"""Share of the question's content words the passage must hold to be the one it is about."""

_NAME_WORD = re.compile(r"(?<![\w'])[A-Z][a-z]*[a-z](?:'s)?(?![\w])")
_NOT_NAME = {"In", "What", "Which", "When", "Where", "Who", "The", "State", "States", "American",
             "United", "How", "Is", "Was", "Did", "Does", "Are", "Were"}
NAMES_SHARE = 0.5
"""The passage must write more than this share of the names the question writes."""


def _names(question: str) -> set[str]:
    """The names the question is about: its runs of capitalised words.

    Hyphens count as spaces ("Olivia Newton John") and possessives are cut; question words
    and the states the question names itself are left out.
    """
    text = _STATE.sub(" , ", unicodedata.normalize("NFKC", question).replace("-", " "))
    names: list[list[str]] = [[]]
    for token in re.findall(r"[\w']+|[^\w\s]", text):
        if _NAME_WORD.fullmatch(token) and token.removesuffix("'s") not in _NOT_NAME:
            names[-1].append(token.removesuffix("'s"))
            if token.endswith("'s"):
                names.append([])
        elif names[-1]:
            names.append([])
    return {" ".join(n) for n in names if n}


def asks_state(question: str) -> bool:
    """Whether an English question asks for a U.S. state ("in what state", "which state")."""
    return bool(_ASKS.search(unicodedata.normalize("NFKC", question)))


def states_in(text: str) -> list[str]:
    """The U.S. states ``text`` names, in order (repeats kept)."""
    return _STATE.findall(_NOT_STATE.sub(" ", unicodedata.normalize("NFKC", text)))


def state_fillers(question: str, evidence: Sequence[Evidence]) -> list[tuple[str, str]]:
    """[(state, sentence)] when the passage the question is about names one state only.

    ``[]`` when the question does not ask for a state, when no passage holds
    :data:`MIN_COVERAGE` of its content words, when two passages tie for the most, or when
    that passage names no state or two (the question's own states aside).
    """
    if not asks_state(question):
        return []
    asked = {t for t in content_tokens(question) if t not in ("state", "u.s", "american")}
    if not asked:
        return []
    shares = [(len(asked & content_tokens(e["text"])) / len(asked), e) for e in evidence]
    best = max((share for share, _ in shares), default=0.0)
    top = [e for share, e in shares if share == best]
    if best < MIN_COVERAGE or len(top) != 1:
        return []
    # A passage about another show of the same singer is not the one asked about.
    names = _names(question)
    written = unicodedata.normalize("NFKC", top[0]["text"]).replace("-", " ")
    if names and sum(re.search(rf"\b{re.escape(n)}\b", written) is not None
                     for n in names) <= NAMES_SHARE * len(names):
        return []
    named = set(states_in(question))
    found = {s for s in states_in(top[0]["text"]) if s not in named}
    if len(found) != 1:
        return []
    state = found.pop()
    sentence = next((s.text for s in split_sentences(top[0]["text"])
                     if state in states_in(s.text)), top[0]["text"])
    return [(state, sentence)]
