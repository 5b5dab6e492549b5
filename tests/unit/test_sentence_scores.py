"""The embedder chooses which sentences of a passage in the other language the generator sees."""

from __future__ import annotations

from typing import Any

import pytest

from grounded_rag.retrieval.sentence_scores import MAX_SENTENCES, annotate
from grounded_rag.verification.citations import (
    SEMANTIC_WEIGHT,
    cuts,
    number_sentences,
    select_sentences,
)
from tests.fakes import evidence as ev

# A Japanese passage whose answer is its last sentence: an English question shares no words
# with any of its sentences, so word overlap alone shows the first ones.
FILLER = [
    "日本共産党は1922年に結成された政党である。",
    "戦前は非合法政党として弾圧を受けた。",
    "戦後は合法政党として国会に議席を持った。",
    "1950年代には党の路線をめぐって分裂が起きた。",
    "1960年代半ばに自主独立路線を確立した。",
    "党の機関紙はしんぶん赤旗である。",
]
ANSWER = "1967年に長野県塩尻市で初の党員市長（高砂政郎）が誕生した。"
PARTY = ev("jcp#sec2", "".join(FILLER) + ANSWER, title="日本共産党 > 歴史")
QUESTION = "Of which city was Masao Takasago the mayor?"


class KeywordEmbeddings:
    """Vectors from keywords, one axis each; both languages share the axes."""

    multilingual = True
    AXES = (("mayor", "市長"), ("party", "党"), ("newspaper", "赤旗"))

    def __init__(self) -> None:
        self.documents: list[str] = []

    def _vector(self, text: str) -> list[float]:
        return [1.0 + sum(text.lower().count(w) for w in words) for words in self.AXES]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return [self._vector(t) for t in texts]


def _shown(evidence: list[Any], budget: int) -> list[str]:
    view = number_sentences(evidence, select_sentences(QUESTION, evidence, budget))
    return [n.sentence.text for shown in view.passages for n in shown]


def test_without_scores_the_view_of_a_japanese_passage_for_an_english_question_is_its_start():
    shown = _shown([PARTY], 90)
    assert shown[0] == FILLER[0]
    assert ANSWER not in shown


def test_the_embedders_best_sentence_is_shown_and_its_picks_come_alone():
    embeddings = KeywordEmbeddings()
    annotated = annotate(QUESTION, [PARTY], embeddings, "en", 90)
    scores = annotated[0]["sentence_relevance"]
    assert len(scores) == len(FILLER) + 1 == len(embeddings.documents)
    assert max(scores) == scores[-1]  # the mayor's sentence
    shown = _shown(annotated, 90)
    assert ANSWER in shown
    assert FILLER[-1] not in shown  # no neighbours: the budget goes to the next best picks
    assert PARTY["text"] == annotated[0]["text"] and "sentence_relevance" not in PARTY


def test_scores_are_spread_from_the_worst_to_the_best_sentence():
    from grounded_rag.verification.citations import _semantic

    passage = {**PARTY, "sentence_relevance": [0.70, 0.75, 0.80]}
    scaled = _semantic([passage])
    assert scaled == pytest.approx({(0, 1): 0.0, (0, 2): SEMANTIC_WEIGHT / 2,
                                    (0, 3): SEMANTIC_WEIGHT})
    # a same-language sentence holding every word of the question still ranks first
    assert SEMANTIC_WEIGHT < 1.0


def test_nothing_is_embedded_when_there_is_nothing_to_choose():
    embeddings = KeywordEmbeddings()
    english = ev("spec#1", "The mayor of Springfield is Joe. " * 20, title="Spec")
    # every passage in the question's language: word overlap chooses
    assert annotate(QUESTION, [english], embeddings, "en", 90) == [english]
    # the whole evidence fits the budget: everything is shown anyway
    assert not cuts([PARTY], 10_000)
    assert annotate(QUESTION, [PARTY], embeddings, "en", 10_000) == [PARTY]
    # budget 0 shows whole chunks
    assert annotate(QUESTION, [PARTY], embeddings, "en", 0) == [PARTY]
    # no embedder, or an English-only one
    assert annotate(QUESTION, [PARTY], None, "en", 90) == [PARTY]
    english_only = KeywordEmbeddings()
    english_only.multilingual = False
    assert annotate(QUESTION, [PARTY], english_only, "en", 90) == [PARTY]
    assert embeddings.documents == [] and english_only.documents == []


def test_a_japanese_question_scores_the_english_passages_only():
    embeddings = KeywordEmbeddings()
    english = ev("spec#1", "The mayor is elected every four years. " * 12, title="Spec")
    weak = {**PARTY, "relevance": 0.0}  # below the Japanese gate
    out = annotate("塩尻市の市長は誰ですか？", [weak, english], embeddings, "ja", 90)
    assert "sentence_relevance" not in out[0]
    assert len(out[1]["sentence_relevance"]) == 12


def test_a_passage_in_the_questions_language_that_clears_its_gate_keeps_word_overlap():
    # the first-corpus case: an English question answered by the English product sheet
    # lost its view to the Japanese sections' best sentences when these were scored too
    embeddings = KeywordEmbeddings()
    sheet = ev("lx3#2", "The Aurora LX-3 recharges in 3 hours. " * 12, relevance=0.9,
               title="Aurora LX-3")
    evidence = [sheet, PARTY]
    assert annotate("How long does the Aurora LX-3 take to recharge?", evidence, embeddings,
                    "en", 90) == evidence
    assert embeddings.documents == []
    weak_sheet = {**sheet, "relevance": 0.0}
    out = annotate("How long does the Aurora LX-3 take to recharge?", [weak_sheet, PARTY],
                   embeddings, "en", 90)
    assert "sentence_relevance" in out[1] and "sentence_relevance" not in out[0]


def test_a_failing_embedder_leaves_the_evidence_as_it_was():
    class Failing(KeywordEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise ConnectionError("embedding server unreachable")

    assert annotate(QUESTION, [PARTY], Failing(), "en", 90) == [PARTY]


def test_at_most_max_sentences_are_embedded():
    embeddings = KeywordEmbeddings()
    long = ev("long#1", "党の会議が開かれた。" * (MAX_SENTENCES + 20), title="Long")
    out = annotate(QUESTION, [long, PARTY], embeddings, "en", 90)
    assert len(embeddings.documents) == MAX_SENTENCES
    assert len(out[0]["sentence_relevance"]) == MAX_SENTENCES
    assert "sentence_relevance" not in out[1]
    select_sentences(QUESTION, out, 90)  # a partial score list is read as far as it goes


def test_the_real_embedder_finds_the_answering_sentence():
    from grounded_rag.retrieval.embeddings import default_embeddings

    embeddings = default_embeddings()
    if not getattr(embeddings, "multilingual", False):
        pytest.skip("the default embedder here is English-only")
    annotated = annotate(QUESTION, [PARTY], embeddings, "en", 90)
    assert ANSWER in _shown(annotated, 90)
