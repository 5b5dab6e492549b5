"""The generator context's prompt-state tap on the real model (slow)."""

import json

import numpy as np
import pytest

from tests.integration.test_speculative import SOURCES_EN, SOURCES_JA, _messages, _runtime, _schema

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def rt():
    return _runtime()


def _greedy(rt, tokens):  # type: ignore[no-untyped-def]
    from grounded_rag.local.chat import turn_end
    from grounded_rag.local.decoding import complete, grammar_for

    rt.llama.n_tokens = 0  # from scratch: a cached prefix can flip a greedy near-tie
    return complete(rt, tokens, max_tokens=120, grammar=grammar_for(_schema()),
                    stop=[turn_end(rt)]).text


@pytest.mark.parametrize("lang,sources,question", [
    ("en", SOURCES_EN, "How long does the battery last?"),
    ("ja", SOURCES_JA, "在宅勤務手当は月にいくらですか？"),
])
def test_the_tap_reads_the_scoring_contexts_state_and_leaves_greedy_output_alone(
        rt, lang, sources, question):
    from grounded_rag.local.probe import HiddenStateReader
    from grounded_rag.local.prompt_state import tap_for
    from grounded_rag.local.runtime import render_chat

    tokens = render_chat(rt, _messages(lang, sources, question))
    with rt.lock:
        before = _greedy(rt, tokens) if rt.state_tap is None else None
        tap = tap_for(rt, 16)
        rt.llama.n_tokens = 0
        state = tap.evaluate(tokens)
        again = tap.evaluate(tokens)  # the cached prompt: only the last token re-evaluated
        after = _greedy(rt, tokens)
        reader = HiddenStateReader(rt, layers=(16,))
        reader.evaluate(tokens)
        reference = reader.hidden()[0]
    cosine = float(state @ reference / np.linalg.norm(state) / np.linalg.norm(reference))
    assert cosine > 0.999
    assert float(again @ state / np.linalg.norm(again) / np.linalg.norm(state)) > 0.999
    if before is not None:
        assert after == before
    assert '"answerable"' in after


def test_the_chat_model_decides_from_the_prompt_state_and_reports_it(rt):
    from grounded_rag.local.chat import ChatLocal
    from grounded_rag.local.prompt_state import StateThreshold, state_head

    if state_head() is None:
        pytest.fail("the shipped prompt-state head does not load for the default model")
    messages = _messages("en", SOURCES_EN, "How long does the battery last?")
    read: list[float] = []

    def rule(score: float) -> float:
        read.append(score)
        return -12.0  # whatever the state: write

    fmt = _schema()
    model = ChatLocal(max_tokens=120, decide={"answerable": StateThreshold("en", rule, 12.0)})
    reply = model.invoke(messages, response_format=fmt)
    choices = reply.response_metadata["choices"]
    assert read and choices["prompt_state"] == pytest.approx(read[0], abs=1e-3)
    assert json.loads(reply.content)["answerable"] is True
    never = ChatLocal(max_tokens=120, decide={"answerable": StateThreshold(
        "en", lambda s: 12.0, -12.0)}).invoke(messages, response_format=fmt)
    assert json.loads(never.content)["answerable"] is False
