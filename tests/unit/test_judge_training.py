"""Judge training: grouped folds, the numpy classifiers, resumable feature extraction."""

from __future__ import annotations

import numpy as np
import pytest

from grounded_rag.local.scorer import Reading
from grounded_rag.training._examples import CLAIM, JudgeExample, _claim_examples, _nearest
from grounded_rag.training._extract import extract, load_features, write_info
from grounded_rag.training._fit import (
    Bags,
    FitConfig,
    assign_folds,
    balanced_weights,
    fit_binary,
    group_ids,
)
from tests.fakes import evidence


def test_examples_sharing_any_key_share_a_group_and_a_fold():
    keys = [["src:a"], ["src:b"], ["src:a", "q:1"], ["q:1", "src:c"], ["src:d"], []]
    groups = group_ids(keys)
    assert groups[0] == groups[2] == groups[3]
    assert len({groups[1], groups[0], groups[4], groups[5]}) == 4
    sets = ["x", "x", "x", "y", "y", "y"]
    folds = assign_folds(groups, sets, k=2)
    assert folds[0] == folds[2] == folds[3]
    many = group_ids([[f"src:{i}"] for i in range(50)])
    spread = assign_folds(many, ["s"] * 50, k=5)
    assert sorted(np.bincount(spread).tolist()) == [10, 10, 10, 10, 10]


def test_balanced_weights_make_every_set_and_class_count_the_same():
    sets = ["big"] * 90 + ["big"] * 10 + ["small"] * 5 + ["small"] * 5
    labels = np.array([1] * 90 + [0] * 10 + [1] * 5 + [0] * 5)
    w = balanced_weights(sets, labels)
    assert w[:90].sum() == pytest.approx(0.5) and w[90:100].sum() == pytest.approx(0.5)
    assert w[100:105].sum() == pytest.approx(0.5) and w.sum() == pytest.approx(2.0)


@pytest.mark.parametrize("hidden", [0, 8])
def test_fit_binary_learns_a_separable_rule(hidden):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 5)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.float32)
    clf = fit_binary(x, y, np.ones(400), FitConfig(hidden=hidden, l2=1e-4, epochs=300, lr=0.05))
    accuracy = ((clf.proba(x) >= 0.5) == (y == 1)).mean()
    assert accuracy > 0.95
    assert (clf.w1 is None) == (hidden == 0)


def test_bag_term_pushes_up_the_best_member_of_a_positive_bag():
    # Rows 0-2 form a positive bag without row labels; only row 2 resembles the positives.
    x = np.array([[-2.0], [-1.5], [2.0], [2.5], [3.0], [-3.0], [-2.5]], dtype=np.float32)
    y = np.array([0, 0, 0, 1, 1, 0, 0], dtype=np.float32)
    w = np.array([0, 0, 0, 1, 1, 1, 1], dtype=np.float64)
    bags = Bags(members=[np.array([0, 1, 2])], weights=np.array([2.0]))
    clf = fit_binary(x, y, w, FitConfig(l2=1e-4, epochs=400, lr=0.05), bags=bags)
    p = clf.proba(x)
    assert p[2] > 0.5 > p[0]


def test_claim_examples_keep_labels_bags_and_source_keys():
    from grounded_rag.evaluation._datasets import EvalItem

    src = {"id": "d", "title": "", "url": "", "text": "The sky is blue."}
    items = [
        EvalItem(id="1", subset="en", language="en", claims=["The sky is blue."],
                 sources=[src], gold_hallucinated=False, gold_label3="supported"),
        EvalItem(id="2", subset="en", language="en", claims=["A.", "B."], sources=[src],
                 gold_hallucinated=True),
        EvalItem(id="3", subset="ja", language="ja", claims=["X。", "Y。"], sources=[src],
                 gold_hallucinated=True, gold_claims=[False, True]),
    ]
    ex = _claim_examples("demo", items)
    assert [e.positive for e in ex] == [True, None, None, True, False]
    assert ex[0].label3 == "supported" and ex[1].label3 is None
    assert ex[1].bag == ex[2].bag == "demo:2" and ex[1].bag_positive is False
    assert len({tuple(e.keys) for e in ex}) == 1  # all share the one source text


def test_nearest_skips_passages_that_hold_the_answer():
    cands = [("a", "Paris is the capital of France."), ("b", "France borders Spain and Italy.")]
    got = _nearest("What is the capital of France?", cands, lambda t: "Paris" in t)
    assert got == ("b", "France borders Spain and Italy.")


class CountingScorer:
    """Fake scorer: hidden states encode the claim length; fails after ``fail_after``."""

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls = 0
        self.fail_after = fail_after

    def read_many(self, pairs, *, language="en"):
        out = []
        for _, claim in pairs:
            self.calls += 1
            if self.fail_after is not None and self.calls > self.fail_after:
                raise KeyboardInterrupt
            hidden = np.full((2, 4), float(len(claim)), dtype=np.float32)
            out.append(Reading(p_yes=0.7, margin=0.85, hidden=hidden, layers=(18, -1),
                               tokens=5, truncated=False))
        return out


def _examples(n: int) -> list[JudgeExample]:
    ev = [evidence("d#sec0", "The museum opened in 1901. It has 3 floors.")]
    return [JudgeExample(id=f"s:{i}:0", set="s", task=CLAIM, language="en",
                         claim={"text": f"The museum has {'many ' * i}rooms.", "evidence": ev},
                         positive=i % 2 == 0, bag=f"s:{i}", bag_positive=i % 2 == 0,
                         keys=[f"k{i}"])
            for i in range(n)]


def test_extraction_resumes_after_an_interruption_without_duplicates(tmp_path):
    write_info(tmp_path, {"layers": [18, -1], "n_embd": 4})
    examples = _examples(7)
    with pytest.raises(KeyboardInterrupt):
        extract("s", examples, tmp_path, scorer=CountingScorer(fail_after=4), shard=3,
                progress=False)
    first = load_features(tmp_path, "s")
    assert len(first.meta) == 3  # one finished shard survives the interruption
    added = extract("s", examples, tmp_path, scorer=CountingScorer(), shard=3, progress=False)
    assert added == 4
    fs = load_features(tmp_path, "s")
    assert sorted(m["id"] for m in fs.meta) == sorted(e.id for e in examples)
    for m, h in zip(fs.meta, fs.hidden, strict=True):
        claim = next(e.claim["text"] for e in examples if e.id == m["id"])
        assert h[0, 0] == float(len(claim)) and m["statement"] == claim
        assert m["extras"]["is_ja"] == 0.0 and m["margin"] == 0.85
    with pytest.raises(ValueError, match="built differently"):
        write_info(tmp_path, {"layers": [14], "n_embd": 4})


def test_a_decisive_cue_is_recorded_without_a_model_call(tmp_path):
    write_info(tmp_path, {"layers": [18, -1], "n_embd": 4})
    ev = [evidence("d#sec0", "The battery lasts 10 hours.")]
    ex = [JudgeExample(id="s:1:0", set="s", task=CLAIM, language="en",
                       claim={"text": "The battery lasts 24 hours.", "evidence": ev},
                       positive=False, bag="s:1", keys=["k"])]
    scorer = CountingScorer()
    extract("s", ex, tmp_path, scorer=scorer, progress=False)
    fs = load_features(tmp_path, "s")
    assert fs.meta[0]["decided"] == "contradicted" and scorer.calls == 0
