"""Whether a price includes tax, excludes it, or has none: compared across languages.

「月額45万円（税別）」 is a fee *before* tax; an answer that calls it "450,000 yen (tax-free)"
states a different fact, with the right number. The value cues compare numbers and dates;
this compares the tax status a claim and its evidence give, in Japanese (税別 / 税抜 / 外税,
税込 / 内税, 非課税 / 免税) and English ("excluding tax", "plus tax", "including tax", "tax
included", "tax-free", "tax-exempt"). Three classes: ``excluded``, ``included``,
``exempt``. A claim whose class is none of those the matching evidence sentence gives is
contradicted (``cues.check_claim`` reports it as ``tax_mismatch``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_TAX = r"(?:(?:consumption|sales)\s+)?(?:tax|taxes|vat|gst)"
_CLASSES: dict[str, re.Pattern[str]] = {
    "excluded": re.compile(
        r"税別|税抜|外税|別途(?:消費)?税|消費税(?:等)?(?:は)?別"
        rf"|\b(?:excluding|excl\.?|exclusive\s+of|before|plus|not\s+including)\s+{_TAX}\b"
        rf"|\b{_TAX}\s+(?:excluded|not\s+included|extra)\b|\bpre-tax\b|\+\s*{_TAX}\b",
        re.I),
    "included": re.compile(
        r"税込|内税|消費税(?:等)?(?:込|を含)"
        rf"|\b(?:including|incl\.?|inclusive\s+of)\s+{_TAX}\b"
        rf"|\b{_TAX}[-\s](?:included|inclusive)\b",
        re.I),
    "exempt": re.compile(
        r"非課税|免税|不課税"
        rf"|\b{_TAX}[-\s](?:free|exempt)\b|\b(?:exempt|free)\s+(?:from|of)\s+{_TAX}\b"
        r"|\bnon-?taxable\b|\buntaxed\b",
        re.I),
}


GLOSS = {"excluded": "excluding tax", "included": "including tax", "exempt": "tax-exempt"}
"""English words for each class (to gloss Japanese evidence for an English claim)."""


def tax_classes(text: str) -> dict[str, str]:
    """The tax classes ``text`` states, each with the words that state it (first found)."""
    norm = unicodedata.normalize("NFKC", text)
    out: dict[str, str] = {}
    for name, pattern in _CLASSES.items():
        m = pattern.search(norm)
        if m:
            out[name] = m.group(0)
    return out


def tax_mismatch(claim: str, sentences: Sequence[str],
                 context: Sequence[float]) -> tuple[int, str, str, str] | None:
    """Where the claim's tax status disagrees with the evidence's, else None.

    Returns (sentence index, the claim's words, the evidence's words, the evidence's class).
    The evidence sentence is the best-matching one (``context``, the same wording score the
    value cues use, > 0) among those that state a tax class; None when the claim states
    none, no such sentence matches, or the classes agree.
    """
    said = tax_classes(claim)
    if not said:
        return None
    stated = [(context[i], i, tax_classes(s)) for i, s in enumerate(sentences)]
    stated = [t for t in stated if t[2] and t[0] > 0]
    if not stated:
        return None
    _, best, classes = max(stated, key=lambda t: t[0])
    if set(said) & set(classes):
        return None
    name, words = next(iter(classes.items()))
    return best, next(iter(said.values())), words, name
