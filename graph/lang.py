"""Language detection and sentence/clause splitting for Japanese and English."""

from __future__ import annotations

import re
from typing import Literal

_JA_CHARS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_SENTENCE_JA = re.compile(r"(?<=[。！？!?])\s*|\n+")
_SENTENCE_EN = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n+")
_CITATION_MARK = re.compile(r"\s*\[\d+(?:[,\s]*\d+)*\]")


def detect_language(text: str) -> Literal["ja", "en"]:
    """Return ``ja`` when the text is mostly Japanese script, else ``en``."""
    if not text:
        return "en"
    if _KANA.search(text):
        return "ja"
    letters = sum(ch.isalpha() for ch in text) or 1
    return "ja" if len(_JA_CHARS.findall(text)) / letters > 0.3 else "en"


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """Split text into sentences (Japanese on 。！？ and newlines, English on . ! ?)."""
    language = language or detect_language(text)
    pattern = _SENTENCE_JA if language == "ja" else _SENTENCE_EN
    return [part.strip() for part in pattern.split(text) if part and part.strip()]


def strip_markers(text: str) -> str:
    """Remove ``[n]`` citation markers from text."""
    return _CITATION_MARK.sub("", text).strip()
