import pytest

from grounded_rag.retrieval import InMemoryRetriever
from grounded_rag.retrieval.fusion import reciprocal_rank_fusion
from grounded_rag.retrieval.text_analysis import tokenize

DOCS = [
    {
        "id": "fee",
        "title": "委託料",
        "text": "本業務の委託料は月額48万円とし、翌月末日までに支払う。",
    },
    {"id": "term", "title": "契約期間", "text": "本契約の有効期間は2025年4月1日から1年間とする。"},
    {
        "id": "secret",
        "title": "秘密保持",
        "text": "相手方の営業上の情報を第三者に開示してはならない。",
    },
    {"id": "battery", "title": "Battery", "text": "The batteries last 10 hours of video playback."},
    {"id": "weight", "title": "Weight", "text": "The tablet weighs 480 grams without its cover."},
]


def test_japanese_is_split_into_words_not_one_token():
    toks = tokenize("委託料の支払期限はいつですか")
    assert toks == ["委託", "料", "支払い", "期限"]  # particles and "いつ/です/か" dropped


def test_english_is_stemmed_and_stopwords_dropped():
    assert tokenize("The batteries are lasting") == ["batteri", "last"]
    assert tokenize("Ｂａｔｔｅｒｙ　１０時間") == ["batteri", "10", "時間"]  # NFKC folding


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("委託料はいくらですか", "fee"),
        ("契約の有効期間はいつまで", "term"),
        ("営業情報を第三者に開示できますか", "secret"),
        ("how long does the battery last", "battery"),
        ("tablet weight", "weight"),
    ],
)
def test_bm25_matches_japanese_and_english(query, expected):
    r = InMemoryRetriever(DOCS, mode="bm25")
    hits = r.retrieve(query, k=3)
    assert hits and hits[0]["doc_id"] == expected
    assert 0.0 <= hits[0]["relevance"] <= 1.0


def test_bm25_returns_nothing_for_unrelated_query():
    r = InMemoryRetriever(DOCS, mode="bm25")
    assert r.retrieve("量子コンピュータ", k=3) == []


def test_rrf_scores_and_order():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "d"]], k=60)
    scores = dict(fused)
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62)
    assert [k for k, _ in fused] == ["a", "c", "b", "d"]


def test_rrf_ignores_raw_scale_and_duplicates():
    # same ranks -> same fused scores regardless of what raw scores produced them
    assert reciprocal_rank_fusion([["x", "y"]]) == reciprocal_rank_fusion([["x", "y", "x"]])
    weighted = dict(reciprocal_rank_fusion([["x"], ["y"]], weights=[2.0, 1.0]))
    assert weighted["x"] == pytest.approx(2 / 61)
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["x"]], weights=[1.0, 2.0])


def test_rrf_ties_keep_first_appearance():
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "a"]])
    assert [k for k, _ in fused] == ["a", "b"]


@pytest.mark.parametrize(("question", "left"), [
    ("UNTAGの正式名称は", {"untag"}),
    ("SARSの正式名称は？", {"sar"}),  # stemmed as an English word, in the text too
    ("地面のことを別称何というか。", {"地面", "言う"}),
    ("デオキシリボ核酸をアルファベット３文字で表すと？", {"デオキシリボ", "核酸", "表す"}),
    ("How long does the battery last?", {"batteri", "last"}),
])
def test_words_for_the_answers_form_do_not_count_towards_coverage(question, left):
    """"Its official name", "in three letters": the section that answers gives the name
    itself; only what the question is about is looked for in it."""
    from grounded_rag.retrieval.hybrid import _coverage, coverage_terms

    terms = coverage_terms(question)
    assert terms == left
    chunk = tokenize("1989年に国際連合ナミビア独立支援グループ (UNTAG) の下で選挙監視が行われた。")
    if question.startswith("UNTAG"):
        assert _coverage(terms, chunk, None) == 1.0
