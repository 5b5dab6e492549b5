"""Does the answer answer? Deterministic checks of each statement against the question.

A statement is *off the question* when it only restates a heading of the evidence or the
question itself (``第7条（解除）。`` for "how much notice is needed to terminate?"), or when the
answer as a whole lacks the kind of thing the question asks for: a number for "how much /
how many / いくら / 何日 / 何人", a date for "when / いつ". Each such statement gets an
``off_question`` finding (severity ``major``) whose detail tells the generator what to fix.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Literal

from grounded_rag.prompts import feedback as texts
from grounded_rag.types import Claim, Evidence, Finding
from grounded_rag.verification.evidence import STOP_WORDS, split_sentences, stem

Kind = Literal["number", "date"]

_NUMBER_Q = re.compile(
    r"\bhow\s+(?:much|many|long|far|old|often|big|large|heavy|high|tall|wide|fast)\b"
    r"|\bwhat\s+(?:percentage|percent|amount|number|size|price|fee|rate)\b"
    r"|いくら|いくつ|何(?:日|人|時間|時|円|回|歳|件|年|分|割|台|個|本|枚|週|名|度|倍|%|％|パーセント"
    r"|ヶ月|か月|カ月|ヵ月|キロ|メートル|ドル)"
    r"|どのくらい|どれくらい|どれほど|どの程度|どれだけ",
    re.I,
)
_DATE_Q = re.compile(
    r"\bwhen\b|\bwhat\s+(?:date|day|year|month|time)\b|\bby\s+what\s+date\b"
    r"|いつ|何月|何日|何年|何曜",
    re.I,
)
_DURATION_Q = re.compile(r"何(?:日|週|年|ヶ月|か月|カ月|ヵ月)(?:前|以内|間|後)")
_WH = re.compile(
    r"\b(?:what|when|where|who|whom|whose|which|why|how)\b"
    r"|何|なに|なん|いつ|どこ|誰|だれ|どなた|いくら|いくつ|どの|どう|なぜ|どれ",
    re.I,
)
_CHOICE = re.compile(r"\bor\b|どちら|どっち|それとも", re.I)

_DIGIT = re.compile(r"\d")
_NUMBER_WORD = re.compile(
    r"[一二三四五六七八九十百千万億半]"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|half|once|twice|dozen|single|double)\b",
    re.I,
)
_DATE_WORD = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
    r"|\b(?:today|tomorrow|yesterday|daily|weekly|monthly|yearly|annually|immediately)\b"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|令和|平成|昭和|元年|毎月|毎年|毎週|毎日|翌月|翌日|翌年|前日|月末|年末|年度末|月初|当日|即日"
    r"|[一二三四五六七八九十]+[年月日]|[月火水木金土日]曜",
    re.I,
)
# Numbering of a heading ("第7条", "Article 7") is not the number a question asks for.
_NUMBERING = re.compile(
    r"第\s*[0-9一二三四五六七八九十百]+\s*[条章節項号款]"
    r"|\b(?:article|section|chapter|clause|item|§)\s*\d+(?:\.\d+)*",
    re.I,
)
_LATIN = re.compile(r"[a-z][a-z'\-]*|\d+(?:[.,:/]\d+)*")
_KANJI_KATAKANA = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u30a0-\u30ff\u30fc]+")
_BULLET = re.compile(r"^\s*(?:[-*+•・]|\d+[.)])\s")
_SENTENCE_PUNCT = re.compile(r"[。．.!?！？、,:：；;]")


def question_kind(question: str) -> Kind | None:
    """The kind of thing the question asks for: ``number``, ``date``, or None (anything)."""
    text = unicodedata.normalize("NFKC", question)
    if _DURATION_Q.search(text):
        return "number"
    if _DATE_Q.search(text) and not _NUMBER_Q.search(text.replace("何日", "")):
        return "date"
    if _NUMBER_Q.search(text):
        return "number"
    return None


def has_kind(text: str, kind: Kind) -> bool:
    """True when ``text`` gives a number (or a date) other than a heading's numbering."""
    text = _NUMBERING.sub(" ", unicodedata.normalize("NFKC", text))
    if _DIGIT.search(text):
        return True
    if kind == "number":
        return bool(_NUMBER_WORD.search(text))
    return bool(_DATE_WORD.search(text))


