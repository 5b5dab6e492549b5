"""What fills a Japanese question's gap in a source sentence the question was made from.

Reading-comprehension questions, and many a user's first questions, copy a sentence of the
source and put a question word where the answer was: 「中東は良質の優れた何が多いだけでなく、
…」 over 「中東は良質の優れた油田が多いだけでなく、…」. When the text before the question word
ends a stretch of the sentence and the text after it (its first characters at least) follows
a few characters later, what lies between is the answer, by the sentence's own words: 「油田」.
For 「どの党」 or 「どんな態度」 the noun after the question word belongs to the answer too
(「共産党と新社会党」). Numbers are left to :mod:`grounded_rag.verification.cloze` (何年,
何人), and so are English questions, whose question word moves to the front.

On JSQuAD dev (4,442 questions, each against its gold passage) the filler is found for 229
questions and equals a gold answer for 217; the others are the answer with a word of context
("南部のアイントホーフェン空港", "立前座(たてぜんざ)"). The conditions were written while
reading those; on JaQuAD dev, not read before, it is found for 4 of 612 (3 equal a gold
answer, the fourth is one with its abbreviation in brackets).
``benchmarks/screens.py --screens cloze`` counts how often it settles right and wrong answers.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from grounded_rag.types import Evidence
from grounded_rag.verification.evidence import split_sentences

__all__ = ["gap_filler", "gap_fillers", "gap_unwritten", "gap_word"]

_GAP = re.compile(r"何|なに|誰|だれ|どこ|どれ|どの|どんな|どういう")
_NOT_GAP = re.compile(
    r"など|何らか|何らの|何ごと|何事|何も|何度|何か[をがにの]|どこまで|どこでも|どこか|どれも"
    r"|どの+ような|誰も|誰か|いくつか")
"""Question-word look-alikes that ask nothing: 「など」's どの, 「何らか」, 「どこでも」."""
_END = re.compile(r"(?:でしょう|です|ます)?[かの]?[？?。\s]*$")
_SENTENCE_STOP = re.compile(r"(?<=[。？?！!])")
_COUNTER_AFTER = re.compile(r"[\u3400-\u9fff0-9A-Za-z]")
_NOUN = re.compile(r"[\u3400-\u9fff\u30a0-\u30ffA-Za-z]+")
_PARTICLE_FIRST = re.compile(r"^[のはをがにで](?=[^\u3040-\u309f])")
_DEMONSTRATIVE = re.compile(r"^(?:この|その|あの|これ|それ|あれ|ここ|そこ)")
_READING = re.compile(r"\([^()]*\)$")
_KANA_ONLY = re.compile(r"[\u3040-\u309f]+")
_BAD_FILLER = re.compile(r"[。、,.!?！？0-9]")

LEFT_MIN = 5
"""Characters of the question before the gap that must run on into the gap in the sentence."""
LEFT_SHARE = 0.4
"""...and at least this share of the text before the gap."""
RIGHT_MIN = 3
"""Characters of the question after the gap that must follow the filler in the sentence
(all of them when it has only two: 「何が」 …「が多い」)."""
FILLER_MAX = 15


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _trim(filler: str) -> str:
    """The filler without a particle before it, its quote marks, and what follows a quote."""
    filler = _PARTICLE_FIRST.sub("", filler)
    quoted = re.search(r"「([^「」]+)」", filler)
    if quoted:
        return quoted.group(1)
    if "」" in filler:
        filler = filler[:filler.index("」")]
    return filler.strip("「」『』 ")


def _gap(question: str) -> re.Match[str] | None:
    """The question's one question word, or ``None`` (none, or more than one)."""
    blocked = [m.span() for m in _NOT_GAP.finditer(question)]
    gaps = [g for g in _GAP.finditer(question)
            if not any(a <= g.start() < b for a, b in blocked)]
    return gaps[0] if len(gaps) == 1 else None


