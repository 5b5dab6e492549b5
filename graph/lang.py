"""Language detection and sentence/clause splitting for Japanese and English."""

from __future__ import annotations

import re
from typing import Literal

from grounded_rag.verification.evidence import split_sentences as split_with_offsets

_JA_CHARS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_HIRAGANA = re.compile(r"[\u3040-\u309f]")
# "[2]", "[1, 3]" and the generator's source handles "[S2]", "【S1, S3】".
_CITATION_MARK = re.compile(r"\s*[\[【][Ss]?\d+(?:[,、\s]*[Ss]?\d+)*[\]】]")


def detect_language(text: str) -> Literal["ja", "en"]:
    """Return ``ja`` when the text is mostly Japanese script, else ``en``.

    Hiragana (particles, inflections) marks Japanese at once; katakana alone does not, so an
    English question quoting a code or a name written in katakana ("What, like 13-ユ-30**45,
    is given to licensed operators?") stays English unless Japanese script is 30% of it.
    """
    if not text:
        return "en"
    if _HIRAGANA.search(text):
        return "ja"
    letters = sum(ch.isalpha() for ch in text) or 1
    return "ja" if len(_JA_CHARS.findall(text)) / letters > 0.3 else "en"


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """Split text into sentences (Japanese on 。！？, English on . ! ?, and newlines).

    One splitter serves the whole package: this returns the texts of
    ``grounded_rag.verification.evidence.split_sentences`` (which also keeps offsets and
    knows English abbreviations). ``language`` is accepted for callers that know it; the
    splitter handles mixed text either way.
    """
    return [s.text for s in split_with_offsets(text)]


def strip_markers(text: str) -> str:
    """Remove ``[n]`` citation markers and ``[Sn]`` source handles from text."""
    return _CITATION_MARK.sub("", text).strip()
