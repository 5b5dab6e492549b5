"""The llama.cpp thread policy: a pure function of usable cores and other processes' load."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from grounded_rag.local import runtime as rt
from grounded_rag.local.runtime import LoadMeter, explicit_threads, threads_for


@pytest.mark.parametrize(("cores", "load", "threads"), [
    (2, 0.0, 2), (2, 0.4, 2), (2, 0.5, 1), (2, 1.0, 1), (2, 1.6, 1), (2, 7.0, 1),
    (1, 0.0, 1), (1, 3.0, 1),
    (4, 1.0, 3), (8, 2.4, 6), (8, 2.5, 5), (16, 0.2, 16),
])
def test_one_thread_per_free_core(cores, load, threads):
    assert threads_for(cores, load) == threads


@pytest.mark.parametrize(("cores", "load"), [(0, 0.0), (-3, 1.0), (1, 100.0), (2, float("inf")),
                                             (2, float("nan")), (4, -2.0), (3, 1e12)])
def test_never_zero_and_never_more_than_the_cores(cores, load):
    assert 1 <= threads_for(cores, load) <= max(1, cores)


def test_explicit_threads_env(monkeypatch):
    monkeypatch.delenv("GROUNDED_RAG_THREADS", raising=False)
    assert explicit_threads() is None
    for value, expected in (("3", 3), ("0", None), ("", None), ("many", None), ("-1", None)):
        monkeypatch.setenv("GROUNDED_RAG_THREADS", value)
        assert explicit_threads() == expected


class _FakeLlama:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self._ctx = types.SimpleNamespace(ctx=object())


def _fake_llama_cpp(monkeypatch, tmp_path: Path):
    calls: list[tuple[int, int]] = []
    fake = types.SimpleNamespace(
        Llama=_FakeLlama,
        llama_set_n_threads=lambda ctx, n, nb: calls.append((n, nb)),
    )
    monkeypatch.setitem(sys.modules, "llama_cpp", fake)
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(rt, "ensure_model", lambda model, progress=True: gguf)
    monkeypatch.setattr(rt, "_RUNTIMES", {})
    monkeypatch.setattr(rt, "cpu_cores", lambda: 2)
    return calls, gguf


def test_explicit_thread_count_always_wins(monkeypatch, tmp_path):
    calls, gguf = _fake_llama_cpp(monkeypatch, tmp_path)
    monkeypatch.setattr(LoadMeter, "others", lambda self: 0.0)
    monkeypatch.setenv("GROUNDED_RAG_THREADS", "1")
    runtime = rt.get_runtime(str(gguf))
    assert runtime.llama.kwargs["n_threads"] == runtime.llama.kwargs["n_threads_batch"] == 1
    assert runtime.fixed_threads
    runtime._checked_at = -1e9
    assert runtime.adapt_threads() == 1 and calls == []


def test_threads_follow_the_load_at_load_time_and_between_calls(monkeypatch, tmp_path):
    calls, gguf = _fake_llama_cpp(monkeypatch, tmp_path)
    monkeypatch.delenv("GROUNDED_RAG_THREADS", raising=False)
    load = {"now": 1.0}
    monkeypatch.setattr(LoadMeter, "others", lambda self: load["now"])
    runtime = rt.get_runtime(str(gguf))
    assert runtime.llama.kwargs["n_threads"] == 1 and not runtime.fixed_threads
    load["now"] = 0.0
    assert runtime.adapt_threads() == 1  # checked at load time: not again so soon
    runtime._checked_at = -1e9
    assert runtime.adapt_threads() == 2 and calls == [(2, 2)]
    runtime._checked_at = -1e9
    assert runtime.adapt_threads() == 2 and calls == [(2, 2)]  # unchanged: no call


def test_load_meter_subtracts_this_process_and_falls_back_to_loadavg(monkeypatch):
    meter = LoadMeter(sample=0.0)
    meter._last = (0.0, 10.0, 1.0)  # (wall, busy CPU s on our cores, our own CPU s)
    monkeypatch.setattr(meter, "_reading", lambda: (2.0, 13.0, 2.0))  # 3 busy s, 1 ours, 2 s
    assert meter.others() == pytest.approx(1.0)
    monkeypatch.setattr(rt, "_busy_seconds", lambda cpus: None)
    monkeypatch.setattr(rt.os, "getloadavg", lambda: (1.5, 1.0, 0.5))
    assert LoadMeter().others() == 1.5


def test_load_meter_reads_this_machine():
    others = LoadMeter(sample=0.05).others()
    assert 0.0 <= others <= rt.cpu_cores() + 0.5
