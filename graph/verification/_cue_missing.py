"""What the evidence lacks: the claim's names and content words it does not contain."""

from __future__ import annotations

import re
from collections.abc import Sequence

from grounded_rag.verification.evidence import STOP_WORDS, normalize, split_sentences, stem

_ENTITY_EN = re.compile(r"\b(?:[A-Z][a-zA-Z0-9]*(?:[-'][A-Za-z0-9]+)*|[A-Za-z]+\d+[A-Za-z0-9]*)\b")
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]{3,}")
_OPENERS = frozenset("\"'\u201c\u2018(")
_COMMON_CAPS = frozenset(
    "I The A An This That These Those It In On At For And But Or If When "
    "He She They We You My Our Their His Her Its Yes No "
    "What Which Who Whom Whose Where Why How Is Are Was Were Do Does Did Can Could".split()
)


def _entities(claim: str) -> list[str]:
    found: list[str] = []
    for sentence in split_sentences(claim):
        for m in _ENTITY_EN.finditer(sentence.text):
            word = m.group(0)
            initial = m.start() == 0 or sentence.text[: m.start()].rstrip()[-1:] in _OPENERS
            if initial and not any(c.isdigit() for c in word) and word[1:].islower():
                continue  # sentence- or quote-initial capital: not evidence of a name
            if word in _COMMON_CAPS or word.isdigit():
                continue
            found.append(word)
        found.extend(_KATAKANA.findall(sentence.text))
    return list(dict.fromkeys(found))


_LATIN = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_PREFIX = 5  # words this long or longer match on their first five letters (found/founder)
# Words that carry no content of their own beyond the shared stop list (negation has its
# own cue; "neither ... nor" says nothing the evidence must contain).
_UNSEEN_SKIP = frozenset(
    "neither nor never either both also too yet still though although however while since "
    "because until unless whether other another own same such much many some few well "
    "indeed actually really instead rather".split()
)


def missing_words(claim: str, evidence: str | Sequence[str], question: str = "") -> list[str]:
    """Content words of ``claim`` that neither the evidence nor the question contains.

    Latin-script words are compared after lowercasing, on the word, its plural/past stem, or
    (for words of five letters or more) its first five letters, so "produced" finds
    "producer". Function words and numbers are skipped (numbers have their own cues).
    Japanese text is not split into words here: kanji compounds are paraphrased too freely
    (実施 for 行う) for a missing compound to mean much (JHARS: more false alarms than
    catches); katakana names have ``entity_missing``. Returns the claim's own spellings, in
    order, without repeats.
    """
    texts = [evidence] if isinstance(evidence, str) else list(evidence)
    known = normalize(" ".join([*texts, question])).lower()
    vocab = {w for w in _LATIN.findall(known)}
    forms = {f for w in vocab for f in _forms(w)}
    prefixes = {w[:_PREFIX] for w in vocab if len(w) >= _PREFIX}
    out: list[str] = []
    body = normalize(claim)
    for word in _LATIN.findall(body):
        low = word.lower().strip("'-")
        if len(low) < 3 or low in STOP_WORDS or low in _UNSEEN_SKIP:
            continue
        if _forms(low) & forms:
            continue
        if len(low) >= _PREFIX and low[:_PREFIX] in prefixes:
            continue
        out.append(word)
    return list(dict.fromkeys(out))


def _forms(word: str) -> set[str]:
    """The word, its stem, and the stem without a doubled final consonant (starred -> star)."""
    base = stem(word)
    out = {word, base}
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiou":
        out.add(base[:-1])
    return out
