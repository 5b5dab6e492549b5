"""Metric functions on plain lists: binary detection, 3-way NLI, ranking, percentiles.

Everything here is pure and dependency-free so the numbers can be checked by hand in tests.
"Positive" always means *hallucinated* (the class the verifier must catch).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

LABELS_3WAY = ("supported", "contradicted", "neutral")
"""The verifier's three verdicts; gold NLI labels are mapped onto these."""


def _div(num: float, den: float) -> float | None:
    return round(num / den, 4) if den else None


def binary_metrics(gold: Sequence[bool], pred: Sequence[bool]) -> dict[str, Any]:
    """Precision / recall / F1 of the positive ("hallucinated") class, balanced accuracy.

    Balanced accuracy is the mean of the true positive and true negative rates; with only
    one gold class present it is that class's rate alone.
    """
    if len(gold) != len(pred):
        raise ValueError("gold and pred differ in length")
    tp = sum(1 for g, p in zip(gold, pred, strict=True) if g and p)
    fp = sum(1 for g, p in zip(gold, pred, strict=True) if not g and p)
    fn = sum(1 for g, p in zip(gold, pred, strict=True) if g and not p)
    tn = sum(1 for g, p in zip(gold, pred, strict=True) if not g and not p)
    precision = _div(tp, tp + fp)
    recall = _div(tp, tp + fn)
    if not tp + fn:
        f1 = None  # no hallucinated items: F1 of that class is undefined
    elif precision is None or recall is None or precision + recall == 0:
        f1 = 0.0
    else:
        f1 = round(2 * precision * recall / (precision + recall), 4)
    tpr = tp / (tp + fn) if tp + fn else None
    tnr = tn / (tn + fp) if tn + fp else None
    rates = [r for r in (tpr, tnr) if r is not None]
    return {
        "n": len(gold),
        "positives": tp + fn,
        "accuracy": _div(tp + tn, len(gold)),
        "balanced_accuracy": round(sum(rates) / len(rates), 4) if rates else None,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "true_negative_rate": _div(tn, tn + fp),
        "confusion": {
            "hallucinated": {"hallucinated": tp, "faithful": fn},
            "faithful": {"hallucinated": fp, "faithful": tn},
        },
    }


def auroc(gold: Sequence[bool], scores: Sequence[float]) -> float | None:
    """Area under the ROC curve (Mann-Whitney U; ties count one half); None if one class."""
    pairs = sorted(zip(scores, gold, strict=True), key=lambda p: p[0])
    n_pos = sum(1 for _, g in pairs if g)
    n_neg = len(pairs) - n_pos
    if not n_pos or not n_neg:
        return None
    rank_sum = 0.0
    i = 0
    while i < len(pairs):
        j = i
        while j + 1 < len(pairs) and pairs[j + 1][0] == pairs[i][0]:
            j += 1
        average_rank = (i + j) / 2 + 1  # 1-based ranks, ties share their mean rank
        rank_sum += average_rank * sum(1 for k in range(i, j + 1) if pairs[k][1])
        i = j + 1
    u = rank_sum - n_pos * (n_pos + 1) / 2
    return round(u / (n_pos * n_neg), 4)


def best_threshold(gold: Sequence[bool], scores: Sequence[float]) -> dict[str, float] | None:
    """The score threshold (predict positive when score >= t) with the best balanced accuracy.

    Tuned on the data it is reported on, so it is an upper bound, not a held-out figure.
    """
    if not gold or all(gold) or not any(gold):
        return None
    best: tuple[float, float] | None = None
    for t in sorted(set(scores)):
        ba = binary_metrics(gold, [s >= t for s in scores])["balanced_accuracy"]
        if ba is not None and (best is None or ba > best[1]):
            best = (t, ba)
    if best is None:
        return None
    return {"threshold": round(best[0], 4), "balanced_accuracy": best[1]}


def confusion_matrix(
    gold: Sequence[str], pred: Sequence[str], labels: Sequence[str] = LABELS_3WAY
) -> dict[str, dict[str, int]]:
    """Counts as ``{gold_label: {predicted_label: n}}`` over ``labels``."""
    matrix = {g: dict.fromkeys(labels, 0) for g in labels}
    for g, p in zip(gold, pred, strict=True):
        matrix.setdefault(g, dict.fromkeys(labels, 0))
        matrix[g][p] = matrix[g].get(p, 0) + 1
    return matrix


def three_way_metrics(gold: Sequence[str], pred: Sequence[str]) -> dict[str, Any]:
    """Accuracy, macro F1 and confusion for supported / contradicted / neutral."""
    matrix = confusion_matrix(gold, pred)
    n = len(gold)
    correct = sum(1 for g, p in zip(gold, pred, strict=True) if g == p)
    f1s = []
    per_label: dict[str, dict[str, float | None]] = {}
    for label in LABELS_3WAY:
        tp = matrix.get(label, {}).get(label, 0)
        predicted = sum(row.get(label, 0) for row in matrix.values())
        actual = sum(matrix.get(label, {}).values())
        p = tp / predicted if predicted else None
        r = tp / actual if actual else None
        f = 2 * p * r / (p + r) if p and r else (0.0 if actual else None)
        per_label[label] = {"precision": _r(p), "recall": _r(r), "f1": _r(f), "support": actual}
        if actual:
            f1s.append(f or 0.0)
    return {
        "accuracy_3way": _div(correct, n),
        "macro_f1_3way": round(sum(f1s) / len(f1s), 4) if f1s else None,
        "per_label_3way": per_label,
        "confusion_3way": matrix,
    }


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    value = ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
    return round(value, 3)


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean rounded to 4 places; None for no values."""
    return round(sum(values) / len(values), 4) if values else None


def rate(numerator: int, denominator: int) -> float | None:
    """``numerator / denominator`` rounded, None when the denominator is 0."""
    return _div(numerator, denominator)
