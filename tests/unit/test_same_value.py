"""A "Yes" or "No" in front of a verified answer to "Are A and B from the same country?"."""

from __future__ import annotations

from grounded_rag.verification.same_value import asked_kind, same_value_lead, values
from tests.fakes import answer
from tests.fakes import evidence as ev
from tests.unit.test_graph import make

FAMILIES = ["Lysichiton is a genus in the family Araceae.",
            "Ageratum is a genus of flowering plants from the family Asteraceae."]


def lead(question: str, texts: list[str], quotes: list[str] | None = None) -> str | None:
    """The rule over statements that quote themselves (or ``quotes``)."""
    return same_value_lead(question, [  # type: ignore[list-item]
        {"text": t, "citations": [{"quote": q}]}
        for t, q in zip(texts, quotes or texts, strict=True)])


def test_the_kind_compared():
    assert asked_kind("Is Lysichiton and Ageratum in the same family?") == ("family", False)
    assert asked_kind("Are A and B the same nationality?") == ("country", False)
    assert asked_kind("Were A and B born in different countries?") == ("country", True)
    assert asked_kind("Are A and B both operas?") is None
    assert asked_kind("Are A and B in the same city?") is None  # no city values are read


def test_values_of_a_sentence():
    assert values("country", "Mariqueen Maandig is a Filipino American musician.") == {
        "Philippines", "US"}
    assert values("country", "John Collier was a British-born writer.") == {"UK"}
    # two values that are not one: ambiguous
    assert values("country", "Up is an American film by a British director.") is None
    # "South American", "New York", "English-language" name no country
    assert values("country", "Soda Stereo was a South American rock band.") is None
    assert values("country", "Joe is an English-language singer from New York.") is None
    assert values("family", FAMILIES[0]) == {"Araceae"}
    assert values("year", "The Castaway Cowboy is a 1974 American film.") == {"1974"}
    assert values("year", "A 1974 film, remade in 1999.") is None


def test_different_values_give_no_the_same_give_yes():
    assert lead("Is Lysichiton and Ageratum geus in the same family?", FAMILIES) == "No"
    assert lead("Were Michael Jackson and Joe Strummer the same nationality?",
                ["Michael Jackson was an American singer.",
                 "Joe Strummer was a British musician."]) == "No"
    assert lead("Are Puyang and Pu'er City located in the same country?",
                ["Puyang is a prefecture-level city in Henan province, China.",
                 "Pu'er is a prefecture-level city in Yunnan Province, China."]) == "Yes"
    # a word both names share ("Airport") names neither thing
    assert lead("Are Yeager Airport and Albert J. Ellis Airport located in the same country?",
                ["Yeager Airport is a public airport in West Virginia, United States.",
                 "Albert J. Ellis Airport is an airport in North Carolina, United States."]
                ) == "Yes"
    assert lead("Were Michael Jackson and Joe Strummer of different nationalities?",
                ["Michael Jackson was an American singer.",
                 "Joe Strummer was a British musician."]) == "Yes"


def test_no_lead_unless_each_quote_gives_one_value():
    question = "Were Michael Jackson and Joe Strummer the same nationality?"
    assert lead(question, ["Michael Jackson was an American singer."]) is None
    assert lead(question, ["Michael Jackson was an American singer.",
                           "Joe Strummer was a singer from West London."]) is None
    # one sentence about both things says nothing of either
    assert lead(question, ["Michael Jackson was American and Joe Strummer British."]) is None
    # the statement says it, its quote does not: the quote decides
    assert lead(question, ["Michael Jackson was an American singer.",
                           "Joe Strummer was a British musician."],
                ["Michael Jackson was an American singer.",
                 "Joe Strummer was a musician of The Clash."]) is None
    # partly shared values (a double nationality) settle nothing
    assert lead("Are Maandig and Almqvist from the same country?",
                ["Maandig is a Filipino American singer.", "Almqvist is an American singer."]
                ) is None
    # already answered, or not a same-value question
    assert lead("Is Lysichiton and Ageratum in the same family?", ["No, they are not.",
                                                                   *FAMILIES]) is None
    assert lead("Are Lysichiton and Ageratum both genera?", FAMILIES) is None


def _answer_two(question: str, texts: list[str], titles: list[str]) -> dict:
    """The graph's answer to ``question`` from a draft quoting one sentence of each title."""
    docs = tuple(ev(f"d{i}#0", text, title=title)
                 for i, (text, title) in enumerate(zip(texts, titles, strict=True)))
    draft = answer(*((text, f"d{i}#0") for i, text in enumerate(texts)))
    graph, _, _, _ = make({"CitedAnswer": [draft]}, evidence=docs)
    return graph.invoke({"question": question})


def test_the_answer_opens_with_no_and_says_why():
    out = _answer_two("Are Lysichiton and Ageratum in the same family?", FAMILIES,
                      ["Lysichiton", "Ageratum"])
    assert out["status"] == "answered"
    assert out["answer"].startswith("No. Lysichiton is a genus")
    assert [f["type"] for f in out["findings"]] == ["same_value_lead"]
    assert "not the same" in out["findings"][0]["detail"]
    assert [c["text"] for c in out["claims"]] == FAMILIES  # the lead is no claim


