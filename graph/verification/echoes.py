"""Statements that repeat the checker's own feedback instead of saying what a source says.

A revision prompt quotes why the last draft failed ("The evidence does not mention: …",
"The evidence says otherwise: …", ' The source says: "…"'). A held-out cross-language
revision wrote those back as its answer, "The evidence does not mention: definition,
broadcasting, …" and "The source says: 'It covers a 94.2 km² suburban … Adelaide …'" (a
passage about somewhere else, quoted in a reason), and the judge found the second one
supported against the Japanese passage it cited. Such a statement reports the check, not the
sources; it answers nothing.

The openings are taken from the reason and feedback templates themselves
(``prompts.local_verify``, ``prompts.feedback``, the cue messages), so a new wording there
is recognised without a list to keep in step. Only the opening of a statement counts.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from grounded_rag.prompts import feedback, local_verify
from grounded_rag.verification._cue_messages import MESSAGES

_MIN_OPENING = {"en": 20, "ja": 8}
"""Openings shorter than this, unless they end in a colon, say too little to tell a report
from an answer ("The evidence says …", 「根拠には…」)."""
_MARKER = re.compile(r"(?:\[\d+\])+")


def _openings() -> list[str]:
    templates = [local_verify.REASON_UNSUPPORTED_EN, local_verify.REASON_UNSUPPORTED_JA,
                 local_verify.REASON_CONTRADICTED_EN, local_verify.REASON_CONTRADICTED_JA,
                 *feedback.EVIDENCE_SUFFIX.values()]
    templates += [t for by_kind in MESSAGES.values() for t in by_kind.values()]
    out = set()
    for template in templates:
        opening = unicodedata.normalize("NFKC", template.split("{", 1)[0]).strip()
        opening = opening.rstrip("「“\"'(（ ")
        least = _MIN_OPENING["en" if opening.isascii() else "ja"]
        if opening.endswith((":", "：")) or len(opening) >= least:
            out.add(opening.lower())
    return sorted(out, key=len, reverse=True)


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern[str]:
    return re.compile("|".join(re.escape(o) for o in _openings()))


def echoes_feedback(text: str) -> bool:
    """Whether a statement opens with the wording of a check's reason or feedback."""
    body = unicodedata.normalize("NFKC", _MARKER.sub("", text)).strip().lower()
    return bool(_pattern().match(body))
