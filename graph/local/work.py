"""Work counters of the local model (tokens, forward passes, calls) and the reference pass.

Wall-clock latency on a shared CPU moves with whatever else runs; the work a model call
does does not. :class:`WorkCounter` lives on the runtime and is bumped where the work
happens: every llama.cpp ``decode`` call is one forward pass, every prompt token sent
through one is an evaluated prompt token. Read it per answer with :meth:`WorkCounter.snapshot`
before and after and subtract (``after - before``).

:func:`reference_pass` times a fixed amount of work (a 512-token prompt evaluated from
scratch, then 64 tokens decoded one per pass) on the same model and cores, so that a latency
can be given as a multiple of it: a figure that compares across runs of different load.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from grounded_rag.local.runtime import LocalRuntime

REFERENCE_PROMPT_TOKENS = 512
REFERENCE_NEW_TOKENS = 64


@dataclass
class Work:
    """Model work done (a running total, or the difference of two snapshots)."""

    model_calls: int = 0
    """Generator completions plus scorer prompt evaluations."""
    prompt_tokens: int = 0
    """Prompt tokens run through the model (cached ones not included)."""
    reused_tokens: int = 0
    """Prompt tokens served from a KV cache instead."""
    generated_tokens: int = 0
    """Completion tokens the generator returned (the end-of-turn token not included)."""
    forward_passes: int = 0
    """llama.cpp decode calls of any kind (prompt batches and generation steps)."""
    generation_passes: int = 0
    """Decode calls made while generating, after the prompt's own passes."""
    drafted: int = 0
    """Tokens proposed by prompt lookup and checked by the model."""
    accepted: int = 0
    """Drafted tokens that equalled the greedy choice (each saved one forward pass)."""

    def __sub__(self, other: Work) -> Work:
        return type(self)(**{f.name: getattr(self, f.name) - getattr(other, f.name)
                             for f in fields(self)})

    def add(self, **amounts: int) -> None:
        """Add ``amounts`` (field name -> count) to these counts."""
        for name, value in amounts.items():
            setattr(self, name, getattr(self, name) + int(value))

    def as_dict(self) -> dict[str, int]:
        """The counts by field name."""
        return asdict(self)

    @property
    def passes_per_token(self) -> float:
        """Generation passes per generated token (1.0 without speculation; nan if none)."""
        return self.generation_passes / self.generated_tokens if self.generated_tokens else math.nan

    @property
    def acceptance(self) -> float:
        """Share of drafted tokens accepted (nan when nothing was drafted)."""
        return self.accepted / self.drafted if self.drafted else math.nan


class WorkCounter:
    """The running total of :class:`Work` of one runtime (callers hold the runtime's lock)."""

    def __init__(self) -> None:
        self.total = Work()

    def snapshot(self) -> Work:
        """A copy of the totals so far."""
        return Work(**self.total.as_dict())

    def add(self, **amounts: int) -> None:
        """Add ``amounts`` (field name -> count) to the totals."""
        self.total.add(**amounts)

    def eval(self, llama: Any, tokens: Sequence[int], *, prompt: bool = True) -> None:
        """``llama.eval(tokens)``, counted (``Llama.eval`` issues one decode per ``n_batch``).

        ``prompt=False`` for a generated token fed back: a pass, but no prompt token.
        """
        tokens = list(tokens)
        llama.eval(tokens)
        batch = int(getattr(llama, "n_batch", 512) or 512)
        self.add(prompt_tokens=len(tokens) if prompt else 0,
                 forward_passes=math.ceil(len(tokens) / batch))


def reference_tokens(n: int = REFERENCE_PROMPT_TOKENS) -> list[int]:
    """A fixed, content-free prompt of ``n`` token ids (the cost of a pass ignores content)."""
    return [1000 + (7919 * i) % 20000 for i in range(n)]


def reference_pass(
    runtime: LocalRuntime,
    prompt_tokens: int = REFERENCE_PROMPT_TOKENS,
    new_tokens: int = REFERENCE_NEW_TOKENS,
) -> float:
    """Seconds for a fixed amount of work on the generator's context.

    That is: a ``prompt_tokens`` prompt evaluated from scratch, then ``new_tokens`` greedy
    tokens decoded one per pass. The generator's cached prompt is dropped (its saved system
    prompt comes back from the prefix cache). Not counted in ``runtime.work``.
    """
    from grounded_rag.local.runtime import require_llama_cpp

    llama_cpp = require_llama_cpp()
    llama = runtime.llama
    tokens = reference_tokens(prompt_tokens)
    with runtime.lock:
        runtime.adapt_threads()
        n_vocab = int(llama.n_vocab())
        start = time.perf_counter()
        llama.n_tokens = 0  # evaluated from scratch: nothing reused
        llama.eval(tokens)
        for _ in range(new_tokens):
            row = llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1)
            token = int(np.argmax(np.ctypeslib.as_array(row, shape=(n_vocab,))))
            llama.eval([token])
        elapsed = time.perf_counter() - start
        llama.n_tokens = 0
        llama._requires_eval = True
    return elapsed
