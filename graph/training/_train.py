"""Cross-validated training of the claim and answerability heads from cached features."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from grounded_rag.evaluation import _metrics as m
from grounded_rag.local.features import ANSWERABLE_EXTRAS, CLAIM_EXTRAS
from grounded_rag.local.heads import Classifier, JudgeHead
from grounded_rag.training._examples import ANSWERABLE, CLAIM
from grounded_rag.training._extract import FeatureSet, load_features
from grounded_rag.training._fit import (
    Bags,
    FitConfig,
    assign_folds,
    balanced_weights,
    fit_binary,
    group_ids,
    standardiser,
)

THREE_WAY = ("supported", "contradicted", "neutral")

LENGTH_EXTRAS = ("log_claim_chars",)
"""Features left out by default: the dev sets tie claim length to the label."""

LENGTH_MATCHED_SETS = ("halueval_qa",)
"""Sets whose classes differ in answer length: weighted within length bins when fitting,
and also reported on a length-matched subset."""


def length_bin(row: dict[str, Any]) -> str:
    """Half-octave bin of the claim length ("" when unknown, e.g. a cue-decided claim)."""
    log_chars = (row.get("extras") or {}).get("log_claim_chars")
    if log_chars is None:
        return ""
    chars = max(1.0, float(np.expm1(log_chars)))
    return f"{np.floor(np.log2(chars) * 2) / 2:.1f}"


def strata_of(meta: Sequence[dict[str, Any]]) -> list[str]:
    """Fitting strata: length bins for ``LENGTH_MATCHED_SETS``, nothing for other sets."""
    return [length_bin(row) if row["set"] in LENGTH_MATCHED_SETS else "" for row in meta]


@dataclass
class HeadConfig:
    """Which inputs a head reads and how its classifiers are shaped."""

    layers: tuple[int, ...]
    """Hidden-state layers (-1: final normed state)."""
    fit: FitConfig = field(default_factory=FitConfig)
    """Classifier shape and training settings."""
    use_margin: bool = True
    """Read the P(Yes) logit margin."""
    use_extras: bool = True
    """Read the model-free features."""
    extras: tuple[str, ...] | None = None
    """Which model-free features (None: all but the claim length, which the dev sets tie to
    their labels: HaluEval's hallucinated answers are several times longer than right ones)."""

    def label(self) -> str:
        """Short description for reports."""
        kind = f"mlp{self.fit.hidden}" if self.fit.hidden else "logreg"
        parts = [f"layers={','.join(map(str, self.layers)) or '-'}", kind, f"l2={self.fit.l2:g}"]
        if not self.use_margin:
            parts.append("no-margin")
        if not self.use_extras:
            parts.append("no-extras")
        return " ".join(parts)


@dataclass
class Table:
    """All examples of one task as arrays."""

    meta: list[dict[str, Any]]
    """Per-example metadata (labels, set, language, decided, ...)."""
    hidden: np.ndarray
    """``(n, n_layers, n_embd)`` float16."""
    layers: tuple[int, ...]
    """Layers of ``hidden``'s axis 1."""
    extras: np.ndarray
    """``(n, n_extras)`` model-free features."""
    extra_names: tuple[str, ...]
    """Names of the ``extras`` columns."""
    margin: np.ndarray
    """P(Yes) logit margins (0 for decided rows)."""
    folds: np.ndarray
    """Cross-validation fold per example (-1: held out)."""

    def extra_columns(self, config: HeadConfig) -> tuple[str, ...]:
        """The model-free features ``config`` reads, in order."""
        if not config.use_extras:
            return ()
        if config.extras is not None:
            return tuple(n for n in config.extras if n in self.extra_names)
        return tuple(n for n in self.extra_names if n not in LENGTH_EXTRAS)

    def inputs(self, config: HeadConfig, rows: np.ndarray | None = None) -> np.ndarray:
        """Raw (unstandardised) input matrix for ``config`` (all rows or ``rows``)."""
        sel = np.arange(len(self.meta)) if rows is None else rows
        parts = [self.hidden[:, self.layers.index(layer), :][sel].astype(np.float32)
                 for layer in config.layers]
        if config.use_extras:
            cols = [self.extra_names.index(n) for n in self.extra_columns(config)]
            parts.append(self.extras[sel][:, cols].astype(np.float32))
        if config.use_margin:
            parts.append(self.margin[sel, None].astype(np.float32))
        return np.concatenate(parts, axis=1)


def load_table(folder: Path, names: Sequence[str], task: str, k: int = 5,
               held_out: Sequence[str] = ()) -> Table:
    """Load the cached sets of ``task`` into one table with grouped folds."""
    sets: list[FeatureSet] = []
    for name in names:
        try:
            fs = load_features(folder, name)
        except FileNotFoundError:
            continue
        fs.meta = [row for row in fs.meta if row["task"] == task]
        if fs.meta:
            sets.append(fs)
    if not sets:
        raise FileNotFoundError(f"no cached {task} features in {folder}")
    layers = sets[0].layers
    meta = [row for fs in sets for row in fs.meta]
    hidden = np.concatenate([fs.hidden[: len(fs.meta)] for fs in sets], axis=0)
    names_x = CLAIM_EXTRAS if task == CLAIM else ANSWERABLE_EXTRAS
    extras = np.array([[float((row.get("extras") or {}).get(n, 0.0)) for n in names_x]
                       for row in meta], dtype=np.float32)
    margin = np.array([float(row.get("margin") or 0.0) for row in meta], dtype=np.float32)
    train = np.array([not (row["held_out"] or row["set"] in held_out) for row in meta])
    groups = group_ids([row["keys"] for row in meta])
    folds = np.full(len(meta), -1, dtype=np.int64)
    idx = np.flatnonzero(train)
    folds[idx] = assign_folds(groups[idx], [meta[i]["set"] for i in idx], k)
    return Table(meta, hidden, layers, extras, names_x, margin, folds)


# -- claim head -----------------------------------------------------------------------------


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


# -- answerability head ---------------------------------------------------------------------


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


def timed(label: str) -> Any:
    """Tiny context manager printing how long a step took (training is interactive)."""
    class _T:
        def __enter__(self) -> None:
            self.t = time.perf_counter()

        def __exit__(self, *exc: object) -> None:
            print(f"{label}: {time.perf_counter() - self.t:.1f}s", flush=True)

    return _T()
