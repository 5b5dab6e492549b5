"""Hidden-state reader: a scoring context on the shared model that also keeps its activations.

The Yes/No scorer and the trained judge heads read two things from one forward pass over a
prompt: the next-token logits of its last position and the model's hidden state there,
taken from several layers. llama.cpp hands intermediate tensors to a graph-evaluation
callback (``cb_eval``); the callback copies the last column of each wanted ``l_out-<layer>``
tensor (and the final normed state, ``result_norm``) while the graph runs, so reading them
costs no second pass.

The reader owns its own llama.cpp context on the already loaded model weights. Keeping
scoring off the generator's context means neither evicts the other's KV cache: the
generator keeps its fixed prompt prefix between calls, and the scorer keeps the evidence
prefix it shares across the claims checked against the same evidence.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from grounded_rag.local.runtime import LocalRuntime, require_llama_cpp

FINAL_NORM = -1
"""Layer key of the final normed hidden state (what the language-model head reads)."""

DEFAULT_LAYERS: tuple[int, ...] = (6, 9, 12, 14, 16, 18, 20, 22, 24, 26, FINAL_NORM)
"""Layers whose last-position state is captured (block outputs, 0-based; -1: final norm)."""

DEFAULT_SCORING_CTX = 4096
"""Context window of the scoring context: evidence budgets stay well under 1k tokens."""

_BATCH = 512
_GGML: Any = None


def _ggml() -> Any:
    """The ggml library with the three functions the callback needs typed."""
    global _GGML
    if _GGML is None:
        require_llama_cpp()
        from llama_cpp._ggml import libggml

        libggml.ggml_get_name.argtypes = [ctypes.c_void_p]
        libggml.ggml_get_name.restype = ctypes.c_char_p
        libggml.ggml_nelements.argtypes = [ctypes.c_void_p]
        libggml.ggml_nelements.restype = ctypes.c_int64
        libggml.ggml_backend_tensor_get.argtypes = [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
        ]
        libggml.ggml_backend_tensor_get.restype = None
        _GGML = libggml
    return _GGML


def tensor_name(layer: int) -> bytes:
    """The llama.cpp graph tensor name that holds ``layer``'s output."""
    return b"result_norm" if layer == FINAL_NORM else f"l_out-{layer}".encode()


class LastStates:
    """The evaluation callback that copies the last column of wanted layers' outputs.

    While ``armed``, each wanted ``l_out-<layer>`` tensor (or ``result_norm``) is copied as
    the graph runs: column-major ``[n_embd, n_tokens]``, so the last column is the batch's
    last token, and a later batch of the same prompt overwrites what an earlier one left.
    Disarmed, every tensor passes unobserved. ``callback`` is the ctypes object to hand
    llama.cpp as ``cb_eval`` (keep this object alive as long as the context).
    """

    def __init__(self, layers: Sequence[int], n_embd: int) -> None:
        llama_cpp = require_llama_cpp()
        ggml = _ggml()
        wanted = {tensor_name(layer): i for i, layer in enumerate(layers)}
        self.layers = tuple(layers)
        self.hidden = np.zeros((len(self.layers), n_embd), dtype=np.float32)
        self.seen = np.zeros(len(self.layers), dtype=bool)
        self.armed = False

        def callback(tensor: int, ask: bool, _user: int) -> bool:
            if not self.armed:
                return False if ask else True
            index = wanted.get(ggml.ggml_get_name(tensor))
            if index is None:
                return False if ask else True
            if ask:
                return True
            total = int(ggml.ggml_nelements(tensor))
            ggml.ggml_backend_tensor_get(
                tensor, self.hidden[index].ctypes.data, (total - n_embd) * 4, n_embd * 4
            )
            self.seen[index] = True
            return True

        self.callback = llama_cpp.ggml_backend_sched_eval_callback(callback)

    def missing(self) -> list[int]:
        """The layers no state was captured for since ``seen`` was last cleared."""
        return [self.layers[i] for i in np.flatnonzero(~self.seen)]


@dataclass
class EvalResult:
    """What one prompt evaluation produced."""

    reused: int
    """Prompt tokens served from the KV cache."""
    evaluated: int
    """Prompt tokens run through the model."""


