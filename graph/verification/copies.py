"""Altered copies: a claim that repeats one evidence sentence with a word swapped."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from grounded_rag.verification.evidence import is_japanese, normalize

ALTERED_COPY_SIMILARITY = 0.65
"""Similarity (difflib ratio) from which a claim counts as a rewrite of one evidence sentence."""

_CONTENT_CHAR = re.compile(r"[A-Za-z0-9\u3400-\u9fff\uf900-\ufaff\u30a0-\u30ff]")
_WORD = re.compile(r"\w+(?:['\-]\w+)*|[^\w\s]")
"""A word (apostrophes and hyphens only inside it: "don't", "e-mail") or one other mark, so
that a quote mark next to a word ('OK vs "OK) is a swapped mark, not a swapped word."""


def altered_copy(
    claim: str, sentences: Sequence[str], *, similarity: float = ALTERED_COPY_SIMILARITY
) -> tuple[str, str, str] | None:
    """Find an evidence sentence the claim copies closely but with a word swapped.

    Returns ``(sentence, claim span, evidence span)`` for the closest sentence when the two
    are at least ``similarity`` alike (characters for Japanese, words otherwise) and differ
    by a *substitution* of content (kanji, katakana, letters or digits on both sides), not
    only by words added or left out. Such a claim says something else about the very thing
    the sentence describes: when the model does not find it supported, the cascade reports
    it as contradicted, with the swapped words as the reason.
    """
    claim_n = normalize(claim).strip()
    if not claim_n or not sentences:
        return None
    japanese = is_japanese(claim_n)

    def units(text: str) -> list[str]:
        return list(text) if japanese else _WORD.findall(text)

    def keys(parts: list[str]) -> list[str]:
        return parts if japanese else [p.lower() for p in parts]

    claim_u = units(claim_n)
    best: tuple[float, str, list[str], difflib.SequenceMatcher[str]] | None = None
    for sentence in sentences:
        sent_u = units(normalize(sentence).strip())
        matcher = difflib.SequenceMatcher(None, keys(sent_u), keys(claim_u), autojunk=False)
        ratio = matcher.ratio()
        if best is None or ratio > best[0]:
            best = (ratio, sentence, sent_u, matcher)
    if best is None or best[0] < similarity:
        return None
    _, sentence, sent_u, matcher = best
    joiner = "" if japanese else " "
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        if japanese:
            i1, i2 = _widen(sent_u, i1, i2)
            j1, j2 = _widen(claim_u, j1, j2)
        ev_span = joiner.join(sent_u[i1:i2]).strip()
        cl_span = joiner.join(claim_u[j1:j2]).strip()
        if _is_content(ev_span, japanese) and _is_content(cl_span, japanese):
            return sentence.strip(), cl_span, ev_span
    return None


def _script(char: str) -> str:
    if "\u30a0" <= char <= "\u30ff":
        return "katakana"
    if "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff":
        return "kanji"
    if char.isascii() and char.isalnum():
        return "latin"
    return "other"


def _widen(chars: list[str], start: int, end: int) -> tuple[int, int]:
    """Grow a character span to whole runs of katakana, kanji or Latin at both ends."""
    if start < end:
        first, last = _script(chars[start]), _script(chars[end - 1])
        while start > 0 and first != "other" and _script(chars[start - 1]) == first:
            start -= 1
        while end < len(chars) and last != "other" and _script(chars[end]) == last:
            end += 1
    return start, end


def _is_content(span: str, japanese: bool) -> bool:
    if japanese:
        return bool(_CONTENT_CHAR.search(span))
    words = [w for w in span.split() if _CONTENT_CHAR.search(w)]
    return any(w.lower() not in _EN_FUNCTION for w in words)


_EN_FUNCTION = frozenset(
    "a an the of to in on at for and or but is are was were be been being it its this that "
    "these those with by as from has have had do does did will would can could may might "
    "there their they he she his her we our you your i".split()
)

