"""Sentence handles: numbered evidence sentences, and quotes copied from the chunk by code."""

from __future__ import annotations

import pytest

from grounded_rag.verification.citations import (
    check_citations,
    cite_handles,
    estimate_tokens,
    number_sentences,
    parse_handle,
    render_view,
    select_sentences,
)
from tests.fakes import evidence as ev

JA = ev("rules-ja#sec3", "第3条（在宅勤務手当）\n在宅勤務手当は月額5,000円とする。"
        "支給日は毎月25日とする。申請は前月末までに行う。", title="在宅勤務規程 > 第3条")
EN = ev("spec#sec2", "Battery: The X100 lasts up to 10 hours, e.g. when idle. "
        "Charging takes 2 hours. The case is blue.", title="X100 spec > Battery")
EVIDENCE = [JA, EN]


def _quote(citation):
    source = next(e for e in EVIDENCE if e["source_id"] == citation["source_id"])
    return source["text"][citation["start"]:citation["end"]]


def test_sentences_are_numbered_per_passage_in_japanese_and_english():
    view = number_sentences(EVIDENCE)
    handles = {h: n.sentence.text for h, n in view.by_handle().items()}
    assert handles == {
        "S1.1": "第3条（在宅勤務手当）",
        "S1.2": "在宅勤務手当は月額5,000円とする。",
        "S1.3": "支給日は毎月25日とする。",
        "S1.4": "申請は前月末までに行う。",
        "S2.1": "Battery: The X100 lasts up to 10 hours, e.g. when idle.",  # "e.g." not an end
        "S2.2": "Charging takes 2 hours.",
        "S2.3": "The case is blue.",
    }
    text = render_view(view, EVIDENCE, header="[{source_id}] {title}")
    assert text.startswith("[S1] 在宅勤務規程 > 第3条\nS1.1 第3条（在宅勤務手当）\nS1.2 ")
    assert "\n\n[S2] X100 spec > Battery\nS2.1 Battery:" in text


def test_handle_maps_to_the_sentence_with_offsets_into_the_chunk():
    view = number_sentences(EVIDENCE)
    (ja,) = cite_handles(["S1.3"], view, EVIDENCE, "支給日は毎月25日です。")
    assert ja == {"source_id": "rules-ja#sec3", "quote": "支給日は毎月25日とする。",
                  "start": JA["text"].index("支給日"), "end": JA["text"].index("申請"),
                  "match": 1.0}
    (en,) = cite_handles(["[S2.2]"], view, EVIDENCE, "Charging takes 2 hours.")
    assert en["quote"] == "Charging takes 2 hours." == _quote(en)
    assert en["source_id"] == "spec#sec2"


def test_adjacent_sentences_merge_into_one_span_and_others_stay_apart():
    view = number_sentences(EVIDENCE)
    cites = cite_handles(["S1.3", "S1.2", "S2.3", "S1.2"], view, EVIDENCE, "x")
    assert [c["source_id"] for c in cites] == ["rules-ja#sec3", "spec#sec2"]
    assert cites[0]["quote"] == "在宅勤務手当は月額5,000円とする。支給日は毎月25日とする。"
    assert cites[0]["quote"] == _quote(cites[0])
    assert cites[1]["quote"] == "The case is blue." == _quote(cites[1])
    apart = cite_handles(["S2.1", "S2.3"], view, EVIDENCE, "x")
    assert [c["quote"] for c in apart] == [
        "Battery: The X100 lasts up to 10 hours, e.g. when idle.", "The case is blue."]


def test_passage_handle_or_real_id_cites_the_closest_sentence():
    view = number_sentences(EVIDENCE)
    (by_handle,) = cite_handles(["S2"], view, EVIDENCE, "It charges in 2 hours.")
    (by_id,) = cite_handles(["spec#sec2"], view, EVIDENCE, "Charging takes 2 hours.")
    assert by_handle["quote"] == by_id["quote"] == "Charging takes 2 hours."


@pytest.mark.parametrize("handle", ["S1.9", "S3.1", "S7", "[S0.1]", "nonsense"])
def test_handle_that_names_no_shown_sentence_is_a_phantom(handle):
    view = number_sentences(EVIDENCE)
    (cite,) = cite_handles([handle], view, EVIDENCE, "x")
    assert cite["start"] == -1 and cite["quote"] == ""
    _, findings = check_citations([{"text": "x", "citations": [cite]}], EVIDENCE, threshold=0.85)
    assert [(f["type"], f["severity"]) for f in findings] == [("phantom_source", "critical")]


