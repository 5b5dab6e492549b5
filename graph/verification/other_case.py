"""A statement about another case than the one asked, beside one that answers it.

"What is the maximum hotel cost per night for business trips in Tokyo?" came back as
"…in Tokyo is 15,000 yen[1]. The maximum hotel cost per night for business trips in other
regions is 12,000 yen[1]." Both statements are true and cite the right sentence, so the
claim judge supports both, but the second answers a case nobody asked about, and a reader
skimming for the figure may take the wrong one. A statement that speaks of "other" cases
(other / elsewhere / except / その他 / 以外 / ほかの), while another statement of the same
answer names a word of the question that it leaves out (Tokyo, 東京), is about the rest, not
the case asked: it is dropped before verification, with an info finding, as an unrelated
statement is. A question that itself asks about other cases keeps such statements.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from grounded_rag.types import Claim
from grounded_rag.verification.evidence import key_tokens

_OTHER = re.compile(
    r"\b(?:other|others|elsewhere|outside|except|excluding|remaining|rest\s+of)\b"
    r"|その他|それ以外|以外|他の|ほかの|他地域|そのほか",
    re.I,
)


def other_case_statements(question: str, statements: Sequence[Claim]) -> list[int]:
    """Indices of statements about other cases than the question's (never all of them)."""
    if len(statements) < 2 or _OTHER.search(unicodedata.normalize("NFKC", question)):
        return []
    asked = key_tokens(question)
    tokens = [key_tokens(s["text"]) & asked for s in statements]
    others = [bool(_OTHER.search(unicodedata.normalize("NFKC", s["text"]))) for s in statements]
    out = [i for i in range(len(statements)) if others[i] and any(
        not others[j] and tokens[j] - tokens[i] for j in range(len(statements)) if j != i)]
    return out if len(out) < len(statements) else []
