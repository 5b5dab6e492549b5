"""The generator's ``answerable`` value, read as a score and decided by a threshold (real model)."""

import pytest

from tests.integration.test_speculative import SOURCES_EN, SOURCES_JA, _messages, _runtime, _schema

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def rt():
    return _runtime()


def _complete(rt, messages, choices, draft=0):  # type: ignore[no-untyped-def]
    from grounded_rag.local.chat import turn_end
    from grounded_rag.local.decoding import complete, grammar_for
    from grounded_rag.local.runtime import render_chat

    with rt.lock:
        # From scratch each time: a cached prompt prefix can flip a greedy near-tie
        # (grounded_rag.local.decoding), which is not what these tests are about.
        rt.llama.n_tokens = 0
        tokens = render_chat(rt, messages)
        return complete(rt, tokens, max_tokens=160, grammar=grammar_for(_schema()),
                        stop=[turn_end(rt)], choices=choices, draft=draft)


@pytest.mark.parametrize("lang,sources,question", [
    ("en", SOURCES_EN, "How long does the battery last?"),
    ("ja", SOURCES_JA, "在宅勤務手当は月にいくらですか？"),
])
def test_scoring_the_choice_leaves_the_greedy_output_unchanged(rt, lang, sources, question):
    import json

    from grounded_rag.local.decoding import Choice

    messages = _messages(lang, sources, question)
    plain = _complete(rt, messages, ())
    scored = _complete(rt, messages, [Choice("answerable", '"answerable":')])
    assert scored.tokens == plain.tokens
    assert plain.choices == {}
    score = scored.choices["answerable"]
    assert json.loads(scored.text)["answerable"] is (score >= 0)
    assert score > 0  # the sources answer these questions


@pytest.mark.parametrize("lang,sources,question", [
    ("en", SOURCES_EN, "How long does the battery last?"),
    ("ja", SOURCES_JA, "在宅勤務手当は月にいくらですか？"),
])
def test_a_drafted_frame_reads_and_decides_the_choice_as_single_passes_do(
        rt, lang, sources, question):
    """With an earlier reply to draft from, the JSON frame after ``"answerable":`` is
    checked in drafted passes; up to the choice, one token per pass, so its score is the one
    its thresholds were fitted on, and the nonempty guard reads drafted positions."""
    import json

    from grounded_rag.local.decoding import Choice
    from grounded_rag.local.lookup import RecentOutputs
    from grounded_rag.local.runtime import render_chat
    from tests.integration.test_speculative import _same_or_near_tie

    messages = _messages(lang, sources, question)
    choice = [Choice("answerable", '"answerable":')]
    single = _complete(rt, messages, choice)
    rt.replies = RecentOutputs()
    _complete(rt, messages, ())  # the reply to draft the frame from
    drafted = _complete(rt, messages, choice, draft=4)
    assert drafted.accepted > 0 and drafted.passes < single.passes
    assert drafted.choices["answerable"] == pytest.approx(single.choices["answerable"], abs=1e-3)
    # The same tokens, or a first difference after the choice at a near-tie of single passes.
    if _same_or_near_tie(rt, render_chat(rt, messages), single.tokens, drafted.tokens,
                         grammar=True):
        assert json.loads(drafted.text)["answerable"] == json.loads(single.text)["answerable"]
    # A threshold above the score decides false; a low one with the guard writes statements.
    declined = _complete(rt, messages, [Choice("answerable", '"answerable":',
                                               single.choices["answerable"] + 2.0)], draft=4)
    assert json.loads(declined.text)["answerable"] is False
    forced = _complete(rt, messages, [Choice("answerable", '"answerable":', -50.0,
                                             nonempty='"statements":[')], draft=4)
    assert json.loads(forced.text)["statements"]


def test_a_threshold_decides_the_value_and_the_rest_follows_the_grammar(rt):
    import json

    from grounded_rag.local.decoding import Choice

    messages = _messages("en", SOURCES_EN, "How long does the battery last?")
    free = _complete(rt, messages, [Choice("answerable", '"answerable":')])
    score = free.choices["answerable"]
    declined = _complete(rt, messages, [Choice("answerable", '"answerable":', score + 1.0)])
    reply = json.loads(declined.text)
    assert reply["answerable"] is False
    assert declined.choices["answerable"] == pytest.approx(score, abs=0.05)
    # Below the score the model's own choice (true) stands, and the text is the same.
    kept = _complete(rt, messages, [Choice("answerable", '"answerable":', score - 1.0)])
    assert json.loads(kept.text) == json.loads(free.text)


def test_forcing_true_makes_the_model_write_statements(rt):
    import json

    from grounded_rag.local.decoding import Choice

    # Nothing in the sources says where the device is made: greedy declines or not, a low
    # threshold must still give a well-formed reply with answerable true.
    messages = _messages("en", SOURCES_EN, "Where is the Aozora A1 manufactured?")
    forced = _complete(rt, messages, [Choice("answerable", '"answerable":', -50.0)])
    reply = json.loads(forced.text)
    assert reply["answerable"] is True
    assert forced.finish_reason == "stop"


def test_chat_local_reports_the_score_in_the_reply_metadata(rt):
    from langchain_core.messages import HumanMessage, SystemMessage

    from grounded_rag._structured import invoke_structured_raw
    from grounded_rag.local.chat import ChatLocal
    from grounded_rag.prompts import generate
    from grounded_rag.schemas import CitedAnswer

    messages = [SystemMessage(generate.SYSTEM["ja"]),
                HumanMessage(generate.USER["ja"].format(sources=SOURCES_JA,
                                                        question="在宅勤務手当は月にいくらですか？"))]
    reply, raw = invoke_structured_raw(ChatLocal(decide={"answerable": 99.0}), CitedAnswer,
                                       messages)
    assert raw is not None and "answerable" in raw.response_metadata["choices"]
    assert reply.answerable is False and reply.statements == []
