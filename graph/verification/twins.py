"""Two statements of one answer that say the same thing of two subjects, citing one sentence.

Asked "Who has more solo albums, Scott Stapp or Björk?", a small model may write the fact
its source gives once ("He also has two solo albums: …") for both names: "Scott Stapp has two
solo albums: …" and "Björk has two solo albums: …", both cited to that sentence. Each claim
alone reads as supported; together they show that the sentence was copied onto a subject.
This check finds statements of one answer whose words differ only in a few (the subject)
and that cite the same sources, finds the sentence of those sources that says what they
share, and decides *neutral*, before any judge, a twin whose own words that sentence never
names: the source does not say it of that subject. When the sentence names one twin's
subject, the other twin alone is decided; when it names both ("Both A and B are operas"),
neither is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from grounded_rag.prompts import verification as texts
from grounded_rag.types import Claim, Evidence
from grounded_rag.verification.evidence import content_tokens, split_sentences

MAX_DIFFERENT = 6
"""At most this many content tokens (words with their stems, or CJK bigrams) of each twin
are not in the other: a subject, not another statement."""
MIN_SHARED = 4
"""At least this many content tokens are shared: the rest of the statement is the same."""


_WORD = re.compile(r"[^\W_]+")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")


def _quotes(claim: Claim) -> list[str]:
    return [c.get("quote", "") for c in claim["citations"] if c.get("quote")]


def _names(text: str, own: set[str]) -> bool:
    """Whether the words that set ``text`` apart (``own``) hold a name.

    A Latin-script word must be capitalized; CJK differences count as they are. Two
    paraphrases of one statement ("takes place in" / "is held in") are not twins, and two
    statements that differ in a number are left to the value cues.
    """
    for word in _WORD.findall(text):
        lowered = word.lower()
        if not any(t in lowered for t in own):
            continue
        if word[0].isupper() or not _LATIN.match(word):
            return True
    return False


def twin_subjects(claims: Sequence[Claim], language: str,
                  evidence: Sequence[Evidence] = ()) -> dict[int, str]:
    """Claims that repeat a twin's statement of a subject its sentence never names.

    Twins cite the same sources; the sentence that says what they share is the one of those
    sources (``evidence``; the citations' quotes when a source is not there) that holds the
    most of the twins' shared words. Index -> the reason (in ``language``) that decides the
    claim neutral.
    """
    texts_by_id = {e["source_id"]: e["text"] for e in evidence}
    tokens = [content_tokens(c["text"]) for c in claims]
    cited = [frozenset(c["source_id"] for c in claim["citations"]) for claim in claims]
    reasons: dict[int, str] = {}
    for i in range(len(claims)):
        for j in range(i + 1, len(claims)):
            if not cited[i] or cited[i] != cited[j]:
                continue
            own_i, own_j = tokens[i] - tokens[j], tokens[j] - tokens[i]
            shared = tokens[i] & tokens[j]
            if not (own_i and own_j) or len(shared) < MIN_SHARED:
                continue
            if max(len(own_i), len(own_j)) > MAX_DIFFERENT:
                continue
            if any(ch.isdigit() for t in own_i | own_j for ch in t):
                continue
            if not (_names(claims[i]["text"], own_i) and _names(claims[j]["text"], own_j)):
                continue
            sentence = _saying(shared, [*_quotes(claims[i]), *_quotes(claims[j])],
                               [texts_by_id[s] for s in sorted(cited[i]) if s in texts_by_id])
            if sentence is None:
                continue
            named_i, named_j = bool(own_i & sentence), bool(own_j & sentence)
            if named_i and named_j:
                continue
            for k, other, named in ((i, j, named_i), (j, i, named_j)):
                if not named and k not in reasons:
                    reasons[k] = texts.TWIN_REASON.get(language, texts.TWIN_REASON["en"]).format(
                        claim=claims[k]["text"], twin=claims[other]["text"])
    return reasons


def _saying(shared: set[str], quotes: list[str], sources: list[str]) -> set[str] | None:
    """The tokens of the sentence that holds most of ``shared`` (None: none holds half)."""
    sentences = [s.text for text in (sources or quotes) for s in split_sentences(text)]
    if not sentences:
        return None
    best = max((content_tokens(s) for s in sentences), key=lambda t: len(shared & t))
    return best if len(shared & best) * 2 >= len(shared) else None
