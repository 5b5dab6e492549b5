"""The claim head: out-of-fold support/contradiction scores, thresholds, metrics and fit."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from grounded_rag.evaluation import _metrics as m
from grounded_rag.local.heads import Classifier, JudgeHead
from grounded_rag.training._examples import CLAIM
from grounded_rag.training._fit import balanced_weights, fit_binary, standardiser
from grounded_rag.training._train_table import (
    LENGTH_MATCHED_SETS,
    HeadConfig,
    Table,
    length_bin,
    strata_of,
)

THREE_WAY = ("supported", "contradicted", "neutral")


def _claim_targets(table: Table) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(open rows with a support label, their labels, rows with contra/neutral, labels)."""
    open_rows = np.array([row["decided"] is None for row in table.meta])
    sup = np.array([row["positive"] is not None for row in table.meta]) & open_rows
    sup_y = np.array([bool(row["positive"]) for row in table.meta])
    con = np.array([row["label3"] in ("contradicted", "neutral") for row in table.meta]) & open_rows
    con_y = np.array([row["label3"] == "contradicted" for row in table.meta])
    return sup, sup_y, con, con_y


def _fit_claim(table: Table, config: HeadConfig, rows: np.ndarray,
               ) -> tuple[np.ndarray, np.ndarray, Classifier, Classifier | None]:
    sup, sup_y, con, con_y = _claim_targets(table)
    x_all = table.inputs(config)
    fit_rows = rows & sup
    mean, std = standardiser(x_all[fit_rows])
    x = (x_all - mean) / std
    idx = np.flatnonzero(fit_rows)
    sets = [table.meta[i]["set"] for i in idx]
    strata = strata_of([table.meta[i] for i in idx])
    w = balanced_weights(sets, sup_y[fit_rows], strata)
    support = fit_binary(x[fit_rows], sup_y[fit_rows].astype(np.float32), w, config.fit)
    con_rows = rows & con
    contradiction = None
    if con_rows.sum() and 0 < con_y[con_rows].sum() < con_rows.sum():
        sets_c = [table.meta[i]["set"] for i in np.flatnonzero(con_rows)]
        wc = balanced_weights(sets_c, con_y[con_rows])
        contradiction = fit_binary(x[con_rows], con_y[con_rows].astype(np.float32), wc,
                                   config.fit)
    return mean, std, support, contradiction


def claim_predictions(table: Table, config: HeadConfig) -> dict[str, np.ndarray]:
    """Out-of-fold P(supported) and P(contradicted | not supported).

    Held-out rows get the predictions of a model fit on all training rows.
    """
    n = len(table.meta)
    p_sup = np.full(n, np.nan)
    p_con = np.full(n, np.nan)
    x_all = table.inputs(config)
    folds = sorted(set(table.folds.tolist()) - {-1})
    for f in [*folds, -1]:
        train = (table.folds != f) & (table.folds != -1)
        target = table.folds == f
        if not target.any():
            continue
        mean, std, support, contradiction = _fit_claim(table, config, train)
        x = (x_all[target] - mean) / std
        p_sup[target] = support.proba(x)
        if contradiction is not None:
            p_con[target] = contradiction.proba(x)
    return {"support": p_sup, "contradiction": p_con}


def decide_claims(table: Table, p_sup: np.ndarray, p_con: np.ndarray, t_sup: float,
                  t_con: float, *, soft_rules: bool = False) -> list[str]:
    """Three-way verdicts: decided rows keep the cue's verdict, the rest go by thresholds.

    ``soft_rules`` adds the cascade's older hand rules on top of the head (a supported claim
    with one or two unseen words below 0.7 becomes neutral; an unsupported one with a
    negation or altered-copy cue becomes contradicted), for comparison.
    """
    out = []
    for i, row in enumerate(table.meta):
        if row["decided"] is not None:
            out.append(row["decided"])
            continue
        extras = row.get("extras") or {}
        if p_sup[i] >= t_sup:
            if soft_rules and p_sup[i] < 0.7 and 0 < extras.get("unseen_words", 0) <= 2:
                out.append("neutral")
            else:
                out.append("supported")
            continue
        contra = not np.isnan(p_con[i]) and p_con[i] >= t_con
        if soft_rules and (extras.get("cue_negation") or extras.get("cue_altered_copy")):
            contra = True
        out.append("contradicted" if contra else "neutral")
    return out