class HiddenStateReader:
    """Evaluates prompts on a private context and captures last-position hidden states.

    Not thread-safe: callers hold ``runtime.lock`` (the weights and cores are shared with
    the generator, so scoring and generation never run at the same time anyway).
    """

    def __init__(
        self,
        runtime: LocalRuntime,
        *,
        layers: Sequence[int] = DEFAULT_LAYERS,
        n_ctx: int = DEFAULT_SCORING_CTX,
    ) -> None:
        llama_cpp = require_llama_cpp()
        from llama_cpp import _internals

        self.runtime = runtime
        llama = runtime.llama
        self.n_embd = int(llama.n_embd())
        self.n_layer = int(llama_cpp.llama_model_n_layer(llama._model.model))
        bad = [layer for layer in layers if layer != FINAL_NORM and not 0 <= layer < self.n_layer]
        if bad:
            raise ValueError(f"layers {bad} do not exist in a model of {self.n_layer} layers")
        self.layers = tuple(layers)
        self._states = LastStates(self.layers, self.n_embd)
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = _BATCH
        params.n_ubatch = _BATCH
        params.n_threads = runtime.n_threads
        params.n_threads_batch = runtime.n_threads
        params.cb_eval = self._states.callback
        self._ctx = _internals.LlamaContext(model=llama._model, params=params, verbose=False)
        self._batch = _internals.LlamaBatch(n_tokens=_BATCH, embd=0, n_seq_max=1, verbose=False)
        self.n_ctx = int(llama_cpp.llama_n_ctx(self._ctx.ctx))
        self._tokens: list[int] = []
        self._llama_cpp = llama_cpp

    def set_threads(self, n_threads: int) -> None:
        """Use ``n_threads`` for the next evaluations (at least 1)."""
        n = max(1, int(n_threads))
        self._llama_cpp.llama_set_n_threads(self._ctx.ctx, n, n)

    def evaluate(self, tokens: Sequence[int], *, reuse_prefix: bool = True) -> EvalResult:
        """Evaluate ``tokens``, reusing the longest cached prefix, capturing hidden states.

        The last token is always evaluated again, so its logits and hidden states are fresh.
        """
        tokens = list(tokens)
        if not tokens:
            raise ValueError("empty prompt")
        if len(tokens) >= self.n_ctx:
            raise ValueError(f"prompt of {len(tokens)} tokens exceeds the context ({self.n_ctx})")
        prefix = 0
        if reuse_prefix:
            limit = min(len(self._tokens), len(tokens) - 1)
            while prefix < limit and self._tokens[prefix] == tokens[prefix]:
                prefix += 1
        self._ctx.kv_cache_seq_rm(-1, prefix, -1)
        self._tokens = self._tokens[:prefix]
        states = self._states
        states.seen[:] = False
        states.armed = False
        passes = 0
        try:
            for start in range(prefix, len(tokens), _BATCH):
                chunk = tokens[start : start + _BATCH]
                # Only the batch holding the last token needs its states read.
                states.armed = start + len(chunk) == len(tokens)
                self._batch.set_batch(batch=chunk, n_past=start, logits_all=False)
                self._ctx.decode(self._batch)
                passes += 1
                self._tokens.extend(chunk)
        except Exception:
            self._tokens = []
            self._ctx.kv_cache_seq_rm(-1, 0, -1)
            raise
        finally:
            states.armed = False
        if not states.seen.all():
            raise RuntimeError(f"llama.cpp produced no hidden state for layers "
                               f"{states.missing()}")
        self.runtime.work.add(model_calls=1, prompt_tokens=len(tokens) - prefix,
                              reused_tokens=prefix,
                              forward_passes=passes)
        return EvalResult(reused=prefix, evaluated=len(tokens) - prefix)

    def logits(self, token_ids: Sequence[int]) -> np.ndarray:
        """Next-token logits of the last evaluated position for ``token_ids``."""
        row = self._llama_cpp.llama_get_logits_ith(self._ctx.ctx, -1)
        return np.array([row[t] for t in token_ids], dtype=np.float64)

    def hidden(self) -> np.ndarray:
        """Hidden states of the last evaluated position, shape ``(len(layers), n_embd)``."""
        return self._states.hidden.copy()

    def reset(self) -> None:
        """Forget the cached prefix (the next evaluation starts from scratch)."""
        self._tokens = []
        self._ctx.kv_cache_seq_rm(-1, 0, -1)
