"""Statements must follow the question's language, whatever the language of their sources."""

from __future__ import annotations

import re

from grounded_rag.prompts import addresses as texts
from grounded_rag.types import Claim, Finding

_JA = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")


def japanese_share(text: str) -> float:
    """Share of kana and kanji among the letters of ``text`` (0 when it has no letters)."""
    ja = len(_JA.findall(text))
    latin = len(_LATIN.findall(text))
    return ja / (ja + latin) if ja + latin else 0.0


def wrong_language(text: str, language: str) -> bool:
    """Whether a statement is written in another language than ``language`` (``ja``/``en``).

    A Japanese statement may name things in Latin letters (X100, USB-C) and an English one may
    quote a Japanese term: only a statement mostly in the other script counts.
    """
    letters = len(_JA.findall(text)) + len(_LATIN.findall(text))
    if letters < 4:
        return False
    share = japanese_share(text)
    return share < 0.2 if language == "ja" else share > 0.5


def language_findings(statements: list[Claim], language: str) -> list[Finding]:
    """An ``answer_language`` finding (major) per statement not in the answer's language."""
    lang = "ja" if language == "ja" else "en"
    return [
        {"type": "answer_language", "severity": "major", "claim_index": i,
         "detail": texts.WRONG_LANGUAGE[lang].format(text=st["text"])}
        for i, st in enumerate(statements) if wrong_language(st["text"], lang)
    ]
