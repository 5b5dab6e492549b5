"""A "Yes" in front of a verified answer to "Are A and B both X?"."""

from __future__ import annotations

from grounded_rag.verification.yes_lead import yes_lead as _yes_lead
from tests.fakes import answer
from tests.fakes import evidence as ev
from tests.unit.test_graph import make

OPERAS = ["Cardillac is an opera by Paul Hindemith in three acts.",
          "La donna del lago is an opera composed by Gioachino Rossini."]
QUESTION = "Are Cardillac and La donna del lago both operas?"


def yes_lead(question: str, texts: list[str], quotes: list[str] | None = None) -> bool:
    """The rule over statements that quote themselves (or ``quotes``)."""
    return _yes_lead(question, [  # type: ignore[list-item]
        {"text": t, "citations": [{"quote": q}]}
        for t, q in zip(texts, quotes or texts, strict=True)])


def test_each_thing_said_to_be_what_was_asked_gives_yes():
    assert yes_lead(QUESTION, OPERAS)
    assert yes_lead("Were both Nikos Koundouros and Curtis Hanson film directors?",
                    ["Nikos Koundouros was a Greek film director.",
                     "Curtis Hanson was an American film director and screenwriter."])


def test_no_lead_without_each_thing_saying_it():
    assert not yes_lead(QUESTION, OPERAS[:1])  # the second thing is not covered
    assert not yes_lead(QUESTION, [OPERAS[0], "La donna del lago is a ballet by Rossini."])
    assert not yes_lead(QUESTION, [OPERAS[0], "La donna del lago is not an opera."])
    # one sentence about both things (sources run together) does not count for either
    assert not yes_lead(QUESTION, [" ".join(OPERAS)])
    # a comparison of values needs the values compared, never a lead
    assert not yes_lead("Are Lysichiton and Ageratum both in the same family?",
                        ["Lysichiton is a genus in the family Araceae.",
                         "Ageratum is a genus in the family Asteraceae."])
    # the statement says it, its quote does not: the judge may have let it slip
    assert not yes_lead("Are Janus and The Lady both published in the US?",
                        ["Janus was published in the US.", "The Lady was published in the US."],
                        ["Janus was a fanzine published in Madison, in the US.",
                         "The Lady is Britain's longest-running weekly women's magazine."])
    # already led, or no both-question
    assert not yes_lead(QUESTION, ["Yes, both are operas.", *OPERAS])
    assert not yes_lead("Is Cardillac an opera?", OPERAS)


def test_the_answer_opens_with_yes_and_says_why():
    docs = (ev("cardillac#0", OPERAS[0], title="Cardillac"),
            ev("donna#0", OPERAS[1], title="La donna del lago"))
    draft = answer((OPERAS[0], "cardillac#0"), (OPERAS[1], "donna#0"))
    graph, _, _, _ = make({"CitedAnswer": [draft]}, evidence=docs)
    out = graph.invoke({"question": QUESTION})
    assert out["status"] == "answered"
    assert out["answer"].startswith("Yes. Cardillac is an opera") and out["answer"].endswith("[2].")
    assert [f["type"] for f in out["findings"]] == ["yes_lead"]
    assert [c["text"] for c in out["claims"]] == OPERAS  # the lead is no claim


def test_a_quote_of_two_sentences_run_together_counts_for_its_own_thing_only():
    run_on = ("Tuberaria is a genus of perennial plants in the family Cistaceae."
              "Chimonobambusa is a genus of East Asian bamboo in the grass family.")
    question = "Are both Tuberaria and Chimonobambusa genus of plants?"
    texts = ["Tuberaria is a genus of perennial plants.", "Chimonobambusa is a genus of plants."]
    assert not yes_lead(question, texts, [run_on, run_on])  # "plants" is Tuberaria's word
    assert yes_lead(question, texts, [run_on, run_on.replace("bamboo", "bamboo plants")])
