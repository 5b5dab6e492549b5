"""Whose husband, whose son: English claims that give two people the wrong family relation.

"Prince Georgy Konstantinovich … was the youngest son of Grand Duke Konstantin
Konstantinovich of Russia and his wife Grand Duchess Yelizaveta Mavrikiyevna." was read as
support for "Grand Duchess Yelizaveta Mavrikiyevna's husband was Prince Georgy
Konstantinovich of Russia" (judge 0.97): every name and most words are in the sentence, only
the one word that relates them differs. A held-out small-corpus answer went out so.

This reads family relations written in a few plain patterns, in the claim and in the
evidence sentences:

- "A's [youngest] husband / son / … was B" (B is A's husband);
- "B was / is / , the [youngest] son / wife / … of A [and his wife C]" (also B of C, and C
  the wife of A);
- "B married A", "A and his wife B".

Each relation is read for an ordered pair (the one related, the one it is related to) and
its converse is implied (a son of A: A is a parent of him). When the evidence relates the
claim's two people, none of its relations for that pair is the claim's and they are not
the same person, the claim is contradicted. Names are compared by their words without titles
(Prince, Grand, Duke …): one name's words must all be in the other's. A pair that the
evidence never relates, pronouns ("He was the son of …") and anything written otherwise
are left to the judge. In-law and step relations are relations of their own ("stepson" is
not "son").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_GROUPS = {
    "husband": "spouse", "wife": "spouse", "spouse": "spouse", "widow": "spouse",
    "widower": "spouse",
    "son": "child", "daughter": "child", "child": "child",
    "father": "parent", "mother": "parent", "parent": "parent",
    "brother": "sibling", "sister": "sibling", "sibling": "sibling",
    "half-brother": "half-sibling", "half-sister": "half-sibling",
    "grandson": "grandchild", "granddaughter": "grandchild", "grandchild": "grandchild",
    "grandfather": "grandparent", "grandmother": "grandparent", "grandparent": "grandparent",
    "uncle": "uncle", "aunt": "uncle", "nephew": "nephew", "niece": "nephew",
    "cousin": "cousin",
    "stepson": "stepchild", "stepdaughter": "stepchild", "stepfather": "stepparent",
    "stepmother": "stepparent",
    "son-in-law": "child-in-law", "daughter-in-law": "child-in-law",
    "father-in-law": "parent-in-law", "mother-in-law": "parent-in-law",
    "brother-in-law": "sibling-in-law", "sister-in-law": "sibling-in-law",
}
"""Family words and the relation each names (gender aside)."""

_CONVERSE = {
    "spouse": "spouse", "child": "parent", "parent": "child", "sibling": "sibling",
    "half-sibling": "half-sibling", "grandchild": "grandparent", "grandparent": "grandchild",
    "uncle": "nephew", "nephew": "uncle", "cousin": "cousin", "stepchild": "stepparent",
    "stepparent": "stepchild", "child-in-law": "parent-in-law",
    "parent-in-law": "child-in-law", "sibling-in-law": "sibling-in-law",
}
"""The relation the other way round (B a son of A: A a parent of B)."""

_TITLES = frozenset(
    "mr mrs ms miss dr prof sir dame lady lord saint st president king queen prince princess "
    "grand duke duchess archduke archduchess count countess baron baroness emperor empress "
    "tsar tsarina czar earl marquess marquis viscount crown infante infanta sultan emir "
    "sheikh pope".split())
"""Words of a name that are a title, not the person's own name."""
_NOT_NAMES = frozenset(
    "he she they it his her hers their its him them this that these those the a an who whom "
    "whose which there here then in on at by for from with and but when after before".split())
"""Capitalised words that open a sentence without naming anyone ("He was the son of …")."""

_CONNECT = r"(?:of|de|da|di|del|della|der|van|von|du|la|le|bin|ibn|al|y)"
_WORD = r"[A-Z][\w'\u2019\-]*\.?"
_NAME = rf"{_WORD}(?:\s+(?:{_CONNECT}\s+)?{_WORD})*"
_KIN = "|".join(sorted((re.escape(k) for k in _GROUPS), key=len, reverse=True))
_ADJ = (r"(?:(?:youngest|eldest|oldest|elder|younger|older|only|first|second|third|fourth|"
        r"fifth|middle|late|former|illegitimate|adopted|biological|twin|first-born)\s+)*")
