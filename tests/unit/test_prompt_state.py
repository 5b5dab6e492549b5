"""The generator's prompt state as a decision score: the combiner, the chat model, the head."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from grounded_rag.local.heads import Classifier, JudgeHead
from grounded_rag.local.prompt_state import StateThreshold, head_score
from grounded_rag.verification.decision import Combiner, Decision
from tests.unit.test_decision import ScoredLocalModel

PLAIN = {"en": Combiner(weights={"generator": 1.0}, bias=0.0, cut=0.0)}
FLOORS = {"en": {"balanced": -1.0, "high_precision": 0.5}}


def test_a_prompt_state_below_the_floor_refuses_and_above_it_the_combiner_decides():
    d = Decision(combiners=PLAIN, state_floors=FLOORS, shifts={"high_precision": 2.0})
    assert d.reads_state("en") and not d.reads_state("ja")
    assert d.state_floor("en", "fast") is None and d.state_floor("en") == -1.0

    def t(state: float | None, point: str = "balanced") -> float | None:
        return d.generator_threshold("en", answerability=None, relevance=None, gate=None,
                                     prompt_state=state, operating_point=point)

    assert t(None) == 0.0 and t(-0.5) == 0.0 and t(3.0) == 0.0
    assert t(-1.5) == math.inf
    assert t(0.0, "high_precision") == math.inf and t(0.6, "high_precision") == 2.0
    assert t(-9.0, "fast") == 0.0  # no floor at this operating point


def _run(monkeypatch: Any, *, generator: float, state: float | None) -> dict[str, Any]:
    from grounded_rag.graph import build_graph
    from grounded_rag.nodes import write
    from tests.fakes import ScriptedVerifier, StaticRetriever

    monkeypatch.setattr(write, "DEFAULT_DECISION",
                        Decision(combiners=PLAIN, state_floors=FLOORS))
    evidence = [{"source_id": "doc:a#sec0", "doc_id": "doc", "title": "Spec", "url": "",
                 "text": "The Aozora A1 battery lasts up to 10 hours.", "score": 1.0,
                 "relevance": 0.9}]
    model = ScoredLocalModel(score=generator, state_score=state, script={"CitedAnswer": [
        {"answerable": True, "statements": [{"text": "The battery lasts up to 10 hours.",
                                             "citations": ["S1.1"]}]}]})
    graph = build_graph(retriever=StaticRetriever(evidence), generator=model,
                        verifier=ScriptedVerifier())
    return graph.invoke({"question": "How long does the battery last?"},
                        {"configurable": {"answerability_check": "off",
                                          "extractor_model": "rules"}})


def test_a_prompt_that_reads_answerable_leaves_the_decision_to_the_combiner(monkeypatch):
    out = _run(monkeypatch, generator=0.5, state=2.0)
    assert out["status"] == "answered"
    assert out["stage_scores"]["prompt_state"] == 2.0
    assert out["stage_scores"]["generator"] == 0.5
    out = _run(monkeypatch, generator=-0.5, state=2.0)
    assert out["status"] == "abstained"


def test_a_prompt_that_reads_unanswerable_refuses_even_a_confident_generator(monkeypatch):
    out = _run(monkeypatch, generator=5.0, state=-3.0)
    assert out["status"] == "abstained" and out["decided_by"] == "generator"
    detail = next(f["detail"] for f in out["findings"] if f["type"] == "generator_declined")
    assert "prompt-state score -3.00 is below the floor -1.00" in detail


def test_without_a_head_for_the_model_the_plain_combiner_decides(monkeypatch):
    out = _run(monkeypatch, generator=-1.0, state=None)
    assert out["status"] == "abstained"
    assert "prompt_state" not in out["stage_scores"]
    assert _run(monkeypatch, generator=0.5, state=None)["status"] == "answered"


def test_the_chat_model_resolves_a_state_threshold_before_decoding(monkeypatch):
    from grounded_rag.local import prompt_state
    from grounded_rag.local.chat import ChatLocal
    from grounded_rag.local.decoding import Choice

    seen: list[Any] = []

    def resolve(rt: Any, tokens: Any, deferred: StateThreshold, model: Any = None) -> Any:
        seen.append((tokens, deferred.language))
        return 1.25, deferred.rule(1.25)

    monkeypatch.setattr(prompt_state, "resolve", resolve)
    rule = StateThreshold(language="ja", rule=lambda s: 2.0 - s, fallback=0.3)
    choices = [Choice("answerable", '"answerable":', threshold=rule), Choice("x", '"x":', 1.0)]
    out, read = ChatLocal()._resolve_state(object(), [1, 2, 3], choices)  # type: ignore[arg-type]
    assert [c.threshold for c in out] == [0.75, 1.0]
    assert read == {"prompt_state": 1.25} and seen == [([1, 2, 3], "ja")]


def test_the_tap_is_installed_before_the_system_prompt_is_restored(monkeypatch):
    """Installing the tap replaces the context: after a restore it would throw the restored
    system prompt away, and a new process's first answer would evaluate it again."""
    import threading
    import types

    from langchain_core.messages import HumanMessage, SystemMessage

    from grounded_rag.local import chat
    from grounded_rag.local.decoding import Completion

    order: list[str] = []
    rt = types.SimpleNamespace(
        lock=threading.RLock(), prefix_cache=True, model_name="fake",
        adapt_threads=lambda: 1,
        system_prefix_length=lambda messages, tokens: 2,
        keep_prefix=lambda tokens, length: order.append("restore") or length)
    monkeypatch.setattr(chat.ChatLocal, "runtime", lambda self: rt)
    monkeypatch.setattr(chat, "render_chat", lambda runtime, messages: [1, 2, 3])
    monkeypatch.setattr(chat, "turn_end", lambda runtime: "<end>")
    monkeypatch.setattr(chat, "prepare_tap", lambda runtime, model: order.append("tap"))
    monkeypatch.setattr(chat.ChatLocal, "_resolve_state",
                        lambda self, runtime, tokens, choices: (order.append("read") or
                                                                (choices, {})))
    monkeypatch.setattr(chat, "complete", lambda *a, **k: order.append("write") or Completion(
        text='{"answerable": false, "statements": []}', tokens=[5], finish_reason="stop",
        prompt_tokens=3))
    rule = StateThreshold(language="ja", rule=lambda s: s, fallback=0.0)
    model = chat.ChatLocal(decide={"answerable": rule})
    fmt = {"type": "json_object", "schema": {"type": "object", "properties": {
        "answerable": {"type": "boolean"}, "statements": {"type": "array"}}}}
    model.invoke([SystemMessage("sys"), HumanMessage("q")], response_format=fmt)
    assert order == ["tap", "restore", "read", "write"]
    # Without a prompt-state threshold no tap is installed.
    order.clear()
    chat.ChatLocal(decide={"answerable": 0.0}).invoke([SystemMessage("sys"), HumanMessage("q")],
                                                      response_format=fmt)
    assert order == ["restore", "read", "write"]


