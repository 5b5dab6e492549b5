"""Statements that cite only passages the relevance gate says are not about the question."""

from __future__ import annotations

from grounded_rag import Context, build_graph
from grounded_rag.verification.on_question import below_gate_statements, source_findings
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

# A Japanese era's passage for an English question (cross-language gate 0.01), and two
# English passages about other things that only filled the list (English gate 0.004).
ERA = ev("era#sec1", "この改元は改元の決定から日付までを幕府側の事実上の指定で決められたもの"
         "である。", relevance=0.0255, title="享保")
CITY = ev("city#sec1", "As of the 2010 census, the city of Schenectady had a population of 66,135.",
          relevance=0.0, title="Elston Hall")
FERN = ev("fern#sec1", "Cibotium is a genus of 11 species of tropical tree fern.",
          relevance=0.0001, title="Cibotium")
QUESTION = "Who effectively decided the date of the era change to Kyōhō?"


def _cited(*pairs):
    return [{"text": text, "citations": [{"source_id": e["source_id"], "quote": e["text"]}
                                         for e in sources]}
            for text, *sources in pairs]


def test_statements_citing_only_passages_below_the_gate_are_found():
    statements = _cited(("The shogunate decided it.", ERA),
                        ("The city of Kyōhō had 66,135 people.", CITY),
                        ("Kyōhō is a fern.", FERN, CITY),
                        ("The shogunate decided it in Kyōhō.", ERA, CITY))
    assert below_gate_statements(statements, [ERA, CITY, FERN], "en", None) == [1, 2]
    # one passage over its gate is enough; a passage in the other language is never judged
    assert below_gate_statements(statements[:1], [ERA], "en", None) == []
    low_era = {**ERA, "relevance": 0.0014}  # under the cross-language gate (0.01)
    assert below_gate_statements(_cited(("x", low_era)), [low_era], "en", None) == []
    # for a Japanese question, a Japanese passage under the Japanese gate (0.0009) is
    era_ja = {**ERA, "relevance": 0.0001}
    assert below_gate_statements(_cited(("x", era_ja)), [era_ja], "ja", None) == [0]
    # abstain_threshold=0 never abstains: nothing is below it
    assert below_gate_statements(statements, [ERA, CITY, FERN], "en", 0.0) == []


def test_only_when_every_statement_is_below_the_gate_is_the_answer_off_the_question():
    statements = _cited(("The city of Kyōhō had 66,135 people.", CITY))
    findings = source_findings(statements, [ERA, CITY], "en", None, "en")
    assert [(f["type"], f["severity"], f["claim_index"]) for f in findings] == [
        ("off_question", "major", 0)]
    assert "the passages it cites are not about the question" in findings[0]["detail"]
    assert source_findings(_cited(("The shogunate.", ERA), ("66,135 people.", CITY)),
                           [ERA, CITY], "en", None, "en") == []


def test_the_graph_drops_a_statement_from_an_unrelated_passage_and_keeps_the_rest():
    model = ScriptedChatModel(script={"CitedAnswer": [answer(
        ("The shogunate effectively decided it.", "era#sec1"),
        ("The city of Kyōhō had a population of 66,135 in 2010.", "city#sec1"))]})
    graph = build_graph(retriever=StaticRetriever([ERA, CITY, FERN]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": QUESTION}, context=Context(max_retries=1))
    assert out["status"] == "answered"
    assert "66,135" not in out["answer"] and "shogunate" in out["answer"]
    assert any(f["type"] == "unrelated_source" for f in out["findings"])


def test_an_answer_only_from_unrelated_passages_is_revised_then_abstains():
    model = ScriptedChatModel(script={"CitedAnswer": [answer(
        ("The city of Kyōhō had a population of 66,135 in 2010.", "city#sec1"))]})
    graph = build_graph(retriever=StaticRetriever([ERA, CITY, FERN]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": QUESTION}, context=Context(max_retries=1))
    assert out["status"] == "abstained" and out["decided_by"] == "off_question"
    revision = model.calls_for("CitedAnswer")[1][-1].content
    assert "not about the question" in revision
