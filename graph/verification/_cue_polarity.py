"""Negation: whether a claim and the evidence sentence it follows point the same way."""

from __future__ import annotations

import re

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


def _negated(text: str) -> bool:
    count = len(_NEG_JA.findall(text)) + len(_NEG_EN.findall(text))
    return count % 2 == 1


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