def support_scores(table: Table, p_sup: np.ndarray) -> np.ndarray:
    """P(supported) with decided rows at 0 (their verdict is never 'supported')."""
    return np.array([0.0 if row["decided"] is not None else p_sup[i]
                     for i, row in enumerate(table.meta)])


def claim_report(table: Table, verdicts: Sequence[str], p_sup: np.ndarray,
                 p_con: np.ndarray) -> dict[str, dict[str, Any]]:
    """Metrics per set (and per language where a set has two)."""
    scores = support_scores(table, p_sup)
    by: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(table.meta):
        by[row["set"]].append(i)
        langs = {table.meta[j]["language"] for j in by[row["set"]]}
        if len(langs) > 1 or row["set"] == "jsick":
            by[f"{row['set']}-{row['language']}"].append(i)
    report: dict[str, dict[str, Any]] = {}
    for name, rows in sorted(by.items()):
        labelled = [i for i in rows if table.meta[i]["positive"] is not None]
        entry: dict[str, Any] = {"n": len(rows), "held_out": bool(table.folds[rows[0]] == -1)}
        if labelled:
            gold = [not table.meta[i]["positive"] for i in labelled]  # hallucinated = positive
            pred = [verdicts[i] != "supported" for i in labelled]
            b = m.binary_metrics(gold, pred)
            entry.update(balanced_accuracy=b["balanced_accuracy"], f1_unsupported=b["f1"],
                         auroc=m.auroc([not g for g in gold], [scores[i] for i in labelled]),
                         decided_by_cues=sum(1 for i in labelled
                                             if table.meta[i]["decided"] is not None))
        three = [i for i in rows if table.meta[i]["label3"] in THREE_WAY]
        if three:
            t = m.three_way_metrics([table.meta[i]["label3"] for i in three],
                                    [verdicts[i] for i in three])
            entry.update(accuracy_3way=t["accuracy_3way"], macro_f1_3way=t["macro_f1_3way"],
                         confusion_3way=t["confusion_3way"])
            cn = [i for i in three if table.meta[i]["label3"] != "supported"]
            cn_scores = [1.0 if table.meta[i]["decided"] == "contradicted"
                         else (0.0 if table.meta[i]["decided"] is not None or np.isnan(p_con[i])
                               else p_con[i]) for i in cn]
            entry["contradiction_vs_neutral_auroc"] = m.auroc(
                [table.meta[i]["label3"] == "contradicted" for i in cn], cn_scores)
        bag_rows: dict[str, list[int]] = defaultdict(list)
        for i in rows:
            bag_rows[table.meta[i]["bag"]].append(i)
        if any(len(v) > 1 for v in bag_rows.values()):
            gold_b, pred_b, score_b = [], [], []
            for members in bag_rows.values():
                bp = table.meta[members[0]]["bag_positive"]
                if bp is None:
                    continue
                gold_b.append(not bp)
                pred_b.append(any(verdicts[i] != "supported" for i in members))
                score_b.append(1.0 - min(scores[i] for i in members))
            b = m.binary_metrics(gold_b, pred_b)
            entry["response_level"] = {
                "n": len(gold_b), "hallucinated": sum(gold_b), "f1": b["f1"],
                "precision": b["precision"], "recall": b["recall"],
                "balanced_accuracy": b["balanced_accuracy"],
                "auroc": m.auroc(gold_b, score_b),
            }
        report[name] = entry
    for name in LENGTH_MATCHED_SETS:
        rows = _length_matched_rows(table, name)
        if rows:
            gold = [not table.meta[i]["positive"] for i in rows]
            pred = [verdicts[i] != "supported" for i in rows]
            lengths = [-(table.meta[i].get("extras") or {}).get("log_claim_chars", 0.0)
                       for i in rows]
            report[f"{name}-length_matched"] = {
                "n": len(rows), "held_out": bool(table.folds[rows[0]] == -1),
                "balanced_accuracy": m.binary_metrics(gold, pred)["balanced_accuracy"],
                "auroc": m.auroc([not g for g in gold], [scores[i] for i in rows]),
                "auroc_shorter_is_supported": m.auroc([not g for g in gold], lengths),
            }
    return report


