"""Verification modes: full, sampled and deferred (after the answer), routing and output."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from grounded_rag import Context, build_graph
from grounded_rag.verification.decision import UNCHECKED_SUPPORT, confidence_score, grounding_score
from grounded_rag.verification.modes import risk_markers, sampled_in, select_claims
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

SPEC = ev("spec#sec2", "Battery: The X100 battery lasts up to 10 hours on a single charge. "
          "Charging takes 2 hours. The case is blue and the strap is soft.",
          title="X100 spec sheet > Battery")
RISKY = ("The X100 battery lasts up to 10 hours.", "spec#sec2")
PLAIN = ("The case is blue.", "spec#sec2")
SOFT = ("The strap is soft.", "spec#sec2")
WRONG = ("The X100 battery lasts 24 hours.", "spec#sec2")
QUESTION = "Tell me about the X100."


def judge(text: str) -> tuple[str, str]:
    """Contradict 24-hour claims and 'soft' straps (no cue catches that one), support the rest."""
    if "24" in text or "soft" in text:
        return "contradicted", "The source says otherwise."
    return "supported", "Stated in the source."


def make(*replies, checkpointer=None, verifier=None):
    model = ScriptedChatModel(script={"CitedAnswer": list(replies)})
    verifier = verifier or ScriptedVerifier(judge)
    graph = build_graph(retriever=StaticRetriever([SPEC]), generator=model, extractor="rules",
                        verifier=verifier, checkpointer=checkpointer)
    return graph, model, verifier


def judged(verifier):
    return [text for call in verifier.calls for text in call]


# -- full -----------------------------------------------------------------------------------


def test_full_verifies_every_claim_before_returning():
    graph, _, verifier = make(answer(RISKY, PLAIN))
    out = graph.invoke({"question": QUESTION})
    assert out["status"] == "answered"
    assert out["verification"] == "complete" and out["checked_claims"] == 2
    assert [c["verdict"] for c in out["claims"]] == ["supported", "supported"]
    assert [c["status"] for c in out["claims"]] == ["verified", "verified"]
    assert "The case is blue." in judged(verifier)
    assert out["warnings"] == [] and out["verification_error"] == ""


# -- sampled --------------------------------------------------------------------------------


def test_sampled_checks_risky_claims_and_marks_the_rest_unchecked():
    graph, _, verifier = make(answer(RISKY, PLAIN))
    out = graph.invoke({"question": QUESTION},
                       context=Context(verify_mode="sampled", verify_sample_rate=0.0))
    assert out["status"] == "answered" and out["attempts"] == 1
    risky, plain = out["claims"]
    assert risky["verdict"] == "supported" and risky["status"] == "verified"
    assert plain["verdict"] == "unchecked" and plain["status"] == "unchecked"
    assert "support" not in plain and "Not verified" in plain["reason"]
    assert "The case is blue." not in judged(verifier)
    assert out["verification"] == "partial" and out["checked_claims"] == 1
    assert "unchecked_claims" in out["flags"]
    # The unchecked claim counts in the total, never as grounded.
    total = len(risky["text"]) + len(plain["text"])
    assert out["grounding_score"] == round(len(risky["text"]) / total, 4)


def test_sampled_rate_one_checks_everything_and_catches_what_the_sample_left_out():
    graph, _, _ = make(answer(RISKY, SOFT), answer(RISKY))
    out = graph.invoke({"question": QUESTION},
                       context=Context(verify_mode="sampled", verify_sample_rate=1.0))
    assert out["verification"] == "complete" and out["attempts"] == 2
    assert [c["text"] for c in out["removed_claims"]] == ["The strap is soft."]
    # At rate 0 the same wrong, risk-free claim goes out unchecked: the price of sampling.
    graph, _, _ = make(answer(RISKY, SOFT))
    out = graph.invoke({"question": QUESTION},
                       context=Context(verify_mode="sampled", verify_sample_rate=0.0))
    assert out["status"] == "answered" and out["attempts"] == 1
    assert out["claims"][1]["verdict"] == "unchecked"


def test_sampled_still_revises_a_wrong_risky_claim():
    graph, _, _ = make(answer(WRONG, PLAIN), answer(RISKY, PLAIN))
    out = graph.invoke({"question": QUESTION},
                       config={"configurable": {"verify_mode": "sampled",
                                                "verify_sample_rate": 0.0}})
    assert out["status"] == "answered" and out["attempts"] == 2
    assert out["removed_claims"][0]["text"] == "The X100 battery lasts 24 hours."
    assert out["removed_claims"][0]["verdict"] == "contradicted"


@pytest.mark.parametrize("rate", [-0.1, 1.5])
def test_sampled_rate_outside_0_1_is_a_clear_error(rate):
    graph, _, _ = make(answer(RISKY))
    with pytest.raises(ValueError, match=r"verify_sample_rate must be between 0 and 1"):
        graph.invoke({"question": QUESTION},
                     config={"configurable": {"verify_mode": "sampled",
                                              "verify_sample_rate": rate}})
    with pytest.raises(ValueError, match="verify_sample_rate"):
        select_claims(["a claim"], rate)


# -- deferred -------------------------------------------------------------------------------


def test_deferred_returns_at_once_then_verifies_on_the_same_thread():
    graph, _, verifier = make(answer(WRONG, PLAIN), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "d1", "verify_mode": "deferred"}}
    out = graph.invoke({"question": QUESTION}, cfg)
    assert out["status"] == "answered" and out["verification"] == "pending"
    assert out["checked_claims"] == 0 and verifier.calls == []
    assert [c["status"] for c in out["claims"]] == ["pending", "pending"]
    assert "verification_pending" in out["flags"]
    assert "__interrupt__" in out
    snapshot = graph.get_state(cfg)
    assert snapshot.next == ("verify_after_answer",)
    assert snapshot.values["verification"] == "pending"

    final = graph.invoke(Command(resume=True), cfg)
    assert final["answer"] == out["answer"] and final["attempts"] == 1  # no revision
    assert final["verification"] == "complete" and final["checked_claims"] == 2
    assert [(c["verdict"], c["status"]) for c in final["claims"]] == [
        ("contradicted", "flagged"), ("supported", "verified")]
    assert len(final["warnings"]) == 1
    assert final["warnings"][0].startswith('Checked after the answer was given: "The X100 '
                                           'battery lasts 24 hours." is contradicted')
    assert {"verified_after_answer", "verification_warning"} <= set(final["flags"])
    assert any(f["type"] == "contradicted" for f in final["findings"])
    assert graph.get_state(cfg).next == ()
    assert final["grounding_score"] < 1.0


def test_deferred_warning_is_in_the_answers_language():
    spec_ja = ev("spec-ja#sec2", "製品X100のバッテリーは最大10時間持続します。")
    wrong = ("製品X100のバッテリーは24時間持続します。", "spec-ja#sec2")
    model = ScriptedChatModel(script={"CitedAnswer": [answer(wrong)]})
    graph = build_graph(retriever=StaticRetriever([spec_ja]), generator=model, extractor="rules",
                        verifier=ScriptedVerifier(), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "ja", "verify_mode": "deferred"}}
    first = graph.invoke({"question": "X100のバッテリーは何時間持ちますか？"}, cfg)
    assert first["language"] == "ja"
    final = graph.invoke(Command(resume=True), cfg)
    assert final["warnings"][0].startswith(
        "回答後の検証で、「製品X100のバッテリーは24時間持続します。」は資料と矛盾")


def test_deferred_still_revises_when_the_deterministic_citation_checks_fail():
    phantom = answer(("The X100 battery lasts up to 10 hours.", "spec#sec9"))
    graph, model, verifier = make(phantom, answer(RISKY), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "d2", "verify_mode": "deferred"}}
    out = graph.invoke({"question": QUESTION}, cfg)
    assert out["attempts"] == 2 and out["verification"] == "pending"
    assert len(model.calls_for("CitedAnswer")) == 2 and verifier.calls == []


def test_deferred_without_a_checkpointer_verifies_before_returning():
    graph, _, verifier = make(answer(WRONG, PLAIN))
    out = graph.invoke({"question": QUESTION}, context=Context(verify_mode="deferred"))
    assert "__interrupt__" not in out
    assert out["verification"] == "complete" and out["checked_claims"] == 2
    assert out["claims"][0]["status"] == "flagged" and len(out["warnings"]) == 1
    assert any(f["type"] == "deferred_without_checkpointer" for f in out["findings"])
    assert verifier.calls


class CrashingVerifier:
    def verify(self, claims, *, language):
        raise ConnectionError("judge unreachable")


def test_deferred_crash_becomes_failed_with_the_error_and_nothing_hangs():
    graph, _, _ = make(answer(RISKY, PLAIN), checkpointer=InMemorySaver(),
                       verifier=CrashingVerifier())
    cfg = {"configurable": {"thread_id": "d3", "verify_mode": "deferred"}}
    graph.invoke({"question": QUESTION}, cfg)
    final = graph.invoke(Command(resume=True), cfg)
    assert final["status"] == "answered" and final["verification"] == "failed"
    assert final["verification_error"] == "ConnectionError: judge unreachable"
    assert [c["status"] for c in final["claims"]] == ["unchecked", "unchecked"]
    assert {c["verdict"] for c in final["claims"]} == {"unchecked"}
    assert "verification_failed" in final["flags"]
    assert "verification_pending" not in final["flags"]
    assert graph.get_state(cfg).next == ()


def test_deferred_answer_is_reviewed_after_its_verification():
    graph, _, _ = make(answer(RISKY), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "d4", "verify_mode": "deferred", "review_mode": True,
                            "review_threshold": 0.99}}
    first = graph.invoke({"question": QUESTION}, cfg)
    assert first["verification"] == "pending" and "needs_review" not in first["flags"]
    second = graph.invoke(Command(resume=True), cfg)
    assert second["verification"] == "complete" and "needs_review" in second["flags"]
    assert graph.get_state(cfg).next == ("review_answer",)
    done = graph.invoke(Command(resume={"action": "approve"}), cfg)
    assert "human_approved" in done["flags"]


def test_a_new_question_on_the_thread_resets_the_verification_fields():
    graph, _, _ = make(answer(RISKY), answer(RISKY), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "d5"}}
    graph.invoke({"question": QUESTION}, {"configurable": {**cfg["configurable"],
                                                           "verify_mode": "deferred"}})
    out = graph.invoke({"question": QUESTION}, cfg)
    assert out["verification"] == "complete" and "__interrupt__" not in out


# -- execution choice and legacy values ------------------------------------------------------


def test_verify_execution_parallel_and_the_legacy_verify_mode_value():
    three = answer(RISKY, PLAIN, ("Charging needs 2 hours.", "spec#sec2"))  # not a copy
    for settings, calls in (({"verify_execution": "parallel"}, 3),
                            ({"verify_mode": "parallel"}, 3),
                            ({"verify_mode": "batch"}, 1),
                            ({"verify_mode": "sampled", "verify_sample_rate": 0.0,
                              "verify_execution": "parallel"}, 2)):
        graph, _, verifier = make(three)
        out = graph.invoke({"question": QUESTION}, config={"configurable": settings})
        assert out["status"] == "answered"
        assert len(verifier.calls) == calls, settings


def test_unknown_mode_names_the_field_and_the_allowed_values():
    graph, _, _ = make(answer(RISKY))
    with pytest.raises(ValueError, match=r"verify_mode='later'.*full, sampled, deferred"):
        graph.invoke({"question": QUESTION}, config={"configurable": {"verify_mode": "later"}})
    with pytest.raises(ValueError, match=r"verify_execution='swarm'.*batch, parallel"):
        Context(verify_execution="swarm")


# -- the sampling rule and the scores ----------------------------------------------------------


@pytest.mark.parametrize(("text", "kinds"), [
    ("The X100 battery lasts up to 10 hours.", {"number", "entity"}),
    ("The fee is $5.", {"number"}),
    ("It was founded in 1998.", {"date"}),
    ("The meeting is on a Monday.", {"date", "entity"}),
    ("The office opens tomorrow.", {"date"}),
    ("The battery does not overheat.", {"negation"}),
    ("Refunds are issued by Acme Corp.", {"entity"}),
    ("Pennsylvania", {"entity"}),
    ("The case is blue.", set()),
    ("physician", set()),
    ("在宅勤務手当は月に5,000円です。", {"number"}),
    ("申請は三日以内に行います。", {"number"}),
    ("返品はできません。", {"negation"}),
    ("東京大学で開催されます。", {"entity"}),
    ("社員は申請します。", set()),
])
def test_risk_markers(text, kinds):
    assert set(risk_markers(text)) == kinds


def test_random_share_is_seeded_stable_and_close_to_the_rate():
    words = [f"{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(676)]
    texts = [t for t in (f"the plain statement {w}" for w in words) if not risk_markers(t)]
    assert len(texts) > 600  # a few pairs of letters are words ("no") or numbers
    chosen = select_claims(texts, 0.3)
    assert select_claims(texts, 0.3) == chosen  # same claims, same draw
    assert 0.25 <= len(chosen) / len(texts) <= 0.35
    assert select_claims(texts, 0.3, seed=1) != chosen
    assert select_claims(texts, 0.0) == [] and len(select_claims(texts, 1.0)) == len(texts)
    assert sampled_in("the case is blue", 0.3) == sampled_in(" the case is blue ", 0.3)


def test_scores_leave_unchecked_claims_out_of_the_numerator_and_the_weakest_claim():
    cite = {"source_id": "s", "quote": "q", "start": 0, "end": 1, "match": 1.0}
    checked = {"text": "aaaa", "citations": [cite], "verdict": "supported", "support": 0.8}
    unchecked = {"text": "bbbbbbbbbbbb", "citations": [cite], "verdict": "unchecked"}
    assert grounding_score([checked, unchecked]) == 0.25
    evidence = [ev("s", "q", relevance=1.0)]
    assert confidence_score([checked, unchecked], evidence, regenerations=0) == 0.8
    assert confidence_score([unchecked], evidence, regenerations=0) == UNCHECKED_SUPPORT


def test_a_bare_answer_is_judged_with_the_question_a_sentence_as_written():
    from grounded_rag.verification.modes import claim_to_check, is_bare_answer

    ev = [{"source_id": "d#s0", "doc_id": "d", "title": "t", "url": "",
           "text": "オランダは1839年に独立を承認した。", "score": 1.0, "relevance": 0.9}]
    bare = claim_to_check({"text": "1839年", "citations": []}, ev, "いつ独立が承認されましたか？")
    assert bare["question"] == "いつ独立が承認されましたか？"
    sentence = claim_to_check({"text": "独立は1839年に承認されました。", "citations": []}, ev,
                              "いつ独立が承認されましたか？")
    assert "question" not in sentence
    assert is_bare_answer("Florida State University") and not is_bare_answer(
        "He played college football at Florida State University.")
    assert "question" not in claim_to_check({"text": "1839年", "citations": []}, ev)
