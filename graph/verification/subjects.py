"""Whose statement is it: an English claim that says of one thing what the evidence says of another.

"Capitol Technology University is a private Ivy League research university in Upper
Manhattan" copies what the evidence says of *Columbia University*, and names a university the
evidence describes elsewhere. Word overlap is high, both names occur in the evidence, and
the 1.5B judge called such claims supported (0.94-0.96 on small-corpus questions that
compare two things). This check reports a claim whose sentence

- opens with a name N (capitalised words) and goes on with a predicate R that one evidence
  sentence S holds almost whole (at least ``PREDICATE_COVER`` of R's content words);
- where S opens with another name M and says nothing of N (no distinctive word of N in S);
- while N is a thing the evidence talks about elsewhere (N in another sentence T), and no
  sentence that names N also names M (so M is not another name of N: "Lady Gaga" in a
  sentence that says she is Stefani Germanotta).

A pronoun or a description ("He", "The city") opening S is never M: who it refers to is
left to the judge.

Japanese claims get the same rule (:func:`swapped_subject_ja`) with the topic or subject
that opens a sentence (「速水堅曹は…」「工女たちが…」) as its name: a NoMIRACL answer
「速水 堅曹はフランスから製糸技術を学んだ」 stitched 速水堅曹 (named in another passage) onto
「工女たちは…フランス人教婦たちから製糸技術を学び」, and the judge called it supported (0.49).
There the name is a run of kanji, katakana or Latin letters (with たち / ら) before は or が;
a pronoun-like or time word (彼, 同社, 現在, 当時…) is never one, and the predicate is compared
by its kanji and katakana bigrams (``key_tokens``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from grounded_rag.verification.evidence import (
    STOP_WORDS,
    content_tokens,
    is_japanese,
    key_tokens,
    normalize,
)

PREDICATE_COVER = 0.85
"""Share of the predicate's content words the evidence sentence must hold."""
MIN_PREDICATE_WORDS = 4
"""A shorter predicate ("is a singer") matches too many sentences to say whose it is."""

_TOKEN = re.compile(r"[^\s,;:()\"']+")
_JOINED = re.compile(r"(?<=[A-Za-z]{2})\.(?=[A-Z][a-z])")
"""Sentences run together without a space ("... Washington, DC.Columbia University is")."""
_CONNECTORS = frozenset({"of", "de", "del", "la", "le", "von", "van", "der", "da", "di", "&"})
_NOT_NAMES = frozenset(
    "the a an this that these those it its he she they his her their there here in on at "
    "for if when as yes no both all each some many most one two three".split()
)

_NOT_A_NAME = re.compile(
    r"^(?:\w+ly|[A-Z][a-z]{0,2}|January|February|March|April|May|June|July|August|September"
    r"|October|November|December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)$")
"""One word that opens a sentence without naming anything: an adverb, a month, "St"."""


def leading_name(sentence: str) -> tuple[str, str]:
    """``(name, rest)``: the capitalised words that open ``sentence`` and what follows.

    ``("", sentence)`` when it opens with a pronoun, an article, "Yes," / "No," or a word in
    lower case.
    """
    words = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(sentence)]
    taken: list[tuple[str, int, int]] = []
    for word, start, end in words:
        bare = word.rstrip(".!?")
        if bare[:1].isupper() and any(ch.isalpha() for ch in bare):
            taken.append((bare, start, start + len(bare)))
            if bare != word or sentence[end:].lstrip()[:1] in (",", ";", ":", "("):
                break
        elif taken and bare.lower() in _CONNECTORS:
            taken.append((bare, start, end))
        else:
            break
    while taken and taken[-1][0].lower() in _CONNECTORS:
        taken.pop()
    if not taken or taken[0][0].lower() in _NOT_NAMES:
        return "", sentence
    if len(taken) == 1 and _NOT_A_NAME.search(taken[0][0]):
        return "", sentence  # "Originally, ...", "April 12", "St. Louis"
    return sentence[taken[0][1] : taken[-1][2]], sentence[taken[-1][2] :]


_TITLES = frozenset(
    "mr mrs ms miss dr prof sir dame lady lord st saint president king queen prince "
    "princess general captain mayor senator judge".split())