def test_the_head_score_is_the_logistic_score_of_the_standardised_state_and_language():
    n = 4
    head = JudgeHead(task="prompt_state", layers=(16,), extras=("is_ja",), use_margin=False,
                     mean=np.zeros(n + 1, dtype=np.float32), std=np.full(n + 1, 2.0,
                                                                         dtype=np.float32),
                     classifiers={"answerable": Classifier(None, None, np.array(
                         [1.0, 0.0, 0.0, -1.0, 3.0], dtype=np.float32), -0.5)},
                     thresholds={}, meta={})
    hidden = np.array([4.0, 7.0, 7.0, 2.0], dtype=np.float32)
    assert head_score(head, hidden, "en") == pytest.approx(4 / 2 - 2 / 2 - 0.5)
    assert head_score(head, hidden, "ja") == pytest.approx(4 / 2 - 2 / 2 + 3 / 2 - 0.5)


def test_the_shipped_head_matches_the_running_prompts_and_the_decision_reads_it():
    """A change of the generator prompts changes the fingerprint: refit the head then."""
    from grounded_rag.local.prompt_state import TASK, state_head
    from grounded_rag.local.verifier import load_default_head
    from grounded_rag.verification.decision import DEFAULT_DECISION

    head = load_default_head(TASK)  # raises HeadMismatchError on another fingerprint
    assert head.layers == (16,) and head.extras == ("is_ja",)
    assert state_head() is not None
    assert all(DEFAULT_DECISION.reads_state(lang) for lang in ("ja", "en"))
    assert DEFAULT_DECISION.state_floor("en", "fast") is None


def test_the_switch_turns_the_head_off(monkeypatch):
    from grounded_rag.local.prompt_state import SWITCH_ENV, state_head

    monkeypatch.setenv(SWITCH_ENV, "off")
    assert state_head() is None
