"""Statements must follow the question's language, whatever the language of their sources."""

from __future__ import annotations

import re
import unicodedata

from grounded_rag.prompts import addresses as texts
from grounded_rag.retrieval.text_analysis import JA_RUN, is_japanese_text
from grounded_rag.types import Claim, Finding


def wrong_language(text: str, language: str) -> bool:
    """Whether a statement is written in another language than ``language`` (``ja``/``en``).

    A Japanese statement may name things in Latin letters (X100, USB-C) and an English one may
    quote a Japanese term: only a statement mostly in the other script counts. A statement in
    Chinese (:func:`reads_as_chinese`) is in neither language.
    """
    if sum(ch.isalpha() for ch in text) < 4:
        return False
    if language == "ja":
        return not is_japanese_text(text, share=0.2) or reads_as_chinese(text)
    return is_japanese_text(text, share=0.5)


# Simplified characters that Japanese never writes (its forms: 這 們 時 対 発 現 問 題 ...).
_SIMPLIFIED = frozenset("这们么说时对发现问题过还进经动实见长门间关东车马鸟鱼书买卖气电话语认记笔该"
                        "给让请谢应习历个为从业开无网术产种简")
_HIRAGANA = re.compile(r"[\u3041-\u309f]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# 是 as a copula and 的 joining two nouns, outside Japanese words that hold them (是非, 目的)
_CHINESE_GRAMMAR = re.compile(
    r"(?<![如国])是(?![非正認々])|(?<![目標端])的(?=[\u3400-\u4dbf\u4e00-\u9fff\u30a0-\u30ff])")


def reads_as_chinese(text: str) -> bool:
    """True when a statement in Han characters reads as Chinese, not Japanese.

    The small local model drifts into Chinese: a simplified character Japanese never writes
    (「一般的な笔记本の全充電」), or a statement with no kana particle at all held together by
    是 and 的 (「交響曲『祖国』的作曲者是ジョゼ・ヴィアナ・ダ・モッタ」). Terms in brackets or
    quotes are left out. A bare Japanese noun phrase (「国際連合ナミビア独立支援グループ」,
    「1977年」) has neither.
    """
    bare = _ENCLOSED.sub(" ", unicodedata.normalize("NFKC", text))
    if any(ch in _SIMPLIFIED for ch in bare):
        return True
    if _HIRAGANA.search(bare) or len(_HAN.findall(bare)) < 4:
        return False
    return len(_CHINESE_GRAMMAR.findall(bare)) >= 2


# What may hold a Japanese term in an English statement: brackets and quotation marks.
_ENCLOSED = re.compile(r"\([^()]*\)|（[^（）]*）|「[^「」]*」|『[^『』]*』|\"[^\"]*\"|“[^”]*”")


def untranslated(text: str) -> list[str]:
    """Japanese words left in an English statement ("theカラフトマス", "IUPAC naming法").

    A run of kana / kanji counts when it stands in the sentence's own words: not a term
    given in brackets or quotes beside its English ("pink salmon (カラフトマス)"), and not one
    letter inside a code ("13-ユ-30"): a single character counts only when it is glued to a
    Latin letter. A statement mostly in Japanese is :func:`wrong_language`'s case.
    """
    bare = _ENCLOSED.sub(" ", text)
    out = []
    for m in JA_RUN.finditer(bare):
        before = bare[m.start() - 1] if m.start() else " "
        after = bare[m.end()] if m.end() < len(bare) else " "
        glued = before.isascii() and before.isalpha() or after.isascii() and after.isalpha()
        if len(m.group()) >= 2 or glued:
            out.append(m.group())
    return out


def language_findings(statements: list[Claim], language: str) -> list[Finding]:
    """An ``answer_language`` finding (major) per statement not in the answer's language.

    In an English answer, a statement that leaves Japanese words untranslated
    (:func:`untranslated`) gets one too: the revision is asked to write them in English.
    """
    lang = "ja" if language == "ja" else "en"
    findings: list[Finding] = []
    for i, st in enumerate(statements):
        if lang == "ja" and _source_term(st):
            continue
        if wrong_language(st["text"], lang):
            detail = texts.WRONG_LANGUAGE[lang].format(text=st["text"])
        elif lang == "en" and (words := untranslated(st["text"])):
            detail = texts.UNTRANSLATED.format(text=st["text"], words=", ".join(words))
        else:
            continue
        findings.append({"type": "answer_language", "severity": "major", "claim_index": i,
                         "detail": detail})
    return findings


_TERM = re.compile(r"[A-Za-z0-9][A-Za-z0-9 .&'-]{0,38}[A-Za-z0-9.]?")


def _source_term(statement: Claim) -> bool:
    """A bare name in Latin letters that its cited Japanese quote writes so ("UNTAG", "JCP").

    The answer to 「国際連合ナミビア独立支援グループの略称は」 is the source's own spelling; there
    is no Japanese to rewrite it in.
    """
    text = unicodedata.normalize("NFKC", statement["text"]).strip().rstrip("。.")
    if not _TERM.fullmatch(text):
        return False
    return any(text in unicodedata.normalize("NFKC", c.get("quote", ""))
               and is_japanese_text(c.get("quote", ""), share=0.2)
               for c in statement.get("citations", []))