_DET = r"(?:the|a|an|one)\s+"
_OWNED = re.compile(rf"(?P<a>{_NAME})['\u2019]s?\s+{_ADJ}(?P<kin>{_KIN})s?\s*,?\s+"
                    rf"(?:(?:is|was|were|are|has\s+been)\s+)?(?P<b>{_NAME})")
_VERB = r"(?:is|was|became|remains)\s+"
_OF = re.compile(rf"(?P<b>{_NAME})(?:\s*,\s*(?:{_VERB})?|\s+{_VERB}){_DET}{_ADJ}"
                 rf"(?P<kin>{_KIN})\s+of\s+(?P<a>{_NAME})"
                 rf"(?:\s*,?\s+and\s+(?:(?:his|her|their)\s+{_ADJ}(?P<kin2>{_KIN})\s*,?\s+)?"
                 rf"(?P<c>{_NAME}))?")
_MARRIED = re.compile(rf"(?P<b>{_NAME})\s+(?:married|wed)\s+(?P<a>{_NAME})")
_AND_HIS = re.compile(rf"(?P<a>{_NAME})\s*,?\s+and\s+(?:his|her)\s+(?P<kin>{_KIN})\s*,?\s+"
                      rf"(?P<b>{_NAME})")
_BRACKETS = re.compile(r"\s*\([^()]*\)")

Relation = tuple[frozenset[str], str, frozenset[str]]
"""(the one related, the relation, the one it is related to), names as their own words."""


_NAME_WORD = re.compile(r"[\w'\u2019\-]+")


def _words(name: str) -> frozenset[str]:
    words = (t.lower().strip(".'\u2019-") for t in _NAME_WORD.findall(name))
    return frozenset(w for w in words if w and w not in _TITLES and w not in _NOT_NAMES
                     and not re.fullmatch(_CONNECT, w))


def _same(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a) and bool(b) and (a <= b or b <= a)


def relations(sentence: str) -> list[Relation]:
    """The family relations ``sentence`` writes in the patterns above, converses added."""
    text = _BRACKETS.sub("", sentence)
    found: list[tuple[str, str, str]] = []
    for m in _OWNED.finditer(text):
        found.append((m["b"], _GROUPS[m["kin"].lower()], m["a"]))
    for m in _OF.finditer(text):
        kin = _GROUPS[m["kin"].lower()]
        found.append((m["b"], kin, m["a"]))
        if m["c"]:
            found.append((m["b"], kin, m["c"]))
            if m["kin2"]:
                found.append((m["c"], _GROUPS[m["kin2"].lower()], m["a"]))
    for m in _MARRIED.finditer(text):
        found.append((m["b"], "spouse", m["a"]))
    for m in _AND_HIS.finditer(text):
        found.append((m["b"], _GROUPS[m["kin"].lower()], m["a"]))
    out: list[Relation] = []
    for b, kin, a in found:
        wb, wa = _words(b), _words(a)
        if wb and wa and not _same(wb, wa):
            out += [(wb, kin, wa), (wa, _CONVERSE[kin], wb)]
    return out


def _about(rel: Relation, pair: tuple[frozenset[str], frozenset[str]]) -> bool:
    return _same(rel[0], pair[0]) and _same(rel[2], pair[1])


def wrong_relation(claim: str, sentences: Sequence[str]) -> tuple[str, str, str] | None:
    """``(sentence, claim's relation, sentence's relation)`` when they relate the pair otherwise.

    None when the claim writes no family relation in the patterns read, or the evidence
    never relates the same two people, or one of its relations for them is the claim's.
    """
    if not re.search(r"[A-Za-z]", claim):  # no Latin letters: nothing to read
        return None
    claimed = relations(claim)
    if not claimed:
        return None
    read = [(s, relations(s)) for s in sentences]
    for who, kin, whom in claimed[::2]:  # the claim's own reading; converses follow it
        pair = (who, whom)
        given = [(s, r[1]) for s, rels in read for r in rels if _about(r, pair)]
        if given and all(k != kin for _, k in given):
            sentence, other = given[0]
            return sentence, _word_for(kin, claim), _word_for(other, sentence)
    return None


def _word_for(kin: str, text: str) -> str:
    """The family word of ``text`` that names ``kin`` (its group name when none does)."""
    words: Iterable[str] = (w for w, g in _GROUPS.items() if g == kin)
    for w in sorted(words, key=len, reverse=True):
        if re.search(rf"\b{re.escape(w)}s?\b", text, re.I):
            return w
    return kin
