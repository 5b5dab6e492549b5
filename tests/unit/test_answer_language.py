"""Statements follow the question's language, whatever the language of their sources."""

from __future__ import annotations

import pytest

from grounded_rag import Context, build_graph
from grounded_rag.verification.on_question import language_findings, wrong_language
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

SPEC = ev("aurora#sec3", "A full charge powers a typical laptop for about 9 hours.",
          title="Aurora LX-3 > Charging")
QUESTION_JA = "Aurora LX-3でノートパソコンを何時間動かせますか？"


@pytest.mark.parametrize(("text", "language", "wrong"), [
    ("A full charge powers a typical laptop for about 9 hours.", "ja", True),
    ("フル充電でノートパソコンを約9時間動かせます。", "ja", False),
    ("Aurora LX-3はUSB-C充電器で3時間で充電できます。", "ja", False),  # Latin names are fine
    ("フル充電でノートパソコンを約9時間動かせます。", "en", True),
    ("Bats (コウモリ) were the answer.", "en", False),  # a quoted Japanese term is fine
    ("USB", "ja", False),  # too short to tell
    # Chinese is neither language: a simplified character, or 是 / 的 and no kana particle
    ("一般的な笔记本の全充電は約9時間です。", "ja", True),
    ("交響曲『祖国』的作曲者是ジョゼ・ヴィアナ・ダ・モッタ", "ja", True),
    ("具体的な是正措置は目的地で行う。", "ja", False),  # Japanese words holding 的 and 是
    ("国際連合ナミビア独立支援グループ", "ja", False),  # a bare noun phrase
])
def test_a_statement_in_the_other_script_is_flagged(text, language, wrong):
    assert wrong_language(text, language) is wrong
    findings = language_findings([{"text": text, "citations": []}], language)
    assert [f["type"] for f in findings] == (["answer_language"] if wrong else [])


@pytest.mark.parametrize(("text", "words"), [
    ("theカラフトマス is caught in the river.", ["カラフトマス"]),
    ("Compounds are named by the IUPAC naming法.", ["法"]),
    ("Daisaku Kadokawa is the mayor of 京都市.", ["京都市"]),
    ("Pink salmon (カラフトマス) is caught in the river.", []),  # a term beside its English
    ("It was called 「柱状化」 society.", []),
    ("Licence numbers such as 13-ユ-30 are given to operators.", []),  # a code
    ("9時間", ["時間"]),  # too short for wrong_language, but not English
])
def test_japanese_words_left_in_an_english_statement_are_flagged(text, words):
    from grounded_rag.verification.on_question import untranslated
    assert untranslated(text) == words
    findings = language_findings([{"text": text, "citations": []}], "en")
    assert [f["type"] for f in findings] == (["answer_language"] if words else [])
    if words:
        assert words[0] in findings[0]["detail"] and "English" in findings[0]["detail"]
    # A Japanese answer may of course be written in Japanese.
    assert language_findings([{"text": "カラフトマスが遡上する。", "citations": []}], "ja") == []


