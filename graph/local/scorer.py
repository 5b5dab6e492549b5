"""Support scorer: P(Yes) from next-token logits of a Yes/No question, no generation."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from grounded_rag.local.runtime import LocalRuntime, get_runtime, render_chat
from grounded_rag.prompts import local_verify

_YES = ("Yes", " Yes", "yes", " yes", "YES")
_NO = ("No", " No", "no", " no", "NO")
_CLAIM_RESERVE = 256  # tokens kept free for the claim and the question after the evidence


@dataclass
class ScorerStats:
    """Counters for cost reporting."""

    pairs: int = 0
    """Pairs scored."""
    tokens_evaluated: int = 0
    """Prompt tokens run through the model."""
    tokens_reused: int = 0
    """Prompt tokens served from the KV cache (shared evidence prefix)."""
    seconds: float = 0.0
    """Wall time spent scoring."""
    truncated: int = 0
    """Evidence texts cut to fit the context window."""


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
        rt = self._rt()
        order = sorted(range(len(pairs)), key=lambda i: pairs[i][0])
        out = [0.0] * len(pairs)
        with rt.lock:
            for i in order:
                evidence, claim = pairs[i]
                out[i] = self._score_locked(rt, evidence, claim, language)
        return out

    def score_questions(self, prompts: Sequence[tuple[str, str]]) -> list[float]:
        """P(Yes) for arbitrary (system, user) Yes/No prompts, in order, under the model lock.

        Prompts that share a prefix (same system message, same passage first) reuse its KV
        cache when they come one after another.
        """
        rt = self._rt()
        with rt.lock:
            return [self._yes_probability(rt, system, user) for system, user in prompts]

    def _score_locked(self, rt: LocalRuntime, evidence: str, claim: str, language: str) -> float:
        evidence = self._fit_evidence(rt, evidence)
        system, user = local_verify.for_language(language)
        return self._yes_probability(rt, system, user.format(evidence=evidence, claim=claim))

    def _yes_probability(self, rt: LocalRuntime, system: str, user: str) -> float:
        start = time.perf_counter()
        tokens = render_chat(
            rt,
            [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        )
        if not self.reuse_prefix:
            rt.llama.n_tokens = 0
        else:
            messages = [{"role": "system", "content": system}]
            rt.keep_prefix(tokens, rt.system_prefix_length(messages, tokens))
        reused, evaluated = rt.eval_prompt(tokens)
        logits = rt.last_logits(self._yes_ids + self._no_ids)
        yes = _logsumexp(logits[: len(self._yes_ids)])
        no = _logsumexp(logits[len(self._yes_ids) :])
        self.stats.pairs += 1
        self.stats.tokens_reused += reused
        self.stats.tokens_evaluated += evaluated
        self.stats.seconds += time.perf_counter() - start
        return 1.0 / (1.0 + math.exp(no - yes))

    def _fit_evidence(self, rt: LocalRuntime, evidence: str) -> str:
        budget = rt.n_ctx - _CLAIM_RESERVE - 128
        tokens = rt.tokenize(evidence, special=False)
        if len(tokens) <= budget:
            return evidence
        self.stats.truncated += 1
        return rt.llama.detokenize(tokens[:budget]).decode("utf-8", errors="ignore")


def _single_token_ids(rt: LocalRuntime, words: Sequence[str]) -> list[int]:
    ids: list[int] = []
    for word in words:
        toks = rt.tokenize(word, special=False)
        if len(toks) == 1 and toks[0] not in ids:
            ids.append(toks[0])
    if not ids:
        raise RuntimeError(f"the model has no single-token spelling of {words[0]!r}")
    return ids


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))
