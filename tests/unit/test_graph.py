"""Every route of the self-correction loop, with scripted models and a fixed retriever."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from grounded_rag import Context, build_graph
from tests.fakes import MALFORMED, ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

SPEC_EN = ev("spec#sec2", "Battery: The X100 battery lasts up to 10 hours on a single charge. "
             "Charging takes 2 hours.", title="X100 spec sheet > Battery")
POLICY_EN = ev("policy#sec3", "Taxi fares are reimbursed only after 22:00 or when carrying "
               "equipment over 10 kg.", relevance=0.7, title="Travel policy > Taxis")
SPEC_JA = ev("spec-ja#sec2", "製品X100のバッテリーは最大10時間持続します。充電時間は約2時間です。",
             title="X100 仕様書 > バッテリー")

GOOD_EN = answer(("The X100 battery lasts up to 10 hours.", "spec#sec2"))
WRONG_EN = answer(("The X100 battery lasts 24 hours.", "spec#sec2"))
WRONGS_EN = [answer((text, "spec#sec2")) for text in (
    "The X100 battery lasts 24 hours.", "The X100 battery lasts for 24 hours.",
    "The X100's battery lasts 24 hours.", "The X100 battery runs for 24 hours.")]
"""Four different wrong drafts: a loop that never repeats itself spends its whole budget."""


def no_24(text: str) -> tuple[str, str]:
    """A judge that contradicts any claim mentioning 24 hours."""
    if "24" in text:
        return "contradicted", "The source says the battery lasts up to 10 hours, not 24."
    return "supported", "Stated in the source."


def make(script: dict, *, evidence=(SPEC_EN, POLICY_EN), verifier=None, **kwargs):
    model = ScriptedChatModel(script=script)
    retriever = StaticRetriever(evidence)
    verifier = verifier or ScriptedVerifier(no_24)
    graph = build_graph(retriever=retriever, generator=model, extractor="rules",
                        verifier=verifier, **kwargs)
    return graph, model, retriever, verifier


def test_passes_first_time():
    graph, model, retriever, verifier = make({"CitedAnswer": [GOOD_EN]})
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered"
    assert out["attempts"] == 1
    assert out["answer"] == "The X100 battery lasts up to 10 hours[1]."
    assert out["sources"] == [{"id": "spec#sec2", "title": "X100 spec sheet > Battery",
                               "url": "spec.md"}]  # never a file:// path
    claim = out["claims"][0]
    assert claim["verdict"] == "supported" and claim["status"] == "verified"
    cite = claim["citations"][0]  # the passage's sentence closest to the statement, copied
    assert cite["quote"] == "Battery: The X100 battery lasts up to 10 hours on a single charge."
    assert SPEC_EN["text"][cite["start"]:cite["end"]] == cite["quote"] and cite["match"] == 1.0
    assert out["grounding_score"] == 1.0
    assert 0 < out["confidence"] <= 1
    assert out["findings"] == []
    assert set(out["timings_ms"]) >= {"retrieve", "generate", "check_citations",
                                      "extract_claims", "verify_claims"}
    assert len(verifier.calls) == 1  # one batched verifier call per attempt
    assert retriever.queries == [("How long does the X100 battery last?", 6)]


def test_contradicted_claim_is_revised_then_passes():
    graph, model, _, verifier = make({"CitedAnswer": [WRONG_EN, GOOD_EN]})
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered"
    assert out["attempts"] == 2
    assert "10 hours" in out["answer"] and "24" not in out["answer"]
    assert out["claims"][0]["status"] == "revised"
    assert [c["text"] for c in out["removed_claims"]] == ["The X100 battery lasts 24 hours."]
    assert out["removed_claims"][0]["verdict"] == "contradicted"
    assert "revised" in out["flags"]
    # The revision prompt carries the per-claim finding: claim, verdict, reason, evidence.
    revise_prompt = model.calls_for("CitedAnswer")[1][-1].content
    assert "The X100 battery lasts 24 hours." in revise_prompt
    assert "contradicted by the sources" in revise_prompt
    assert "not 24" in revise_prompt
    assert "battery lasts up to 10 hours" in revise_prompt


@pytest.mark.parametrize("max_retries", [0, 1, 2, 3])
def test_persistent_contradiction_abstains_after_exactly_max_retries(max_retries):
    graph, model, _, _ = make({"CitedAnswer": WRONGS_EN})
    out = graph.invoke({"question": "How long does the X100 battery last?"},
                       context=Context(max_retries=max_retries))
    assert out["status"] == "abstained"
    assert out["answer"] == "The sources do not say."
    assert out["attempts"] == max_retries + 1
    assert len(model.calls_for("CitedAnswer")) == max_retries + 1
    assert any(f["type"] == "contradicted" for f in out["findings"])
    assert out["claims"] == [] and out["sources"] == []
    assert "24 hours" in out["removed_claims"][0]["text"]


def test_default_max_retries_is_two():
    graph, model, _, _ = make({"CitedAnswer": WRONGS_EN})
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["attempts"] == 3 and out["status"] == "abstained"


@pytest.mark.parametrize("max_retries", [1, 3])
def test_a_revision_that_repeats_the_draft_ends_the_loop(max_retries):
    # The same draft and the same findings make the same prompt: a third try would repeat.
    graph, model, _, _ = make({"CitedAnswer": [WRONG_EN]})
    out = graph.invoke({"question": "How long does the X100 battery last?"},
                       context=Context(max_retries=max_retries))
    assert out["status"] == "abstained" and out["attempts"] == 2
    assert len(model.calls_for("CitedAnswer")) == 2


def test_phantom_source_id_is_a_critical_finding_and_gets_revised():
    phantom = answer(("The X100 battery lasts up to 10 hours.", "spec#sec9"))
    graph, model, _, _ = make({"CitedAnswer": [phantom, GOOD_EN]})
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered" and out["attempts"] == 2
    revise_prompt = model.calls_for("CitedAnswer")[1][-1].content
    assert "'spec#sec9' is not among the retrieved sources" in revise_prompt


def test_phantom_sentence_handle_is_critical_and_the_loop_goes_on():
    # S1.9 does not exist, and the statement shares no word with passage 1's sentences
    # (a misnumbered copy of one of them would be read as that sentence).
    phantom = answer(("Approved by the board.", "S1.9"))
    good = answer(("The X100 battery lasts up to 10 hours.", "S1.1"))
    graph, model, _, _ = make({"CitedAnswer": [phantom, good]})
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered" and out["attempts"] == 2
    revise_prompt = model.calls_for("CitedAnswer")[1][-1].content
    assert "'S1.9' is not among the numbered sentences shown" in revise_prompt
    assert "(cites: S1.9)" in revise_prompt  # the previous draft as the model wrote it
    cite = out["claims"][0]["citations"][0]
    assert cite["source_id"] == "spec#sec2" and cite["match"] == 1.0


def test_phantom_source_that_persists_abstains_with_the_finding():
    phantom = answer(("The X100 battery lasts up to 10 hours.", "made-up#sec1"))
    graph, _, _, _ = make({"CitedAnswer": [phantom]})
    out = graph.invoke({"question": "How long?"}, context=Context(max_retries=1))
    assert out["status"] == "abstained"
    kinds = {(f["type"], f["severity"]) for f in out["findings"]}
    assert ("phantom_source", "critical") in kinds


def test_generator_sees_numbered_sentences_and_quotes_are_copied():
    multi = answer(("The X100 battery lasts up to 10 hours on a single charge.", "S1.1", "S1.2"),
                   ("Taxis are reimbursed after 22:00.", "S2.1"))
    graph, model, _, _ = make({"CitedAnswer": [multi]})
    out = graph.invoke({"question": "Battery and taxis?"})
    prompt = model.calls_for("CitedAnswer")[0][-1].content
    assert "S1.1 Battery: The X100 battery lasts up to 10 hours on a single charge." in prompt
    assert "S1.2 Charging takes 2 hours." in prompt
    assert "S2.1 Taxi fares are reimbursed" in prompt
    assert out["status"] == "answered"
    both, taxi = (c["citations"] for c in out["claims"])
    assert both == [{"source_id": "spec#sec2", "quote": SPEC_EN["text"], "start": 0,
                     "end": len(SPEC_EN["text"]), "match": 1.0}]  # adjacent: one span
    assert taxi[0]["quote"] == POLICY_EN["text"] and taxi[0]["source_id"] == "policy#sec3"
    assert not any(f["type"].startswith("quote") for f in out["findings"])


def test_quote_in_other_source_is_reported_for_a_free_text_quote():
    graph = _review_graph({"CitedAnswer": [GOOD_EN]})
    cfg = {"configurable": {"thread_id": "q1", "review_mode": True, "review_threshold": 0.99}}
    graph.invoke({"question": "How long?"}, cfg)
    edited = {"action": "edit", "statements": [
        {"text": "The X100 battery lasts up to 10 hours.",
         "citations": [{"source_id": "policy#sec3", "quote": "battery lasts up to 10 hours"}]}]}
    out = graph.invoke(Command(resume=edited), cfg)  # pauses again: the edit is reviewed
    finding = next(f for f in out["findings"] if f["type"] == "quote_in_other_source")
    assert "spec#sec2" in finding["detail"] and finding["claim_index"] == 0


def test_weak_evidence_abstains_without_any_model_call():
    weak = [ev("spec#sec2", SPEC_EN["text"], relevance=0.001)]
    graph, model, _, verifier = make({"CitedAnswer": [GOOD_EN]}, evidence=weak)
    out = graph.invoke({"question": "What is the refund policy?"})
    assert out["status"] == "abstained"
    assert model.calls == []
    assert verifier.calls == []
    assert out["attempts"] == 0
    assert out["findings"][0]["type"] == "weak_evidence"


def test_other_language_evidence_has_its_own_gate():
    from grounded_rag.retrieval.calibration import cross_language_threshold, gate_thresholds

    same_gate, cross_gate = gate_thresholds("en", None)  # the defaults: 0.004 and 0.01
    assert 0 < same_gate < cross_gate
    between = (same_gate + cross_gate) / 2
    ja_answer = answer(("X100のバッテリーは最大10時間持続します。", "spec-ja#sec2"))
    # An English question over Japanese evidence: the cross-language score clears its gate
    ja_evidence = [ev("spec-ja#sec2", SPEC_JA["text"], relevance=cross_gate * 1.5)]
    graph, model, _, _ = make({"CitedAnswer": [ja_answer]}, evidence=ja_evidence)
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered" and model.calls
    # ... but not below its own gate, even above the same-language one
    faint = [ev("spec-ja#sec2", SPEC_JA["text"], relevance=between)]
    graph, model, _, _ = make({"CitedAnswer": [ja_answer]}, evidence=faint)
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "abstained" and model.calls == []
    assert "other language" in out["findings"][0]["detail"]
    assert out["decided_by"] == "retrieval"
    # Same-language evidence at that score clears the same-language gate
    en_evidence = [ev("spec#sec2", SPEC_EN["text"], relevance=between)]
    graph, model, _, _ = make({"CitedAnswer": [GOOD_EN]}, evidence=en_evidence)
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered" and model.calls
    # The question's language decides what is "other": an answer language forced to
    # Japanese does not make English evidence for an English question cross-language
    graph, model, _, _ = make({"CitedAnswer": [GOOD_EN]}, evidence=en_evidence)
    out = graph.invoke({"question": "How long does the X100 battery last?"},
                       {"configurable": {"language": "ja"}})
    assert out["status"] == "answered" and model.calls
    # A user's number is the same-language gate for every language, the other-language gate
    # scaled from it; a stricter number is stricter for both kinds of evidence
    cross = cross_language_threshold(0.26)
    assert 0 < cross < 0.26
    near = [ev("spec-ja#sec2", SPEC_JA["text"], relevance=cross * 1.5)]
    statuses = []
    for threshold in (0.26, 0.52):
        graph, _, _, _ = make({"CitedAnswer": [ja_answer]}, evidence=near)
        out = graph.invoke({"question": "How long does the X100 battery last?"},
                           {"configurable": {"abstain_threshold": threshold}})
        statuses.append(out["status"])
    assert statuses == ["answered", "abstained"]


def test_no_evidence_abstains_without_any_model_call():
    graph, model, _, _ = make({"CitedAnswer": [GOOD_EN]}, evidence=[])
    out = graph.invoke({"question": "anything"})
    assert out["status"] == "abstained" and model.calls == []


def test_malformed_structured_output_is_retried():
    graph, model, _, _ = make({"CitedAnswer": [MALFORMED, GOOD_EN]})
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered"
    assert out["attempts"] == 1
    assert len(model.calls_for("CitedAnswer")) == 2


def test_malformed_twice_becomes_a_finding_then_a_regeneration():
    graph, model, _, _ = make({"CitedAnswer": [MALFORMED, MALFORMED, GOOD_EN]})
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered"
    assert out["attempts"] == 2
    assert any(f["type"] == "malformed_output" for f in out["findings"])


def test_malformed_forever_abstains_never_crashes():
    graph, _, _, _ = make({"CitedAnswer": [MALFORMED]})
    out = graph.invoke({"question": "How long?"}, context=Context(max_retries=1))
    assert out["status"] == "abstained"
    assert [f["type"] for f in out["findings"]].count("malformed_output") == 2


def test_generator_says_not_answerable():
    graph, _, _, verifier = make({"CitedAnswer": [answer(answerable=False)]})
    out = graph.invoke({"question": "Who won the 1998 World Cup?"})
    assert out["status"] == "abstained" and out["attempts"] == 1
    assert verifier.calls == []


def test_japanese_question_gets_japanese_answer():
    good = answer(("製品X100のバッテリーは最大10時間持続します。", "spec-ja#sec2"))
    graph, model, _, _ = make({"CitedAnswer": [good]}, evidence=[SPEC_JA])
    out = graph.invoke({"question": "X100のバッテリーは何時間持ちますか？"})
    assert out["language"] == "ja"
    assert out["answer"] == "製品X100のバッテリーは最大10時間持続します[1]。"
    system = model.calls_for("CitedAnswer")[0][0].content
    assert "日本語" in system


def test_japanese_abstention_is_in_japanese():
    graph, _, _, _ = make({"CitedAnswer": [GOOD_EN]}, evidence=[])
    out = graph.invoke({"question": "返品ポリシーは何ですか？"})
    assert out["answer"] == "資料からは確認できません。"
    assert out["status"] == "abstained"


def test_seed_case_battery_24_vs_10_is_caught_by_the_cascade_and_fixed():
    """The naive judge says 'supported' to everything; deterministic cues must still catch it."""
    wrong = answer(("製品X100のバッテリーは24時間持続します。", "spec-ja#sec2"))
    right = answer(("製品X100のバッテリーは最大10時間持続します。", "spec-ja#sec2"))
    naive = ScriptedVerifier(lambda text: ("supported", ""))
    graph, model, _, _ = make({"CitedAnswer": [wrong, right]}, evidence=[SPEC_JA],
                              verifier=naive)
    out = graph.invoke({"question": "X100のバッテリーは何時間持ちますか？"})
    assert out["status"] == "answered"
    assert out["attempts"] == 2
    assert "10時間" in out["answer"] and "24" not in out["answer"]
    removed = out["removed_claims"][0]
    assert removed["verdict"] == "contradicted"
    assert "24" in removed["reason"] and "10" in removed["reason"]


def test_settings_through_context_and_configurable():
    graph, model, retriever, _ = make({"CitedAnswer": [WRONG_EN]})
    out = graph.invoke({"question": "q"}, context=Context(max_retries=0, top_k=1))
    assert out["attempts"] == 1 and retriever.queries[-1][1] == 1
    out = graph.invoke({"question": "q"},
                       config={"configurable": {"max_retries": 1, "top_k": 2}})
    assert out["attempts"] == 2 and retriever.queries[-1][1] == 2


def test_abstain_threshold_through_configurable_and_context():
    graph, model, _, _ = make({"CitedAnswer": [GOOD_EN]})
    out = graph.invoke({"question": "q"}, config={"configurable": {"abstain_threshold": 0.95}})
    assert out["status"] == "abstained" and model.calls == []
    out = graph.invoke({"question": "q"}, context=Context(abstain_threshold=0.95))
    assert out["status"] == "abstained" and model.calls == []
    out = graph.invoke({"question": "q"}, context={"abstain_threshold": 0.1})
    assert out["status"] == "answered"


def test_invalid_configurable_setting_is_rejected():
    graph, _, _, _ = make({"CitedAnswer": [GOOD_EN]})
    with pytest.raises(ValueError, match="top_k"):
        graph.invoke({"question": "q"}, config={"configurable": {"top_k": "many"}})


def test_language_setting_overrides_detection():
    graph, model, _, _ = make({"CitedAnswer": [GOOD_EN]})
    out = graph.invoke({"question": "How long does it last?"}, context=Context(language="ja"))
    assert out["language"] == "ja"
    assert "日本語" in model.calls_for("CitedAnswer")[0][0].content


def test_runnable_interface_batch_stream_ainvoke():
    graph, _, _, _ = make({"CitedAnswer": [GOOD_EN]})
    outs = graph.batch([{"question": "a"}, {"question": "b"}])
    assert [o["status"] for o in outs] == ["answered", "answered"]
    events = [chunk for mode, chunk in graph.stream({"question": "a"},
                                                    stream_mode=["custom", "updates"])
              if mode == "custom"]
    stages = [e["stage"] for e in events]
    assert stages[:3] == ["retrieving", "generating", "checking"]
    assert {"stage": "verifying", "message": "verifying 1 claims", "n": 1} in events
    out = asyncio.run(graph.ainvoke({"question": "a"}))
    assert out["status"] == "answered"


def test_progress_reports_revision_attempts():
    graph, _, _, _ = make({"CitedAnswer": [WRONG_EN, GOOD_EN]})
    stream = graph.stream({"question": "a"}, stream_mode=["custom"])
    events = [c for m, c in stream if m == "custom"]
    assert any(e["message"] == "revising, attempt 2 of 3" for e in events)


def test_interrupt_before_lets_a_user_step_and_edit_state():
    graph, _, _, _ = make({"CitedAnswer": [WRONG_EN, GOOD_EN]}, checkpointer=InMemorySaver(),
                          interrupt_before=["verify_claims"])
    cfg = {"configurable": {"thread_id": "step"}}
    graph.invoke({"question": "How long?"}, cfg)
    snapshot = graph.get_state(cfg)
    assert snapshot.next == ("verify_claims",)
    assert snapshot.values["claims"][0]["text"] == "The X100 battery lasts 24 hours."
    # A user fixes the claim by hand before it is verified.
    fixed = [{**snapshot.values["claims"][0], "text": "The X100 battery lasts up to 10 hours."}]
    graph.update_state(cfg, {"claims": fixed})
    out = graph.invoke(None, cfg)
    assert out["status"] == "answered" and out["attempts"] == 1


def _review_graph(script):
    return make(script, checkpointer=InMemorySaver())[0]


def test_review_mode_pauses_low_confidence_and_approve_finishes():
    graph = _review_graph({"CitedAnswer": [GOOD_EN]})
    cfg = {"configurable": {"thread_id": "r1", "review_mode": True, "review_threshold": 0.99}}
    first = graph.invoke({"question": "How long?"}, cfg)
    assert "__interrupt__" in first
    payload = first["__interrupt__"][0].value
    assert payload["answer"] == "The X100 battery lasts up to 10 hours[1]."
    assert payload["claims"][0]["verdict"] == "supported"
    out = graph.invoke(Command(resume={"action": "approve"}), cfg)
    assert out["status"] == "answered" and "human_approved" in out["flags"]


def test_review_reject_abstains():
    graph = _review_graph({"CitedAnswer": [GOOD_EN]})
    cfg = {"configurable": {"thread_id": "r2", "review_mode": True, "review_threshold": 0.99}}
    graph.invoke({"question": "How long?"}, cfg)
    out = graph.invoke(Command(resume={"action": "reject", "note": "outdated"}), cfg)
    assert out["status"] == "abstained"
    assert any(f["type"] == "rejected_by_reviewer" and f["detail"] == "outdated"
               for f in out["findings"])


def test_review_edit_is_verified_again():
    graph = _review_graph({"CitedAnswer": [GOOD_EN]})
    cfg = {"configurable": {"thread_id": "r3", "review_mode": True, "review_threshold": 0.99}}
    graph.invoke({"question": "How long?"}, cfg)
    edited = {"action": "edit", "statements": [
        {"text": "The battery lasts 24 hours.",
         "citations": [{"source_id": "spec#sec2", "quote": "battery lasts up to 10 hours"}]}]}
    out = graph.invoke(Command(resume=edited), cfg)
    # The edit contradicts the source: the loop revises it back (the generator's reply).
    assert out.get("__interrupt__") or out["status"] in {"answered", "abstained"}
    state = graph.get_state(cfg).values
    assert any(c["text"] == "The battery lasts 24 hours." for c in state["removed_claims"])


def test_high_confidence_skips_review():
    graph = _review_graph({"CitedAnswer": [GOOD_EN]})
    cfg = {"configurable": {"thread_id": "r4", "review_mode": True, "review_threshold": 0.01}}
    out = graph.invoke({"question": "How long?"}, cfg)
    assert "__interrupt__" not in out and out["status"] == "answered"


def test_same_thread_second_question_starts_clean():
    graph, _, _, _ = make({"CitedAnswer": [WRONG_EN, GOOD_EN, GOOD_EN]},
                          checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    first = graph.invoke({"question": "q1"}, cfg)
    second = graph.invoke({"question": "q2"}, cfg)
    assert first["attempts"] == 2 and second["attempts"] == 1
    assert second["removed_claims"] == []


def test_model_extractor_splits_and_keeps_language():
    two = answer(("The battery lasts up to 10 hours and charging takes 2 hours.", "spec#sec2"))
    model = ScriptedChatModel(script={
        "CitedAnswer": [two],
        "ExtractedClaims": [{"claims": [
            {"statement": 0, "text": "The battery lasts up to 10 hours."},
            {"statement": 0, "text": "Charging needs 2 hours."}]}],
    })
    verifier = ScriptedVerifier()
    graph = build_graph(retriever=StaticRetriever([SPEC_EN]), generator=model,
                        verifier=verifier)
    out = graph.invoke({"question": "Battery?"})
    assert [c["text"] for c in out["claims"]] == ["The battery lasts up to 10 hours.",
                                                  "Charging needs 2 hours."]
    assert verifier.calls == [["The battery lasts up to 10 hours.", "Charging needs 2 hours."]]
    assert out["answer"].endswith("[1].")


def test_extractor_that_skips_a_statement_cannot_hide_it():
    two = answer(("The battery lasts up to 10 hours.", "spec#sec2"),
                 ("It charges in 2 hours.", "spec#sec2"))
    model = ScriptedChatModel(script={
        "CitedAnswer": [two],
        "ExtractedClaims": [{"claims": [{"statement": 0, "text": "The battery lasts 10 hours."}]}],
    })
    verifier = ScriptedVerifier()
    graph = build_graph(retriever=StaticRetriever([SPEC_EN]), generator=model, verifier=verifier)
    graph.invoke({"question": "Battery?"})
    assert "It charges in 2 hours." in verifier.calls[0]


def test_chat_model_as_verifier_batches_all_claims_in_one_call():
    two = answer(("The battery lasts up to 10 hours.", "spec#sec2"),
                 ("Charging takes 2 hours.", "spec#sec2"))
    judge = ScriptedChatModel(script={"JudgedClaims": [{"verdicts": [
        {"claim": 0, "verdict": "supported", "reason": "stated", "evidence_quote": "x"},
        {"claim": 1, "verdict": "supported", "reason": "stated", "evidence_quote": "y"}]}]})
    generator = ScriptedChatModel(script={"CitedAnswer": [two]})
    graph = build_graph(retriever=StaticRetriever([SPEC_EN]), generator=generator,
                        extractor="rules", verifier=judge)
    out = graph.invoke({"question": "Battery?"})
    assert out["status"] == "answered"
    assert len(judge.calls_for("JudgedClaims")) == 1


def test_verify_mode_batch_is_one_call_parallel_is_one_per_claim():
    three = answer(("The battery lasts up to 10 hours.", "spec#sec2"),
                   ("Charging needs 2 hours.", "spec#sec2"),  # not a copy: judged
                   ("It is the X100.", "spec#sec2"))
    for mode, calls in (("batch", 1), ("parallel", 3)):
        graph, _, _, verifier = make({"CitedAnswer": [three]})
        out = graph.invoke({"question": "Battery?"}, context=Context(verify_mode=mode))
        assert out["status"] == "answered"
        assert len(verifier.calls) == calls
        assert sorted(t for call in verifier.calls for t in call) == sorted(
            c["text"] for c in out["claims"])


def test_generator_sees_short_handles_and_citations_map_back_to_real_ids():
    by_handle = answer(("The X100 battery lasts up to 10 hours.", "S1"),
                       ("Taxis need 22:00.", "[S2]"))
    graph, model, _, _ = make({"CitedAnswer": [by_handle]})
    out = graph.invoke({"question": "Battery and taxis?"})
    prompt = model.calls_for("CitedAnswer")[0][-1].content
    assert "[S1] X100 spec sheet > Battery" in prompt and "spec#sec2" not in prompt
    assert out["status"] == "answered"
    assert [c["citations"][0]["source_id"] for c in out["claims"]] == ["spec#sec2", "policy#sec3"]
    assert [s["id"] for s in out["sources"]] == ["spec#sec2", "policy#sec3"]


def test_handles_written_into_the_statement_text_are_removed():
    inline = answer(("[S1] The X100 battery lasts up to 10 hours 【S1, S2】.", "S1"))
    graph, _, _, verifier = make({"CitedAnswer": [inline]})
    out = graph.invoke({"question": "Battery?"})
    assert out["status"] == "answered"
    assert out["claims"][0]["text"] == "The X100 battery lasts up to 10 hours."
    assert out["answer"] == "The X100 battery lasts up to 10 hours[1]."
    assert "S1" not in verifier.calls[0][0]


def test_unknown_handle_is_a_phantom_source():
    phantom = answer(("The X100 battery lasts up to 10 hours.", "S7"))
    graph, _, _, _ = make({"CitedAnswer": [phantom]})
    out = graph.invoke({"question": "q"}, context=Context(max_retries=0))
    assert out["status"] == "abstained"
    assert any(f["type"] == "phantom_source" and "'S7'" in f["detail"] for f in out["findings"])


class FixedJudge:
    """An answerability judge with a fixed score per source id; records its calls."""

    def __init__(self, scores: dict[str, float], threshold: float = 0.5,
                 languages: tuple[str, ...] = ("en", "ja")) -> None:
        self.scores = scores
        self.languages = languages
        self.threshold = threshold
        self.calls: list[tuple[str, list[str], str]] = []

    def covers(self, language):
        return language in self.languages

    def assess(self, question, evidence, *, language):
        from grounded_rag.verification.base import decide

        self.calls.append((question, [e["source_id"] for e in evidence], language))
        return decide([{"source_id": e["source_id"], "score": self.scores.get(e["source_id"], 0.0)}
                       for e in evidence], self.threshold)


def test_answerability_check_abstains_before_writing_when_no_passage_answers():
    judge = FixedJudge({"spec#sec2": 0.2, "policy#sec3": 0.1})
    graph, model, _, verifier = make({"CitedAnswer": [GOOD_EN]}, answerability=judge)
    out = graph.invoke({"question": "Who designed the X100?"},
                       config={"configurable": {"answerability_passages": 2}})
    assert out["status"] == "abstained"
    assert model.calls == [] and verifier.calls == []
    assert judge.calls == [("Who designed the X100?", ["spec#sec2", "policy#sec3"], "en")]
    finding = out["findings"][-1]
    assert finding["type"] == "no_answer_in_sources" and finding["severity"] == "critical"
    assert "0.20" in finding["detail"] and "spec#sec2" in finding["detail"]
    assert "no_answer_in_sources" in out["flags"] and "answerability" in out["timings_ms"]


def test_answerability_check_passes_an_answerable_question_on():
    judge = FixedJudge({"spec#sec2": 0.9})
    graph, model, _, _ = make({"CitedAnswer": [GOOD_EN]}, answerability=judge)
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered" and len(model.calls) == 1
    assert out["findings"] == [] and "answerability" in out["timings_ms"]
    assert judge.calls[0][1] == ["spec#sec2", "policy#sec3"]  # top 3 of the 2 retrieved


def test_answerability_check_off_and_auto_with_an_api_generator(monkeypatch):
    import grounded_rag.nodes._parts as nodes_module

    def no_local_judge(spec):
        raise AssertionError("the local probe must not load for an API generator")

    monkeypatch.setattr(nodes_module, "resolve_answerability", no_local_judge)
    judge = FixedJudge({})
    graph, model, _, _ = make({"CitedAnswer": [GOOD_EN]}, answerability=judge)
    out = graph.invoke({"question": "How long does the X100 battery last?"},
                       config={"configurable": {"answerability_check": "off"}})
    assert out["status"] == "answered" and judge.calls == []
    # A language the judge does not cover: no call, no timing.
    judge = FixedJudge({}, languages=("ja",))
    graph, model, _, _ = make({"CitedAnswer": [GOOD_EN]}, answerability=judge)
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered" and judge.calls == []
    assert "answerability" not in out["timings_ms"]
    # auto + a scripted (non-local) generator + no injected judge: no check at all.
    graph, model, _, _ = make({"CitedAnswer": [GOOD_EN]})
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered" and "answerability" not in out["timings_ms"]