"""Titles left out of a name's words ("Ms McGregor" is "Cate McGregor")."""


def _name_words(name: str) -> set[str]:
    return {w.lower().rstrip(".") for w in _TOKEN.findall(name)
            if w.lower() not in _CONNECTORS and w.lower() not in STOP_WORDS and len(w) > 1
            and w.lower().rstrip(".") not in _TITLES}


def _proper(name: str, texts: Sequence[str]) -> bool:
    """A name of several words, or one word the texts also capitalise inside a sentence.

    One capitalised word opening a sentence may be a common noun ("Grandmother had booked",
    "Statistical learning is") that a headline-style summary leaves without an article.
    """
    if len(_TOKEN.findall(name)) > 1:
        return True
    inside = re.compile(rf"[a-z0-9,;:] +{re.escape(name)}\b")
    return any(inside.search(t) for t in texts)


def _acronym(a: str, b: str) -> bool:
    """True when one name is the initials of the other ("SNHU", "Southern New Hampshire U.")."""
    for short, long in ((a, b), (b, a)):
        letters = short.replace(".", "")
        initials = "".join(w[0] for w in _TOKEN.findall(long) if w[:1].isupper())
        if len(letters) >= 2 and letters.isupper() and letters == initials:
            return True
    return False


def swapped_subject(claim: str, sentences: Sequence[str]) -> tuple[str, str, str] | None:
    """``(sentence, claim's name, sentence's name)`` when the claim swaps the subject.

    ``sentences`` are the evidence sentences (see the module docstring for the rule).
    """
    claim_n = normalize(claim).strip()
    if is_japanese(claim_n):
        return None
    name, rest = leading_name(claim_n)
    predicate = content_tokens(rest)
    if not name or len(predicate) < MIN_PREDICATE_WORDS:
        return None
    own = _name_words(name)
    if not own:
        return None
    pieces = [p for s in sentences for p in _JOINED.split(s)]
    normalized = [normalize(p) for p in pieces]
    scored = [(len(predicate & content_tokens(s)) / len(predicate), i)
              for i, s in enumerate(normalized)]
    cover, best = max(scored)
    if cover < PREDICATE_COVER:
        return None
    sentence = normalized[best]
    lowered = sentence.lower()
    other, _ = leading_name(sentence)
    theirs = _name_words(other)
    distinct = own - theirs
    if not other or not distinct or not (theirs - own) or _acronym(name, other):
        return None
    if not (_proper(name, [claim_n, *normalized]) and _proper(other, normalized)):
        return None
    if any(re.search(rf"\b{re.escape(w)}\b", lowered) for w in distinct):
        return None  # the sentence names the claim's subject too
    naming = [s.lower() for i, s in enumerate(normalized)
              if i != best and re.search(rf"\b{re.escape(name.lower())}\b", s.lower())]
    if not naming:
        return None  # the claim's subject is nothing else the evidence talks about
    if any(re.search(rf"\b{re.escape(w)}\b", t) for t in naming for w in theirs - own):
        return None  # a sentence names both: perhaps two names of one thing
    return pieces[best].strip(), name, other


_JA_TOPIC = re.compile(
    r"^[「『]?(?P<name>[\u3400-\u9fff\uf900-\ufaff\u30a0-\u30ffA-Za-z0-9・ー ]{2,30}?"
    r"(?:たち|ら)?)[」』]?(?:は|が)(?!ら)")
"""A sentence opening with a name and its topic or subject particle (not 「…では」「…には」:
those end in で / に, outside the name's characters)."""
_JA_NOT_NAMES = re.compile(
    r"^(?:彼|彼女|彼ら|同|当|本|其|此|現在|当初|当時|今日|今回|以前|以後|以降|近年|最近|一方|実際|本来|"
    r"特に|後に|戦後|戦前|翌年|同年|前年|晩年|その後|これ|それ|あれ|[0-9一二三四五六七八九十]+年)")
"""Openers that refer back or set a time: who they mean is left to the judge."""
MIN_JA_PREDICATE = 4
"""Least kanji / katakana bigrams a Japanese predicate must hold to say whose it is."""


