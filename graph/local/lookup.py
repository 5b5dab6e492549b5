"""Prompt-lookup drafts: continue the longest n-gram at the end of the text from where it occurred.

A grounded answer re-uses the evidence's phrases, so when the last few tokens written so far
also occur earlier (in the evidence, or earlier in the answer), the tokens that followed them
there are a good guess for what comes next. The guess costs no model call; the model checks
it (:mod:`grounded_rag.local.decoding`) and keeps only the prefix it would have written anyway.
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_MAX_NGRAM = 4
"""Longest suffix looked up (longer matches predict better; 4 tokens is a short phrase)."""

DEFAULT_MIN_NGRAM = 2
"""Shortest suffix looked up: a single token recurs everywhere and predicts little, and on
a CPU a rejected draft costs almost as much as the tokens it held (batched passes are
compute-bound here), so weak guesses are not worth checking."""


def propose(
    history: Sequence[int],
    max_draft: int,
    *,
    max_ngram: int = DEFAULT_MAX_NGRAM,
    min_ngram: int = DEFAULT_MIN_NGRAM,
) -> list[int]:
    """Draft up to ``max_draft`` tokens to follow ``history`` (prompt + tokens written so far).

    The longest suffix of ``history`` (``max_ngram`` down to ``min_ngram`` tokens) that also
    occurs earlier is looked up; of its occurrences the latest is used, and the tokens after
    it (at most ``max_draft``, never past the end of ``history``) are the draft. Empty when
    no suffix of at least ``min_ngram`` tokens recurs.

    Examples:
        >>> propose([1, 2, 3, 4, 9, 1, 2, 3], 3)
        [4, 9, 1]
        >>> propose([5, 6, 7], 4)
        []
    """
    n = len(history)
    if max_draft <= 0 or min_ngram < 1:
        return []
    seq = list(history)
    for size in range(min(max_ngram, n - 1), min_ngram - 1, -1):
        suffix = seq[n - size:]
        first = suffix[0]
        # Latest earlier occurrence first; it must leave at least one token after it.
        for start in range(n - size - 1, -1, -1):
            if seq[start] == first and seq[start:start + size] == suffix:
                end = start + size
                return seq[end:min(end + max_draft, n)]
    return []
