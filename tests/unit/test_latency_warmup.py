"""The latency benchmark warms up on the first question of each language it will time."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_one_warm_up_question_per_language_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import latency_bench

    try:
        questions = [("demo", "本契約の有効期間はいつまでですか？", "g1", []),
                     ("demo", "How long does the battery last?", "g1", []),
                     ("demo", "在宅勤務手当はいくらですか？", "g1", []),
                     ("jsquad", "What is the capital of Australia?", "g2", ["x"])]
        chosen = latency_bench.warmup_questions(questions)
        assert [q[1] for q in chosen] == ["本契約の有効期間はいつまでですか？",
                                          "How long does the battery last?"]
        assert latency_bench.warmup_questions(questions[2:3]) == questions[2:3]
        assert latency_bench.warmup_questions([]) == []
    finally:
        for name in ("latency_bench", "_common"):
            sys.modules.pop(name, None)
