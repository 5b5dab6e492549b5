"""Coverage and binding: a claim's identifiers, names, values and topic must be in the
sentence it cites (or its heading), or the claim is not supported."""

from __future__ import annotations

from grounded_rag.types import Citation, Claim, Evidence
from grounded_rag.verification import rules
from grounded_rag.verification.coverage import cited_text, identifiers, names, topic, uncovered
from grounded_rag.verification.modes import judge_claims
from tests.fakes import ScriptedVerifier

CODES = ("F1: the filter is clogged.\n"
         "F2: the water tank is empty.\n"
         "F3: the door is open; close it and press start.")
PLANS = "Basic: 1 user for $8 per month.\nTeam: up to 20 users for $40 per month."
WASTE_JA = ("燃えるごみは毎週火曜日と金曜日に出してください。"
            "資源ごみは第2水曜日に出してください。粗大ごみは事前の申し込みが必要です。")


def _chunk(source_id: str, text: str, title: str) -> Evidence:
    return Evidence(source_id=source_id, doc_id=source_id.split("#")[0], title=title, url="",
                    text=text, score=1.0, relevance=0.9)


def _cite(chunk: Evidence, sentence: str) -> Citation:
    start = chunk["text"].index(sentence)
    return Citation(source_id=chunk["source_id"], quote=sentence, start=start,
                    end=start + len(sentence), match=1.0)


def _check(claim: str, chunk: Evidence, sentence: str, question: str = "") -> list[str]:
    text, heading = cited_text([_cite(chunk, sentence)], {chunk["source_id"]: chunk})
    return uncovered(claim, text, heading, question=question)


def test_a_code_must_be_in_the_line_it_cites() -> None:
    chunk = _chunk("manual#sec2", CODES, "Aqua 7 Coffee Maker > Display codes")
    assert _check("F3 means the water tank is empty.", chunk,
                  "F2: the water tank is empty.") == ["F3"]
    assert _check("F2 means the water tank is empty.", chunk,
                  "F2: the water tank is empty.") == []


def test_a_name_must_be_in_the_sentence_or_its_heading() -> None:
    chunk = _chunk("plans#sec1", PLANS, "Orbit Chat: Pricing > Plans")
    basic = "Basic: 1 user for $8 per month."
    # the product's name is in the heading; the plan's name must be in the sentence
    assert _check("The Orbit Chat Basic plan costs $8 per month.", chunk, basic) == []
    assert _check("The Orbit Chat Team plan costs $8 per month.", chunk, basic) == ["Team"]
    assert _check("The Orbit Chat Enterprise plan costs $8 per month.", chunk, basic) == [
        "Enterprise"]


def test_a_value_must_be_in_the_cited_sentence_not_only_elsewhere_in_the_chunk() -> None:
    chunk = _chunk("plans#sec1", PLANS, "Orbit Chat: Pricing > Plans")
    basic = "Basic: 1 user for $8 per month."
    missing = _check("The Basic plan allows 20 users.", chunk, basic)
    assert missing and "20" in missing[0]
    # another value of the same kind is a contradiction, which the value cues decide
    assert _check("The Basic plan costs $40 per month.", chunk, basic) == []
    # a value the question gives is its premise, not what the claim adds
    assert _check("With 1 user, the Basic plan costs $8 per month.", chunk, basic,
                  question="How much is the Basic plan for 1 user?") == []


def test_a_japanese_topic_must_be_the_one_its_sentence_speaks_of() -> None:
    chunk = _chunk("waste#sec1", WASTE_JA, "ごみの出し方 > 収集日")
    burnable = "燃えるごみは毎週火曜日と金曜日に出してください。"
    assert _check("資源ごみは毎週火曜日と金曜日に出します。", chunk, burnable) == ["資源ごみ"]
    assert _check("燃えるごみは毎週火曜日と金曜日に出します。", chunk, burnable) == []
    # another category's sentence does not give a day to the category asked about
    assert _check("粗大ごみは第2水曜日に出します。", chunk,
                  "資源ごみは第2水曜日に出してください。") == ["粗大ごみ"]


def test_cross_language_reads_identifiers_and_values_only() -> None:
    ja = _chunk("fees#sec1", "基本料金は月額4万5000円（税別）とする。型番はQX-20である。",
                "サービス契約 > 料金")
    fee = "基本料金は月額4万5000円（税別）とする。"
    assert _check("The basic Monthly fee is 45,000 yen.", ja, fee) == []
    assert _check("The monthly fee is 54,000 yen.", ja, fee) == []  # a rival: the value cues
    assert _check("The monthly fee is 45,000 yen for 3 users.", ja, fee) == ["3 users"]
    assert _check("Model QX-30 costs 45,000 yen a month.", ja, fee) == ["QX-30"]


