"""An answer must answer: off_question findings, in Japanese and English, and the loop's route."""

from __future__ import annotations

import pytest

from grounded_rag import Context, build_graph
from grounded_rag.verification.on_question import (
    has_kind,
    off_question_findings,
    question_kind,
)
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

CONTRACT = ev("contract#sec7", "第7条（解除）\n甲または乙は、60日前までに書面で通知することにより、"
              "本契約を解除することができる。", title="業務委託契約書 > 第7条（解除）")
RULES = ev("rules#sec3", "在宅勤務手当は月額5,000円とする。支給日は毎月25日とする。",
           title="在宅勤務規程 > 手当")
SPEC = ev("spec#sec2", "Battery\nThe X100 battery lasts up to 10 hours on a single charge.",
          title="X100 spec sheet > Battery")


def _kinds(question, *texts, evidence=(CONTRACT, RULES, SPEC), language="ja"):
    statements = [{"text": t, "citations": []} for t in texts]
    return [(f["claim_index"], f["severity"]) for f in
            off_question_findings(question, statements, list(evidence), language)]


@pytest.mark.parametrize(("question", "kind"), [
    ("解除には何日前までに通知が必要ですか？", "number"),
    ("在宅勤務手当は月にいくら支給されますか？", "number"),
    ("何人まで参加できますか？", "number"),
    ("How much notice is needed to terminate?", "number"),
    ("How many hours does the battery last?", "number"),
    ("本契約はいつ終了しますか？", "date"),
    ("When does the contract end?", "date"),
    ("What is the notice period for termination?", None),
    ("X100の色は？", None),
])
def test_question_kind(question, kind):
    assert question_kind(question) == kind


def test_kind_present_ignores_heading_numbering():
    assert has_kind("60日前までに通知します。", "number")
    assert not has_kind("第7条（解除）。", "number")
    assert not has_kind("See Article 7.", "number")
    assert has_kind("up to ten hours", "number")
    assert has_kind("毎月25日に支給されます。", "date")
    assert has_kind("It ends on March 31.", "date") and not has_kind("It ends soon.", "date")


def test_heading_only_answer_is_off_question_in_japanese():
    question = "解除には何日前までに通知が必要ですか？"
    assert _kinds(question, "第7条（解除）。") == [(0, "major")]
    assert _kinds(question, "60日前までに書面で通知する必要があります。") == []
    (finding,) = off_question_findings(question, [{"text": "第7条（解除）", "citations": []}],
                                       [CONTRACT], "ja")
    assert finding["type"] == "off_question"
    assert "見出し" in finding["detail"] and "数値" in finding["detail"]


def test_heading_only_answer_is_off_question_in_english():
    question = "How long does the X100 battery last?"
    assert _kinds(question, "Battery.", language="en") == [(0, "major")]
    assert _kinds(question, "X100 spec sheet.", language="en") == [(0, "major")]
    assert _kinds(question, "The battery lasts up to 10 hours.", language="en") == []


def test_an_entity_named_by_an_article_title_answers_a_where_or_who_question():
    capital = ev("augusta#sec0", "オーガスタ(Augusta)は、アメリカ合衆国メイン州の州都。",
                 title="オーガスタ (メイン州)")
    president = ev("sato#sec0", "佐藤直樹は、日本の実業家。現日活株式会社代表取締役社長。",
                   title="佐藤直樹 (日活)")
    evidence = (capital, president)
    assert _kinds("メイン州の州都はどこですか。", "オーガスタ", evidence=evidence) == []
    assert _kinds("日活株式会社の社長は誰ですか。", "佐藤直樹", evidence=evidence) == []
    # Restating the part of the title the question already names is still off the question.
    assert _kinds("メイン州の州都はどこですか。", "メイン州", evidence=evidence) == [(0, "major")]


def test_restating_the_question_is_off_question():
    question = "在宅勤務手当は月にいくら支給されますか？"
    assert _kinds(question, "在宅勤務手当は月に支給されます。") == [(0, "major")]
    assert _kinds(question, "在宅勤務手当は月額5,000円です。") == []
    en = _kinds("How long does the Aozora A1 battery last?", "The Aozora A1 battery lasts.",
                language="en")
    assert en == [(0, "major")]


def test_an_imperative_question_restated_is_off_question():
    # 「多国籍企業を一つ挙げよ」 was answered 「多国籍企業[1]。」 on a held-out small corpus
    assert _kinds("在宅勤務手当の金額を答えよ", "在宅勤務手当の金額。") == [(0, "major")]
    assert _kinds("在宅勤務手当の金額を答えよ", "在宅勤務手当は月額5,000円です。") == []
    assert _kinds("Name the battery's runtime.", "The battery's runtime.",
                  language="en") == [(0, "major")]
    assert _kinds("Name the battery's runtime.", "The X100 battery lasts up to 10 hours.",
                  language="en") == []


