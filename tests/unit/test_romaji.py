"""Romaji names in an English claim, compared with how the Japanese evidence reads."""

from __future__ import annotations

import pytest

from grounded_rag.verification.cues import check_claim
from grounded_rag.verification.subjects import (
    is_romaji,
    kana_to_romaji,
    loose,
    name_in_reading,
    unread_names,
)

TAKASAGO = "1967年に長野県塩尻市で初の党員市長（高砂政郎）が、誕生した。"
QUESTION = "Of which city was Masao Takasago the mayor?"


@pytest.mark.parametrize(("word", "romaji"), [
    ("Kyoto", True), ("Shiojiri", True), ("Hokkaido", True), ("Shimbashi", True),
    ("Tsukuba", True), ("Itō", False),  # too short to tell from chance
    # English words that alternate consonants and vowels, and English names for 日本
    ("Radio", False), ("Hungarian", False), ("Suave", False), ("Prefecture", False),
    ("Japanese", False), ("Nine", False), ("COVID", False),
])
def test_is_romaji(word, romaji):
    assert is_romaji(word) is romaji


def test_kana_and_loose_spellings_meet():
    assert kana_to_romaji("キョウト") == "kyouto"
    assert kana_to_romaji("シャッター") == "shattaa"
    assert kana_to_romaji("ヴィアナ") == "viana"
    # long vowels, Hepburn or Kunrei, rendaku (門川 reads カドガワ; the name is Kadokawa)
    assert loose("Kyōto") == loose("kyouto") == loose("Kyoto")
    assert loose("Tsukuba") == loose("tukuba")
    assert loose("Kadokawa") == loose(kana_to_romaji("カドガワ"))


def test_names_found_in_the_reading():
    assert name_in_reading("Shiojiri", TAKASAGO)
    assert name_in_reading("Takasago", TAKASAGO)
    assert not name_in_reading("Kyoto", TAKASAGO)
    assert name_in_reading("Kadokawa", "京都市長の門川大作が述べた。")
    assert name_in_reading("Tokyo", "東京都の人口")


def test_unread_names_skip_the_question_and_non_romaji_words():
    names = ["Masao", "Takasago", "Kyoto", "Prefecture"]
    assert unread_names(names, TAKASAGO, QUESTION) == ["Kyoto"]
    assert unread_names(["Kyoto"], TAKASAGO, "Was he the mayor of Kyoto?") == []


def test_a_name_the_japanese_source_never_reads_decides_the_claim():
    # A small-corpus dev answer the judge called supported (0.68): the sentence names 塩尻市.
    wrong = check_claim("Masao Takasago was the mayor of Kyoto Prefecture in 1967.", [TAKASAGO],
                        language="en", question=QUESTION)
    assert wrong.decided == "neutral"
    assert any(c.kind == "reading_missing" and c.claim_text == "Kyoto" for c in wrong.cues)
    # The finding names what the source does name, read as romaji, for the revision.
    assert "Nagano, Shiojiri, Takasago, Masao" in wrong.reason
    right = check_claim("Masao Takasago became the mayor of Shiojiri in 1967.", [TAKASAGO],
                        language="en", question=QUESTION)
    assert not any(c.kind == "reading_missing" for c in right.cues)


def test_only_english_claims_over_japanese_evidence_are_read_so():
    english = ["Masao Takasago was the mayor of Shiojiri in 1967."]
    same = check_claim("Masao Takasago was the mayor of Kyoto.", english, language="en",
                       question=QUESTION)
    assert not any(c.kind == "reading_missing" for c in same.cues)
    japanese = check_claim("高砂政郎はKyotoの市長だった。", [TAKASAGO], language="ja")
    assert not any(c.kind == "reading_missing" for c in japanese.cues)


def test_the_name_must_read_in_the_cited_passage_not_in_another_one():
    kyoto = "京都市長の門川大作が記者会見で述べた。"
    claim = "Masao Takasago was the mayor of Kyoto Prefecture in 1967."
    assert check_claim(claim, [TAKASAGO, kyoto], language="en").decided is None
    assert check_claim(claim, [TAKASAGO, kyoto], language="en", cited=1).decided == "neutral"


def test_the_cascade_reads_names_in_what_the_claim_cites():
    from grounded_rag.verification.cascade import CascadeVerifier
    from grounded_rag.verification.modes import claim_to_check
    from tests.fakes import ScriptedVerifier
    from tests.fakes import evidence as fake_evidence

    evidence = [fake_evidence("kyoto#sec0", "京都市長の門川大作が記者会見で述べた。", title="京都"),
                fake_evidence("jcp#sec0", TAKASAGO, relevance=0.4, title="日本共産党")]
    claim = {"text": "Masao Takasago was the mayor of Kyoto Prefecture in 1967.",
             "citations": [{"source_id": "jcp#sec0", "quote": TAKASAGO}]}
    item = claim_to_check(claim, evidence, QUESTION)
    assert item["cited"] == 1 and item["evidence"][0]["source_id"] == "jcp#sec0"
    cascade = CascadeVerifier(ScriptedVerifier(lambda text: ("supported", "")))
    (verdict,) = cascade.verify([item], language="en")
    assert verdict["verdict"] == "neutral" and "Kyoto" in verdict["reason"]
    right = {**claim, "text": "Masao Takasago became the mayor of Shiojiri in 1967."}
    (verdict,) = cascade.verify([claim_to_check(right, evidence, QUESTION)], language="en")
    assert verdict["verdict"] == "supported"


def test_a_name_the_question_holds_is_its_premise_whatever_the_claims_form():
    from grounded_rag.verification.cascade import CascadeVerifier
    from grounded_rag.verification.modes import claim_to_check
    from tests.fakes import ScriptedVerifier
    from tests.fakes import evidence as fake_evidence

    evidence = [fake_evidence("city#sec0", "市長は門川大作である。", title="市政")]
    claim = {"text": "The mayor of Kyoto is Daisaku Kadokawa.",
             "citations": [{"source_id": "city#sec0", "quote": "市長は門川大作である。"}]}
    cascade = CascadeVerifier(ScriptedVerifier(lambda text: ("supported", "")))
    asked = claim_to_check(claim, evidence, "What is the name of the mayor of Kyoto?")
    assert "question" not in asked  # a sentence, not a bare answer: judged as written
    (verdict,) = cascade.verify([asked], language="en")
    assert verdict["verdict"] == "supported"
    (verdict,) = cascade.verify([claim_to_check(claim, evidence, "Who is the mayor?")],
                                language="en")
    assert verdict["verdict"] == "neutral" and "Kyoto" in verdict["reason"]


def test_a_text_longer_than_sudachi_takes_is_read_in_pieces():
    long_text = "大阪府の人口は多い。" * 8000 + TAKASAGO  # 240 kB: over Sudachi's 49,149 bytes
    assert name_in_reading("Shiojiri", long_text)
    assert not name_in_reading("Kyoto", long_text)
