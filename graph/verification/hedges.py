"""Claims that assert what the evidence only says might be so (Japanese).

"男性が女性を蹴ったかもしれない" does not support "男性が女性を蹴った", nor does
"もし…場合、子供が走っている", "A か、B" or "…と言われている". When a claim repeats a
clause of an evidence sentence word for word and that sentence wraps the clause in a
hedge (かもしれない, らしい, 可能性がある, おそらく, だろう, ...), a report (と言われている,
という疑いがある, ...), makes it the condition (…場合, …ならば, …でなければ) or one side of a
disjunction (…か、…), the claim is not supported: the cascade decides it *neutral* before
any model call.

Narrow on purpose: only verbatim clauses, so a paraphrase is left to the judge, and only
markers that leave the clause undetermined; factive ones (明らかに, ことがわかった,
確実だ) are not in the lists. ``benchmarks/screens.py --screens cues`` prints how often it fires
per set and gold label: on the dev splits, 1,249 of JaNLI's 6,840 non-entailed pairs and
none of the 6,840 entailed ones, nor any supported claim of JNLI, JSICK or JHARS.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_AFTER = re.compile(
    r"^(?:の?かもしれ(?:ない|ません)|らしい|可能性が(?:ある|あります|高い)"
    r"|と(?:言|い)われて(?:いる|います)|という疑いが(?:ある|あります)"
    r"|と信じられて(?:いる|います)|と思われ(?:る|ます)|ようだ|ようです|そうだ|そうです"
    r"|だろう|でしょう|はずだ|はずです|か[、,]|場合|なら|ならば|のでなければ|でなければ)"
)
"""Right after the clause: a hedge, a report, a condition or the first of two options."""
_BEFORE = re.compile(
    r"(?:もしかしたら|もしかすると|ひょっとしたら|ひょっとすると|おそらく|恐らく|たぶん|多分"
    r"|か[、,](?:もしくは[、,]|または[、,])?)\s*$"
)
"""Right before the clause: a hedging adverb or a disjunction. Not the end of a condition:
"解除する場合、30日前までに通知が必要です" does support "30日前までに通知が必要です" as an
answer to a question about cancelling (the answer loop's claims do not carry the question),
so a condition only counts when the clause itself is the condition (場合, なら after it) or
the consequent is hedged (だろう, はずだ)."""
_END = re.compile(r"[。．.！!？?\s]+$")
_MIN_CHARS = 6


def hedged_clause(claim: str, sentences: Sequence[str]) -> tuple[str, str] | None:
    """The evidence sentence that holds ``claim`` only under a hedge, and the hedge.

    None when no sentence holds the claim word for word, or one holds it plainly.
    """
    clause = _END.sub("", claim.strip())
    if len(clause) < _MIN_CHARS:
        return None
    found: tuple[str, str] | None = None
    for sentence in sentences:
        start = sentence.find(clause)
        if start < 0:
            continue
        after = _AFTER.match(sentence[start + len(clause):])
        before = _BEFORE.search(sentence[:start])
        marker = after or before
        if marker is None:
            return None  # stated plainly somewhere: supported as far as this check goes
        found = found or (sentence, marker.group(0).rstrip("、,").strip())
    return found