def _length_matched_rows(table: Table, name: str) -> list[int]:
    """Rows of ``name`` whose length bin holds both classes, as many of each per bin."""
    cells: dict[str, dict[bool, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, row in enumerate(table.meta):
        if row["set"] == name and row["positive"] is not None and row["decided"] is None:
            cells[length_bin(row)][bool(row["positive"])].append(i)
    out: list[int] = []
    for by_class in cells.values():
        k = min(len(by_class[True]), len(by_class[False]))
        out += by_class[True][:k] + by_class[False][:k]
    return sorted(out)


def choose_claim_thresholds(table: Table, p_sup: np.ndarray, p_con: np.ndarray,
                            ) -> tuple[float, float]:
    """Thresholds chosen on the training sets' out-of-fold predictions.

    Support: the best mean balanced accuracy over sets; contradiction: then the best mean
    three-way accuracy over the three-way sets.
    """
    train = table.folds != -1
    set_of = np.array([row["set"] for row in table.meta])
    decided = np.array([row["decided"] is not None for row in table.meta])
    labelled = np.array([row["positive"] is not None for row in table.meta]) & train
    positive = np.array([bool(row["positive"]) for row in table.meta])
    label3 = np.array([row["label3"] or "" for row in table.meta])
    decided_label = np.array([row["decided"] or "" for row in table.meta])
    scores = np.where(decided, 0.0, np.nan_to_num(p_sup, nan=0.0))
    con = np.nan_to_num(p_con, nan=-1.0)
    sets = sorted(set(set_of[labelled].tolist()))
    masks = [(set_of == s) & labelled for s in sets]

    def mean_ba(t: float) -> float:
        supported = ~decided & (scores >= t)
        vals = []
        for mask in masks:
            pos, neg = mask & positive, mask & ~positive
            rates = [r for r in ((supported & pos).sum() / max(pos.sum(), 1) if pos.any()
                                 else None,
                                 (~supported & neg).sum() / max(neg.sum(), 1) if neg.any()
                                 else None) if r is not None]
            if rates:
                vals.append(float(np.mean(rates)))
        return float(np.mean(vals)) if vals else 0.0

    grid = np.round(np.arange(0.05, 0.96, 0.01), 2)
    t_sup = float(max(grid, key=mean_ba))
    three = np.isin(label3, THREE_WAY) & train
    three_masks = [(set_of == s) & three for s in sorted(set(set_of[three].tolist()))]

    def mean_acc(t: float) -> float:
        verdict = np.where(scores >= t_sup, "supported",
                           np.where(con >= t, "contradicted", "neutral"))
        verdict = np.where(decided, decided_label, verdict)
        vals = [float((verdict[mask] == label3[mask]).mean()) for mask in three_masks]
        return float(np.mean(vals)) if vals else 0.0

    t_con = float(max(grid, key=mean_acc)) if three_masks else 0.5
    return t_sup, t_con


def fit_claim_head(table: Table, config: HeadConfig, thresholds: tuple[float, float],
                   meta: dict[str, Any]) -> JudgeHead:
    """The shipped claim head: fit on every training row, thresholds from the folds."""
    rows = table.folds != -1
    mean, std, support, contradiction = _fit_claim(table, config, rows)
    classifiers = {"support": support}
    if contradiction is not None:
        classifiers["contradiction"] = contradiction
    return JudgeHead(
        task=CLAIM, layers=config.layers,
        extras=table.extra_columns(config), use_margin=config.use_margin,
        mean=mean, std=std, classifiers=classifiers,
        thresholds={"support": thresholds[0], "contradiction": thresholds[1]}, meta=meta,
    )
