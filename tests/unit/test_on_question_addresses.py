"""An answer must address the question, in both languages: yes/no predicates and money."""

from __future__ import annotations

import pytest

from grounded_rag.verification.asked import (
    addressed,
    asked_terms,
    asks_money,
    has_money,
    is_yes_no,
)
from grounded_rag.verification.on_question import off_question_findings
from tests.fakes import evidence as ev

WARRANTY = ev("aurora#warranty", "The Aurora LX-3 carries a 24-month limited warranty; water "
              "damage is not covered.", title="Aurora LX-3 User Guide > Warranty")
BATTERY = ev("aurora#battery", "A full charge powers a typical laptop for about 9 hours.",
             title="Aurora LX-3 User Guide > Battery")
TRAVEL = ev("aurora#travel", "The Aurora LX-3 is approved for carry-on in airplane cabins.",
            title="Aurora LX-3 User Guide > Travel")
EXPENSES = ev("travel#sec4", "悪天候により航空便が欠航した場合、追加の宿泊費は全額を支給する。"
              "航空券の払い戻しは出発の24時間前まで受け付ける。",
              title="出張旅費規程 > 欠航時の扱い")
FEES = ev("plan#fees", "The monthly fee is $12, billed on the first day of each month. "
          "The contract ends on March 31, 2026.", title="Service agreement > Fees")


def _statement(text, quote=None, source="s"):
    citations = [{"source_id": source, "quote": quote, "start": 0, "end": len(quote)}
                 ] if quote else []
    return {"text": text, "citations": citations}


def _findings(question, statements, evidence, language):
    return off_question_findings(question, statements, evidence, language)


def test_aurora_answer_about_warranty_and_battery_does_not_answer_the_cabin_question():
    question = "Can the Aurora LX-3 be carried in an airplane cabin?"
    statements = [
        _statement("The Aurora LX-3 carries a 24-month limited warranty; water damage is not "
                   "covered.", WARRANTY["text"], WARRANTY["source_id"]),
        _statement("A full charge powers a typical laptop for about 9 hours.",
                   BATTERY["text"], BATTERY["source_id"]),
    ]
    findings = _findings(question, statements, [WARRANTY, BATTERY], "en")
    assert [(f["type"], f["severity"], f["claim_index"]) for f in findings] == [
        ("off_question", "major", 0), ("off_question", "major", 1)]
    # The detail names what was asked and not addressed; "carries" (a warranty) is no answer.
    assert '"airplane", "cabin"' in findings[0]["detail"]
    assert "sources do not say" in findings[0]["detail"]


def test_a_sentence_that_says_it_answers_the_cabin_question():
    question = "Can the Aurora LX-3 be carried in an airplane cabin?"
    statement = _statement("The Aurora LX-3 is approved for carry-on in airplane cabins.",
                           TRAVEL["text"], TRAVEL["source_id"])
    assert _findings(question, [statement], [WARRANTY, TRAVEL], "en") == []


def test_the_quote_counts_as_part_of_the_cited_sentence():
    question = "Can the Aurora LX-3 be carried in an airplane cabin?"
    terse = _statement("Yes, it is.", TRAVEL["text"], TRAVEL["source_id"])
    assert _findings(question, [terse], [TRAVEL], "en") == []
    assert len(_findings(question, [_statement("Yes, it is.")], [TRAVEL], "en")) == 1


def test_japanese_yes_no_answered_by_the_rule_is_not_flagged():
    question = "悪天候で飛行機が欠航した場合、追加の宿泊費は支給されますか？"
    statement = _statement("悪天候により航空便が欠航した場合、追加の宿泊費は全額を支給する",
                           "悪天候により航空便が欠航した場合、追加の宿泊費は全額を支給する。",
                           EXPENSES["source_id"])
    assert _findings(question, [statement], [EXPENSES], "ja") == []


def test_japanese_yes_no_answered_by_an_unrelated_true_sentence_is_flagged():
    question = "悪天候で飛行機が欠航した場合、追加の宿泊費は支給されますか？"
    statement = _statement("航空券の払い戻しは出発の24時間前まで受け付けます。",
                           "航空券の払い戻しは出発の24時間前まで受け付ける。",
                           EXPENSES["source_id"])
    (finding,) = _findings(question, [statement], [EXPENSES], "ja")
    assert finding["type"] == "off_question" and finding["severity"] == "major"
    assert "「支給」" in finding["detail"]


