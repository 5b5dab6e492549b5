"""Whether prompt-lookup drafts pay on this machine: measured while answering, not assumed.

A drafted pass evaluates the next token and up to ``length`` guessed ones at once. Whether
that saves time depends on the CPU: where llama.cpp's batched kernels are much cheaper per
token than single-token passes (AVX-512 builds: 4 tokens in one pass cost ~2.3 single
passes), the accepted guesses are nearly free; where a pass over k tokens costs about k single
passes (generic kernels: ~3.2 for 4), the rejected guesses are paid on top and drafting loses
(docs/performance.md has both). :class:`DraftPolicy` decides from what the decoder measures:
the wall time per emitted token of the drafted passes against that of single-token passes,
both averaged over the last passes of each kind (the drafted ones as total time over
tokens kept). It drafts while it does not know
yet, keeps drafting while drafted passes are cheaper per token, and otherwise decodes one
token per pass, trying drafts again on every ``probe_every``-th completion so that a change
of load or thread count is noticed.

Only the number of passes and the time change; the tokens are the greedy ones either way (up
to the floating-point near-ties described in :mod:`grounded_rag.local.decoding`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

AUTO = -1
"""``draft_tokens`` value (and ``$GROUNDED_RAG_DRAFT_TOKENS=auto``) that lets the policy decide."""

AUTO_LENGTH = 4
"""Longest draft when the policy drafts (the best of 4 and 6 on the demo questions)."""

PROBE_EVERY = 16
"""While drafts do not pay, every this-many-th completion drafts anyway, to re-measure."""

MARGIN = 0.95
"""Drafted passes must cost less than this share of a single pass per emitted token."""

WINDOW = 128
"""Passes of each kind the costs are averaged over (an answer has ~40-60 passes)."""

WARMUP = 2
"""Drafted passes not counted at first: llama.cpp sets up each new batch shape once."""


class _Window:
    """Total milliseconds and tokens of the last ``WINDOW`` passes of one kind."""

    def __init__(self) -> None:
        self.passes: deque[tuple[float, int]] = deque(maxlen=WINDOW)

    def add(self, ms: float, tokens: int) -> None:
        self.passes.append((ms, max(1, tokens)))

    def per_token(self) -> float | None:
        if not self.passes:
            return None
        return sum(ms for ms, _ in self.passes) / sum(n for _, n in self.passes)


@dataclass
class DraftPolicy:
    """Running costs of single and drafted passes, and the choice they imply (hold the lock)."""

    length: int = AUTO_LENGTH
    """The draft length used when drafting."""
    probe_every: int = PROBE_EVERY
    completions: int = 0
    drafted_completions: int = 0
    _since_probe: int = 0
    _seen_drafted: int = 0
    _single: _Window = field(default_factory=_Window, repr=False)
    _drafted: _Window = field(default_factory=_Window, repr=False)

    @property
    def single_ms(self) -> float | None:
        """Average wall time of a one-token pass over the window (ms)."""
        return self._single.per_token()

    @property
    def drafted_ms(self) -> float | None:
        """Wall time per kept token of the drafted passes in the window (ms).

        Their time over the tokens they kept (each evaluated token and its accepted guesses).
        """
        return self._drafted.per_token()

    def pays(self) -> bool | None:
        """True when drafted passes are cheaper per token; None until both were measured."""
        if self.single_ms is None or self.drafted_ms is None:
            return None
        return self.drafted_ms < MARGIN * self.single_ms

    def choose(self) -> int:
        """The draft length for the next completion (0: one token per pass)."""
        self.completions += 1
        if self.pays() is not False:
            self._since_probe = 0
            self.drafted_completions += 1
            return self.length
        self._since_probe += 1
        if self._since_probe >= self.probe_every:
            self._since_probe = 0
            self.drafted_completions += 1
            return self.length
        return 0

    def single(self, seconds: float) -> None:
        """Record one single-token pass."""
        self._single.add(seconds * 1000, 1)

    def drafted(self, seconds: float, kept: int) -> None:
        """Record one drafted pass that kept ``kept`` tokens (>= 1: the evaluated token)."""
        self._seen_drafted += 1
        if self._seen_drafted > WARMUP:
            self._drafted.add(seconds * 1000, kept)

    def describe(self) -> str:
        """One line for benchmarks and logs."""
        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:.1f} ms"

        state = {None: "measuring", True: "on", False: "off"}[self.pays()]
        return (f"prompt-lookup drafts {state}: single pass {ms(self.single_ms)}, drafted "
                f"pass {ms(self.drafted_ms)} per token kept; drafted "
                f"{self.drafted_completions} of {self.completions} completions")