def _ja_topic(sentence: str) -> tuple[str, str]:
    """``(name, rest)`` of a Japanese sentence that opens with ``NAME は / が``; else ("", "")."""
    m = _JA_TOPIC.match(sentence)
    if m is None:
        return "", ""
    name = m.group("name").strip()
    if _JA_NOT_NAMES.match(name) or not key_tokens(name):
        return "", ""
    return name, sentence[m.end():]


def _same_head(a: str, b: str) -> bool:
    """True when two Japanese noun phrases end in the same character (their head noun)."""
    a, b = (re.sub(r"(?:たち|ら)$", "", x.replace(" ", "")) for x in (a, b))
    return bool(a and b) and (a[-1] == b[-1] or a in b or b in a)


def swapped_subject_ja(claim: str, sentences: Sequence[str]) -> tuple[str, str, str] | None:
    """:func:`swapped_subject` for a Japanese claim (see the module docstring)."""
    claim_n = normalize(claim).strip()
    name, rest = _ja_topic(claim_n)
    predicate = key_tokens(rest)
    if not name or len(predicate) < MIN_JA_PREDICATE:
        return None
    own = key_tokens(name)
    normalized = [normalize(s).strip() for s in sentences]
    tokens = [key_tokens(s) for s in normalized]
    cover, best = max((len(predicate & t) / len(predicate), i) for i, t in enumerate(tokens))
    if cover < PREDICATE_COVER:
        return None
    sentence = normalized[best]
    other, _ = _ja_topic(sentence)
    theirs = key_tokens(other)
    if not other or not (own - theirs) or not (theirs - own):
        return None
    if _same_head(name, other):
        return None  # 「党は」 for 日本共産党, 「製糸場は」 for 富岡製糸場: a description of it
    if own & tokens[best]:
        return None  # the sentence names the claim's subject too (or part of its name)
    naming = [t for i, t in enumerate(tokens) if i != best and own <= t]
    if not naming:
        return None  # the claim's subject is nothing else the evidence talks about
    if any(theirs & t for t in naming):
        return None  # a sentence names both: perhaps two names of one thing
    return sentences[best].strip(), name, other


_WH_KANJI = re.compile(r"[何誰]")
MIN_TOPIC_CHARS = 4
"""A shorter topic (母親, 人間, 出身地) is a common noun that sources write other ways."""


def question_topic(question: str) -> str:
    """The name a Japanese question is about (「速水 堅曹は…」), or "" (see :func:`_ja_topic`)."""
    text = normalize(question).strip()
    if not is_japanese(text):
        return ""
    name, _ = _ja_topic(text)
    if _WH_KANJI.search(name) or len(name.replace(" ", "")) < MIN_TOPIC_CHARS:
        return ""
    return name


def topic_uncited(question: str, statements: Sequence[Any], evidence: Sequence[Any]) -> str:
    """The question's topic when nothing the answer cites names it; else "".

    "日本野球連盟はいつ設立された？" answered "1947年" from a passage on another league, or
    "速水 堅曹はどこで製糸技術を学んだ？" answered with a sentence about the mill's workers from
    a passage that never names him: the answer speaks of something else. Named means written
    as is (spaces and middle dots aside) in a cited passage (title and text) or quote:
    「メモリー半導体」 does not name 「半導体メモリー」.
    Only Japanese passages are read: an English source spells the name its own way.
    """
    topic = question_topic(question)
    if not topic or not statements:
        return ""
    by_id = {str(e.get("source_id", "")): e for e in evidence}
    texts: list[str] = []
    for statement in statements:
        for c in statement.get("citations", []):
            texts.append(c.get("quote", ""))
            e = by_id.get(str(c.get("source_id", "")))
            if e is not None:
                texts.append(f"{e.get('title', '')} {e.get('text', '')}")
    passages = [t for t in texts if t.strip()]
    if not passages or not all(is_japanese(t) for t in passages):
        return ""
    own = _compact(topic)
    return "" if any(own in _compact(t) for t in passages) else topic


def _compact(text: str) -> str:
    """NFKC, lower case, without spaces and middle dots: 「速水 堅曹」 is 「速水堅曹」."""
    return re.sub(r"[\s・･]", "", normalize(text).lower())
