"""A statement about other cases than the one asked is dropped beside one that answers it."""

from __future__ import annotations

from grounded_rag import build_graph
from grounded_rag.verification.on_question import other_case_statements
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

QUESTION = "What is the maximum hotel cost per night for business trips in Tokyo?"


def _s(*texts: str) -> list[dict]:
    return [{"text": t, "citations": []} for t in texts]


def test_other_regions_beside_tokyo_is_another_case():
    tokyo = "The maximum hotel cost per night for business trips in Tokyo is 15,000 yen."
    other = "The maximum hotel cost per night for business trips in other regions is 12,000 yen."
    assert other_case_statements(QUESTION, _s(tokyo, other)) == [1]
    assert other_case_statements("東京都内の出張の宿泊費の上限はいくらですか？",
                                 _s("東京都内の宿泊費の上限は15,000円です。",
                                    "その他の地域は12,000円です。")) == [1]


def test_what_is_asked_or_needed_stays():
    # the question asks about the other cases itself
    assert other_case_statements("What is the cap in Tokyo and in other regions?", _s(
        "The cap in Tokyo is 15,000 yen.", "Other regions have 12,000 yen.")) == []
    # the statement still names the asked case
    assert other_case_statements(QUESTION, _s(
        "The cap in Tokyo is 15,000 yen.", "In Tokyo, other costs are paid in full.")) == []
    # never the whole answer, and one statement alone is never dropped
    assert other_case_statements(QUESTION, _s("Other regions have 12,000 yen.")) == []
    assert other_case_statements(QUESTION, _s("Other regions have 12,000 yen.",
                                              "Other cities pay 10,000 yen.")) == []


def test_the_graph_delivers_the_asked_case_only():
    policy = ev("travel#sec3",
                "宿泊費の上限は、東京都内は1泊15,000円、その他の地域は1泊12,000円とする。",
                title="出張旅費規程 > 宿泊費")
    model = ScriptedChatModel(script={"CitedAnswer": [answer(
        ("The maximum hotel cost per night for business trips in Tokyo is 15,000 yen.", "S1.1"),
        ("The maximum hotel cost per night in other regions is 12,000 yen.", "S1.1"))]})
    graph = build_graph(retriever=StaticRetriever([policy]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": QUESTION})
    assert out["status"] == "answered" and "15,000" in out["answer"]
    assert "12,000" not in out["answer"]
    assert any(f["type"] == "other_case_statement" and "other regions" in f["detail"]
               for f in out["findings"])