def test_the_anchor_readers() -> None:
    assert identifiers("Codes E3 and LX-3 apply; 10GB and 2nd do not.") == ["E3", "LX-3"]
    assert names("The Nimbus plan: Free storage. Yes, Pro too.", japanese=False) == [
        "Nimbus", "Pro"]
    assert names("Nimbus DriveのFreeプランは5 GBです。", japanese=True) == [
        "Nimbus", "Drive", "Free"]
    assert topic("雑誌の貸出期間は1週間です。") == "雑誌"
    assert topic("この規程は旅費を定める。") == "規程"
    assert topic("はい、できます。") == ""


def test_judge_claims_decides_an_uncovered_claim_without_the_judge() -> None:
    chunk = _chunk("manual#sec2", CODES, "Aqua 7 Coffee Maker > Display codes")
    wrong = Claim(text="F1 means the door is open.",
                  citations=[_cite(chunk, "F3: the door is open; close it and press start.")])
    right = Claim(text="F3 means the door is open.",
                  citations=[_cite(chunk, "F3: the door is open; close it and press start.")])
    claims = [wrong, right]
    judge = ScriptedVerifier()
    findings = judge_claims(claims, [0, 1], [chunk], judge, execution="batch", language="en",
                            question="What does F1 mean?")
    assert claims[0]["verdict"] == "neutral" and "F1" in claims[0]["reason"]
    assert [f["claim_index"] for f in findings if f["type"] == "unsupported"] == [0]
    assert judge.calls == [[right["text"]]]
    rules.switch_off({"coverage"})
    try:
        claims = [dict(wrong)]  # type: ignore[list-item]
        judge_claims(claims, [0], [chunk], ScriptedVerifier(), execution="batch",  # type: ignore[arg-type]
                     language="en")
        assert claims[0]["verdict"] == "supported"
    finally:
        rules._OFF.discard("coverage")


def test_an_answer_whose_cited_sentences_hold_no_focus_word_of_the_question() -> None:
    from grounded_rag.verification.coverage import focus_uncited

    text = ("Replace the filter every 3 months.\n"
            "The Aqua 7 carries a 1-year warranty from the date of purchase.")
    chunk = _chunk("manual#sec4", text, "Aqua 7 Coffee Maker — Care")
    warranty = Claim(text="The Aqua 7 carries a 1-year warranty[1].", citations=[
        _cite(chunk, "The Aqua 7 carries a 1-year warranty from the date of purchase.")])
    filt = Claim(text="The Aqua 7 filter is replaced every 3 months[1].", citations=[
        _cite(chunk, "Replace the filter every 3 months.")])
    question = "How often should the Aqua 7 filter be replaced?"
    # the product's name is in the title, so only "filter" / "replaced" are the focus
    assert focus_uncited(question, [warranty], [chunk]) == ["filter", "replac"]
    assert focus_uncited(question, [filt], [chunk]) == []
    # one word of the question is enough: "replacing" for "replaced"
    assert focus_uncited("When is replacing needed?", [filt], [chunk]) == []
    ja = _chunk("waste#sec1", WASTE_JA, "ごみの出し方 — 収集日")
    burnable = Claim(text="燃えるごみは火曜日と金曜日です[1]。", citations=[
        _cite(ja, "燃えるごみは毎週火曜日と金曜日に出してください。")])
    assert focus_uncited("燃えるごみは何曜日に出しますか？", [burnable], [ja]) == []
    assert focus_uncited("粗大ごみの手数料はいくらですか？", [burnable], [ja]) != []
    # across languages the words cannot be compared: nothing is claimed
    assert focus_uncited("Which days is burnable waste collected?", [burnable], [ja]) == []


def test_an_identifier_of_the_question_that_nothing_cited_holds_is_the_focus() -> None:
    from grounded_rag.verification.coverage import focus_uncited

    text = "E3: the water tank is empty.\nDescale the kettle every 4 weeks."
    chunk = _chunk("manual#sec5", text, "Aqua 7 Coffee Maker — Error codes and care")
    descale = Claim(text="Descale the kettle every 4 weeks[1].", citations=[
        _cite(chunk, "Descale the kettle every 4 weeks.")])
    e3 = Claim(text="E3 means the water tank is empty[1].", citations=[
        _cite(chunk, "E3: the water tank is empty.")])
    # "error" and "code" are in the section heading, "E6" in nothing cited
    assert focus_uncited("What does error code E6 mean on the Aqua 7?", [descale], [chunk]) \
        == ["E6"]
    assert focus_uncited("What does error code E3 mean on the Aqua 7?", [e3], [chunk]) == []
    # the product's own model number is in the title: not an unheld identifier
    assert focus_uncited("What does the Aqua 7 error code list say about descaling?",
                         [descale], [chunk]) == []
    # a model number that is an identifier (X9), held by the title and by the section path
    # the store records (as every section of the document does): E6 is still unheld
    velo = Evidence(**{**_chunk("velo#sec4", text, "Velo X9 Coffee Maker — Error codes and care"),
                       "section": "Velo X9 Coffee Maker > Error codes and care"})
    descale_x9 = Claim(text="Descale the kettle every 4 weeks[1].", citations=[
        _cite(velo, "Descale the kettle every 4 weeks.")])
    e3_x9 = Claim(text="E3 means the water tank is empty[1].", citations=[
        _cite(velo, "E3: the water tank is empty.")])
    assert focus_uncited("What does error code E6 mean on the Velo X9?", [descale_x9],
                         [velo]) == ["E6"]
    assert focus_uncited("What does error code E3 mean on the Velo X9?", [e3_x9], [velo]) == []
    assert focus_uncited("How often should the Velo X9 be descaled?", [descale_x9],
                         [velo]) == []


