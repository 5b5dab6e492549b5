"""Sentence handles: numbered evidence sentences, and quotes copied from the chunk by code."""

from __future__ import annotations

import pytest

from grounded_rag.verification.citations import check_citations
from grounded_rag.verification.handles import (
    cite_handles,
    number_sentences,
    parse_handle,
    render_view,
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
