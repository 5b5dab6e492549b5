"""The system prompt's KV cache survives other prompts: saved once, restored later (fake llama)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np

from grounded_rag.local.runtime import LocalRuntime

SYSTEM = list(range(100, 140))  # 40 tokens: a fixed system prompt


class FakeLlama:
    """Records evaluations; its 'KV cache' is the list of evaluated tokens."""

    def __init__(self) -> None:
        self.input_ids = np.zeros(512, dtype=np.intc)
        self.n_tokens = 0
        self.evaluated: list[list[int]] = []
        self._ctx = types.SimpleNamespace(ctx="ctx")
        self._requires_eval = False

    def eval(self, tokens):
        self.evaluated.append(list(tokens))
        self.input_ids[self.n_tokens:self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)

    def n_ctx(self):
        return 512


def _fake_llama_cpp(monkeypatch, llama: FakeLlama) -> dict:
    state = {"restored": 0}

    def get_data(ctx, buffer, size, seq):
        data = bytes(np.asarray(llama.input_ids[:llama.n_tokens], dtype=np.uint8))
        buffer[:len(data)] = data
        return len(data)

    def set_data(ctx, buffer, size, seq):
        state["restored"] += 1
        return size

    fake = types.SimpleNamespace(
        llama_get_memory=lambda ctx: "memory",
        llama_memory_clear=lambda memory, data: None,
        llama_state_seq_get_size=lambda ctx, seq: llama.n_tokens,
        llama_state_seq_get_data=get_data,
        llama_state_seq_set_data=set_data,
    )
    monkeypatch.setitem(sys.modules, "llama_cpp", fake)
    return state


def _runtime(llama: FakeLlama) -> LocalRuntime:
    return LocalRuntime(path=Path("m.gguf"), llama=llama, model_name="fake",  # type: ignore[arg-type]
                        n_threads=1, load_seconds=0.0)


def test_system_prefix_is_evaluated_once_then_restored(monkeypatch):
    llama = FakeLlama()
    state = _fake_llama_cpp(monkeypatch, llama)
    rt = _runtime(llama)
    prompt = SYSTEM + [1, 2, 3]
    assert rt.keep_prefix(prompt, len(SYSTEM)) == 0
    assert llama.evaluated == [SYSTEM] and llama.n_tokens == len(SYSTEM)
    assert list(rt._prefixes) == [tuple(SYSTEM)]
    # The context already starts with it: nothing to do.
    assert rt.keep_prefix(SYSTEM + [4, 5], len(SYSTEM)) == 0 and state["restored"] == 0
    # Another prompt takes the context; the system prompt comes back from the saved copy.
    llama.n_tokens = 0
    llama.eval([7] * 60)
    assert rt.keep_prefix(prompt, len(SYSTEM)) == len(SYSTEM)
    assert state["restored"] == 1 and llama.n_tokens == len(SYSTEM)
    assert list(llama.input_ids[:len(SYSTEM)]) == SYSTEM and llama._requires_eval
    assert llama.evaluated[-1] == [7] * 60  # no evaluation of the system prompt again


def test_short_prefixes_and_a_disabled_cache_do_nothing(monkeypatch):
    llama = FakeLlama()
    _fake_llama_cpp(monkeypatch, llama)
    rt = _runtime(llama)
    assert rt.keep_prefix([1, 2, 3, 4], 3) == 0 and llama.evaluated == []
    rt.prefix_cache = False
    assert rt.keep_prefix(SYSTEM + [1], len(SYSTEM)) == 0 and llama.evaluated == []


def test_only_the_last_few_prefixes_are_kept(monkeypatch):
    from grounded_rag.local.runtime import MAX_PREFIXES

    llama = FakeLlama()
    _fake_llama_cpp(monkeypatch, llama)
    rt = _runtime(llama)
    for k in range(MAX_PREFIXES + 2):
        system = [k] * 40
        llama.n_tokens = 0
        rt.keep_prefix(system + [1], 40)
    assert len(rt._prefixes) == MAX_PREFIXES
    assert tuple([0] * 40) not in rt._prefixes
