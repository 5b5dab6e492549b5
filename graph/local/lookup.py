"""Prompt-lookup drafts: continue the longest n-gram at the end of the text from where it occurred.

A grounded answer re-uses the evidence's phrases, so when the last few tokens written so far
also occur earlier (in the evidence, or earlier in the answer), the tokens that followed them
there are a good guess for what comes next. The guess costs no model call; the model checks
it (:mod:`grounded_rag.local.decoding`) and keeps only the prefix it would have written anyway.

The answer's frame is not in the evidence: a JSON reply's keys and punctuation
(``{"answerable": true, "statements": [{"text": "``, ``", "citations": ["S``) are the same
in every reply, but the first reply's frame has nothing earlier to be looked up in. So the
generator's last few replies (:class:`RecentOutputs`) are a second place to look, after the
text itself.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

DEFAULT_MAX_NGRAM = 4
"""Longest suffix looked up (longer matches predict better; 4 tokens is a short phrase)."""

DEFAULT_MIN_NGRAM = 2
"""Shortest suffix looked up: a single token recurs everywhere and predicts little, and on
a CPU a rejected draft costs almost as much as the tokens it held (batched passes are
compute-bound here), so weak guesses are not worth checking."""


RECENT_OUTPUTS = 8
"""Replies kept by :class:`RecentOutputs` (a reply is ~30-120 tokens)."""

LEAD_TOKENS = 4
"""Prompt tokens kept before each reply, so that its first tokens can be looked up too."""


class RecentOutputs:
    """The generator's last replies, each with the prompt's last few tokens before it."""

    def __init__(self, size: int = RECENT_OUTPUTS) -> None:
        self.items: deque[list[int]] = deque(maxlen=size)

    def add(self, prompt: Sequence[int], output: Sequence[int]) -> None:
        """Keep ``output`` (with the end of ``prompt`` before it); the oldest reply goes."""
        if output:
            self.items.append([*list(prompt)[-LEAD_TOKENS:], *output])

    def latest_first(self) -> list[list[int]]:
        """The kept replies, the latest first (the order :func:`propose` reads them in)."""
        return list(reversed(self.items))


def _after(seq: Sequence[int], suffix: Sequence[int], stop: int, max_draft: int) -> list[int]:
    """The tokens after the latest occurrence of ``suffix`` that ends before ``stop``."""
    size, first = len(suffix), suffix[0]
    for start in range(stop - size, -1, -1):
        if seq[start] == first and list(seq[start:start + size]) == suffix:
            end = start + size
            return list(seq[end:min(end + max_draft, len(seq))])
    return []


def propose(
    history: Sequence[int],
    max_draft: int,
    *,
    max_ngram: int = DEFAULT_MAX_NGRAM,
    min_ngram: int = DEFAULT_MIN_NGRAM,
    elsewhere: Sequence[Sequence[int]] = (),
) -> list[int]:
    """Draft up to ``max_draft`` tokens to follow ``history`` (prompt + tokens written so far).

    The longest suffix of ``history`` (``max_ngram`` down to ``min_ngram`` tokens) that also
    occurs earlier is looked up; of its occurrences the latest is used, and the tokens after
    it (at most ``max_draft``, never past the end of ``history``) are the draft. For each
    suffix length, ``history`` is searched first, then each sequence of ``elsewhere`` in
    order (earlier replies: :meth:`RecentOutputs.latest_first`). Empty when no suffix of at
    least ``min_ngram`` tokens recurs.

    Examples:
        >>> propose([1, 2, 3, 4, 9, 1, 2, 3], 3)
        [4, 9, 1]
        >>> propose([5, 6, 7], 4)
        []
        >>> propose([5, 6, 7], 4, elsewhere=[[8, 6, 7, 1, 2]])
        [1, 2]
    """
    n = len(history)
    if max_draft <= 0 or min_ngram < 1:
        return []
    seq = list(history)
    longest = max([n - 1, *(len(other) - 1 for other in elsewhere)])
    for size in range(min(max_ngram, n, longest), min_ngram - 1, -1):
        suffix = seq[n - size:]
        # Latest earlier occurrence first; it must leave at least one token after it.
        found = _after(seq, suffix, n - 1, max_draft) if size < n else []
        for other in elsewhere:
            if found:
                break
            found = _after(other, suffix, len(other) - 1, max_draft)
        if found:
            return found
    return []
