"""The system prompt's KV cache survives other prompts: saved once, restored later (fake llama)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

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


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch, tmp_path):
    """Saved prefixes go to this test's folder, never the user's cache."""
    monkeypatch.setenv("GROUNDED_RAG_CACHE", str(tmp_path))
    monkeypatch.delenv("GROUNDED_RAG_PREFIX_DISK", raising=False)


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


def test_a_new_process_restores_the_system_prompt_from_disk(monkeypatch, tmp_path):
    from grounded_rag.local import prefix_store

    first = FakeLlama()
    _fake_llama_cpp(monkeypatch, first)
    prompt = SYSTEM + [1, 2, 3]
    assert _runtime(first).keep_prefix(prompt, len(SYSTEM)) == 0
    assert first.evaluated == [SYSTEM]
    saved = list((tmp_path / prefix_store.DIR_NAME).glob("*.kv"))
    assert len(saved) == 1 and saved[0].read_bytes() == bytes(SYSTEM)
    # A new runtime (a new process): nothing in memory, the copy on disk is restored.
    second = FakeLlama()
    state = _fake_llama_cpp(monkeypatch, second)
    rt = _runtime(second)
    assert rt.keep_prefix(prompt, len(SYSTEM)) == len(SYSTEM)
    assert state["restored"] == 1 and second.evaluated == []
    assert list(second.input_ids[:len(SYSTEM)]) == SYSTEM and tuple(SYSTEM) in rt._prefixes
    # Another system prompt has another file; switched off, nothing is read or written.
    monkeypatch.setenv(prefix_store.SWITCH_ENV, "off")
    third = FakeLlama()
    _fake_llama_cpp(monkeypatch, third)
    other = [9] * 40
    assert _runtime(third).keep_prefix(prompt, len(SYSTEM)) == 0
    assert _runtime(third).keep_prefix(other + [1], 40) == 0
    assert third.evaluated == [SYSTEM, other]
    assert len(list((tmp_path / prefix_store.DIR_NAME).glob("*.kv"))) == 1


def test_a_refused_copy_on_disk_is_evaluated_again_and_replaced(monkeypatch, tmp_path):
    from grounded_rag.local import prefix_store

    llama = FakeLlama()
    state = _fake_llama_cpp(monkeypatch, llama)
    rt = _runtime(llama)
    prompt = SYSTEM + [1]
    stale = tmp_path / prefix_store.DIR_NAME / f"{prefix_store.key(rt, SYSTEM)}.kv"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"written by another llama.cpp")
    sys.modules["llama_cpp"].llama_state_seq_set_data = (  # llama.cpp refuses it
        lambda ctx, buffer, size, seq: state.__setitem__("restored", -1) or 0)
    assert rt.keep_prefix(prompt, len(SYSTEM)) == 0
    assert state["restored"] == -1 and llama.evaluated == [SYSTEM]
    assert stale.read_bytes() == bytes(SYSTEM)  # evaluated afresh and saved again


def test_only_the_last_few_files_are_kept(monkeypatch, tmp_path):
    import os

    from grounded_rag.local import prefix_store

    llama = FakeLlama()
    _fake_llama_cpp(monkeypatch, llama)
    rt = _runtime(llama)
    for k in range(prefix_store.MAX_FILES + 3):
        llama.n_tokens = 0
        rt.keep_prefix([k] * 40 + [1], 40)
        newest = max((tmp_path / prefix_store.DIR_NAME).glob("*.kv"), key=os.path.getmtime)
        os.utime(newest, (1000 + k, 1000 + k))  # distinct ages, oldest first
    files = list((tmp_path / prefix_store.DIR_NAME).glob("*.kv"))
    assert len(files) == prefix_store.MAX_FILES
    assert f"{prefix_store.key(rt, [0] * 40)}.kv" not in {f.name for f in files}
