"""Deterministic citation checks: phantom source ids, quote drift, quotes from the wrong source."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from rapidfuzz import fuzz

from grounded_rag.types import Citation, Claim, Evidence, Finding
from grounded_rag.verification.handles import is_sentence_handle

_QUOTE_TRIM = " \t\n\"'“”‘’「」『』…."
_PUNCT_FOLD = str.maketrans({"，": ",", "、": ",", "。": ".", "．": ".", "：": ":", "；": ";",
                             "（": "(", "）": ")", "“": '"', "”": '"', "’": "'", "‘": "'",
                             "－": "-", "―": "-", "—": "-", "–": "-", "〜": "~", "～": "~"})


@dataclass(frozen=True)
class Located:
    """Where a quote was found in a text."""

    start: int
    """Start offset in the original text (-1 when not found)."""
    end: int
    """End offset (exclusive) in the original text (-1 when not found)."""
    similarity: float
    """1.0 verbatim, slightly below 1 when equal after normalising, lower when fuzzy."""


NOT_FOUND = Located(-1, -1, 0.0)


def _normalise(text: str) -> tuple[str, list[int]]:
    """NFKC, fold punctuation and case, drop white space; keep a map to original offsets."""
    chars: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        folded = unicodedata.normalize("NFKC", ch).translate(_PUNCT_FOLD).casefold()
        for out in folded:
            if out.isspace():
                continue
            chars.append(out)
            index.append(i)
    return "".join(chars), index


def locate_quote(quote: str, text: str) -> Located:
    """Find ``quote`` in ``text``: verbatim first, then normalised, then fuzzy."""
    quote = quote.strip(_QUOTE_TRIM) or quote.strip()
    if not quote or not text:
        return NOT_FOUND
    pos = text.find(quote)
    if pos >= 0:
        return Located(pos, pos + len(quote), 1.0)
    norm_quote, _ = _normalise(quote)
    norm_text, index = _normalise(text)
    if not norm_quote or not norm_text:
        return NOT_FOUND
    pos = norm_text.find(norm_quote)
    if pos >= 0:
        return Located(index[pos], index[pos + len(norm_quote) - 1] + 1, 0.99)
    align = fuzz.partial_ratio_alignment(norm_quote, norm_text)
    if align is None or align.dest_end <= align.dest_start:
        return NOT_FOUND
    similarity = round(align.score / 100.0, 4)
    # Penalise a quote much longer than what matched (partial_ratio favours the short side).
    coverage = min(1.0, (align.dest_end - align.dest_start) / max(1, len(norm_quote)))
    similarity = round(similarity * coverage, 4)
    return Located(index[align.dest_start], index[align.dest_end - 1] + 1, similarity)


def check_citations(
    statements: list[Claim], evidence: list[Evidence], *, threshold: float
) -> tuple[list[Claim], list[Finding]]:
    """Locate every quote in its cited source and report what does not hold.

    A citation whose offsets already point at its quote (one copied from a sentence handle)
    is kept as an exact match; any other quote (review edits, answers verified from outside)
    is located verbatim, then normalised, then fuzzy.

    Returns the statements with citation offsets filled in, and findings whose
    ``claim_index`` is the statement index.
    """
    by_id = {item["source_id"]: item for item in evidence}
    findings: list[Finding] = []
    checked: list[Claim] = []
    for s_index, statement in enumerate(statements):
        citations: list[Citation] = []
        if not statement.get("citations"):
            findings.append(
                {"type": "uncited_statement", "severity": "major", "claim_index": s_index,
                 "detail": f'"{statement["text"]}" cites no source.'}
            )
        for cite in statement.get("citations", []):
            source_id, quote = cite["source_id"].strip(), cite["quote"]
            source = by_id.get(source_id)
            if source is None:
                if is_sentence_handle(source_id):
                    detail = (f"Cited sentence {source_id!r} is not among the numbered "
                              "sentences shown.")
                else:
                    elsewhere = _best_other(quote, evidence, exclude=None, threshold=threshold)
                    hint = f" The quote appears in {elsewhere[0]}." if elsewhere else ""
                    detail = (f"Cited source id {source_id!r} is not among the retrieved "
                              f"sources.{hint}")
                findings.append({"type": "phantom_source", "severity": "critical",
                                 "claim_index": s_index, "detail": detail})
                citations.append({"source_id": source_id, "quote": quote, "start": -1, "end": -1,
                                  "match": 0.0})
                continue
            start, end = cite.get("start", -1), cite.get("end", -1)
            if quote and 0 <= start < end and source["text"][start:end] == quote:
                # Copied from the chunk (a sentence handle): verbatim by construction.
                citations.append({"source_id": source_id, "quote": quote, "start": start,
                                  "end": end, "match": 1.0})
                continue
            found = locate_quote(quote, source["text"])
            if found.similarity >= threshold:
                if found.similarity < 0.99:
                    findings.append(
                        {"type": "quote_drift", "severity": "minor", "claim_index": s_index,
                         "detail": f"Quote differs slightly from {source_id} "
                         f"(similarity {found.similarity:.2f}); offsets point at the closest span."}
                    )
                citations.append({"source_id": source_id, "quote": quote, "start": found.start,
                                  "end": found.end, "match": found.similarity})
                continue
            elsewhere = _best_other(quote, evidence, exclude=source_id, threshold=threshold)
            if elsewhere:
                other_id, other = elsewhere
                findings.append(
                    {"type": "quote_in_other_source", "severity": "major", "claim_index": s_index,
                     "detail": f"Quote is not in {source_id} but in {other_id} "
                     f"(similarity {other.similarity:.2f})."}
                )
            else:
                findings.append(
                    {"type": "quote_not_found", "severity": "major", "claim_index": s_index,
                     "detail": f'Quote "{quote[:80]}" was not found in {source_id} '
                     f"(best similarity {found.similarity:.2f})."}
                )
            citations.append({"source_id": source_id, "quote": quote, "start": -1, "end": -1,
                              "match": found.similarity})
        checked.append({**statement, "citations": citations})
    return checked, findings


def _best_other(
    quote: str, evidence: list[Evidence], *, exclude: str | None, threshold: float
) -> tuple[str, Located] | None:
    best: tuple[str, Located] | None = None
    for item in evidence:
        if item["source_id"] == exclude:
            continue
        found = locate_quote(quote, item["text"])
        better = best is None or found.similarity > best[1].similarity
        if found.similarity >= threshold and better:
            best = (item["source_id"], found)
    return best