@pytest.mark.parametrize(("question", "text", "language"), [
    ("悪天候で飛行機が欠航した場合、追加の宿泊費は支給されますか？",
     "欠航した場合、追加の宿泊費は支給されますか[1]？", "ja"),
    ("悪天候で飛行機が欠航した場合、追加の宿泊費は支給されますか？",
     "追加の宿泊費は全額支給されるのでしょうか？", "ja"),
    ("Can the Aurora LX-3 be carried in an airplane cabin?",
     "Is the Aurora LX-3 approved for carry-on in airplane cabins?", "en"),
])
def test_a_statement_that_asks_a_question_answers_nothing(question, text, language):
    source = EXPENSES if language == "ja" else TRAVEL
    statement = _statement(text, source["text"], source["source_id"])
    (finding,) = _findings(question, [statement], [source], language)
    assert finding["type"] == "off_question"
    assert ("question, not an answer" in finding["detail"]
            or "答えではなく問い" in finding["detail"])


def test_a_question_quoted_inside_a_statement_is_not_asking():
    from grounded_rag.verification.on_question import asks_back

    assert asks_back("欠航した場合は支給されますか[1][2]？")
    assert not asks_back("「なぜ？」という問いが残る。")
    assert not asks_back('He asked "why?"')
    assert not asks_back("Yes, it is approved for carry-on[1].")


def test_how_much_needs_an_amount_of_money():
    question = "How much is the monthly fee?"
    billed = _statement("The monthly fee is billed on the first day of each month.",
                        "The monthly fee is $12, billed on the first day of each month.")
    (finding,) = _findings(question, [billed], [FEES], "en")
    assert finding["type"] == "off_question" and "amount of money" in finding["detail"]
    assert _findings(question, [_statement("The monthly fee is $12.")], [FEES], "en") == []
    assert _findings("月額料金はいくらですか？", [_statement("毎月1日に請求されます。")],
                     [FEES], "ja")
    assert _findings("月額料金はいくらですか？", [_statement("月額1,200円です。")],
                     [FEES], "ja") == []


def test_when_needs_a_date():
    question = "When does the contract end?"
    assert len(_findings(question, [_statement("The contract ends upon written notice.")],
                         [FEES], "en")) == 1
    assert _findings(question, [_statement("The contract ends on March 31, 2026.")],
                     [FEES], "en") == []


@pytest.mark.parametrize("question", ["?", "それは？", "", "   ", "Is it?", "ですか？"])
def test_questions_without_content_words_do_not_crash_or_flag(question):
    statement = _statement("The monthly fee is $12.", FEES["text"])
    assert _findings(question, [statement], [FEES], "en") == []


@pytest.mark.parametrize(("question", "yes_no"), [
    ("Can the Aurora LX-3 be carried in an airplane cabin?", True),
    ("Is remote work allowed?", True),
    ("Does the fee include tax?", True),
    ("Is the X100 or the X200 lighter?", False),
    ("What is the notice period?", False),
    ("悪天候で飛行機が欠航した場合、追加の宿泊費は支給されますか？", True),
    ("北海道に梅雨はあるか", True),
    ("オランダは対日貿易では赤字か黒字か？", False),
    ("国から許可を取った上での管理売春はオランダにおいて合法ですか？違法ですか？", False),
    ("支給日はいつですか？", False),
    ("何人まで参加できますか？", False),
    ("X100の色は？", False),
])
def test_yes_no_questions_are_told_from_wh_and_either_or_questions(question, yes_no):
    assert is_yes_no(question) is yes_no


def test_asked_terms_leave_out_the_subject_and_the_titles():
    cabin = asked_terms("Can the Aurora LX-3 be carried in an airplane cabin?")
    assert [t.surface for t in cabin] == ["carried", "airplane", "cabin"]
    # A comparison is answered by what the sources say of each compared thing.
    assert [t.surface for t in asked_terms("Are Pam Veasey and Jon Jost both American?")
            ] == ["Pam", "Veasey", "Jon", "Jost"]
    assert [t.surface for t in asked_terms("Is the monthly fee refundable?")] == [
        "refundable"]
    ja = asked_terms("悪天候で飛行機が欠航した場合、追加の宿泊費は支給されますか？")
    assert [t.token for t in ja] == ["支給"]
    # An existence question asks about its topic; the document title names the subject.
    topic = asked_terms("在宅勤務手当はありますか？", titles=["在宅勤務規程"])
    assert [t.token for t in topic] == ["手当"]


