"""A bare value that fills the one gap a source sentence leaves in the question."""

from __future__ import annotations

from grounded_rag.verification.cascade import CascadeVerifier, cloze_sentence

SENTENCE = ("2016年7月に内戦中の国連加盟国である南スーダン国軍により、首都ジュバの住民に多数の"
            "犠牲者が出た際には、PKO部隊による住民の保護がなされなかった。")
QUESTION = "内戦中の国連加盟国である南スーダン国軍により、首都ジュバの住民に多数の犠牲者が出た年は"


def _evidence(text: str) -> list[dict]:
    return [{"source_id": "pko#1", "doc_id": "pko", "title": "", "url": "", "text": text,
             "score": 1.0, "relevance": 1.0}]


def test_the_value_the_question_leaves_out_is_settled():
    assert cloze_sentence("2016年7月", QUESTION, _evidence(SENTENCE)) == SENTENCE
    # the year of the date answers "年は"
    assert cloze_sentence("2016年", QUESTION, _evidence(SENTENCE)) == SENTENCE


def test_a_part_or_another_value_is_left_to_the_model():
    ev = _evidence(SENTENCE)
    assert cloze_sentence("7月", QUESTION, ev) == ""  # no 年, and 2016 is left over
    assert cloze_sentence("2017年7月", QUESTION, ev) == ""  # not in the sentence
    assert cloze_sentence("201", QUESTION, ev) == ""  # inside a longer number
    # a second date in the sentence: which one is asked is the model's call
    two = SENTENCE.replace("際には", "際と2017年3月には")
    assert cloze_sentence("2016年7月", QUESTION, _evidence(two)) == ""


def test_the_sentence_must_hold_the_question():
    other = "2016年7月に新しい庁舎が完成した。"
    assert cloze_sentence("2016年7月", QUESTION, _evidence(other)) == ""
    # a question that asks for no value, or names the answer's number itself
    assert cloze_sentence("2016年7月", "南スーダン国軍が住民を守らなかったのはなぜか",
                          _evidence(SENTENCE)) == ""
    assert cloze_sentence("2016年", "2016年に首都ジュバの住民に犠牲者が出たのはいつか",
                          _evidence(SENTENCE)) == ""


def test_counters_and_ranges_the_question_asks_with():
    text = "祭壇の上の子羊の周りには1匹の犬と14名の天使がいる。"
    question = "祭壇の上の子羊の周りには何名の天使がいますか。"
    assert cloze_sentence("14", question, _evidence(text)) == ""  # 名 is asked for
    assert cloze_sentence("14名", question, _evidence(text)) == ""  # 1 is left over
    assert cloze_sentence("14名", question, _evidence(text.replace("1匹の", ""))) != ""
    span = "コンゴ共和国と呼ばれたのは1997年までである。"
    assert cloze_sentence("1997年", "コンゴ共和国と呼ばれたのはいつからいつまでか",
                          _evidence(span)) == ""


def test_english_when_question():
    text = "The singer of The Fact Is made her debut in 2000 with a single."
    assert cloze_sentence("2000", "In what year did the singer of The Fact Is have her debut?",
                          _evidence(text)) == text


class _NeverCalled:
    def verify(self, claims, *, language):  # pragma: no cover - must not run
        raise AssertionError("the model was asked")


def test_the_cascade_settles_it_without_the_model():
    verdicts = CascadeVerifier(_NeverCalled()).verify(
        [{"text": "2016年7月", "question": QUESTION, "evidence": _evidence(SENTENCE)}],
        language="ja")
    assert verdicts[0]["verdict"] == "supported" and verdicts[0]["judge"] == "cloze"
    assert verdicts[0]["evidence_quote"] == SENTENCE


def test_one_end_of_a_range_is_left_to_the_model():
    text = "北陸線の複線化工事は2016-2017年に行われた。"
    assert cloze_sentence("2016", "北陸線の複線化工事が行われたのはいつか", _evidence(text)) == ""
