"""When the revisions are spent, the statements that hold are delivered if they answer."""

from __future__ import annotations

from grounded_rag import Context
from tests.fakes import answer
from tests.fakes import evidence as ev
from tests.unit.test_graph import SPEC_EN, make

QUESTION = "How long does the X100 battery last?"
HALF_WRONG = answer(("The X100 battery lasts up to 10 hours.", "spec#sec2"),
                    ("The X100 battery lasts 24 hours when idle.", "spec#sec2"))


def test_the_part_that_holds_is_delivered_flagged_with_the_rest_removed():
    graph, model, _, _ = make({"CitedAnswer": [HALF_WRONG, HALF_WRONG]}, evidence=(SPEC_EN,))
    out = graph.invoke({"question": QUESTION}, context=Context(max_retries=1))
    assert out["status"] == "answered" and out["decided_by"] == "verification"
    assert len(model.calls_for("CitedAnswer")) == 2  # revised first, as before
    assert out["answer"] == "The X100 battery lasts up to 10 hours[1]."
    assert [(c["text"], c["verdict"], c["statement"]) for c in out["claims"]] == [
        ("The X100 battery lasts up to 10 hours.", "supported", 0)]
    assert "partial_answer" in out["flags"]
    removed = {c["text"]: c for c in out["removed_claims"]}
    assert removed["The X100 battery lasts 24 hours when idle."]["verdict"] == "contradicted"
    assert removed["The X100 battery lasts 24 hours when idle."]["status"] == "removed"


def test_no_partial_answer_when_switched_off_or_when_the_rest_does_not_answer():
    graph, _, _, _ = make({"CitedAnswer": [HALF_WRONG]}, evidence=(SPEC_EN,))
    out = graph.invoke({"question": QUESTION},
                       context=Context(max_retries=0, keep_verified=False))
    assert out["status"] == "abstained" and out["claims"] == []
    # high_precision abstains too
    out = graph.invoke({"question": QUESTION},
                       context=Context(max_retries=0, preset="high_precision"))
    assert out["status"] == "abstained"
    # what holds names no duration: true, but not an answer to "how long"
    no_value = answer(("The X100 has a battery.", "spec#sec2"),
                      ("The X100 battery lasts 24 hours.", "spec#sec2"))
    graph, _, _, _ = make({"CitedAnswer": [no_value]}, evidence=(SPEC_EN,))
    out = graph.invoke({"question": QUESTION}, context=Context(max_retries=0))
    assert out["status"] == "abstained"
    assert "partial_answer" not in out["flags"]


def test_a_draft_that_holds_whole_is_no_partial_answer():
    graph, _, _, _ = make({"CitedAnswer": [answer(
        ("The X100 battery lasts up to 10 hours.", "spec#sec2"),
        ("Charging takes 2 hours.", "spec#sec2"))]}, evidence=(SPEC_EN,))
    out = graph.invoke({"question": QUESTION}, context=Context(max_retries=0))
    assert out["status"] == "answered" and "partial_answer" not in out["flags"]
    assert len(out["claims"]) == 2


def _statement(text: str, source_id: str) -> dict:
    return {"text": text, "citations": [{"source_id": source_id, "quote": text}]}


def test_an_unrelated_statement_is_left_out_of_the_part_that_holds():
    from grounded_rag.verification.on_question import verified_part

    statements = [
        _statement("The X100 battery lasts up to 10 hours.", "spec#sec2"),
        _statement("She was a member of the pop group S#arp.", "bio#sec1"),
        _statement("The X100 battery lasts 24 hours when idle.", "spec#sec3"),
    ]
    verdicts = ("supported", "supported", "contradicted")
    claims = [{"text": s["text"], "statement": i, "verdict": v}
              for i, (s, v) in enumerate(zip(statements, verdicts, strict=True))]
    # the unrelated statement holds, but is not part of the answer: only the first is kept
    assert verified_part(statements, claims, QUESTION, [], "en") == [0]  # type: ignore[arg-type]
    # when it is the only one that holds, nothing answers
    claims[0]["verdict"] = "neutral"
    assert verified_part(statements, claims, QUESTION, [], "en") is None  # type: ignore[arg-type]


