"""Evaluation harness: metric functions on hand-computed cases, readers, sampling, cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grounded_rag.evaluation import (
    DatasetError,
    auroc,
    binary_metrics,
    default_eval_dir,
    detect_format,
    load_dataset,
    percentile,
    sample_items,
    three_way_metrics,
)
from grounded_rag.evaluation._cache import ResultCache
from grounded_rag.evaluation._datasets import classify_baseline
from grounded_rag.evaluation._metrics import best_threshold

# -- metrics ------------------------------------------------------------------------------


def test_binary_metrics_hand_computed() -> None:
    gold = [True, True, True, False, False]
    pred = [True, False, True, True, False]
    out = binary_metrics(gold, pred)
    # tp=2 fn=1 fp=1 tn=1
    assert out["confusion"] == {"hallucinated": {"hallucinated": 2, "faithful": 1},
                                "faithful": {"hallucinated": 1, "faithful": 1}}
    assert out["precision"] == pytest.approx(0.6667)
    assert out["recall"] == pytest.approx(0.6667)
    assert out["f1"] == pytest.approx(0.6667)
    assert out["accuracy"] == pytest.approx(0.6)
    assert out["balanced_accuracy"] == pytest.approx((2 / 3 + 1 / 2) / 2, abs=1e-4)


def test_binary_metrics_degenerate_cases() -> None:
    # Never predicting "hallucinated": F1 is 0, not undefined; BA is 0.5.
    out = binary_metrics([True, False], [False, False])
    assert out["f1"] == 0.0
    assert out["precision"] is None
    assert out["balanced_accuracy"] == 0.5
    # No hallucinated items at all: F1 of that class is undefined.
    assert binary_metrics([False, False], [False, True])["f1"] is None
    with pytest.raises(ValueError):
        binary_metrics([True], [])


def test_auroc_hand_computed_with_ties() -> None:
    assert auroc([True, True, False, False], [0.9, 0.4, 0.5, 0.1]) == 0.75
    assert auroc([True, False], [0.5, 0.5]) == 0.5
    assert auroc([True, False, False], [0.2, 0.3, 0.2]) == pytest.approx(0.25)
    assert auroc([True, True], [0.1, 0.2]) is None


def test_best_threshold_finds_the_separating_cut() -> None:
    best = best_threshold([False, False, True, True], [0.1, 0.3, 0.6, 0.8])
    assert best == {"threshold": 0.6, "balanced_accuracy": 1.0}
    assert best_threshold([True, True], [0.1, 0.2]) is None


def test_three_way_metrics_hand_computed() -> None:
    gold = ["supported", "supported", "contradicted", "neutral"]
    pred = ["supported", "neutral", "contradicted", "contradicted"]
    out = three_way_metrics(gold, pred)
    assert out["accuracy_3way"] == 0.5
    assert out["confusion_3way"]["supported"] == {"supported": 1, "contradicted": 0, "neutral": 1}
    assert out["confusion_3way"]["neutral"]["contradicted"] == 1
    assert out["per_label_3way"]["contradicted"]["precision"] == 0.5
    assert out["per_label_3way"]["neutral"]["f1"] == 0.0
    assert out["macro_f1_3way"] == pytest.approx((2 / 3 + 2 / 3 + 0) / 3, abs=1e-4)


def test_percentile_interpolates() -> None:
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile([1, 2, 3, 4], 99) == pytest.approx(3.97)
    assert percentile([], 50) is None


# -- readers ------------------------------------------------------------------------------


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


FORMAT_ROWS = {
    "halueval_qa": {"id": "1:right", "knowledge": "K", "question": "Q?", "answer": "A",
                    "label": 0},
    "halueval_summarization": {"id": "1", "document": "D. E.", "summary": "S one. S two.",
                               "label": 1},
    "jhars": {"id": "1:m", "question": "Q", "reference_text": "R", "response": "A。B。",
              "sentences": [{"sentence": "A。", "hallucination_type": "No_hallucination"},
                            {"sentence": "B。", "hallucination_type": "Unverifiable"},
                            {"sentence": "C。", "hallucination_type": "DISPUTED"}],
              "response_label": 1},
    "jnli": {"sentence_pair_id": "0", "sentence1": "猫が寝ている。", "sentence2": "猫がいる。",
             "label": "entailment"},
    "janli": {"id": "0", "sentence_A_Ja": "犬が猫を追う", "sentence_B_Ja": "猫が犬を追う",
              "entailment_label_Ja": "non-entailment"},
    "jsick": {"id": "7", "premise": "男が走る", "hypothesis": "男が座る", "label": "contradiction",
              "premise_en": "A man runs", "hypothesis_en": "A man sits",
              "label_en": "contradiction"},
    "expertqa": {"id": "e1", "question": "Q", "claim": "Water boils [1].",
                 "evidence": ["[1] https://x.example\n\nWater boils when heated."],
                 "support": "Complete"},
    "nomiracl": {"id": "ja:q", "lang": "ja", "question": "Q?", "answerable": False,
                 "passages": [{"docid": "d1", "title": "T", "text": "X"}],
                 "baseline_outputs": {"m": "I don't know"}},
}


@pytest.mark.parametrize("fmt", sorted(FORMAT_ROWS))
def test_formats_are_detected_and_read(tmp_path: Path, fmt: str) -> None:
    path = write_jsonl(tmp_path / fmt / "data.jsonl", [FORMAT_ROWS[fmt]])
    assert detect_format(FORMAT_ROWS[fmt]) == fmt
    data = load_dataset(path)
    assert data.format == fmt
    assert data.items


def test_reader_details(tmp_path: Path) -> None:
    jhars = load_dataset(write_jsonl(tmp_path / "j" / "r.jsonl", [FORMAT_ROWS["jhars"]]))
    item = jhars.items[0]
    assert item.claims == ["A。", "B。", "C。"]  # Japanese kept as is
    assert item.gold_claims == [False, True, None]  # DISPUTED excluded
    assert item.gold_hallucinated is True
    jsick = load_dataset(write_jsonl(tmp_path / "s" / "s.jsonl", [FORMAT_ROWS["jsick"]]))
    assert [(i.id, i.language, i.gold_label3) for i in jsick.items] == [
        ("ja:7", "ja", "contradicted"), ("en:7", "en", "contradicted")]
    summ = load_dataset(write_jsonl(tmp_path / "h" / "h.jsonl",
                                    [FORMAT_ROWS["halueval_summarization"]]))
    assert summ.items[0].claims == ["S one.", "S two."]
    eqa = load_dataset(write_jsonl(tmp_path / "e" / "e.jsonl", [FORMAT_ROWS["expertqa"]]))
    assert eqa.items[0].claims == ["Water boils."]
    assert eqa.items[0].sources[0]["text"] == "Water boils when heated."
    assert eqa.items[0].sources[0]["url"] == "https://x.example"
    qa = load_dataset(write_jsonl(tmp_path / "q" / "q.jsonl", [FORMAT_ROWS["halueval_qa"]]))
    assert qa.items[0].claims == ["A"] and qa.items[0].claim_question == "Q?"


def test_scifact_and_squad_need_their_corpus(tmp_path: Path) -> None:
    claims = [{"id": "1", "claim": "X causes Y.", "evidence": {"10": [{"label": "CONTRADICT",
                                                                       "sentences": [0]}]},
               "cited_doc_ids": ["10"]},
              {"id": "2", "claim": "Z is blue.", "evidence": {}, "cited_doc_ids": ["11"]}]
    path = write_jsonl(tmp_path / "sf" / "claims.jsonl", claims)
    with pytest.raises(DatasetError, match="corpus.jsonl"):
        load_dataset(path)
    write_jsonl(tmp_path / "sf" / "corpus.jsonl", [
        {"doc_id": "10", "title": "T10", "abstract": ["X does not cause Y.", "More."]},
        {"doc_id": "11", "title": "T11", "abstract": ["Z is a letter."]}])
    data = load_dataset(path)
    assert [(i.gold_label3, i.answerable) for i in data.items] == [("contradicted", True),
                                                                   ("neutral", False)]
    assert data.items[0].sources[0]["text"] == "X does not cause Y. More."
    assert len(data.corpus or []) == 2
    with pytest.raises(DatasetError, match="corpus file"):
        load_dataset(tmp_path / "sf" / "corpus.jsonl")


def test_missing_and_unknown_files_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="GROUNDED_RAG_EVAL_DIR"):
        load_dataset(tmp_path / "nope.jsonl")
    with pytest.raises(DatasetError, match="unknown evaluation format"):
        load_dataset(write_jsonl(tmp_path / "x.jsonl", [{"foo": 1}]))


def test_short_names_resolve_in_the_eval_dir(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    write_jsonl(tmp_path / "jnli_ja" / "jnli.dev.jsonl", [FORMAT_ROWS["jnli"]])
    monkeypatch.setenv("GROUNDED_RAG_EVAL_DIR", str(tmp_path))
    assert load_dataset("jnli").name == "jnli"


def test_baseline_outputs_are_read_like_nomiracl() -> None:
    assert classify_baseline("\nI don't know. None of the contexts...") == "abstain"
    assert classify_baseline("Yes, answer is present.") == "answer"
    assert classify_baseline("インド") == "invalid"


# -- sampling and cache -------------------------------------------------------------------


def _items(tmp_path: Path, n_pos: int, n_neg: int):
    rows = [{"id": f"p{i}", "knowledge": "K", "question": "Q", "answer": "A", "label": 1}
            for i in range(n_pos)]
    rows += [{"id": f"n{i}", "knowledge": "K", "question": "Q", "answer": "A", "label": 0}
             for i in range(n_neg)]
    return load_dataset(write_jsonl(tmp_path / "s.jsonl", rows)).items


def test_sampling_is_deterministic_and_keeps_rare_classes(tmp_path: Path) -> None:
    items = _items(tmp_path, 2, 38)
    picked = sample_items(items, 10)
    assert len(picked) == 10
    assert any(i.gold_hallucinated for i in picked)  # the rare class is never dropped
    assert [i.id for i in picked] == [i.id for i in sample_items(items, 10)]
    balanced = sample_items(items, 4, strategy="balanced")
    assert sum(i.gold_hallucinated for i in balanced) == 2
    assert [i.id for i in sample_items(items, 3, strategy="head")] == ["p0", "p1", "n0"]
    assert len(sample_items(items, None)) == 40


def test_cache_round_trip_skips_torn_lines(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path, dataset="d", task="verify", model="m")
    cache.put("a", {"x": 1})
    with cache.path.open("a", encoding="utf-8") as handle:
        handle.write('{"key": "torn')  # a write interrupted by a kill
    again = ResultCache(tmp_path, dataset="d", task="verify", model="m")
    assert again.get("a") == {"x": 1}
    assert again.get("b") is None
    other_model = ResultCache(tmp_path, dataset="d", task="verify", model="other")
    assert other_model.get("a") is None
    fresh = ResultCache(tmp_path, dataset="d", task="verify", model="m", enabled=False)
    assert fresh.get("a") is None
    fresh.put("b", {"y": 2})
    assert ResultCache(tmp_path, dataset="d", task="verify", model="m").get("a") is None


REAL = default_eval_dir()


@pytest.mark.skipif(not REAL.exists(), reason=f"evaluation data not found at {REAL}")
def test_every_shared_dev_set_is_detected() -> None:
    from grounded_rag.evaluation import SHORT_NAMES

    for name in SHORT_NAMES:
        data = load_dataset(REAL / SHORT_NAMES[name])
        assert data.items, name
        assert data.name.startswith(name.split("_")[0]), (name, data.name)
