"""Statements must follow the question's language, whatever the language of their sources."""

from __future__ import annotations

from grounded_rag.prompts import addresses as texts
from grounded_rag.retrieval.text_analysis import is_japanese_text
from grounded_rag.types import Claim, Finding


def wrong_language(text: str, language: str) -> bool:
    """Whether a statement is written in another language than ``language`` (``ja``/``en``).

    A Japanese statement may name things in Latin letters (X100, USB-C) and an English one may
    quote a Japanese term: only a statement mostly in the other script counts.
    """
    if sum(ch.isalpha() for ch in text) < 4:
        return False
    if language == "ja":
        return not is_japanese_text(text, share=0.2)
    return is_japanese_text(text, share=0.5)


def language_findings(statements: list[Claim], language: str) -> list[Finding]:
    """An ``answer_language`` finding (major) per statement not in the answer's language."""
    lang = "ja" if language == "ja" else "en"
    return [
        {"type": "answer_language", "severity": "major", "claim_index": i,
         "detail": texts.WRONG_LANGUAGE[lang].format(text=st["text"])}
        for i, st in enumerate(statements) if wrong_language(st["text"], lang)
    ]
