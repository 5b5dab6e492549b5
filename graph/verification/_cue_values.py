"""Value cue helpers: a listed value's own clause, and values read in the claim's language."""

from __future__ import annotations

import re

from grounded_rag.verification.evidence import content_tokens, overlap
from grounded_rag.verification.values import (
    DateValue,
    Quantity,
    strip_numbers,
    unit_name,
    written_number,
)
from grounded_rag.verification.xlang import CrossContext

# Clause breaks for a listed value: 、 ， ; , (not a thousands separator), and the topic
# particle は after a noun, which sets the subject apart from what is said of it.
_CLAUSE_SPLIT = re.compile(r"[、，;；]|,(?!\d)|(?<=[\u3400-\u9fff\u30a0-\u30ff])は")


def _clause_context(
    claim: str, value: str, sentence_tokens: list[set[str]], cross: CrossContext | None = None
) -> list[float]:
    """Context of each sentence as seen from the claim clause that holds ``value``.

    ``sentence_tokens`` are the sentences' content tokens with numbers removed; ``cross``
    judges the sentences in the other language by the clause's concepts.
    """
    clause = next((c for c in _CLAUSE_SPLIT.split(claim) if value in c), claim)
    tokens = content_tokens(strip_numbers(clause)) or content_tokens(strip_numbers(claim))
    context = [overlap(tokens, sentence) for sentence in sentence_tokens]
    return cross.widen(clause, context) if cross else context


def _gloss(q: Quantity, language: str, cross: CrossContext | None, sentence: int) -> str:
    """``q``'s text, read out in the claim's language when it comes from the other one.

    45万円 becomes "45万円 (450,000 yen)", so that the reason names both values comparably.
    """
    if cross is None or not cross.crossing[sentence]:
        return q.text
    return glossed(q, language)


def glossed(q: Quantity, language: str) -> str:
    """``q``'s text with its reading in ``language`` beside it when they differ."""
    unit = unit_name(q, language)
    sep = "" if language == "ja" or unit in ("", "%") else " "
    reading = f"{written_number(q)}{sep}{unit}"
    same = re.sub(r"[\s,]", "", reading) == re.sub(r"[\s,]", "", q.text)
    return q.text if same else f"{q.text} ({reading})"


def _iso(d: DateValue) -> str:
    """A date as YYYY-MM-DD, with the parts it lacks left out."""
    parts = [f"{d.year:04d}" if d.year else "", f"{d.month:02d}" if d.month else "",
             f"{d.day:02d}" if d.day else ""]
    return "-".join(p for p in parts if p)