def key_tokens(text: str) -> set[str]:
    """Content tokens of a text, for "does it say anything new" comparisons.

    English words (stemmed, no function words), numbers, and kanji / katakana bigrams
    (single characters when alone); particles and endings drop out.
    """
    norm = unicodedata.normalize("NFKC", text).lower()
    tokens = {stem(w) if not w[0].isdigit() else w
              for w in _LATIN.findall(norm) if w not in STOP_WORDS}
    for run in _KANJI_KATAKANA.findall(norm):
        if len(run) == 1:
            tokens.add(run)
        tokens.update(run[i:i + 2] for i in range(len(run) - 1))
    return tokens


def headings(evidence: Sequence[Evidence]) -> list[str]:
    """Heading-like texts of the evidence: title parts and heading lines of the chunks."""
    out: list[str] = []
    for item in evidence:
        out.extend(part for part in item.get("title", "").split(" > ") if part.strip())
        out.extend(item.get("section", "").split(" > ") if item.get("section") else [])
        for line in item["text"].splitlines():
            line = line.strip()
            if not line or _BULLET.match(line):
                continue
            if line.startswith("#"):
                out.append(line.lstrip("#").strip())
            elif _NUMBERING.match(line) or (len(line) <= 25 and not _DIGIT.search(line)
                                            and not _SENTENCE_PUNCT.search(line)):
                out.append(line)
            first = split_sentences(line)
            if first and _NUMBERING.match(first[0].text) and len(first[0].text) <= 25:
                out.append(first[0].text)
    return out


def off_question_findings(
    question: str,
    statements: Sequence[Claim],
    evidence: Sequence[Evidence],
    language: str,
) -> list[Finding]:
    """``off_question`` findings (major) for the statements that do not answer ``question``.

    - A statement whose content tokens all come from one heading of the evidence (and, for a
      question that asks for a thing, add no word to the question's), or all come from the
      question, only restates it (checked for questions with a question word; a yes/no or
      either/or question may be answered in its own words).
    - When the question asks for a number or a date and no statement gives one, every
      statement lacks it.

    ``claim_index`` is the statement index, as for the citation findings.
    """
    lang = "ja" if language == "ja" else "en"
    findings: list[Finding] = []
    if not question.strip() or not statements:
        return findings
    kind = question_kind(question)
    missing = kind is not None and not any(has_kind(s["text"], kind) for s in statements)
    # A yes/no or either/or question may well be answered by repeating its own words.
    restating = bool(_WH.search(question)) and not _CHOICE.search(question)
    heading_tokens = [t for t in (key_tokens(h) for h in headings(evidence)) if t]
    question_tokens = key_tokens(question)
    for index, statement in enumerate(statements):
        tokens = key_tokens(statement["text"]) if restating else set()
        # What the statement adds to the question, beyond numbering and single characters
        # (第7条): for a question that asks for a thing rather than a number or a date, an
        # entity named in a heading ("オーガスタ" from the article titled "オーガスタ (メイン
        # 州)", for "メイン州の州都はどこですか") is an answer, not a restated heading.
        adds = {t for t in tokens - question_tokens if len(t) > 1 and not t[0].isdigit()
                } if kind is None else set()
        reason = ""
        if tokens and not adds and any(tokens <= h for h in heading_tokens):
            reason = texts.OFF_QUESTION_REASONS[lang]["heading"]
        elif tokens and tokens <= question_tokens:
            reason = texts.OFF_QUESTION_REASONS[lang]["question"]
        elif missing and kind is not None:
            reason = texts.OFF_QUESTION_REASONS[lang][kind]
        if not reason:
            continue
        findings.append({
            "type": "off_question", "severity": "major", "claim_index": index,
            "detail": texts.OFF_QUESTION[lang].format(
                text=statement["text"], reason=reason,
                kind=texts.OFF_QUESTION_KINDS[lang][kind or "answer"]),
        })
    return findings