def test_a_question_for_another_writing_restated_is_off_question():
    # 「運動エネルギーをアルファベット一字で」 was answered 「運動エネルギー[1]。」 (dev)
    assert _kinds("運動エネルギーをアルファベット一字で", "運動エネルギー。") == [(0, "major")]
    assert _kinds("運動エネルギーをアルファベット一字で", "運動エネルギーはKで表す。") == []
    assert _kinds("デオキシリボ核酸をアルファベット3文字で表すと？", "デオキシリボ核酸。") == [
        (0, "major")]
    assert _kinds("デオキシリボ核酸をアルファベット3文字で表すと？", "DNAと略される。") == []


def test_missing_number_or_date_flags_every_statement_unless_one_gives_it():
    question = "在宅勤務手当は月にいくら支給されますか？"
    assert _kinds(question, "手当は規程で定められています。", "申請が必要です。") == [
        (0, "major"), (1, "major")]
    assert _kinds(question, "手当は規程で定められています。", "月額5,000円です。") == []
    when = "When is the allowance paid?"
    assert _kinds(when, "It is paid by bank transfer.", language="en") == [(0, "major")]
    assert _kinds(when, "It is paid on the 25th of each month.", language="en") == []


def test_a_date_does_not_answer_how_many():
    question = "How many acts does the opera have?"
    date_only = _kinds(question, "The opera's music video was released on March 4, 2005.",
                       language="en")
    assert date_only == [(0, "major")]
    assert _kinds(question, "The opera has three acts.", language="en") == []
    assert _kinds(question, "Premiered in 1999, it has 3 acts.", language="en") == []
    assert _kinds("このオペラは何幕ですか？", "2005年3月4日に初演された。") == [(0, "major")]
    assert _kinds("このオペラは何幕ですか？", "2005年に3幕で初演された。") == []
    (finding,) = off_question_findings(
        question, [{"text": "It premiered in 1999.", "citations": []}], [SPEC], "en")
    assert "only figures are dates" in finding["detail"]
    # Nor by a rank (a small-corpus dev answer to a GDP question).
    gdp = "About how many hundred million dollars was the GDP of Japan?"
    assert _kinds(gdp, "Japan was ranked 7th in the world in terms of positive peace.",
                  language="en") == [(0, "major")]
    # A span of time may be answered by dates.
    assert _kinds("How many years did he reign?", "He reigned from 1990 to 2000.",
                  language="en") == []
    assert _kinds("何年間在位しましたか？", "1990年から2000年まで在位した。") == []


@pytest.mark.parametrize(("text", "count"), [
    ("The music video was released on March 4, 2005.", False),
    ("2005年3月4日に発売された。", False),
    ("It was built in the 1990s.", False),
    ("平成17年に開業した。", False),
    ("The stadium holds 1500 seats.", True),
    ("In 1999, 300 people lived there.", True),
    ("It has three acts.", True),
    # a music single is no count (a held-out answer to "how many acts" said this)
    ("This is the first single released after the departure of Fawad Khan.", False),
    # a heading's numbering is a label, not a count
    ("第7条（2024年4月1日施行）に定める。", False),
    ("Article 12 took effect on April 1, 2024.", False),
    ("第7条により、委託料は月額45万円とする。", True),
    # a rank is no count (a dev answer to "about how many hundred million dollars" said this)
    ("Japan was ranked 7th in the positive peace index.", False),
    ("世界で第3位の規模である。", False),
    ("売上は2番目に多い。", False),
    ("It ranked 7th with 120 entries.", True),
])
def test_has_count_sets_dates_aside(text, count):
    from grounded_rag.verification.asked import has_count
    assert has_count(text) is count


def test_yes_no_and_open_questions_may_repeat_their_words():
    assert _kinds("Is remote work allowed?", "Remote work is allowed.", language="en") == []
    assert _kinds("在宅勤務手当はありますか？", "在宅勤務手当があります。") == []
    assert _kinds("What is the X100?", "The X100 is a laptop with a 10-hour battery.",
                  language="en") == []


def _graph(*replies):
    model = ScriptedChatModel(script={"CitedAnswer": list(replies)})
    verifier = ScriptedVerifier()  # supports everything, as it did for the heading answer
    graph = build_graph(retriever=StaticRetriever([CONTRACT]), generator=model,
                        extractor="rules", verifier=verifier)
    return graph, model