def test_names_after_a_word_for_what_they_are_and_accented_names():
    from grounded_rag.verification.asked import compared_things

    def surfaces(question: str) -> list[list[str]]:
        return [sorted({t.surface for t in g}) for g in compared_things(question)]

    assert surfaces("Do filmmakers Chris Carter and Theo van Gogh share the same nationality?"
                    ) == [["Carter", "Chris"], ["Theo"]]
    assert surfaces("Did the movies The Castaway Cowboy and The Straight Story come out in "
                    "the same year?") == [["Castaway", "Cowboy"], ["Story", "Straight"]]
    assert surfaces("Are Károly Makk and Marco Bellocchio both film directors?") == [
        ["Károly", "Makk"], ["Bellocchio", "Marco"]]
    assert lead("Do filmmakers Chris Carter and Theo van Gogh share the same nationality?",
                ["Chris Carter is an American television producer.",
                 'Theodoor "Theo" van Gogh was a Dutch film director.']) == "No"
    # a name in single quotes is named ("Theodoor 'Theo' van Gogh")
    assert lead("Do filmmakers Chris Carter and Theo van Gogh share the same nationality?",
                ["Christopher Carl Carter is an American television producer.",
                 "Theodoor 'Theo' van Gogh (23 July 1957 - 2 November 2004) was a Dutch film "
                 "director."]) == "No"


def test_no_for_a_both_question_asking_a_country_a_quote_gives_otherwise():
    from grounded_rag.verification.same_value import both_country_lead

    def no(question: str, texts: list[str], quotes: list[str]) -> str | None:
        return both_country_lead(question, [  # type: ignore[list-item]
            {"text": t, "citations": [{"quote": q}]} for t, q in zip(texts, quotes, strict=True)])

    janus = ["Janus was published in Madison[1].", "The Lady was published in the UK[1]."]
    quotes = ["Janus was a feminist science fiction fanzine edited in Madison, Wisconsin.",
              "The Lady is Britain's longest-running weekly women's magazine."]
    assert no("Are Janus and The Lady both published in the US?", janus, quotes) == "No"
    assert no("Are Kasabian and Jawbox both from England?",
              ["Kasabian is an English rock band.", "Jawbox was an American band."],
              ["Kasabian are an English rock band formed in Leicester.",
               "Jawbox was an American alternative rock band from Washington, D.C."]) == "No"
    # both give the asked country: not this rule's "Yes" (a country and more may be asked)
    assert no("Are Guadarrama National Park and Teide National Park both in the Spanish "
              "mainland?", ["Guadarrama is a park in Spain.", "Teide is a park in Spain."],
              ["Guadarrama National Park is a national park in Spain.",
               "Teide National Park is located in Tenerife (Canary Islands, Spain)."]) is None
    # a thing with no country in its quote, a double nationality sharing the asked one,
    # a question that asks no country, or an answer that already gives a verdict
    assert no("Are Janus and The Lady both published in the US?", janus,
              [quotes[0], "The Lady is a weekly women's magazine."]) is None
    assert no("Are Maandig and Almqvist both American?",
              ["Maandig is a Filipino American singer.", "Almqvist is a Swedish singer."],
              ["Maandig is a Filipino American singer.", "Almqvist is an American singer."]
              ) is None
    assert no("Are Kasabian and Jawbox both rock bands?",
              ["Kasabian is an English rock band.", "Jawbox was an American band."],
              ["Kasabian are an English rock band.", "Jawbox was an American band."]) is None
    assert no("Are Janus and The Lady both published in the US?",
              ["No, they are not.", *janus], ["", *quotes]) is None


def test_the_both_question_answer_opens_with_no():
    out = _answer_two("Are Kasabian and Jawbox both from England?",
                      ["Kasabian is an English rock band.", "Jawbox was an American band."],
                      ["Kasabian", "Jawbox"])
    assert out["status"] == "answered"
    assert out["answer"].startswith("No. Kasabian is an English rock band")
    assert [f["type"] for f in out["findings"]] == ["same_value_lead"]
    assert "another country" in out["findings"][0]["detail"]


def test_yes_only_where_the_question_asks_the_country_alone():
    from grounded_rag.verification.same_value import both_country_lead

    def lead(question: str, quotes: list[str]) -> str | None:
        return both_country_lead(question, [  # type: ignore[list-item]
            {"text": q, "citations": [{"quote": q}]} for q in quotes])

    china = ["Yanzhou is a district under the administration of Jining, Shandong, China.",
             "Shangqiu is a city in eastern Henan province, China."]
    assert lead("Are Yanzhou District and Shangqiu both located in China?", china) == "Yes"
    assert lead("Are Yanzhou and Shangqiu both in the People's Republic of China?",
                china) is None  # asks more words than the country
    assert lead("Are Yanzhou and Shangqiu both cities in China?", china) is None
    assert lead("Are Yanzhou and Shangqiu both located in China?",
                [china[0], "Shangqiu is a city in eastern Henan province."]) is None


def test_the_both_question_answer_opens_with_yes():
    out = _answer_two(
        "Are both Langzhong and Fuling District located in China?",
        ["Langzhong is a county-level city in northeastern Sichuan, China.",
         "Fuling is a district in the geographical center of Chongqing Municipality, China."],
        ["Langzhong", "Fuling"])
    assert out["status"] == "answered"
    assert out["answer"].startswith("Yes. Langzhong is a county-level city")
    assert "the country asked" in out["findings"][0]["detail"]