def test_an_english_statement_to_a_japanese_question_is_rewritten_in_japanese():
    english = answer(("A full charge powers a typical laptop for about 9 hours.", "S1.1"))
    japanese = answer(("フル充電でノートパソコンを約9時間動かせます。", "S1.1"))
    model = ScriptedChatModel(script={"CitedAnswer": [english, japanese]})
    graph = build_graph(retriever=StaticRetriever([SPEC]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": QUESTION_JA}, context=Context(max_retries=1))
    assert out["status"] == "answered" and out["attempts"] == 2
    assert out["answer"].startswith("フル充電") and "answer_language" not in out["flags"]
    # The quote stays in the source's language.
    assert out["claims"][0]["citations"][0]["quote"] == SPEC["text"]
    revise_prompt = model.calls_for("CitedAnswer")[1][-1].content
    assert "日本語で書き直して" in revise_prompt


def test_without_retries_left_the_answer_is_delivered_with_a_flag():
    english = answer(("A full charge powers a typical laptop for about 9 hours.", "S1.1"))
    model = ScriptedChatModel(script={"CitedAnswer": [english]})
    graph = build_graph(retriever=StaticRetriever([SPEC]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": QUESTION_JA}, context=Context(max_retries=0))
    assert out["status"] == "answered" and "answer_language" in out["flags"]


@pytest.mark.parametrize(("text", "language"), [
    ("What, like 13-ユ-30**45, is given to licensed private operators?", "en"),
    ("What does ラーメン mean?", "en"),
    ("UNTAGの正式名称は", "ja"),
    ("Aurora LX-3 Pro Max Ultraの重さは?", "ja"),
    ("東京タワー 高さ", "ja"),
])
def test_katakana_alone_does_not_make_an_english_question_japanese(text, language):
    from grounded_rag.lang import detect_language

    assert detect_language(text) == language


CITY = ev("jcp#sec4", "1967年に長野県塩尻市で初の党員市長（高砂政郎）が誕生した。",
          title="日本共産党 > 地方")
QUESTION_CITY = "Of which city was Masao Takasago the mayor?"


def test_a_translation_still_flagged_gives_way_to_the_first_verified_attempt():
    # The first draft copies the Japanese sentence (verified, but not in English); the
    # revisions glue a kanji to an English word and change the fact on the way.
    japanese = answer((CITY["text"], "S1.1"))
    garbled = answer(("Masao Takasago was the mayor of Long野 Prefecture in 1967.", "S1.1"))
    model = ScriptedChatModel(script={"CitedAnswer": [japanese, garbled, garbled]})
    graph = build_graph(retriever=StaticRetriever([CITY]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": QUESTION_CITY}, context=Context(max_retries=2))
    assert out["status"] == "answered" and out["attempts"] >= 2
    assert "塩尻市" in out["answer"] and "Long" not in out["answer"]
    assert "answer_language" in out["flags"]
    kinds = [f["type"] for f in out["findings"]]
    assert "earlier_attempt" in kinds and "answer_language" in kinds
    assert [c["status"] for c in out["claims"]] == ["verified"]


def test_a_translation_that_succeeds_is_delivered():
    japanese = answer((CITY["text"], "S1.1"))
    english = answer(("Masao Takasago became mayor of Shiojiri in Nagano in 1967.", "S1.1"))
    model = ScriptedChatModel(script={"CitedAnswer": [japanese, english]})
    graph = build_graph(retriever=StaticRetriever([CITY]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": QUESTION_CITY}, context=Context(max_retries=2))
    assert out["status"] == "answered" and out["answer"].startswith("Masao Takasago became")
    assert "answer_language" not in out["flags"]
    assert "earlier_attempt" not in [f["type"] for f in out["findings"]]


def test_a_half_translated_first_attempt_does_not_replace_the_last():
    # "IUPAC naming法" is no better than the full sentence that still carries the word.
    source = ev("hc#sec5", "炭化水素の構造による分類はIUPAC命名法の基本原理である。",
                title="炭化水素")
    bare = answer(("IUPAC naming法", "S1.1"))
    full = answer(("The structural classification of hydrocarbons is the basic principle "
                   "of IUPAC naming法.", "S1.1"))
    model = ScriptedChatModel(script={"CitedAnswer": [bare, full, full]})
    graph = build_graph(retriever=StaticRetriever([source]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    out = graph.invoke({"question": "The structural classification of hydrocarbons is the "
                        "basic principle of what?"}, context=Context(max_retries=2))
    assert out["status"] == "answered" and out["answer"].startswith("The structural")
    assert "earlier_attempt" not in [f["type"] for f in out["findings"]]


SYMPHONY = ev("pt#sec48", "交響曲『祖国』はジョゼ・ヴィアナ・ダ・モッタが作曲した。",
              title="ポルトガル > 音楽")
QUESTION_SYMPHONY = "Who composed the symphony \"À Pátria\"?"
CHINESE = answer(("交響曲『祖国』的作曲者是ジョゼ・ヴィアナ・ダ・モッタ", "S1.1"))


def _ask_symphony(drafts: list, max_retries: int) -> dict:
    """The graph's answer to the symphony question when the model writes ``drafts``."""
    model = ScriptedChatModel(script={"CitedAnswer": drafts})
    graph = build_graph(retriever=StaticRetriever([SYMPHONY]), generator=model,
                        extractor="rules", verifier=ScriptedVerifier())
    return graph.invoke({"question": QUESTION_SYMPHONY},
                        context=Context(max_retries=max_retries))


def test_a_first_attempt_in_chinese_is_not_delivered_for_an_english_question():
    # The first draft writes Chinese grammar over a Japanese source; the revision is English.
    glued = answer(("The symphony was composed by ジョゼ・ヴィアナ・ダ・モッタ.", "S1.1"))
    out = _ask_symphony([CHINESE, glued, glued], max_retries=2)
    assert out["status"] == "answered" and out["answer"].startswith("The symphony")
    assert "的" not in out["answer"]
    assert "earlier_attempt" not in [f["type"] for f in out["findings"]]


def test_an_answer_only_in_chinese_is_not_delivered():
    # Every attempt writes Chinese grammar: no language the user reads, nothing to fall back on.
    out = _ask_symphony([CHINESE, CHINESE], max_retries=1)
    assert out["status"] == "abstained" and "answer_language" in out["flags"]
    # A Japanese answer to an English question is still delivered, flagged, as before.
    japanese = answer((SYMPHONY["text"], "S1.1"))
    out = _ask_symphony([japanese, japanese], max_retries=1)
    assert out["status"] == "answered" and "answer_language" in out["flags"]