def test_off_question_answer_is_revised_with_the_finding_in_the_feedback():
    heading = answer(("第7条（解除）。", "S1.1"))
    good = answer(("60日前までに書面で通知する必要があります。", "S1.2"))
    graph, model = _graph(heading, good)
    out = graph.invoke({"question": "解除には何日前までに通知が必要ですか？"})
    assert out["status"] == "answered" and out["attempts"] == 2
    assert "60日前" in out["answer"] and "off_question" not in out["flags"]
    revise_prompt = model.calls_for("CitedAnswer")[1][-1].content
    assert "「第7条（解除）。」は質問に答えていません" in revise_prompt


def test_off_question_that_persists_abstains():
    heading = answer(("第7条（解除）。", "S1.1"))
    # The revision no longer sees S1.1 (cited by the off-question statement); its rewrite
    # cites the other sentence and still gives no number of days.
    again = answer(("甲または乙は書面で通知することにより解除できる。", "S1.2"))
    graph, model = _graph(heading, again)
    out = graph.invoke({"question": "解除には何日前までに通知が必要ですか？"},
                       context=Context(max_retries=1))
    assert out["status"] == "abstained" and out["attempts"] == 2
    assert out["decided_by"] == "off_question"
    assert "off_question" in out["flags"]
    assert any(f["type"] == "off_question" and f["severity"] == "major"
               for f in out["findings"])
    assert len(model.calls_for("CitedAnswer")) == 2
    revision = model.calls_for("CitedAnswer")[1][-1].content
    assert "S1.2" in revision and "S1.1 第7条" not in revision


def test_a_statement_about_nothing_asked_is_dropped_from_a_longer_answer():
    """A sentence picked up from an unrelated passage (no word shared with the question or
    the rest of the answer) is dropped before verification, with an info finding; a
    statement related to the others stays even when it shares no word with the question."""
    from grounded_rag.verification.on_question import unrelated_statements

    q = "What is given to licensed private operators?"
    stray = {"text": "She was a former member of the pop group S#arp.", "citations": []}
    code = {"text": "Licensed operators get a permission number.", "citations": []}
    digits = {"text": "The permission number starts with a prefecture code.", "citations": []}
    assert unrelated_statements(q, [stray, code, digits]) == [0]
    assert unrelated_statements(q, [code, digits]) == []
    assert unrelated_statements(q, [stray]) == []  # never the whole answer

    # One ordinary word in common ("sports") does not relate a long statement; a name does.
    q = ("What is the common title of the minister in charge of Japan's Ministry of "
         "Education, Culture, Sports, Science and Technology?")
    title = {"text": "The common title of the minister is 文部科学大臣.",
             "citations": [{"source_id": "mext#sec0"}]}
    apparel = {"text": "Troy manages a group of teammates at Under Armour, a company that "
                       "manufactures footwear, sports and casual apparel.",
               "citations": [{"source_id": "doc-3447#sec0"}]}
    assert unrelated_statements(q, [title, apparel]) == [1]
    q = "Who founded Sony, and who founded Honda?"
    sony = {"text": "Sony was founded by Masaru Ibuka and Akio Morita.",
            "citations": [{"source_id": "sony#sec0"}]}
    honda = {"text": "Honda Motor was established in 1948 by Soichiro Honda in Hamamatsu.",
             "citations": [{"source_id": "honda#sec0"}]}
    assert unrelated_statements(q, [sony, honda]) == []
    # A statement citing the same document as another stays, whatever it shares.
    q = "In what state did Olivia Newton-John perform Summer Nights?"
    show = {"text": "Summer Nights is a residency show by Olivia Newton-John.",
            "citations": [{"source_id": "doc-2677#sec0"}]}
    venue = {"text": "The show takes place in the Donny & Marie Showroom, at the Flamingo "
                     "Las Vegas.", "citations": [{"source_id": "doc-2677#sec0"}]}
    assert unrelated_statements(q, [show, venue]) == []

    spec = ev("spec#sec2", "Battery\nThe X100 battery lasts up to 10 hours on a single charge.",
              title="X100 spec > Battery")
    pop = ev("pop#sec0", "She was a former member of the pop group S#arp.", title="Singer")
    model = ScriptedChatModel(script={"CitedAnswer": [answer(
        ("The X100 battery lasts up to 10 hours.", "S1.2"),
        ("She was a former member of the pop group S#arp.", "S2.1"))]})
    graph = build_graph(retriever=StaticRetriever([spec, pop]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered" and "S#arp" not in out["answer"]
    assert "10 hours" in out["answer"]
    assert any(f["type"] == "unrelated_statement" and "S#arp" in f["detail"]
               for f in out["findings"])