def test_sentence_left_out_of_the_view_is_a_phantom():
    view = number_sentences(EVIDENCE, shown={(0, 2), (1, 1)})
    assert sorted(view.by_handle()) == ["S1.2", "S2.1"]
    (cite,) = cite_handles(["S1.3"], view, EVIDENCE, "x")
    _, findings = check_citations([{"text": "x", "citations": [cite]}], EVIDENCE, threshold=0.85)
    assert "'S1.3' is not among the numbered sentences shown" in findings[0]["detail"]
    text = render_view(number_sentences(EVIDENCE, shown={(0, 1), (0, 3)}), EVIDENCE,
                       header="[{source_id}]")
    assert text == "[S1]\nS1.1 第3条（在宅勤務手当）\n…\nS1.3 支給日は毎月25日とする。"


def test_empty_handle_list_is_an_uncited_statement():
    view = number_sentences(EVIDENCE)
    assert cite_handles([], view, EVIDENCE, "x") == []
    assert cite_handles(["  "], view, EVIDENCE, "x") == []
    _, findings = check_citations([{"text": "x", "citations": []}], EVIDENCE, threshold=0.85)
    assert [f["type"] for f in findings] == ["uncited_statement"]


def test_copied_offsets_survive_the_citation_check_even_for_a_repeated_sentence():
    twice = ev("faq#sec1", "Yes. It is free. Yes. It is fast.")
    view = number_sentences([twice])
    (cite,) = cite_handles(["S1.3"], view, [twice], "x")
    assert (cite["start"], cite["end"]) == (17, 21)
    checked, findings = check_citations([{"text": "x", "citations": [cite]}], [twice],
                                        threshold=0.85)
    assert findings == []
    assert checked[0]["citations"][0] == {"source_id": "faq#sec1", "quote": "Yes.",
                                          "start": 17, "end": 21, "match": 1.0}


def test_parse_handle_forms():
    assert parse_handle("S2.3") == (2, 3)
    assert parse_handle("【S2．3】") == (2, 3)
    assert parse_handle("s10-2") == (10, 2)
    assert parse_handle("S2") == (2, None)
    assert parse_handle("spec#sec2") is None


# -- question-aware selection within a token budget ---------------------------------------

FILLER_EN = " ".join(f"Paragraph filler sentence number {i} talks about colours."
                     for i in range(30))
LONG_EN = ev("manual#sec4", FILLER_EN + " The warranty lasts 2 years from purchase. "
             "It covers the battery. " + FILLER_EN, title="Manual > Warranty")
OTHER = ev("other#sec1", "Unrelated text about shipping. " * 20, title="Shipping")


def test_no_budget_or_evidence_that_fits_shows_everything():
    assert select_sentences("How long is the warranty?", [LONG_EN, OTHER], 0) is None
    assert select_sentences("How long is the battery?", EVIDENCE, 10_000) is None


def test_budget_keeps_the_matching_sentence_with_its_neighbours():
    question = "How long does the warranty last?"
    shown = select_sentences(question, [LONG_EN, OTHER], 120)
    view = number_sentences([LONG_EN, OTHER], shown)
    texts = [n.sentence.text for n in view.passages[0]]
    answer_at = texts.index("The warranty lasts 2 years from purchase.")
    assert texts[answer_at + 1] == "It covers the battery."  # the neighbour comes along
    assert answer_at >= 1 and texts[answer_at - 1].startswith("Paragraph filler")
    handle = next(h for h, n in view.by_handle().items()
                  if n.sentence.text.startswith("The warranty"))
    assert handle == "S1.31"  # numbering counts every sentence of the chunk
    cost = sum(estimate_tokens(n.sentence.text) + 4 for p in view.passages for n in p)
    assert cost <= 120
    rendered = render_view(view, [LONG_EN, OTHER], header="[{source_id}] {title}")
    assert rendered.startswith("[S1] Manual > Warranty\nS1.1 ")  # leftover budget: the start
    assert "\n…\nS1.30 Paragraph filler" in rendered


def test_japanese_selection_prefers_the_sentence_with_the_asked_number():
    filler = "本規程は社員の働き方について定める。" * 12
    rules = ev("rules#sec4", filler + "在宅勤務手当は月額5,000円とする。" + filler,
               title="在宅勤務規程")
    shown = select_sentences("在宅勤務手当はいくらですか？", [rules], 80)
    view = number_sentences([rules], shown)
    assert "在宅勤務手当は月額5,000円とする。" in [n.sentence.text for n in view.passages[0]]
    assert len(view.passages[0]) <= 3


def test_a_budget_too_small_still_shows_the_best_sentence():
    shown = select_sentences("How long does the warranty last?", [LONG_EN], 1)
    view = number_sentences([LONG_EN], shown)
    assert [n.sentence.text for n in view.passages[0]] == [
        "The warranty lasts 2 years from purchase."]


