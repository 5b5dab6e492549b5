"""A bare value that fills the one gap a source sentence leaves in the question.

Reading-comprehension questions are often a source sentence with its value taken out:
「2016年7月に…首都ジュバの住民に多数の犠牲者が出た際には、…」 asked as 「…首都ジュバの住民に多数の
犠牲者が出た年は」. The bare answer "2016年7月", judged with the question by the 1.5B model, scored
0.44 against 0.45 and the answer was refused. When one evidence sentence holds the value
word for word, holds (nearly) all of the question's content, and names no other number
that the question does not name too, there is nothing left for the value to be mixed up
with: the claim is supported without the model (``judge`` ``"cloze"``). A sentence with a
second candidate ("…迅速解(Q)と速報解(R)…", two dates) leaves the choice to the model, and
so do names (a sentence naming two people says nothing about which one is asked for).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from grounded_rag.types import Evidence
from grounded_rag.verification.evidence import content_tokens, normalize, split_sentences
from grounded_rag.verification.gap import gap_fillers
from grounded_rag.verification.on_question import question_kind

CLOZE_COVERAGE = 0.8
"""Share of the question's content tokens the sentence must hold."""

CLOZE_MIN_TOKENS = 3
"""A question with fewer content tokens than this says too little to pin a sentence down."""

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_VALUE_TAIL = frozenset("0123456789,.:年月日時分秒")
"""What may follow the answer in the same value: "2016年" answers the year of "2016年7月".
Not a dash or a slash: "2016" of "2016-2017" is one end of a range."""
_COUNTER = re.compile(r"(?<=何)[\u3400-\u9fffA-Za-z%]")
"""The counter a Japanese question asks with: 年 of 何年, 名 of 何名, 条 of 第何条."""
_ASKED_UNIT = re.compile(
    r"(年月日|年|月|日)(?:は|が)(?:いつ|何)?(?:か|ですか|でしょうか)?[?？。]?\s*$")
"""「…犠牲者が出た年は」: the question's last word names the value's unit."""
_ASKS_TWO = re.compile(r"いつ|何")
_QUESTION_WORDS = re.compile(r"何|幾|誰|どこ|どれ|いつ|いくつ|いくら|どの"
                             r"|^(?:year|date|day|month|time|many|much|long|old)s?$")
"""Question words: their bigrams ("何年", "何人") are never in the source sentence, nor is
the "year" of "in what year"."""


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def _key(text: str) -> str:
    return "".join(normalize(text).lower().split()).rstrip("。．.!！")


def _question_tokens(question: str) -> set[str]:
    tokens = content_tokens(question)
    return {t for t in tokens if not _QUESTION_WORDS.search(t)}


def _occurrences(key: str, answer_key: str) -> list[int]:
    """Where ``answer_key`` starts in ``key``, not inside a longer number ("2" of "2007")."""
    out, at = [], key.find(answer_key)
    while at >= 0:
        end = at + len(answer_key)
        if not (at and (key[at - 1].isdigit() or (key[at - 1] in ".," and answer_key[0].isdigit()))
                ) and not (answer_key[-1].isdigit() and end < len(key) and key[end].isdigit()):
            out.append(at)
        at = key.find(answer_key, at + 1)
    return out


def cloze_sentence(answer: str, question: str, evidence: Sequence[Evidence]) -> str:
    """The evidence sentence the bare ``answer`` fills the question's gap in, or ``""``.

    Only a question that asks for a number or a date (``question_kind``, or a last word
    naming the unit: 「…出た年は」) and an answer holding a number that the question does not
    name qualify; a counter the question asks with (何年, 何名, 第何条, 「年は」) must be in the
    answer, and a question asking two values (「いつからいつまで」) needs two numbers. The
    sentence must contain the answer verbatim (NFKC, spacing aside; not inside a longer
    number), at least :data:`CLOZE_COVERAGE` of the question's content tokens (and
    :data:`CLOZE_MIN_TOKENS` of them), and no number outside the answer's own value (the
    answer may be its start: "2016年" of "2016年7月") that the question does not name.

    Any bare answer (a name, a term) also qualifies when it is, word for word, what fills a
    Japanese question's gap in an evidence sentence (``gap.gap_fillers``: the text around
    the question word runs on into the answer there).
    """
    answer_key = _key(answer)
    for filler, filled in gap_fillers(question, evidence):
        if _key(filler) == answer_key:
            return filled  # 「油田」 where the question has 「何」 (graph/verification/gap.py)
    asked_numbers = _numbers(normalize(question))
    plain_question = normalize(question)
    unit = _ASKED_UNIT.search(plain_question)
    if not _numbers(answer_key) - asked_numbers or (
            unit is None and question_kind(question) is None):
        return ""
    counters = _COUNTER.findall(plain_question) + (list(unit.group(1)) if unit else [])
    if any(counter not in answer_key for counter in counters):
        return ""
    if len(_ASKS_TWO.findall(plain_question)) > 1 and len(_numbers(answer_key)) < 2:
        return ""  # 「いつからいつまで」: one end is not the answer
    asked = _question_tokens(question)
    if len(asked) < CLOZE_MIN_TOKENS:
        return ""
    for e in evidence:
        for sentence in split_sentences(e["text"]):
            key = _key(sentence.text)
            starts = _occurrences(key, answer_key)
            if not starts:
                continue
            tokens = content_tokens(sentence.text)
            if len(asked & tokens) < CLOZE_COVERAGE * len(asked):
                continue
            for at in starts:
                end = at + len(answer_key)
                while end < len(key) and key[end] in _VALUE_TAIL:
                    end += 1  # "2016年" of "2016年7月": the rest of the same date
                if _numbers(key[:at] + " " + key[end:]) <= asked_numbers:
                    return sentence.text
    return ""
