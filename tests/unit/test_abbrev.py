"""A question for a name's other form, answered by the sentence that writes both."""

from __future__ import annotations

from grounded_rag.verification.abbrev import asked_form, paired_form
from grounded_rag.verification.answer_language import language_findings
from grounded_rag.verification.gap import gap_fillers, gap_word
from tests.fakes import ScriptedVerifier, answer, calls_by_schema
from tests.fakes import evidence as ev
from tests.unit.test_graph import make

PKO = ("最初の40年間においては停戦監視団の活動が主要であったが、1989年に"
       "国際連合ナミビア独立支援グループ (UNTAG) の下で、歴史上初めて文民による選挙監視活動が"
       "実施された。")
JCP = "日本共産党（にほんきょうさんとう、英: Japanese Communist Party、略称: JCP）は、日本の政党。"


def _ev(*texts: str) -> list[dict]:
    return [ev(f"d#{i}", t) for i, t in enumerate(texts)]  # type: ignore[misc]


def test_the_form_asked_for():
    assert asked_form("UNTAGの正式名称は") == ("UNTAG", "long")
    assert asked_form("UNAVEM IIは何の略") == ("UNAVEM II", "long")
    assert asked_form("日本共産党の略称は？") == ("日本共産党", "short")
    assert asked_form("What does UNTAG stand for?") == ("UNTAG", "long")
    assert asked_form("What is the abbreviation of the Japanese Communist Party?") == (
        "Japanese Communist Party", "short")
    assert asked_form("UNTAGはいつ活動したか") is None


def test_the_other_form_written_beside_it():
    assert paired_form("UNTAGの正式名称は", _ev(PKO)) == "国際連合ナミビア独立支援グループ"
    assert paired_form("国際連合ナミビア独立支援グループの略称は", _ev(PKO)) == "UNTAG"
    assert paired_form("日本共産党の略称は", _ev(JCP)) is None  # a list in the bracket: no one form
    assert paired_form("日本共産党の略称は", _ev("日本共産党（略称: JCP）は政党。")) == "JCP"
    assert paired_form("What does UNTAG stand for?", _ev(
        "In 1989 the United Nations Transition Assistance Group (UNTAG) arrived.")) == (
        "United Nations Transition Assistance Group")
    # a reading in brackets is no abbreviation; a form the question writes is not asked
    assert paired_form("国際連合平和維持軍の略称は", _ev(
        "国際連合平和維持軍（こくさいれんごうへいわいじぐん）という。")) is None
    assert paired_form("日本建築家協会の略称はJIA、では国際建築家連合の略称は?", _ev(
        "日本建築家協会 (JIA) は国際建築家連合に加盟する。")) is None
    # two sentences that pair it differently pin nothing
    assert paired_form("UNTAGの正式名称は",
                       _ev(PKO, "国連移行支援グループ (UNTAG) とも訳す。")) is None


def test_the_pair_fills_the_question_and_names_what_is_asked():
    assert gap_fillers("UNTAGの正式名称は", _ev(PKO)) == [("国際連合ナミビア独立支援グループ", PKO)]
    assert gap_word("UNTAGの正式名称は") == "UNTAGの正式名称"


def test_a_latin_name_its_japanese_quote_writes_is_not_another_language():
    quoted = {"text": "UNTAG", "citations": [{"quote": PKO}]}
    assert language_findings([quoted], "ja") == []  # type: ignore[list-item]
    sentence = {"text": "UNTAG is the group", "citations": [{"quote": PKO}]}
    assert [f["type"] for f in language_findings([sentence], "ja")] == [  # type: ignore[list-item]
        "answer_language"]


def test_a_draft_that_misses_the_pinned_word_is_revised_to_it_without_the_model():
    docs = (ev("pko#0", PKO, title="国際連合平和維持活動"),)
    # the model answers with the name asked about, twice if it were asked again
    graph, model, _, _ = make({"CitedAnswer": [answer(("UNTAG", "pko#0"))] * 3}, evidence=docs,
                              verifier=ScriptedVerifier(lambda claim: ("supported", "")))
    out = graph.invoke({"question": "UNTAGの正式名称は"})
    assert out["status"] == "answered"
    assert out["answer"] == "国際連合ナミビア独立支援グループ[1]。"
    assert out["claims"][0]["citations"][0]["quote"] == PKO
    assert calls_by_schema(model) == {"CitedAnswer": 1}  # the revision called no model
    assert out["attempts"] == 2


def test_no_rewrite_when_the_draft_wrote_it():
    docs = (ev("pko#0", PKO, title="国際連合平和維持活動"),)
    draft = answer(("国際連合ナミビア独立支援グループ", "pko#0"))
    graph, model, _, _ = make({"CitedAnswer": [draft]}, evidence=docs,
                              verifier=ScriptedVerifier(lambda claim: ("supported", "")))
    out = graph.invoke({"question": "UNTAGの正式名称は"})
    assert out["status"] == "answered" and out["attempts"] == 1
    assert "pinned_rewrite" not in [f["type"] for f in out["findings"]]