def gap_word(question: str) -> str:
    """The question word whose place the filler takes (「何」, 「どの」), or ``""``."""
    gap = _gap(_nfkc(question).strip())
    return gap.group() if gap else ""


def gap_filler(question: str, sentence: str) -> tuple[str, ...]:
    """What fills the question word's place in ``sentence``.

    ``()`` when nothing does; else the filler and, for 「どの X」/「どんな X」, the filler
    with X too (both are answers).
    """
    question, sentence = _nfkc(question).strip(), _nfkc(sentence)
    gap = _gap(question)
    if gap is None:
        return ()
    # Within the question's sentence that has the gap: a question may set a scene first.
    left = _SENTENCE_STOP.split(question[:gap.start()])[-1]
    right = _END.sub("", _SENTENCE_STOP.split(question[gap.end():])[0])
    if gap.group() == "何" and _COUNTER_AFTER.match(right):
        return ()  # 何年, 何人: a number, the cloze rule's
    if len(left) < LEFT_MIN or len(right) < 2:
        return ()
    for size in range(len(left), max(LEFT_MIN, int(LEFT_SHARE * len(left))) - 1, -1):
        start = sentence.find(left[-size:])
        if start >= 0:
            start += size
            break
    else:
        return ()
    for size in range(len(right), min(RIGHT_MIN, len(right)) - 1, -1):
        end = sentence.find(right[:size], start)
        if end >= 0:
            break
    else:
        return ()
    span = sentence[start:end]
    if len(span) > FILLER_MAX + 4 or _BAD_FILLER.search(span):
        return ()  # a clause, not a word: the question's words are spread over the sentence
    filler = _DEMONSTRATIVE.sub("", _trim(span))
    if not 1 <= len(filler) <= FILLER_MAX or _KANA_ONLY.fullmatch(filler):
        return ()  # 「ら」 of 「これら」: a word's tail, not an answer
    noun = _NOUN.match(right) if gap.group() != "何" else None
    if noun and filler + noun.group() in sentence:
        return (filler, filler + noun.group())
    return (filler,)


def gap_fillers(question: str, evidence: Sequence[Evidence]) -> list[tuple[str, str]]:
    """(filler, sentence) for every evidence sentence the question's gap is filled in.

    ``[]`` when sentences fill it differently (the question is not pinned to one).
    """
    found: list[tuple[str, str]] = []
    for e in evidence:
        for sentence in split_sentences(e["text"]):
            for filler in gap_filler(question, sentence.text):
                found.append((filler, sentence.text))
    if len({f for f, _ in found if not any(f != g and g.startswith(f) for g, _ in found)}) > 1:
        return []
    return found


def gap_unwritten(texts: Sequence[str], found: Sequence[tuple[str, str]]) -> str:
    """The word that fills the question's gap when no text writes it, else ``""``.

    ``found`` is :func:`gap_fillers`' result for the question and its evidence.

    A text writes it when it holds three characters of it in one piece (all of a shorter
    one; a reading in brackets aside), or is itself a part of it (「農業」 of 「稲作を基盤と
    する農業」, 「主任行政官」 of 「平和維持軍司令部の主任行政官」). An answer to 「…何にもとづく
    不当な攻撃を受けていた？」 that does not say 「反ユダヤ主義」, which the source sentence says in
    the gap's place, answers something else, however true its statements are.
    """
    fillers = {filler for filler, _ in found}
    if not fillers:
        return ""
    written = [_nfkc(t).strip().rstrip("。.") for t in texts]
    for filler in fillers:
        core = _READING.sub("", filler)  # 「立前座」 of 「立前座(たてぜんざ)」
        need = min(len(core), 3)
        if any(core[i:i + need] in t for t in written for i in range(len(core) - need + 1)):
            return ""
        if any(t and t in filler for t in written):  # 「農業」 of 「稲作を基盤とする農業」
            return ""
    return max(fillers, key=len)
