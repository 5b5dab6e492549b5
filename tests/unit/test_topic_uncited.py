"""A Japanese answer whose cited passages never name what the question asks about is off it."""

from __future__ import annotations

from grounded_rag import Context, build_graph
from grounded_rag.verification.on_question import off_question_findings
from grounded_rag.verification.subjects import question_topic, topic_uncited
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

# Two leagues of a small collection: the question asks about one, a passage tells the other.
STUDENTS = ev("leagues#sec1", "戦後の学制改革を受けて、1949年に全国学生卓球連盟が結成された。"
              "各地の大学の部が加盟した。", title="全国学生卓球連盟")
CLUBS = ev("leagues#sec2", "日本社会人卓球連盟は社会人の卓球大会を統轄する団体である。"
           "本部は大阪にある。", title="日本社会人卓球連盟")
WEAVERS = ev("mill#sec1", "職人たちはフランスから招いた技師たちから織物の技術を学んだ。",
             title="前橋織物工場")
ENGLISH = ev("sheet#sec1", "The Shakai league was founded in 1952.", title="Leagues")


def _cited(*pairs):
    return [{"text": text, "citations": [{"source_id": e["source_id"], "quote": quote}]}
            for text, e, quote in pairs]


def test_the_question_topic_is_its_opening_name():
    assert question_topic("日本社会人卓球連盟はいつ設立された？") == "日本社会人卓球連盟"
    assert question_topic("山田 太郎はどこで織物の技術を学んだ？") == "山田 太郎"
    # no name before は / が, a question word, or an English question: no topic
    assert question_topic("メイン州の州都はどこですか。") == ""
    assert question_topic("何人が参加したか？") == ""
    assert question_topic("When was the league founded?") == ""


def test_an_answer_from_a_passage_on_something_else_is_off_the_question():
    statements = _cited(("1949年", STUDENTS, "1949年に全国学生卓球連盟が結成された。"))
    question = "日本社会人卓球連盟はいつ設立された？"
    assert topic_uncited(question, statements, [STUDENTS, CLUBS]) == "日本社会人卓球連盟"
    findings = off_question_findings(question, statements, [STUDENTS, CLUBS], "ja")
    assert [(f["claim_index"], f["severity"]) for f in findings] == [(0, "major")]
    assert "「日本社会人卓球連盟」について述べていません" in findings[0]["detail"]
    # a statement about other people, from a passage that never names the one asked about
    weavers = _cited(("職人たちはフランスから織物の技術を学んだ。", WEAVERS,
                      "職人たちはフランスから招いた技師たちから織物の技術を学んだ。"))
    assert topic_uncited("山田 太郎はどこで織物の技術を学んだ？", weavers,
                         [WEAVERS]) == "山田 太郎"


def test_a_cited_passage_or_title_that_names_the_topic_answers_it():
    question = "日本社会人卓球連盟の本部はどこ？"  # の: no topic read, nothing checked
    assert topic_uncited(question, _cited(("大阪", CLUBS, "本部は大阪にある。")), [CLUBS]) == ""
    # the sentence quoted omits the name; the passage's title gives it
    asked = "日本社会人卓球連盟は何を統轄する？"
    statements = _cited(("社会人の卓球大会", CLUBS, "本部は大阪にある。"))
    assert topic_uncited(asked, statements, [CLUBS]) == ""
    assert off_question_findings(asked, statements, [CLUBS], "ja") == []
    # an English source spells names its own way: not read
    english = _cited(("1952年", ENGLISH, "The Shakai league was founded in 1952."))
    assert topic_uncited("日本社会人卓球連盟はいつ設立された？", english, [ENGLISH]) == ""


def test_a_revision_that_still_cites_another_league_abstains():
    # The revision no longer sees S1.1; it cites the other league's passage again.
    model = ScriptedChatModel(script={"CitedAnswer": [answer(("1949年", "S1.1")),
                                                      answer(("1949年に結成された", "S1"))]})
    graph = build_graph(retriever=StaticRetriever([STUDENTS, CLUBS]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": "日本社会人卓球連盟はいつ設立された？"},
                       context=Context(max_retries=1))
    assert out["status"] == "abstained" and out["decided_by"] == "off_question"
    revision = model.calls_for("CitedAnswer")[1][-1].content
    assert "「日本社会人卓球連盟」について述べていません" in revision
