"""Support scorer: P(Yes) from next-token logits of a Yes/No question, no generation.

Every scored prompt also yields the model's hidden states at its last position (see
``grounded_rag.local.probe``): the trained judge heads read those instead of P(Yes) alone.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from grounded_rag.local.probe import HiddenStateReader
from grounded_rag.local.runtime import LocalRuntime, get_runtime, render_chat
from grounded_rag.local.work import Work
from grounded_rag.prompts import local_verify

_YES = ("Yes", " Yes", "yes", " yes", "YES")
_NO = ("No", " No", "no", " no", "NO")
_CLAIM_RESERVE = 256  # tokens kept free for the claim and the question after the evidence

_READERS: dict[int, HiddenStateReader] = {}
_READERS_LOCK = threading.Lock()


def reader_for(runtime: LocalRuntime) -> HiddenStateReader:
    """The process-wide scoring context of ``runtime`` (created on first use)."""
    key = id(runtime.llama)
    with _READERS_LOCK:
        reader = _READERS.get(key)
        if reader is None:
            reader = _READERS[key] = HiddenStateReader(runtime)
        return reader


@dataclass
class ScorerStats(Work):
    """This scorer's own share of the model :class:`Work`, its wall time and its cuts.

    One scored prompt is one model call; only the prompt counts move (scoring generates
    nothing, and the runtime's ``work`` counts the forward passes). ``pairs``,
    ``tokens_evaluated`` and ``tokens_reused`` are the scorer's names for ``model_calls``,
    ``prompt_tokens`` and ``reused_tokens``.
    """

    seconds: float = 0.0
    """Wall time spent scoring."""
    truncated: int = 0
    """Evidence texts cut to fit the context window."""

    pairs = property(lambda self: self.model_calls, doc="Prompts scored.")
    tokens_evaluated = property(lambda self: self.prompt_tokens,
                                doc="Prompt tokens run through the model.")
    tokens_reused = property(lambda self: self.reused_tokens,
                             doc="Prompt tokens served from the KV cache (shared prefix).")


@dataclass(frozen=True)
class Reading:
    """What one Yes/No prompt evaluation gives: the score and the model's state."""

    p_yes: float
    """P(Yes) against P(No) from the next-token logits."""
    margin: float
    """log P(Yes) - log P(No) (the logit of ``p_yes``)."""
    hidden: np.ndarray
    """Last-position hidden states, shape ``(len(layers), n_embd)``, float32."""
    layers: tuple[int, ...]
    """The layers ``hidden`` holds, in order (-1: the final normed state)."""
    tokens: int
    """Prompt length in tokens."""
    truncated: bool
    """True when the evidence was cut to fit the scoring context."""


@dataclass
class SupportScorer:
    """Scores how well evidence supports a claim, as P(Yes) in [0, 1].

    Pairs that share evidence are scored back to back so the evidence prefix is evaluated
    once; ``reuse_prefix=False`` forces a full evaluation per pair (for measurement).
    """

    model: str | os.PathLike[str] | None = None
    """GGUF path / ``local:`` spec; None for the default model."""
    reuse_prefix: bool = True
    """Reuse the KV cache of a shared evidence prefix."""
    runtime: LocalRuntime | None = None
    """Injected runtime (loaded lazily otherwise)."""
    stats: ScorerStats = field(default_factory=ScorerStats)
    """Running cost counters."""
    _yes_ids: list[int] = field(default_factory=list, repr=False)
    _no_ids: list[int] = field(default_factory=list, repr=False)

    def _rt(self) -> LocalRuntime:
        if self.runtime is None:
            self.runtime = get_runtime(self.model)
        if not self._yes_ids:
            self._yes_ids = _single_token_ids(self.runtime, _YES)
            self._no_ids = _single_token_ids(self.runtime, _NO)
        return self.runtime

    def score(self, evidence: str, claim: str, *, language: str = "en") -> float:
        """Return P(Yes) that ``evidence`` fully supports ``claim``."""
        return self.score_many([(evidence, claim)], language=language)[0]

    def score_many(self, pairs: Sequence[tuple[str, str]], *, language: str = "en") -> list[float]:
        """Score (evidence, claim) pairs; output order matches input order."""
        return [r.p_yes for r in self.read_many(pairs, language=language)]

    def read_many(self, pairs: Sequence[tuple[str, str]], *, language: str = "en") -> list[Reading]:
        """Read (evidence, claim) pairs: scores and hidden states, in input order."""
        rt = self._rt()
        order = sorted(range(len(pairs)), key=lambda i: pairs[i][0])
        out: list[Reading | None] = [None] * len(pairs)
        system, user = local_verify.for_language(language)
        with rt.lock:
            reader = reader_for(rt)
            reader.set_threads(rt.adapt_threads())  # the thread policy covers scoring too
            for i in order:
                evidence, claim = pairs[i]
                claim, cut_claim = self._fit(rt, claim, reader.n_ctx // 4)
                budget = reader.n_ctx - _CLAIM_RESERVE - 128 - len(rt.tokenize(
                    claim, special=False))
                fitted, cut_evidence = self._fit(rt, evidence, budget)
                out[i] = self._read(rt, reader, system,
                                    user.format(evidence=fitted, claim=claim),
                                    cut_claim or cut_evidence)
        return [r for r in out if r is not None]

    def score_questions(self, prompts: Sequence[tuple[str, str]]) -> list[float]:
        """P(Yes) for arbitrary (system, user) Yes/No prompts, in order, under the model lock.

        Prompts that share a prefix (same system message, same passage first) reuse its KV
        cache when they come one after another.
        """
        return [r.p_yes for r in self.read_questions(prompts)]

    def read_questions(self, prompts: Sequence[tuple[str, str]]) -> list[Reading]:
        """Like ``score_questions``, with the hidden states."""
        rt = self._rt()
        with rt.lock:
            reader = reader_for(rt)
            reader.set_threads(rt.adapt_threads())  # the thread policy covers scoring too
            out = []
            for system, user in prompts:
                user, cut = self._fit(rt, user, reader.n_ctx - _CLAIM_RESERVE - 128)
                out.append(self._read(rt, reader, system, user, cut))
            return out

    def read_after_sources(
        self, pairs: Sequence[tuple[str, str]], *, language: str = "en"
    ) -> list[Reading | None]:
        """Read (sources, claim) pairs on the generator's own context, in input order.

        ``sources`` is the numbered sources block the generator read; the prompt is the
        generator's system message and sources block, then the judge's question. Whatever
        of it the generator's context still holds (the last draft's prompt) is not evaluated
        again, so a claim costs its own few dozen tokens. Only P(Yes) is read (no hidden
        states: the plain judge). A pair whose prompt would not fit the context gives None.
        """
        from grounded_rag.local.features import lang_of
        from grounded_rag.prompts import generate

        rt = self._rt()
        lang = lang_of(language)
        system = generate.SYSTEM[lang]
        question = local_verify.after_sources_for_language(lang)
        out: list[Reading | None] = []
        with rt.lock:
            for sources, claim in pairs:
                start = time.perf_counter()
                user = generate.SOURCES_BLOCK[lang].format(sources=sources) + question.format(
                    claim=claim)
                tokens = render_chat(rt, [{"role": "system", "content": system},
                                          {"role": "user", "content": user}])
                if len(tokens) > rt.n_ctx - _CLAIM_RESERVE:
                    out.append(None)
                    continue
                reused, evaluated = rt.eval_prompt(tokens)
                logits = rt.last_logits(self._yes_ids + self._no_ids)
                margin = (_logsumexp(logits[: len(self._yes_ids)])
                          - _logsumexp(logits[len(self._yes_ids):]))
                self.stats.add(model_calls=1, prompt_tokens=evaluated, reused_tokens=reused)
                self.stats.seconds += time.perf_counter() - start
                out.append(Reading(p_yes=sigmoid(margin), margin=margin,
                                   hidden=np.zeros((0, 0), dtype=np.float32), layers=(),
                                   tokens=len(tokens), truncated=False))
        return out

    def _read(
        self, rt: LocalRuntime, reader: HiddenStateReader, system: str, user: str,
        truncated: bool,
    ) -> Reading:
        start = time.perf_counter()
        tokens = render_chat(
            rt,
            [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        )
        result = reader.evaluate(tokens, reuse_prefix=self.reuse_prefix)
        logits = reader.logits(self._yes_ids + self._no_ids)
        yes = _logsumexp(logits[: len(self._yes_ids)])
        no = _logsumexp(logits[len(self._yes_ids) :])
        margin = yes - no
        self.stats.add(model_calls=1, prompt_tokens=result.evaluated,
                       reused_tokens=result.reused)
        self.stats.seconds += time.perf_counter() - start
        return Reading(
            p_yes=sigmoid(margin), margin=margin, hidden=reader.hidden(),
            layers=reader.layers, tokens=len(tokens), truncated=truncated,
        )

    def _fit(self, rt: LocalRuntime, text: str, budget: int) -> tuple[str, bool]:
        """``text`` cut to ``budget`` tokens (and whether it was cut)."""
        tokens = rt.tokenize(text, special=False)
        if len(tokens) <= budget:
            return text, False
        self.stats.truncated += 1
        return rt.llama.detokenize(tokens[:budget]).decode("utf-8", errors="ignore"), True


def _single_token_ids(rt: LocalRuntime, words: Sequence[str]) -> list[int]:
    ids: list[int] = []
    for word in words:
        toks = rt.tokenize(word, special=False)
        if len(toks) == 1 and toks[0] not in ids:
            ids.append(toks[0])
    if not ids:
        raise RuntimeError(f"the model has no single-token spelling of {words[0]!r}")
    return ids


def _logsumexp(values: Sequence[float] | np.ndarray) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def sigmoid(x: float) -> float:
    """The logistic function, without overflow for large ``|x|``."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)