def test_a_misnumbered_sentence_of_a_shown_passage_is_read_as_the_passage():
    """The model copied a shown sentence but numbered it wrongly (S1.9, not shown): the
    passage's shown sentence that shares the statement's words is cited; with no shared
    word it stays a phantom (test above)."""
    view = number_sentences(EVIDENCE, shown={(0, 2), (1, 1)})
    (cite,) = cite_handles(["S1.9"], view, EVIDENCE, "在宅勤務手当は月額5,000円です。")
    assert cite["quote"] == "在宅勤務手当は月額5,000円とする。" and cite["match"] == 1.0
    (cite,) = cite_handles(["S2.4"], view, EVIDENCE, "The X100 lasts up to 10 hours.")
    assert cite["source_id"] == "spec#sec2" and cite["start"] >= 0
    (cite,) = cite_handles(["S2.4"], view, EVIDENCE, "支給日は毎月25日。")
    assert cite["start"] == -1  # no word in common with passage 2's shown sentence


def test_a_statement_copied_from_another_passage_cites_the_sentence_it_copies():
    """The model copied a sentence of passage 1 and wrote passage 2's number: the copied
    sentence is cited, not one that holds none of the statement's words."""
    teller = ev("teller#0", "Edward Teller was a Hungarian-American theoretical physicist. "
                "He is known as the father of the hydrogen bomb.")
    gogh = ev("gogh#0", "Theo van Gogh was a Dutch film director, producer and actor.")
    evidence = [gogh, teller]
    view = number_sentences(evidence)
    statement = "Theo van Gogh was a Dutch film director, producer and actor."
    (cite,) = cite_handles(["S2.1"], view, evidence, statement)
    assert cite["source_id"] == "gogh#0" and cite["quote"] == gogh["text"]
    # a cited sentence that holds a fair part of the statement is kept
    (cite,) = cite_handles(["S2.1"], view, evidence,
                           "Edward Teller was a physicist, like Theo van Gogh.")
    assert cite["source_id"] == "teller#0"
    # a phantom handle stays a phantom, even for a copied statement
    cites = cite_handles(["S7"], view, evidence, statement)
    assert [c["start"] for c in cites] == [-1]


def test_the_graph_shows_the_selected_sentences_and_a_hidden_one_is_phantom():
    from grounded_rag import Context, build_graph
    from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer

    # A hidden sentence cited for words no shown sentence of its passage has: a phantom.
    hidden = answer(("Approved by the board.", "S1.5"))
    good = answer(("The warranty lasts 2 years from purchase.", "S1.31"))
    model = ScriptedChatModel(script={"CitedAnswer": [hidden, good]})
    graph = build_graph(retriever=StaticRetriever([LONG_EN, OTHER]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": "How long does the warranty last?"},
                       context=Context(evidence_tokens=120))
    prompt = model.calls_for("CitedAnswer")[0][-1].content
    assert "S1.31 The warranty lasts 2 years from purchase." in prompt
    assert "S1.5 " not in prompt and "Unrelated text" not in prompt
    assert out["status"] == "answered" and out["attempts"] == 2
    assert out["claims"][0]["citations"][0]["quote"] == "The warranty lasts 2 years from purchase."
    whole = ScriptedChatModel(script={"CitedAnswer": [good]})
    graph = build_graph(retriever=StaticRetriever([LONG_EN, OTHER]), generator=whole,
                        extractor="rules", verifier=ScriptedVerifier())
    graph.invoke({"question": "How long does the warranty last?"},
                 context=Context(evidence_tokens=0))
    assert "S1.5 " in whole.calls_for("CitedAnswer")[0][-1].content


def test_a_statement_that_is_only_a_handle_becomes_the_sentence_it_names():
    """「S1.2。」 as a statement's text: the model named the answering sentence instead of
    writing it. The statement becomes that sentence, copied and cited; a handle is never an
    answer's text."""
    from grounded_rag.nodes.write import _draft_from_reply
    from grounded_rag.schemas import CitedAnswer

    view = number_sentences(EVIDENCE)
    reply = CitedAnswer.model_validate({"answerable": True, "statements": [
        {"text": "S1.2。", "citations": ["S1.2"]},
        {"text": "S2.2", "citations": []},
        {"text": "S1.2 によれば月額5,000円です。", "citations": ["S1.2"]},
        # the revision prompt's note on a previous draft's citations, copied back
        {"text": "Charging takes 2 hours. (cites: S2.2)", "citations": ["S2.2"]},
        {"text": "(cites: S1.1)", "citations": []}]})
    draft = _draft_from_reply(reply, EVIDENCE, view)
    texts = [s["text"] for s in draft["statements"]]
    assert texts == ["在宅勤務手当は月額5,000円とする。", "Charging takes 2 hours.",
                     "S1.2 によれば月額5,000円です。", "Charging takes 2 hours."]
    assert [_quote(c) for c in draft["statements"][1]["citations"]] == ["Charging takes 2 hours."]
