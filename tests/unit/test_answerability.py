"""The local answerability judge's logic, with a scripted scorer in place of the model."""

from grounded_rag.local.answerability import LocalAnswerabilityJudge
from tests.fakes import evidence


class KeywordScorer:
    """Scores a Yes/No prompt 0.9 when its passage mentions the keyword, else 0.1."""

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword
        self.prompts: list[tuple[str, str]] = []

    def score_questions(self, prompts):
        self.prompts.extend(prompts)
        return [0.9 if self.keyword in user.split("Question:")[0].split("質問:")[0] else 0.1
                for _, user in prompts]


LONG = " ".join(f"Filler sentence number {i} talks about the weather." for i in range(60))
PASSAGES = [
    evidence("a#sec0", "The museum is in the old town. " + LONG, title="Museum"),
    evidence("b#sec0", LONG + " The museum opened in 1901.", title="History"),
    evidence("c#sec0", "Tickets cost 12 euros.", title="Tickets"),
    evidence("d#sec0", "The museum opened in 1901.", title="Not read"),
]


def test_best_passage_decides_and_only_the_top_passages_are_read():
    scorer = KeywordScorer("1901")
    judge = LocalAnswerabilityJudge(scorer=scorer, passages=3,  # type: ignore[arg-type]
                                    thresholds={"en": 0.5})
    result = judge.assess("When did the museum open?", PASSAGES, language="en")
    assert result["answerable"] is True and result["score"] == 0.9
    assert [p["source_id"] for p in result["passages"]][0] == "b#sec0"
    assert len(scorer.prompts) == 3  # d#sec0 is beyond the top 3
    # Long passages are cut to the sentences closest to the question, within the budget.
    second = scorer.prompts[1][1]
    assert "opened in 1901" in second and len(second) < len(PASSAGES[1]["text"])
    assert second.startswith("Document:\nHistory\n")


def test_no_passage_above_the_threshold_is_unanswerable_in_either_language():
    scorer = KeywordScorer("never there")
    judge = LocalAnswerabilityJudge(scorer=scorer, thresholds={"en": 0.5, "ja": 0.3})  # type: ignore[arg-type]
    result = judge.assess("美術館はいつ開館しましたか?", PASSAGES, language="ja")
    assert result["answerable"] is False and result["threshold"] == 0.3
    assert "質問: 美術館はいつ開館しましたか?" in scorer.prompts[0][1]
    assert judge.assess("q", [], language="en")["answerable"] is False


def test_a_language_without_a_threshold_is_not_checked():
    scorer = KeywordScorer("never there")
    judge = LocalAnswerabilityJudge(scorer=scorer, thresholds={"ja": 0.9, "en": None})  # type: ignore[arg-type]
    result = judge.assess("When did the museum open?", PASSAGES, language="en")
    assert result["answerable"] is True and scorer.prompts == []
    assert not judge.covers("en") and judge.covers("ja")