OIL = ev("oil#sec1", "北海は良質の軽質原油が多いだけでなく、沿岸国の消費量が限られているため"
                   "輸出が盛んである。", title="北海")
OIL_Q = "北海は良質の何が多いだけでなく、沿岸国の消費量が限られているため輸出が盛んである。"


def test_statements_that_only_restate_the_question_are_left_out_without_a_revision():
    restating = answer(("北海は良質の軽質原油が多いだけでなく", "oil#sec1"),
                       ("沿岸国の消費量が限られているため輸出が盛んである", "oil#sec1"))
    graph, model, _, _ = make({"CitedAnswer": [restating, restating]}, evidence=(OIL,))
    out = graph.invoke({"question": OIL_Q}, context=Context(max_retries=1))
    assert out["status"] == "answered"
    assert len(model.calls_for("CitedAnswer")) == 1  # not revised
    assert out["answer"] == "北海は良質の軽質原油が多いだけでなく[1]。"
    assert "partial_answer" in out["flags"]
    # switched off, the draft is revised as before
    graph, model, _, _ = make({"CitedAnswer": [restating, restating]}, evidence=(OIL,))
    graph.invoke({"question": OIL_Q}, context=Context(max_retries=1, keep_verified=False))
    assert len(model.calls_for("CitedAnswer")) == 2


def test_without_the_gap_word_a_restating_draft_is_revised():
    # Bare nouns beside a restated question: nothing shows they answer it.
    nouns = answer(("原油", "oil#sec1"),
                   ("沿岸国の消費量が限られているため輸出が盛んである", "oil#sec1"))
    graph, model, _, _ = make({"CitedAnswer": [nouns, nouns]}, evidence=(OIL,))
    graph.invoke({"question": OIL_Q}, context=Context(max_retries=1))
    assert len(model.calls_for("CitedAnswer")) == 2


ACTS = ev("ops#sec0", "A Life for the Tsar is a patriotic-heroic tragic opera in four acts with "
                      "an epilogue by Mikhail Glinka. Tosca is an opera in three acts by Giacomo "
                      "Puccini to an Italian libretto.", title="Operas")
ACTS_Q = ("A Life for the Tsar is an opera with four acts, Tosca an Italian libretto "
          "has how many acts?")


def test_an_english_statement_restating_the_question_beside_the_value_is_left_out():
    restating = answer(("A Life for the Tsar is an opera with four acts", "ops#sec0"),
                       ("Tosca an Italian libretto has three acts", "ops#sec0"))
    graph, model, _, _ = make({"CitedAnswer": [restating, restating]}, evidence=(ACTS,))
    out = graph.invoke({"question": ACTS_Q}, context=Context(max_retries=1))
    assert out["status"] == "answered"
    assert len(model.calls_for("CitedAnswer")) == 1  # not revised
    assert out["answer"] == "Tosca an Italian libretto has three acts[1]."
    assert "partial_answer" in out["flags"]
    # what was left out stays visible, without calling the answer off the question
    assert "off_question" not in out["flags"]
    assert [f["type"] for f in out["findings"]] == ["restatement_left_out"]


def test_a_value_the_question_already_holds_does_not_show_an_answer():
    # "four" is the question's own number: nothing beside the restatement answers.
    restating = answer(("A Life for the Tsar is an opera with four acts", "ops#sec0"),
                       ("Tosca has an Italian libretto", "ops#sec0"))
    graph, model, _, _ = make({"CitedAnswer": [restating, restating]}, evidence=(ACTS,))
    out = graph.invoke({"question": ACTS_Q}, context=Context(max_retries=1))
    assert len(model.calls_for("CitedAnswer")) == 2  # revised as before
    assert "three" not in out["answer"]
