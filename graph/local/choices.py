"""Booleans of a structured output read as scores, and decided by a threshold.

The generator's JSON reply opens with ``"answerable":``; at that position the model's
log-odds of ``true`` over ``false`` is the generator's stage score
(:mod:`grounded_rag.verification.decision`), and with a threshold the value is decided by
it rather than by the greedy pick. :func:`grounded_rag.local.decoding.complete` calls
:class:`_Choices` at each position while a choice is still ahead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Choice:
    """A boolean the output states after ``marker`` (e.g. ``"answerable":``), read as a score.

    At the first position after the marker the model's log-odds of ``true`` over ``false``
    (each side the log-sum-exp over the tokens that start the word, leading space allowed)
    is recorded under ``key``. With ``threshold`` set, the value is then decided by that
    score rather than by the greedy pick: ``true`` when the log-odds reach ``threshold``,
    else ``false`` (only that word's tokens stay allowed at that position). A threshold of
    0 is the greedy choice up to whitespace; lower thresholds make ``true`` easier.

    ``nonempty`` names the array that must then have an item when a threshold decided
    ``true`` (``"statements":[``, whitespace ignored): right after it opens, ``]`` is not
    allowed, so "answerable, and here is nothing" cannot be written.
    """

    key: str
    marker: str
    threshold: float | None | Any = None
    """A number, None, or (before the chat model resolves it) a
    ``grounded_rag.local.prompt_state.StateThreshold``."""
    nonempty: str | None = None


_WORD_TOKENS: dict[tuple[int, str], list[int]] = {}
_PIECES: dict[int, list[str | None]] = {}


def _pieces(llama: Any) -> list[str | None]:
    """Every token's text (None where it is not whole UTF-8), once per model (~0.3 s)."""
    found = _PIECES.get(id(llama))
    if found is None:
        found = []
        for tid in range(llama.n_vocab()):
            try:
                found.append(llama.detokenize([tid]).decode("utf-8"))
            except UnicodeDecodeError:
                found.append(None)
        _PIECES.clear()  # one model at a time: the list holds ~150k strings
        _PIECES[id(llama)] = found
    return found


def _word_tokens(llama: Any, word: str) -> list[int]:
    """Ids of the tokens that can start ``word`` (optionally after whitespace).

    One scan of the vocabulary's texts per model and word, then cached.
    """
    key = (id(llama), word)
    found = _WORD_TOKENS.get(key)
    if found is None:
        found = []
        for tid, piece in enumerate(_pieces(llama)):
            stem = piece.lstrip(" \t\n") if piece is not None else ""
            if stem and word.startswith(stem):
                found.append(tid)
        _WORD_TOKENS[key] = found
    return found


class _Choices:
    """The :class:`Choice` points of one completion, scored (and decided) as they come."""

    def __init__(self, llama: Any, choices: Sequence[Choice]) -> None:
        self.llama = llama
        self.ahead = list(choices)
        self.true = _word_tokens(llama, "true")
        self.false = _word_tokens(llama, "false")
        self.guard: str | None = None
        """The array opening (whitespace removed) that must not be closed at once."""

    @property
    def pending(self) -> bool:
        return bool(self.ahead) or self.guard is not None

    def at(self, ctx: Any, text: bytes, scores: dict[str, float], index: int = -1) -> None:
        """Score (and decide) the next choice when ``text`` ends at its marker.

        ``index`` is the output of the last decode that the next token is sampled from
        (-1: the last; a drafted pass has one per token it checked).
        """
        import numpy as np

        logits = np.ctypeslib.as_array(ctx.get_logits_ith(index),
                                       shape=(self.llama.n_vocab(),))
        if self.guard is not None:
            bare = b"".join(text.split())
            opened = bare.find(self.guard.encode("utf-8"))
            if opened >= 0:
                if bare[opened + len(self.guard):]:
                    self.guard = None  # the array has its first item (or more)
                else:
                    logits[_closing_tokens(self.llama)] = -np.inf
        if not self.ahead or not text.rstrip().endswith(self.ahead[0].marker.encode("utf-8")):
            return
        choice = self.ahead.pop(0)
        yes, no = logits[self.true], logits[self.false]
        score = float(_lse(yes) - _lse(no))
        scores[choice.key] = round(score, 4)
        if choice.threshold is None:
            return
        says = score >= choice.threshold
        if says and choice.nonempty:
            self.guard = "".join(choice.nonempty.split())
        keep = self.true if says else self.false
        allowed = np.full(logits.shape, False)
        allowed[keep] = True
        logits[~allowed] = -np.inf  # the sampler reads this buffer next


_CLOSING: dict[int, list[int]] = {}


def _closing_tokens(llama: Any) -> list[int]:
    """Ids of the tokens that close an array first thing (``]``, ``]}``, `` ]`` ...)."""
    found = _CLOSING.get(id(llama))
    if found is None:
        found = [tid for tid, piece in enumerate(_pieces(llama))
                 if piece is not None and piece.lstrip(" \t\n").startswith("]")]
        _CLOSING[id(llama)] = found
    return found


def _lse(values: Any) -> float:
    import numpy as np

    if len(values) == 0:
        return float("-inf")
    top = float(np.max(values))
    return top + float(np.log(np.sum(np.exp(values - top))))