def test_a_comparison_needs_sentences_about_the_compared_things():
    question = "Are Sparta and King Charles both from the same country?"
    about_both = _statement("No.", "Sparta is an American rock band from El Paso, Texas. King "
                            "Charles is a singer-songwriter from West London.")
    assert _findings(question, [about_both], [], "en") == []
    elsewhere = _statement("No.", "The Saimaa Gesture is a 1981 film by Finnish directors.")
    assert len(_findings(question, [elsewhere], [], "en")) == 1

    # A word both names share ("Magazine") names neither: a quote about one magazine that
    # never names Gynaika does not speak to "Gynaika Magazine" (a small-corpus answer).
    question = "Are Gynaika Magazine and New! Magazine both tailored to a female audience?"
    one = _statement("New! Magazine is a British weekly magazine.",
                     "New! Magazine is a British weekly magazine, specialising in celebrity "
                     "news.")
    assert len(_findings(question, [one], [], "en")) == 1
    both = _statement("No.", "Gynaika Magazine was the first Greek women's magazine. New! "
                      "Magazine is a British weekly magazine.")
    assert _findings(question, [both], [], "en") == []


def test_when_as_a_conjunction_does_not_ask_for_a_date():
    question = "She was on holiday in which city when she became paralysed by polio?"
    assert _findings(question, [_statement("Melbourne")], [], "en") == []


def test_an_answer_naming_one_of_the_listed_candidates_is_not_a_restatement():
    question = "閲覧室、書庫、事務室の中で延床面積が最も広かったのはどこですか?"
    assert _findings(question, [_statement("閲覧室")], [], "ja") == []
    assert _findings("Of the directors Kenji Mizoguchi and Andrzej Zulawski, which one often "
                     "went against mainstream commercialism?",
                     [_statement("Andrzej Zulawski")], [], "en") == []


def test_at_least_half_of_the_predicate_must_be_addressed():
    terms = asked_terms("Can the Aurora LX-3 be carried in an airplane cabin?")
    assert not addressed(terms, ["The Aurora LX-3 carries a 24-month warranty."])
    assert addressed(terms, ["Carry-on bags must fit the airplane's overhead bins."])
    assert addressed([], ["anything"])


def test_money_questions_and_amounts():
    assert asks_money("How much is the monthly fee?")
    assert asks_money("How much does the Aurora LX-3 cost?")
    assert asks_money("在宅勤務手当は月にいくら支給されますか？")
    assert not asks_money("How much notice is needed to terminate?")
    assert not asks_money("How many hours does the battery last?")
    assert has_money("It costs $12.") and has_money("月額5,000円") and has_money("It is free.")
    assert not has_money("It is billed on the 1st of each month.")


