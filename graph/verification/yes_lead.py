"""A "Yes" in front of a verified answer to "Are A and B both X?".

The local generator often answers a both-question with one statement per compared thing
("Cardillac is an opera by Paul Hindemith[1]. La donna del lago is an opera by Gioachino
Rossini[2].") and no "Yes": the facts are there, the word the user asked for is not. When
each compared thing has a verified statement of its own that names it (and no other
compared thing), with a quoted source sentence that names it alone and holds the asked
predicate (its content words, stemmed), and no negation is in either, the answer to the
question is "Yes" by the statements alone, and it is put in front. The quotes, not the
statement, must say it: a statement that repeats the question's words ("The Lady was
published in the US[1]", over "The Lady is Britain's longest-running weekly women's
magazine") may have slipped past the judge, as one held-out answer did. Nothing here ever
says "No": that a statement does not say X does not mean the thing is not X. Comparisons
of values ("the same country", "different") are left alone: their answer needs the two
values compared, not the question's words found.

On HaluEval-QA dev's 74 right-answer both-questions, with their knowledge paragraph's
sentences as the statements (``benchmarks/yes_lead_check.py``, no model), the lead is given
for 19 questions, all answered "yes" in the gold; none of the 29 "no" questions gets one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from grounded_rag.types import Claim
from grounded_rag.verification import asked
from grounded_rag.verification.evidence import split_sentences

BOTH = re.compile(r"\bboth\b", re.I)
"""The word that makes a question a both-question."""
_VALUE_COMPARISON = re.compile(r"\b(?:same|different|similar|differ)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|never|no|neither|nor|none|non)\b|n't", re.I)
_ALREADY = re.compile(r"^\W*(?:yes|no)\b", re.I)


def _predicate(question: str) -> list[asked.Term]:
    """The words a both-question asks of each thing: after "both", or after the subject."""
    words = asked._EN_WORD.findall(question)
    low = [w.lower() for w in words]
    if "both" not in low:
        return []
    last = len(low) - 1 - low[::-1].index("both")
    if last > 1:  # "Are A and B both operas?"
        return asked._terms(words[last + 1:])
    _, predicate = asked._en_split([w for w in words if w.lower() != "both"])
    return asked._terms(predicate)  # "Were both A and B authors?"


def _names(group: Sequence[asked.Term], text: str) -> bool:
    return any(re.search(r"\b" + re.escape(t.surface) + r"\b", text, re.I) for t in group)


def _says(group: Sequence[asked.Term], others: Sequence[Sequence[asked.Term]],
          terms: Sequence[asked.Term], statement: Claim) -> bool:
    """Whether the statement, and a quoted sentence of its own, say the predicate of ``group``.

    Both must name the thing and no other compared thing; the quoted sentence must hold the
    predicate's words; neither may hold a negation.
    """
    def alone(text: str) -> bool:
        return _names(group, text) and not any(_names(o, text) for o in others)

    if not alone(statement["text"]) or _NEGATION.search(statement["text"]):
        return False
    return any(alone(q) and not _NEGATION.search(q) and not asked.missing_terms(terms, [q])
               for q in quoted_sentences(statement))


def quoted_sentences(statement: Claim) -> list[str]:
    """The sentences of the statement's quotes, split where sources run them together."""
    return [s.text for c in statement.get("citations", [])
            for s in split_sentences(c.get("quote", ""))]


def already_led(statements: Sequence[Claim]) -> bool:
    """Whether the answer already opens with "Yes" or "No"."""
    return bool(statements) and bool(_ALREADY.match(statements[0]["text"]))


def yes_lead(question: str, statements: Sequence[Claim]) -> bool:
    """Whether the verified ``statements`` answer the English both-question with "Yes"."""
    question = unicodedata.normalize("NFKC", question).strip()
    if not BOTH.search(question) or _VALUE_COMPARISON.search(question):
        return False
    if already_led(statements):
        return False
    groups = asked.compared_things(question)
    terms = _predicate(question)
    if len(groups) < 2 or not terms:
        return False
    for group in groups:
        others = [g for g in groups if g is not group]
        if not any(_says(group, others, terms, s) for s in statements):
            return False
    return True
