"""The answerability head: out-of-fold passage scores, per-language thresholds and fit."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from grounded_rag.evaluation import _metrics as m
from grounded_rag.local.heads import Classifier, JudgeHead
from grounded_rag.training._examples import ANSWERABLE
from grounded_rag.training._fit import Bags, balanced_weights, fit_binary, standardiser
from grounded_rag.training._train_table import HeadConfig, Table


def _answerable_fit(table: Table, config: HeadConfig, rows: np.ndarray,
                    ) -> tuple[np.ndarray, np.ndarray, Classifier]:
    x_all = table.inputs(config)
    mean, std = standardiser(x_all[rows])
    x = (x_all[rows] - mean) / std
    idx = np.flatnonzero(rows)
    labelled = np.array([table.meta[i]["positive"] is not None for i in idx])
    y = np.array([bool(table.meta[i]["positive"]) for i in idx], dtype=np.float32)
    sets = [table.meta[i]["set"] for i in idx]
    w = np.zeros(len(idx))
    w[labelled] = balanced_weights([s for s, lab in zip(sets, labelled, strict=True) if lab],
                                   y[labelled])
    bag_members: dict[str, list[int]] = defaultdict(list)
    for j, i in enumerate(idx):
        row = table.meta[i]
        if row["positive"] is None and row["bag_positive"]:
            bag_members[row["bag"]].append(j)
    bags = None
    if bag_members:
        # A bag set's positive bags weigh as much as its labelled negatives together.
        per_set: dict[str, int] = defaultdict(int)
        for b in bag_members:
            per_set[b.split(":", 1)[0]] += 1
        share = {s: 0.5 / n for s, n in per_set.items()}
        for s in per_set:  # its labelled (negative) rows then carry the other half
            neg = [j for j in range(len(idx)) if sets[j] == s and labelled[j]]
            if neg:
                w[neg] = 0.5 / len(neg)
        bags = Bags(members=[np.array(v) for v in bag_members.values()],
                    weights=np.array([share[b.split(":", 1)[0]] for b in bag_members]))
    clf = fit_binary(x, y, w, config.fit, bags=bags)
    return mean, std, clf


def answerable_predictions(table: Table, config: HeadConfig) -> np.ndarray:
    """Out-of-fold P(the passage holds the answer); held-out rows from a full fit."""
    p = np.full(len(table.meta), np.nan)
    x_all = table.inputs(config)
    for f in [*sorted(set(table.folds.tolist()) - {-1}), -1]:
        train = (table.folds != f) & (table.folds != -1)
        target = table.folds == f
        if not target.any():
            continue
        mean, std, clf = _answerable_fit(table, config, train)
        p[target] = clf.proba((x_all[target] - mean) / std)
    return p


def query_scores(table: Table, p: np.ndarray, sets: Sequence[str] = ("nomiracl",),
                 ) -> dict[str, tuple[list[bool], list[float], list[str]]]:
    """Per language: (answerable, best passage score, query id) per query of ``sets``."""
    best: dict[str, float] = {}
    info: dict[str, tuple[bool, str]] = {}
    for i, row in enumerate(table.meta):
        if row["set"] not in sets or np.isnan(p[i]):
            continue
        best[row["bag"]] = max(best.get(row["bag"], 0.0), float(p[i]))
        info[row["bag"]] = (bool(row["bag_positive"]), row["language"])
    out: dict[str, tuple[list[bool], list[float], list[str]]] = defaultdict(
        lambda: ([], [], []))
    for bag, score in best.items():
        gold, lang = info[bag]
        out[lang][0].append(gold)
        out[lang][1].append(score)
        out[lang][2].append(bag)
    return dict(out)


def answerable_report(table: Table, p: np.ndarray, thresholds: dict[str, float],
                      ) -> dict[str, dict[str, Any]]:
    """Per-passage metrics per set, and query-level rates on NoMIRACL per language."""
    report: dict[str, dict[str, Any]] = {}
    by: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(table.meta):
        by[row["set"]].append(i)
    for name, rows in sorted(by.items()):
        labelled = [i for i in rows if table.meta[i]["positive"] is not None]
        entry: dict[str, Any] = {"n": len(rows)}
        gold = [bool(table.meta[i]["positive"]) for i in labelled]
        if gold and any(gold) and not all(gold):
            lang = table.meta[labelled[0]]["language"]
            t = thresholds.get(lang, 0.5)
            b = m.binary_metrics(gold, [p[i] >= t for i in labelled])
            entry.update(auroc=m.auroc(gold, [p[i] for i in labelled]),
                         balanced_accuracy=b["balanced_accuracy"])
        report[name] = entry
    for lang, (gold, scores, _) in sorted(query_scores(table, p).items()):
        t = thresholds.get(lang, 0.5)
        answerable = [s for g, s in zip(gold, scores, strict=True) if g]
        not_answerable = [s for g, s in zip(gold, scores, strict=True) if not g]
        report[f"nomiracl-{lang}-queries"] = {
            "n": len(gold), "auroc": m.auroc(gold, scores), "threshold": t,
            "answers_answerable": m.rate(sum(s >= t for s in answerable), len(answerable)),
            "abstains_unanswerable": m.rate(sum(s < t for s in not_answerable),
                                            len(not_answerable)),
        }
    return report


def choose_answerable_thresholds(table: Table, p: np.ndarray, min_answer: float = 0.8,
                                 ) -> dict[str, float]:
    """Per language: a query-level threshold chosen on NoMIRACL's out-of-fold scores.

    The best balanced accuracy among thresholds that still answer at least ``min_answer`` of
    the answerable queries (the balanced-accuracy optimum when none does).
    """
    out: dict[str, float] = {}
    for lang, (gold, scores, _) in query_scores(table, p).items():
        best: tuple[float, float] | None = None
        fallback: tuple[float, float] | None = None
        for t in np.round(np.arange(0.02, 0.99, 0.01), 2):
            pred = [s >= t for s in scores]
            ba = m.binary_metrics(gold, pred)["balanced_accuracy"] or 0.0
            answered = np.mean([pr for g, pr in zip(gold, pred, strict=True) if g])
            if fallback is None or ba > fallback[1]:
                fallback = (float(t), ba)
            if answered >= min_answer and (best is None or ba > best[1]):
                best = (float(t), ba)
        out[lang] = (best or fallback or (0.5, 0.0))[0]
    return out


def fit_answerable_head(table: Table, config: HeadConfig, thresholds: dict[str, float],
                        meta: dict[str, Any]) -> JudgeHead:
    """The shipped answerability head: fit on every training row."""
    mean, std, clf = _answerable_fit(table, config, table.folds != -1)
    return JudgeHead(
        task=ANSWERABLE, layers=config.layers,
        extras=table.extra_columns(config), use_margin=config.use_margin,
        mean=mean, std=std, classifiers={"answerable": clf}, thresholds=thresholds, meta=meta,
    )
