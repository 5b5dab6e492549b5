"""Greedy decoding under a grammar, one token checked at a time where that suffices."""

from __future__ import annotations

from typing import Any

from grounded_rag.local.runtime import require_llama_cpp


class GreedyGrammar:
    """Greedy choice under a grammar: one token checked first, all of them only if refused.

    What a chain of llama.cpp's grammar and greedy samplers returns, token for token: the
    first highest logit among the tokens the grammar allows. The chain has the grammar look
    at all ~150k tokens before every choice (~25 ms a token here, about a tenth of an
    answer's generation); when the unconstrained first highest logit is one the grammar
    allows, that token is also the constrained choice, so only it is checked. Otherwise the
    whole vocabulary goes through the grammar, as in the chain. Either way the chosen token
    is then accepted into the grammar's state.
    """

    def __init__(self, llama: Any, grammar: Any) -> None:
        import numpy as np

        llama_cpp = require_llama_cpp()
        self._llama_cpp = llama_cpp
        self.n_vocab = int(llama.n_vocab())
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            llama._model.vocab, grammar._grammar.encode("utf-8"),
            grammar._root.encode("utf-8"))
        if not self.grammar:
            raise ValueError("llama.cpp could not parse the output grammar")
        self._one = (llama_cpp.llama_token_data * 1)()
        self._one_array = llama_cpp.llama_token_data_array(
            data=self._one, size=1, selected=-1, sorted=False)
        self._all = np.zeros(self.n_vocab, dtype=np.dtype(
            [("id", np.int32), ("logit", np.float32), ("p", np.float32)]))
        self._all["id"] = np.arange(self.n_vocab, dtype=np.int32)
        self.full_checks = 0
        """How many choices needed the whole vocabulary checked."""

    def _allowed(self, token: int, logit: float) -> bool:
        import ctypes

        self._one[0].id, self._one[0].logit, self._one[0].p = token, logit, 0.0
        self._one_array.size, self._one_array.selected = 1, -1
        self._llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(self._one_array))
        return bool(self._one[0].logit != float("-inf"))

    def sample(self, ctx: Any, idx: int) -> int:
        """The greedy token under the grammar at output ``idx`` of the last decode; accepted."""
        import ctypes

        import numpy as np

        llama_cpp = self._llama_cpp
        logits = np.ctypeslib.as_array(ctx.get_logits_ith(idx), shape=(self.n_vocab,))
        token = int(np.argmax(logits))
        if not self._allowed(token, float(logits[token])):
            self.full_checks += 1
            cand = self._all
            cand["logit"] = logits
            cand["p"] = 0.0
            array = llama_cpp.llama_token_data_array(
                data=cand.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token_data)),
                size=self.n_vocab, selected=-1, sorted=False)
            llama_cpp.llama_sampler_apply(self.grammar, ctypes.byref(array))
            if array.size != self.n_vocab:
                raise RuntimeError("the grammar sampler changed the candidate array's size")
            token = int(cand["id"][int(np.argmax(cand["logit"]))])
        llama_cpp.llama_sampler_accept(self.grammar, token)
        return token

    def close(self) -> None:
        """Free the grammar sampler (idempotent)."""
        if self.grammar:
            self._llama_cpp.llama_sampler_free(self.grammar)
            self.grammar = None
