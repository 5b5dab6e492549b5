"""Polarity: whether a claim and the evidence sentence it follows point the same way."""

from __future__ import annotations

import re
import unicodedata

from grounded_rag.verification.evidence import content_tokens

_NEG_EN = re.compile(
    r"\b(?:not|never|no|none|nobody|nothing|neither|nor|cannot|without)\b|n't\b", re.IGNORECASE
)
# まず (first), 必ず (always), 絶えず (constantly), とりあえず (for now) end in ず but are
# not negations; nor are かもしれない / かもしれません (may be) and に違いない (must be).
_NEG_JA = re.compile(
    r"(?<![少危切幼])(?<!しれ)(?<!違い)ない|(?<!しれ)ません|なかった|(?<![ま必])(?<!あえ)(?<!絶え)ず(?=[、。にもとして]|$)"
    r"|無い|無し|なし(?![で])|不可"
)
_JA_CLAUSE_END = re.compile(r"(?<=[、，])")


def _negated(text: str, other: str | None = None) -> bool:
    """Whether ``text`` is negated (an odd number of negations).

    With ``other`` (the claim for an evidence sentence, the sentence for a claim), a
    negation counts only when the word it negates is on the other side too: "having never
    worked" says nothing about "moved into a home", 「息もつけないほど笑って」 nothing about
    「笑って」. The negated word is read in a window next to the negation: the words after an
    English one, the characters before a Japanese ending (存在|せず, 動か|ずに).
    """
    if other is None:
        count = len(_NEG_JA.findall(text)) + len(_NEG_EN.findall(text))
        return count % 2 == 1
    theirs = content_tokens(other)
    count = 0
    for m in _NEG_EN.finditer(text):
        window = content_tokens(" ".join(text[m.end():].split()[:_EN_WINDOW]))
        if not window:  # "..., but Zpizza isn't.": the predicate is before it
            window = content_tokens(" ".join(text[:m.start()].split()[-_EN_WINDOW:]))
        count += bool(window & theirs)
    plain = unicodedata.normalize("NFKC", other)
    for m in _NEG_JA.finditer(text):
        before = text[max(0, m.start() - _JA_WINDOW):m.start()]
        stem = _JA_STEM.search(before)
        if stem is not None and stem.group(1) in _JA_FORMAL:  # 保証する|物|では|ない
            stem = _JA_STEM.search(before[:stem.start()]) or stem
        count += (stem is None or stem.group(1)[-2:] in plain
                  or _JA_NONE.match(stem.group(2)) is not None)
    return count % 2 == 1


_EN_WINDOW = 4
"""Words after an English negation that may be the one it negates (not | be able to finish)."""
_JA_WINDOW = 10
"""Characters before a Japanese negative ending searched for the word it negates."""
_JA_STEM = re.compile(r"([\u3400-\u9fff\u30a0-\u30ff]+)([\u3040-\u309f]*)$")
"""The last kanji / katakana run before the ending, its inflection aside (置|かれてい|ない,
存在|せ|ず, 動|か|ずに); without one the negation always counts."""
_JA_FORMAL = frozenset({"物", "事", "訳", "筈"})
"""Formal nouns: 「…する物ではない」 negates the verb before them."""
_JA_NONE = re.compile(r"も(?:い|あり)?$")
"""一人も|いない, 何も|ない: nothing of the kind exists, whatever the claim's words."""


def _polarity_scope(claim: str, sentence: str, language: str) -> str:
    """The part of ``sentence`` whose negation bears on ``claim``.

    When the claim is copied verbatim from the sentence (claims split from a long sentence
    are clause fragments: 「精神は仮想現実の中にとどまり」 out of 「ライズが出来ず、精神は…」),
    only the copied span counts, widened by the negation that may follow it in Japanese
    (出来|ず) or precede it in English (not| available): a negation in another clause of the
    sentence says nothing about this one. Otherwise the whole sentence counts.
    """
    body = claim.strip().rstrip("。.!?！？")
    at = sentence.find(body) if body else -1
    if at < 0:
        return _related_clauses(claim, sentence) if language == "ja" else sentence
    end = at + len(body)
    if language == "ja":
        return sentence[at : end + 4]
    before = sentence[:at].split()[-1:]
    after = sentence[end:].split()[:1]
    return " ".join([*before, body, *after])


def _related_clauses(claim: str, sentence: str) -> str:
    """The clauses of a Japanese ``sentence`` that a paraphrasing ``claim`` draws on.

    Long Japanese sentences chain clauses with 、 (「自然界には存在せず、水蒸気を吸収する
    吸湿性がある」); a claim that restates one clause keeps that clause's polarity, not the
    sentence's. A clause counts when at least half of its content tokens are in the claim;
    when none does, the whole sentence counts.
    """
    clauses = [c for c in _JA_CLAUSE_END.split(sentence) if c.strip()]
    if len(clauses) < 2:
        return sentence
    claim_tokens = content_tokens(claim)
    related = [c for c in clauses if (tokens := content_tokens(c))
               and len(tokens & claim_tokens) / len(tokens) >= 0.5]
    return "".join(related) if related else sentence


def _fragment(answer: str, language: str) -> bool:
    """True for a bare answer ("professional tennis player") rather than a sentence.

    A fragment has no polarity of its own, so a negation elsewhere in the evidence sentence
    says nothing about it.
    """
    text = answer.strip()
    if not text or text[-1] in ".!?。！？":
        return False
    return len(text) <= 15 if language == "ja" else len(text.split()) <= 5