def test_the_loop_revises_the_aurora_answer_and_abstains_when_it_persists():
    from grounded_rag import Context, build_graph
    from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer

    off = answer(("The Aurora LX-3 carries a 24-month limited warranty; water damage is not "
                  "covered.", "S1.1"), ("A full charge powers a typical laptop for about 9 hours.",
                                        "S2.1"))
    model = ScriptedChatModel(script={"CitedAnswer": [off, off]})
    graph = build_graph(retriever=StaticRetriever([WARRANTY, BATTERY]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    # the pre-model predicate check would abstain at once: this is the path after a draft
    out = graph.invoke({"question": "Can the Aurora LX-3 be carried in an airplane cabin?"},
                       context=Context(max_retries=1, predicate_check=False))
    assert out["attempts"] == 2 and "off_question" in out["flags"]
    assert out["status"] == "abstained" and out["decided_by"] == "off_question"
    assert out["answer"] == "The sources do not say." and out["claims"] == []
    revise_prompt = model.calls_for("CitedAnswer")[1][-1].content
    assert '"airplane", "cabin"' in revise_prompt and "sources do not say" in revise_prompt
    # Both cited sentences were off the question; with nothing else to show, the revision
    # sees them again. The battery statement is about the same document: not "unrelated".
    assert "S1.1 The Aurora" in revise_prompt
    assert not any(f["type"] == "unrelated_statement" for f in out["findings"])


HOTEL = ev("travel#sec2", "国内出張の宿泊費は、1泊あたり東京都内は15,000円、その他の地域は"
           "12,000円を上限として実費を支給する。", title="出張旅費規程 > 第2条 宿泊費")
STORM = "悪天候で飛行機が欠航した場合、追加の宿泊費はどれくらい支給されますか？"


def test_an_answer_about_another_case_does_not_answer_a_conditional_question():
    # The general rule on hotel costs, not the rule for cancelled flights.
    general = _statement("東京都内は15,000円、その他の地域は12,000円を上限として実費を支給する。",
                         HOTEL["text"], "travel#sec2")
    found = _findings(STORM, [general], [HOTEL, EXPENSES], "ja")
    assert [f["type"] for f in found] == ["off_question"]
    assert "欠航" in found[0]["detail"] and "場合" in found[0]["detail"]
    # The sentence for the case asked about: one word of the condition is enough.
    case = _statement("追加の宿泊費は全額支給されます。", EXPENSES["text"].split("。")[0] + "。",
                      "travel#sec4")
    assert _findings(STORM, [case], [HOTEL, EXPENSES], "ja") == []


def test_an_english_if_clause_is_a_case_the_answer_must_speak_to():
    q = "How much is the monthly fee if the contract is cancelled early?"
    fee = _statement("The monthly fee is $12.", FEES["text"].split(". ")[0] + ".", "plan#fees")
    found = _findings(q, [fee], [FEES], "en")
    assert [f["type"] for f in found] == ["off_question"] and "cancelled" in found[0]["detail"]
    early = _statement("A contract cancelled early costs one more monthly fee of $12.",
                       "A contract cancelled early costs one more monthly fee of $12.")
    assert _findings(q, [early], [FEES], "en") == []


@pytest.mark.parametrize("question", [
    "マルセル・プルーストは何歳の時、喘息が発症しましたか。",   # the clause asks (何歳)
    "梅雨の期間中ほとんど雨が降らない場合を何と呼ぶ？",         # the case is what is named
    "『失われた時を求めて』は誰の作品ですか？",                  # 時 in a title
    "Inside Job and When We Were Kings, are of which genre?",  # "When" in a title
    "When is the report due?",                                  # asks a date
    "What was the score when did the game end?",                # "when" + auxiliary asks
])
def test_a_question_that_sets_no_case_has_no_condition_terms(question):
    from grounded_rag.verification.asked import condition_terms

    assert condition_terms(question) == []


def test_condition_terms_read_the_clause_of_the_case():
    from grounded_rag.verification.asked import condition_terms

    assert {t.token for t in condition_terms(STORM)} == {"天候", "飛行", "欠航"}
    assert {t.surface for t in condition_terms(
        "What happens to the fee if the contract is cancelled early?")} == {
        "contract", "cancelled", "early"}


ECHINACEA = ev("plants#echinacea", "Echinacea is a genus of herbaceous flowering plants in the "
               "daisy family. Bamboos are evergreen perennial flowering plants.",
               title="Flowering plants")
RHAPIDOPHYLLUM = ev("palms#rhapidophyllum", "Rhapidophyllum is a genus of palms; its only "
                    "species is a flowering plant of the south-eastern United States.",
                    title="Rhapidophyllum")


def test_compared_things_are_the_named_subjects_of_a_comparison():
    from grounded_rag.verification.asked import compared_things

    def names(q):
        return [[t.surface for t in group] for group in compared_things(q)]

    assert names("Are both Rhapidophyllum and Spartium flowering plants?") == [
        ["Rhapidophyllum"], ["Spartium"]]
    assert names("Are Sparta and King Charles both from the same country?") == [
        ["Sparta"], ["King", "Charles"]]
    assert names("Is the Aurora LX-3 waterproof?") == []  # one thing, no comparison
    assert names("Which is older, Sparta or Athens?") == []  # not yes/no
    assert names("AとBは同じ国の出身ですか？") == []  # English only


def test_a_comparison_answered_from_a_paragraph_that_names_neither_thing_is_off_question():
    """The answer names both plants, but what it cites is about two others: the statements'
    own words do not count as the sources speaking to the compared things."""
    question = "Are both Rhapidophyllum and Spartium flowering plants?"
    statements = [
        _statement("Rhapidophyllum is a flowering plant.", ECHINACEA["text"].split(". ")[0],
                   ECHINACEA["source_id"]),
        _statement("Spartium is a flowering plant.", ECHINACEA["text"].split(". ")[1],
                   ECHINACEA["source_id"]),
    ]
    findings = _findings(question, statements, [ECHINACEA], "en")
    assert [f["claim_index"] for f in findings] == [0, 1]
    assert '"Rhapidophyllum", "Spartium"' in findings[0]["detail"]


def test_a_comparison_needs_every_compared_thing_named_in_a_quote_or_a_cited_title():
    question = "Are both Rhapidophyllum and Spartium flowering plants?"
    one = _statement("Rhapidophyllum is a flowering plant.", RHAPIDOPHYLLUM["text"],
                     RHAPIDOPHYLLUM["source_id"])
    findings = _findings(question, [one], [RHAPIDOPHYLLUM], "en")
    assert findings and '"Spartium"' in findings[0]["detail"]
    assert '"Rhapidophyllum"' not in findings[0]["detail"]
    # Named by the cited section's title (the sentence says "its only species"), or run
    # together with the previous sentence as sources sometimes are: both count.
    spartium = ev("shrubs#spartium", "Its yellow flowers are fragrant.", title="Spartium")
    run_together = ev("x#1", "A shrub of the pea family.Spartium junceum has yellow flowers.",
                      title="Shrubs")
    for other in (spartium, run_together):
        both = [one, _statement("Spartium is a flowering plant.", other["text"],
                                other["source_id"])]
        assert _findings(question, both, [RHAPIDOPHYLLUM, other], "en") == []