def test_a_claim_is_re_cited_to_the_one_sentence_that_binds_what_it_names() -> None:
    from grounded_rag.verification.coverage import claim_uncovered

    plans = _chunk("svc#sec1", PLANS, "Orbit Chat: Pricing — Plans")
    limits = _chunk("svc#sec2", "Basic accounts may send 50 messages per minute, Team 500.",
                    "Orbit Chat: Pricing — Limits")
    codes = _chunk("manual#sec2", CODES, "Aqua 7 Coffee Maker — Display codes")
    by_id = {c["source_id"]: c for c in (plans, limits, codes)}
    wrong_line = Claim(text="Basic accounts may send 50 messages per minute.",
                       citations=[_cite(plans, "Basic: 1 user for $8 per month.")])
    missing, recited = claim_uncovered(wrong_line, by_id)
    assert missing == [] and recited is not None
    assert recited["source_id"] == "svc#sec2" and recited["quote"].startswith("Basic accounts")
    # the neighbouring code's line matches the claim's words worse: not a binding
    neighbour = Claim(text="F1 means the water tank is empty.",
                      citations=[_cite(codes, "F2: the water tank is empty.")])
    assert claim_uncovered(neighbour, by_id) == (["F1"], None)


def test_a_bare_value_is_re_cited_by_the_question_s_words() -> None:
    from grounded_rag.verification.coverage import claim_uncovered

    text = ("チェロには4本の弦があり、第1弦が最も高い。ギターの弦は6本である。"
            "ヴィオラの弦は4本で、チェロより小さい。")
    chunk = _chunk("strings#sec1", text, "弦楽器 — 弦の数")
    bare = Claim(text="6本", citations=[_cite(chunk, "ギターの弦は6本である。")])
    # the value is in the cited sentence: covered as cited, whatever the question
    assert claim_uncovered(bare, {chunk["source_id"]: chunk},
                           question="ヴィオラの弦は何本ですか？") == ([], None)
    wrong = Claim(text="4本", citations=[_cite(chunk, "ギターの弦は6本である。")])
    missing, recited = claim_uncovered(wrong, {chunk["source_id"]: chunk},
                                       question="ヴィオラの弦は何本ですか？")
    assert missing == [] and recited is not None
    assert recited["quote"].startswith("ヴィオラの弦は4本")  # not the cello's 4
    # without a question the value alone picks no sentence: neutral, 4 named
    assert claim_uncovered(wrong, {chunk["source_id"]: chunk}) == (["4"], None)


def test_the_answer_cites_where_a_re_cited_claim_was_judged() -> None:
    from grounded_rag.nodes.verify import recited_draft

    plans = _chunk("svc#sec1", PLANS, "Orbit Chat: Pricing — Plans")
    limits = _chunk("svc#sec2", "Basic accounts may send 50 messages per minute, Team 500.",
                    "Orbit Chat: Pricing — Limits")
    wrong = _cite(plans, "Basic: 1 user for $8 per month.")
    statement = Claim(text="Basic accounts may send 50 messages per minute.", citations=[wrong])
    claims = [Claim(text=statement["text"], citations=[wrong], statement=0)]
    judge = ScriptedVerifier()
    findings = judge_claims(claims, [0], [plans, limits], judge, execution="batch",
                            language="en")
    assert [f["type"] for f in findings] == ["citation_moved"]
    assert claims[0]["verdict"] == "supported"
    assert claims[0]["citations"][0]["source_id"] == "svc#sec2"
    # the judge read the sentence the claim now cites, first
    assert judge.calls == [[statement["text"]]]
    state = {"draft": {"answerable": True, "statements": [statement]}}
    update = recited_draft(state, claims, findings)  # type: ignore[arg-type]
    assert update["draft"]["statements"][0]["citations"] == claims[0]["citations"]
    assert recited_draft(state, claims, []) == {}  # type: ignore[arg-type]
