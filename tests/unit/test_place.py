"""The U.S. state a passage gives pins an English "in what state" question's answer."""

from __future__ import annotations

from grounded_rag.verification.cloze import cloze_sentence
from grounded_rag.verification.gap import gap_fillers, gap_unwritten
from grounded_rag.verification.on_question import off_question_findings
from grounded_rag.verification.place import asks_state, state_fillers, states_in

QUESTION = "In what state did Olivia Newton-John perform Summer Nights?"
SHOW = ("Summer Nights is the debut residency show by Australian recording artist, Olivia "
        "Newton-John. The show takes place in the Donny & Marie Showroom, at the Flamingo Las "
        "Vegas. Flamingo Las Vegas is a hotel and casino located on the Las Vegas Strip in "
        "Paradise, Nevada.")
SONG = ('"Magic" is a 1980 song performed by Olivia Newton-John, from the soundtrack to the '
        'film "Xanadu". Christopher Cross is an American singer-songwriter from San Antonio, '
        "Texas.")


def _passage(n: int, text: str) -> dict:
    return {"source_id": f"doc-{n}#sec0", "doc_id": f"doc-{n}", "title": "", "text": text}


def _statement(text: str, quote: str) -> dict:
    return {"text": text, "citations": [{"source_id": "doc-1#sec0", "quote": quote}]}


def test_what_states_the_questions_ask_for() -> None:
    assert asks_state(QUESTION)
    assert asks_state("Plutonium from the Hanford Site comes from which U.S. state?")
    assert not asks_state("What is the state of the art in batteries?")
    assert not asks_state("In what country did she perform?")


def test_states_are_whole_names_and_not_their_look_alikes() -> None:
    assert states_in("in Paradise, Nevada and New Jersey") == ["Nevada", "New Jersey"]
    assert states_in("New York City and Washington, D.C.") == []
    assert states_in("George Washington was born in Virginia") == ["Virginia"]


def test_the_one_state_of_the_passage_the_question_is_about_fills_its_gap() -> None:
    found = state_fillers(QUESTION, [_passage(1, SHOW), _passage(2, SONG)])
    assert found and found[0][0] == "Nevada" and "Paradise, Nevada" in found[0][1]
    assert gap_fillers(QUESTION, [_passage(1, SHOW), _passage(2, SONG)]) == found


def test_no_state_from_a_passage_about_something_else_or_naming_two() -> None:
    # Another song of the same singer: "Summer Nights" is not in it.
    assert state_fillers(QUESTION, [_passage(2, SONG)]) == []
    two = SHOW + " The tour went on to Reno and later to Atlantic City, New Jersey."
    assert state_fillers(QUESTION, [_passage(1, two)]) == []
    assert state_fillers("Who performed Summer Nights?", [_passage(1, SHOW)]) == []


def test_an_answer_without_the_state_is_off_the_question_and_one_with_it_is_not() -> None:
    evidence = [_passage(1, SHOW)]
    hotel = [_statement("The show takes place at the Flamingo Las Vegas.",
                        "The show takes place in the Donny & Marie Showroom")]
    findings = off_question_findings(QUESTION, hotel, evidence, "en")  # type: ignore[arg-type]
    assert [f["type"] for f in findings] == ["off_question"]
    assert "Nevada" in findings[0]["detail"]
    state = [_statement("Summer Nights took place in Nevada.", "Paradise, Nevada.")]
    assert off_question_findings(QUESTION, state, evidence, "en") == []  # type: ignore[arg-type]


def test_a_state_is_written_only_as_its_whole_name() -> None:
    found = [("New Jersey", "Atlantic City, New Jersey.")]
    assert gap_unwritten(["It is in New York."], found) == "New Jersey"
    assert gap_unwritten(["It is in New Jersey."], found) == ""


def test_a_bare_answer_equal_to_the_pinned_state_is_settled_by_its_sentence() -> None:
    assert "Nevada" in cloze_sentence("Nevada", QUESTION, [_passage(1, SHOW)])  # type: ignore[list-item]
    assert cloze_sentence("Texas", QUESTION, [_passage(1, SHOW)]) == ""  # type: ignore[list-item]
