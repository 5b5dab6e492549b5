"""A statement that says its subject is itself: "The mayor of Kyoto is Kyoto City Mayor".

Asked "What is the name of the mayor of Kyoto?" over a Japanese passage that names him, the
1.5B model wrote "The mayor of Kyoto is Kyoto City Mayor[1]", cited to the sentence with
「京都市長」, and the judge supported it: it is true, and it answers nothing. The off-question
check already refuses a statement made only of the question's words; this one adds a word
for a kind of place or office ("City"). An English statement "A is B" restates itself when
A's content words are all the question's, B shares a word with A, and what B adds to A and
the question is only such a word (:data:`KIND_WORDS`). "Kyoto is a city" (B shares nothing
with A) and "The mayor of Kyoto is Daisaku Kadokawa" (B adds a name) are answers.

Screened on HaluEval-QA dev's knowledge sentences, each read as a statement answering its
own question (``benchmarks/screens.py --screens restates``, no model), before it was wired in.
"""

from __future__ import annotations

import re
import unicodedata

from grounded_rag.verification.evidence import key_tokens, stem

__all__ = ["KIND_WORDS", "restates_itself"]

KIND_WORDS = frozenset(stem(w) for w in (
    "city", "town", "village", "ward", "prefecture", "county", "province", "district",
    "state", "municipality", "metropolis", "capital", "office", "official", "government",
    "member", "head", "leader", "chief", "people", "person", "name", "title",
))
"""Words for a kind of place, office or person: what "A is B" may add and still say
nothing about which one."""

_COPULA = re.compile(r"\s(?:is|are|was|were)\s(?:called\s|named\s)?", re.I)
_MARKER = re.compile(r"\[\d+\]")


def restates_itself(statement: str, question: str) -> bool:
    """Whether an English "A is B" statement only says that A is A (see the module)."""
    text = unicodedata.normalize("NFKC", _MARKER.sub("", statement)).strip()
    if not text.isascii():
        return False
    parts = _COPULA.split(text, maxsplit=1)
    if len(parts) != 2:
        return False
    asked = key_tokens(question)
    subject, complement = key_tokens(parts[0]), key_tokens(parts[1])
    if not subject or not complement or not subject <= asked:
        return False
    return bool(subject & complement) and complement - subject - asked <= KIND_WORDS
