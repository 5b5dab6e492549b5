"""A statement that repeats a check's reason or feedback answers nothing."""

from __future__ import annotations

from grounded_rag import Context, build_graph
from grounded_rag.verification.echoes import echoes_feedback
from grounded_rag.verification.on_question import off_question_findings
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

RULE = ev("rule#sec1", "定義は「三以上の都府県の各区域を併せた区域における需要にこたえるための"
          "放送」とある。", title="広域放送")
QUESTION = "By definition, it meets demand in an area of how many prefectures or more?"


def test_the_openings_of_reasons_and_feedback_are_recognised():
    for text in ("The evidence does not mention: definition, broadcasting, prefectures.",
                 "The source says: 'It covers a 94.2 km² suburban area of Adelaide.'[1]",
                 "The evidence says otherwise: 'It covers a suburban area.'",
                 "The evidence does not state that the fee is refundable.",
                 "根拠の記述と食い違います:「三以上」", "資料の記載: 「三以上の都府県」"):
        assert echoes_feedback(text), text
    # answers that happen to speak of evidence or sources, and the abstention text
    for text in ("The evidence says that the drug lowers blood pressure[1].",
                 "The evidence gives three reasons.", "The sources do not say.",
                 "Three or more prefectures[1].", "根拠には三つの種類がある。"):
        assert not echoes_feedback(text), text


def test_such_a_statement_is_off_the_question():
    statements = [{"text": "The source says: 'It covers a 94.2 km² suburban area.'",
                   "citations": [{"source_id": "rule#sec1", "quote": RULE["text"]}]}]
    findings = off_question_findings(QUESTION, statements, [RULE], "en")
    assert [(f["type"], f["claim_index"]) for f in findings] == [("off_question", 0)]
    assert "repeats the checker's feedback" in findings[0]["detail"]


def test_a_revision_made_of_the_feedback_is_not_delivered():
    model = ScriptedChatModel(script={"CitedAnswer": [
        answer(("It is broadcasting for a wide area.", "rule#sec1")),
        answer(("The evidence does not mention: definition, broadcasting.", "rule#sec1"),
               ("The source says: 'It covers a 94.2 km² suburban area.'", "rule#sec1"))]})
    graph = build_graph(retriever=StaticRetriever([RULE]), generator=model, extractor="rules",
                        verifier=ScriptedVerifier())
    out = graph.invoke({"question": QUESTION}, context=Context(max_retries=1))
    assert out["status"] == "abstained"
    assert "94.2" not in out["answer"]
