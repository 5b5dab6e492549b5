"""The generator's own prompt, read as an answerability score at no extra model pass.

The first draft's prompt (system rules, the numbered evidence sentences, the question) is
evaluated anyway before the generator writes. A logistic head on the hidden state of one
layer at the prompt's last position tells answerable questions from on-topic no-answer ones
(NoMIRACL's hard negatives) better than the generator's own ``answerable`` log-odds
(``benchmarks/fit_decision.py state``; docs/evaluation.md). The decision
(:mod:`grounded_rag.verification.decision`) reads that score beside relevance and the
generator's log-odds.

The state is captured on the generator's own llama.cpp context: :class:`PromptStateTap`
gives that context an evaluation callback (``cb_eval``) that copies the wanted layer's last
column while a prompt is evaluated with the tap armed, and lets every other tensor pass
unobserved (a disarmed callback left greedy output unchanged and pass time within 0.5%:
``git show e7fb647:benchmarks/eval_callback_cost.py``, ``…/generator_state_check.py``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from grounded_rag.local.heads import HeadError, JudgeHead
from grounded_rag.local.runtime import LocalRuntime

log = logging.getLogger(__name__)

TASK = "prompt_state"
"""Name of the shipped head (``heads/prompt_state.npz`` + ``.json``)."""

SWITCH_ENV = "GROUNDED_RAG_PROMPT_STATE"
"""Set to ``off`` to decide without the head (the decision's plain combiners)."""


@dataclass(frozen=True)
class StateThreshold:
    """A choice threshold that depends on the prompt state: decided after the prompt is read.

    ``rule`` maps the head's log-odds to the generator log-odds threshold; the chat model
    evaluates the prompt with the tap armed, scores the state and hands the threshold to the
    ``answerable`` choice.
    """

    language: str
    """The question's language (the head reads it as an input)."""
    rule: Callable[[float], float]
    """Head log-odds -> the generator log-odds the choice must reach."""
    fallback: float | None = None
    """The threshold when no head applies (another model file, changed prompts)."""


class PromptStateTap:
    """Captures one layer's last-position hidden state on the runtime's generator context.

    Installing it replaces the runtime's llama.cpp context by one on the same weights whose
    evaluation callback reads that layer while :meth:`evaluate` runs (the KV cache starts
    empty once; saved system-prompt prefixes stay valid). Hold ``runtime.lock``.
    """

    def __init__(self, runtime: LocalRuntime, layer: int) -> None:
        from llama_cpp import _internals

        from grounded_rag.local.probe import LastStates

        self.runtime, self.layer = runtime, layer
        llama = runtime.llama
        self._states = LastStates((layer,), int(llama.n_embd()))
        params = llama.context_params
        params.cb_eval = self._states.callback
        params.n_threads = params.n_threads_batch = runtime.n_threads
        fresh = _internals.LlamaContext(model=llama._model, params=params, verbose=False)
        old, llama._ctx = llama._ctx, fresh
        stack = getattr(llama, "_stack", None)
        if stack is not None:
            stack.callback(fresh.close)
        old.close()
        llama.n_tokens = 0

    def evaluate(self, tokens: Sequence[int]) -> np.ndarray:
        """Evaluate ``tokens`` on the generator context (cached prefix reused); the state.

        Returns the ``layer`` output at the last token, float32 ``(n_embd,)``.
        """
        states = self._states
        states.seen[:] = False
        states.armed = True
        try:
            self.runtime.eval_prompt(tokens)
        finally:
            states.armed = False
        if not states.seen.all():
            raise RuntimeError(f"llama.cpp produced no hidden state for layer {self.layer}")
        return states.hidden[0].copy()


def tap_for(runtime: LocalRuntime, layer: int) -> PromptStateTap:
    """The runtime's tap for ``layer``, installed on first use (hold ``runtime.lock``)."""
    tap: PromptStateTap | None = getattr(runtime, "state_tap", None)
    if tap is None or tap.layer != layer:
        if tap is not None:
            raise RuntimeError(f"the generator context already reads layer {tap.layer}")
        tap = PromptStateTap(runtime, layer)
        runtime.state_tap = tap
    return tap


def prepare_tap(runtime: LocalRuntime, model: Any = None) -> None:
    """Install the tap the shipped head reads, if one applies (hold ``runtime.lock``).

    The first install replaces the generator's context, whose KV cache is lost: done before
    a cached system prompt is restored, the first answer of a process reuses it too.
    """
    head = state_head(model)
    if head is not None:
        tap_for(runtime, head.layers[0])


_HEAD: dict[str, JudgeHead | None] = {}


def state_head(model: str | os.PathLike[str] | None = None) -> JudgeHead | None:
    """The shipped prompt-state head for ``model`` (default model), or None.

    None when the model is not the one the head was trained on, the generator prompts
    changed since, or ``$GROUNDED_RAG_PROMPT_STATE`` is ``off`` (the decision then falls
    back to the scores it reads without it).
    """
    if os.environ.get(SWITCH_ENV, "").strip().lower() in {"off", "0", "false", "no"}:
        return None
    key = str(model or "local")
    if key not in _HEAD:
        from grounded_rag.local.verifier import load_default_head

        try:
            _HEAD[key] = load_default_head(TASK, model)
        except HeadError as exc:
            log.info("no prompt-state head for %s: %s", key, exc)
            _HEAD[key] = None
    return _HEAD[key]


def head_score(head: JudgeHead, hidden: np.ndarray, language: str) -> float:
    """The head's log-odds that the prompt's question is answerable from its evidence."""
    extras = {"is_ja": 1.0 if language == "ja" else 0.0}
    row = head.inputs(hidden[None, :], head.layers, 0.0, extras)
    x = (row[None, :] - head.mean) / head.std
    return float(head.classifiers["answerable"].logits(x)[0])


def resolve(runtime: LocalRuntime, tokens: Sequence[int], deferred: StateThreshold,
            model: Any = None) -> tuple[float | None, float | None]:
    """Read the prompt state of ``tokens`` and decide the threshold: (head score, threshold).

    (None, ``deferred.fallback``) when no head applies to this model. Hold ``runtime.lock``.
    """
    head = state_head(model)
    if head is None:
        return None, deferred.fallback
    hidden = tap_for(runtime, head.layers[0]).evaluate(tokens)
    score = round(head_score(head, hidden, deferred.language), 4)
    return score, round(float(deferred.rule(score)), 4)
