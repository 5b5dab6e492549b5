"""Claims labelled by construction for the claim head (graph/training/_constructed.py)."""

from __future__ import annotations

import pytest

from grounded_rag.evaluation import _small_corpus as sc
from grounded_rag.evaluation import _small_corpus_run
from grounded_rag.training._constructed import claim_of, constructed_claims
from grounded_rag.training._examples import CLAIM, DEFAULT_PLAN, SetPlan, build_examples


@pytest.mark.parametrize(("question", "answer", "claim"), [
    ("梅雨がないのは北海道とどこか。", "小笠原諸島", "梅雨がないのは北海道と小笠原諸島。"),
    ("ブラザビルは何湖に面している？", "マレボ湖", "ブラザビルはマレボ湖に面している。"),
    ("講師は何段階に分かれている", "4段階", "講師は4段階に分かれている。"),
    ("主な綱領の２回目は何年？", "1951", "主な綱領の２回目は1951年。"),
    ("野坂参三はどこの国から帰国したでしょう。", "中華民国", "野坂参三は中華民国から帰国した。"),
    ("結婚時にどちらの姓も変えないことを何という？", "夫婦別姓", None),  # either-or: skipped
    ("体制のことを何という？", "同君連合", "体制のことを同君連合という。"),
    ("中国の科学と文明の著者は？", "ニーダム", "中国の科学と文明の著者はニーダム。"),
    ("電波塔の地図記号を足し合わせたような", "地図記号", None),  # no wh-word, no topic
    ("何？", "", None),
])
def test_a_question_is_restated_with_the_answer_in_place_of_its_wh_word(question, answer, claim):
    assert claim_of(question, answer) == claim


def _title(split: str, stem: str) -> str:
    for n in range(200):
        if sc.split_of(f"jsquad:{stem}{n}") == split:
            return f"{stem}{n}"
    raise AssertionError("no title in that part")


def _sources(dev: str, held: str) -> sc.Sources:
    passages, questions = [], []
    for title in (dev, held):
        texts = [f"{title}の人口は71万人である。面積は3920平方キロである。",
                 f"{title}の首都はビエンチャンである。公用語はラオ語である。",
                 f"{title}の最高峰はビア山である。",
                 f"{title}の通貨はキープである。"]
        for k, text in enumerate(texts):
            passages.append({"pid": f"{title}:{k}", "title": title,
                             "text": f"{title} [SEP] {text}"})
        asked = [("人口は何万人か", "71万人", 0), ("面積は何平方キロか", "3920平方キロ", 0),
                 ("首都はどこか", "ビエンチャン", 1), ("公用語は何か", "ラオ語", 1),
                 ("最高峰はどこか", "ビア山", 2), ("通貨は何か", "キープ", 3)]
        for n in range(24):  # the collection asks 8; the rest are left for construction
            q, a, k = asked[n % len(asked)]
            questions.append({"id": f"{title}q{n}", "question": f"{title}の{q}。", "answers": [a],
                              "gold_pid": f"{title}:{k}"})
    return sc.Sources(ja_sets={"jsquad": (passages, questions)})


def test_constructed_claims_use_dev_articles_only_and_none_of_the_asked_questions(monkeypatch):
    dev, held = _title(sc.DEV, "国"), _title(sc.HELDOUT, "島")
    sources = _sources(dev, held)
    monkeypatch.setattr(_small_corpus_run, "load_sources", lambda: sources)
    built = sc.build_small_corpus(sources)
    asked = {i.id.split("|", 1)[1] for i in built.items}
    examples = constructed_claims(SetPlan("ja_constructed", CLAIM, None))
    assert examples
    assert "ja_constructed" in {p.name for p in DEFAULT_PLAN}  # extracted by the plan
    assert [e.id for e in build_examples(SetPlan("ja_constructed", CLAIM, None))] == [
        e.id for e in examples]
    one = constructed_claims(SetPlan("ja_constructed", CLAIM, 1))  # limit = questions
    assert 1 <= len(one) <= 3 and len({e.id.split(":")[2] for e in one}) == 1
    base_ids = {e.id.split(":")[2] for e in examples}
    assert base_ids and not base_ids & asked
    assert all(b.startswith(dev) for b in base_ids)  # nothing from the held-out article
    answer_of = {q["id"]: q["answers"][0] for q in sources.ja_sets["jsquad"][1]}
    values = set(answer_of.values())
    by_label: dict[str, list] = {}
    for e in examples:
        by_label.setdefault(e.label3, []).append(e)
        assert e.positive is (e.label3 == "supported") and e.task == CLAIM
        assert "[SEP]" not in e.claim["evidence"][0]["text"]
    assert {"supported", "contradicted", "neutral"} <= set(by_label)
    for e in by_label["supported"]:  # the gold answer, in the claim and in its passage
        gold = answer_of[e.id.split(":")[2]]
        assert gold in e.claim["text"] and gold in e.claim["evidence"][0]["text"]
    for e in by_label["contradicted"]:  # another answer of the same passage, of the same kind
        gold = answer_of[e.id.split(":")[2]]
        swapped = [v for v in values if v != gold and v in e.claim["text"]]
        assert gold not in e.claim["text"] and len(swapped) == 1
        assert swapped[0] in e.claim["evidence"][0]["text"]
        assert any(c.isdigit() for c in swapped[0]) == any(c.isdigit() for c in gold)
    for e in by_label["neutral"]:  # the gold claim against a sibling section without the answer
        gold = answer_of[e.id.split(":")[2]]
        assert gold in e.claim["text"] and gold not in e.claim["evidence"][0]["text"]
