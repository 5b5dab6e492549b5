"""An English "A is B" statement that says its subject is itself answers nothing."""

from __future__ import annotations

from grounded_rag.verification.on_question import off_question_findings
from grounded_rag.verification.restates import restates_itself

QUESTION = "What is the name of the mayor of Kyoto?"
EVIDENCE = [{"source_id": "doc-1#sec0", "title": "", "text": "京都市長は門川大作である。"}]


def test_a_subject_said_to_be_itself_with_a_word_for_its_kind_restates_itself() -> None:
    assert restates_itself("The mayor of Kyoto is Kyoto City Mayor[1].", QUESTION)
    assert restates_itself("The mayor of Kyoto is the mayor of Kyoto City.", QUESTION)


def test_an_answer_a_classification_or_another_subject_does_not() -> None:
    assert not restates_itself("The mayor of Kyoto is Daisaku Kadokawa[1].", QUESTION)
    assert not restates_itself("Kyoto is a city.", "What is Kyoto?")  # shares nothing
    assert not restates_itself("Daisaku Kadokawa is the mayor of Kyoto.", QUESTION)
    assert not restates_itself("京都市長は京都市長である。", "京都市長は誰ですか")
    assert not restates_itself("The mayor of Kyoto.", QUESTION)  # no "A is B"


def test_the_off_question_check_refuses_it_and_keeps_the_answer() -> None:
    said = [{"text": "The mayor of Kyoto is Kyoto City Mayor.", "citations": []}]
    findings = off_question_findings(QUESTION, said, EVIDENCE, "en")  # type: ignore[arg-type]
    assert [f["type"] for f in findings] == ["off_question"]
    named = [{"text": "The mayor of Kyoto is Daisaku Kadokawa.", "citations": []}]
    assert off_question_findings(QUESTION, named, EVIDENCE, "en") == []  # type: ignore[arg-type]
    # an either/or question may be answered by its own words
    choice = "Which is larger, the mayor's office of Kyoto or Osaka?"
    assert off_question_findings(choice, [{"text": "The mayor's office of Kyoto is larger.",
                                           "citations": []}], EVIDENCE, "en") == []  # type: ignore[arg-type]
