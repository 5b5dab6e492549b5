"""Reader-facing text of the verification modes: unchecked and pending claims, late warnings."""

from __future__ import annotations

UNCHECKED_REASON = {
    "en": "Not verified: sampled verification checks every claim with a number, date, "
          "negation or name, and a share of the others.",
    "ja": "未検証: 抽出検証では数値・日付・否定・固有名詞を含む主張と、"
          "その他の一部だけを検証します。",
}
"""Reason given to a claim that ``verify_mode="sampled"`` left unchecked."""

PENDING_REASON = {
    "en": "Being verified after the answer was returned.",
    "ja": "回答を返した後に検証中です。",
}
"""Reason given to a claim while its deferred verification runs."""

LATE_VERDICT = {
    "en": {"contradicted": "is contradicted by the sources",
           "neutral": "is not stated in the sources"},
    "ja": {"contradicted": "資料と矛盾しています", "neutral": "資料に記載がありません"},
}
LATE_WARNING = {
    "en": 'Checked after the answer was given: "{claim}" {verdict}.{reason}',
    "ja": "回答後の検証で、「{claim}」は{verdict}。{reason}",
}
"""A warning for a claim that a deferred verification found contradicted or unsupported."""


def late_warning(claim: str, verdict: str, reason: str, language: str) -> str:
    """The warning for one claim, in the answer's language."""
    lang = "ja" if language == "ja" else "en"
    phrase = LATE_VERDICT[lang].get(verdict, LATE_VERDICT[lang]["neutral"])
    suffix = f" {reason.strip()}" if reason.strip() else ""
    return LATE_WARNING[lang].format(claim=claim, verdict=phrase, reason=suffix)

