"""Machine helpers of ``latency_bench.py``: the load line, the CPU burner, the judge's counter."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

BURNER = ("import time\nend = time.monotonic() + {seconds}\n"
          "while time.monotonic() < end:\n    pass\n")


def uptime() -> str:
    """``uptime``'s line (the load averages), or the load averages alone."""
    try:
        out = subprocess.run(["uptime"], capture_output=True, text=True, check=False, timeout=5)
        if out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    one, five, fifteen = os.getloadavg()
    return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"


def start_burner(seconds: float) -> subprocess.Popen[bytes]:
    """One busy-looping process, pinned to the last usable core, ending after ``seconds``."""
    proc = subprocess.Popen([sys.executable, "-c", BURNER.format(seconds=seconds)])
    try:
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(proc.pid, {cores[-1]})
    except (AttributeError, OSError):
        pass  # not pinnable here: it still holds one core's worth
    return proc


def stop_burner(proc: subprocess.Popen[bytes]) -> None:
    """Stop the burner (it would end by itself at its deadline anyway)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ScorerCounter:
    """Counts the local scorer's prompt evaluations (answerability check, verification), on
    its own context and after the generator's sources."""

    def __init__(self) -> None:
        self.calls = 0
        self.evaluated = 0
        self.reused = 0

    def install(self) -> None:
        # The judge scores on its own llama.cpp context (grounded_rag.local.probe).
        from grounded_rag.local.probe import EvalResult, HiddenStateReader

        original = HiddenStateReader.evaluate
        counter = self

        def evaluate(reader: Any, tokens: Any, **kwargs: Any) -> EvalResult:
            result = original(reader, tokens, **kwargs)
            counter.calls += 1
            counter.evaluated += result.evaluated
            counter.reused += result.reused
            return result

        HiddenStateReader.evaluate = evaluate  # type: ignore[method-assign]

        # Japanese claims are read after the generator's sources, on its own context.
        from grounded_rag.local.scorer import SupportScorer

        after = SupportScorer.read_after_sources

        def read_after_sources(scorer: Any, pairs: Any, **kwargs: Any) -> Any:
            stats = scorer.stats
            before = (stats.model_calls, stats.prompt_tokens, stats.reused_tokens)
            readings = after(scorer, pairs, **kwargs)
            counter.calls += stats.model_calls - before[0]
            counter.evaluated += stats.prompt_tokens - before[1]
            counter.reused += stats.reused_tokens - before[2]
            return readings

        SupportScorer.read_after_sources = read_after_sources  # type: ignore[method-assign]

    def snapshot(self) -> tuple[int, int, int]:
        return self.calls, self.evaluated, self.reused
