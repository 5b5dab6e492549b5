"""What fills a Japanese question's gap in the source sentence it was made from."""

from __future__ import annotations

from grounded_rag.nodes.feedback import prepare_feedback
from grounded_rag.verification.asked import gap_filler, gap_fillers, gap_word
from grounded_rag.verification.cascade import CascadeVerifier, cloze_sentence

OIL = "北海は良質の軽質原油が多いだけでなく、沿岸国の消費量が限られているため輸出が盛んである。"
OIL_Q = "北海は良質の何が多いだけでなく、沿岸国の消費量が限られているため輸出が盛んである。"


def _evidence(*texts: str) -> list[dict]:
    return [{"source_id": f"d#{i}", "doc_id": "d", "title": "", "url": "", "text": t,
             "score": 1.0, "relevance": 1.0} for i, t in enumerate(texts)]


def test_the_word_in_the_question_words_place():
    assert gap_filler(OIL_Q, OIL) == ("軽質原油",)
    assert gap_word(OIL_Q) == "何"


def test_the_noun_after_dono_belongs_to_the_answer():
    sentence = "その市長選挙では共産党と新社会党の推薦を受けた候補が現職に勝った。"
    question = "その市長選挙ではどの党の推薦を受けた候補が現職に勝ったか？"
    assert gap_filler(question, sentence) == ("共産党と新社会", "共産党と新社会党")


def test_particles_and_quote_marks_are_not_part_of_it():
    sentence = "同党はこの法案を「戦争法案」などと呼んで反対した。"
    assert gap_filler("同党はこの法案を何と呼んで反対したか", sentence) == ("戦争法案",)


def test_numbers_and_look_alikes_are_left_alone():
    # 何年: a number, the cloze rule's own case
    assert gap_filler("この線は何年に開業したのか", "この線は1912年に開業した。") == ()
    # 「など」 holds どの, 「何らか」 asks nothing
    fares = "鉄道やバスなどの運賃は改定された。"
    assert gap_filler("鉄道やバスなどの運賃は改定されたか", fares) == ()
    assert gap_filler("何らかの理由で遅れた場合は", "何らかの理由で遅れた場合は連絡する。") == ()


def test_a_question_spread_over_a_sentence_gives_nothing():
    # The words after the gap are found, but a whole clause away: no single word fills it.
    sentence = ("森の生態系は、樹木が「生産者」となり、菌類を「分解者」とする、光合成に依存した"
                "物質の循環が基本である。")
    assert gap_filler("森の生態系は何に依存した物質の循環が基本か？", sentence) == ()
    # Two characters of the question's ending match another word ("の作" of "の作家").
    sentence = "大作『長い旅』は後世の作家に強い影響を与えた。"
    assert gap_filler("『長い旅』は誰の作品なの?", sentence) == ()


def test_sentences_that_fill_it_differently_pin_nothing():
    other = OIL.replace("軽質原油", "天然ガス")
    assert gap_fillers(OIL_Q, _evidence(OIL)) == [("軽質原油", OIL)]
    assert gap_fillers(OIL_Q, _evidence(OIL, other)) == []


def test_the_filler_is_settled_and_another_word_is_not():
    ev = _evidence(OIL)
    assert cloze_sentence("軽質原油", OIL_Q, ev) == OIL
    assert cloze_sentence("沿岸国", OIL_Q, ev) == ""
    assert cloze_sentence("原油", OIL_Q, ev) == ""  # a part of it is not what the sentence says


class _NeverCalled:
    def verify(self, claims, *, language):  # pragma: no cover - must not run
        raise AssertionError("the model was asked")


def test_the_cascade_settles_the_filler_without_the_model():
    verdicts = CascadeVerifier(_NeverCalled()).verify(
        [{"text": "軽質原油", "question": OIL_Q, "evidence": _evidence(OIL)}], language="ja")
    assert verdicts[0]["verdict"] == "supported" and verdicts[0]["judge"] == "cloze"


def _state(statement: str, question: str = OIL_Q, language: str = "ja") -> dict:
    return {"question": question, "language": language, "evidence": _evidence(OIL),
            "attempts": 1, "max_retries": 2,
            "draft": {"statements": [{"text": statement, "citations": ["S1.1"]}]},
            "claims": [], "findings": [{"type": "off_question", "severity": "major",
                                        "claim_index": 0, "detail": "質問を繰り返しています"}]}


def test_a_revision_is_told_what_fills_the_gap():
    feedback = prepare_feedback(_state(OIL_Q))["feedback"]
    assert "質問の「何」にあたるのは「軽質原油」です" in feedback
    assert OIL in feedback


def test_no_hint_when_the_answer_already_has_it_or_the_question_is_english():
    assert "にあたるのは" not in prepare_feedback(_state("軽質原油"))["feedback"]
    english = _state("The North Sea has crude oil.", question="What does the North Sea have?",
                     language="en")
    assert "にあたるのは" not in prepare_feedback(english)["feedback"]


def test_a_question_that_sets_a_scene_first():
    question = "北海で新しい油田が見つかった。" + OIL_Q
    assert gap_filler(question, OIL) == ("軽質原油",)


def test_a_copied_sentence_that_holds_the_filler_answers_the_question():
    from grounded_rag.verification.on_question import off_question_findings

    # The question names 軽質原油 in its first sentence, so every word of the copy is in the
    # question; the copy still says what fills the gap.
    copy = [{"text": OIL, "citations": []}]
    assert off_question_findings("北海で新しい軽質原油が見つかった。" + OIL_Q, copy,
                                 _evidence(OIL), "ja") == []
    # Without a filler in the evidence, the same copy only repeats the question.
    other = OIL.replace("多いだけでなく", "豊富なうえ")
    assert off_question_findings("北海で新しい軽質原油が見つかった。" + OIL_Q, copy,
                                 _evidence(other), "ja") != []


def test_a_kana_tail_is_no_answer():
    sentence = "東アジアでは性質の違うこれらの気団がせめぎ合う。"
    assert gap_filler("東アジアでは性質の違う何の気団がせめぎ合うか？", sentence) == ()


def test_an_answer_without_the_gap_word_answers_something_else():
    from grounded_rag.verification.on_question import off_question_findings

    ev = _evidence(OIL)
    other = [{"text": "北海では天然ガスも採れる。", "citations": []}]
    findings = off_question_findings(OIL_Q, other, ev, "ja")
    assert [f["type"] for f in findings] == ["off_question"]
    assert "「軽質原油」" in findings[0]["detail"]
    # a bare part of it is an answer (a word of context left out); so is a sentence that
    # holds three characters of it in one piece
    assert off_question_findings(OIL_Q, [{"text": "原油", "citations": []}], ev, "ja") == []
    assert off_question_findings(OIL_Q, [{"text": "北海は質原油に富む。", "citations": []}],
                                 ev, "ja") == []
    assert off_question_findings(OIL_Q, [{"text": "北海は原油に富む。", "citations": []}],
                                 ev, "ja") != []
    assert off_question_findings(OIL_Q, [{"text": "軽質原油", "citations": []}], ev, "ja") == []
