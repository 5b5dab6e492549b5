"""Fitting judge heads: grouped k-fold cross-validation, small numpy classifiers, thresholds.

Classifiers are logistic regressions or one-hidden-layer tanh MLPs trained full-batch with
Adam on weighted binary cross-entropy. Every set weighs the same in the loss (and within a
set each class weighs the same), so no large set dominates. Sets labelled only per bag (a
NoMIRACL query whose 10 passages hold an answer somewhere) add a multiple-instance term:
the bag's score is the log-sum-exp of its passages' scores.

Folds are grouped: examples that share a source text, a question or a query (any grouping
key) are in the same fold, so no fold is ever scored by a classifier that saw its texts.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from grounded_rag.local.heads import Classifier


def _find(parent: dict[str, str], key: str) -> str:
    root = key
    while parent[root] != root:
        root = parent[root]
    while parent[key] != root:
        parent[key], key = root, parent[key]
    return root


def group_ids(keys: Sequence[Sequence[str]]) -> np.ndarray:
    """Connected components of examples that share any key (union-find); one id each."""
    parent: dict[str, str] = {}
    for ks in keys:
        for k in ks:
            parent.setdefault(k, k)
        for k in ks[1:]:
            a, b = _find(parent, ks[0]), _find(parent, k)
            if a != b:
                parent[max(a, b)] = min(a, b)
    roots = [(_find(parent, ks[0]) if ks else f"#{i}") for i, ks in enumerate(keys)]
    names = {r: n for n, r in enumerate(sorted(set(roots)))}
    return np.array([names[r] for r in roots], dtype=np.int64)


def assign_folds(groups: np.ndarray, sets: Sequence[str], k: int, seed: int = 0) -> np.ndarray:
    """Fold per example: each set's groups are dealt round-robin in a seeded order.

    Dealing per set keeps every set spread over all folds; a group spanning sets goes where
    its first set put it.
    """
    fold_of_group: dict[int, int] = {}
    by_set: dict[str, list[int]] = defaultdict(list)
    for g, s in zip(groups.tolist(), sets, strict=True):
        if g not in by_set[s]:
            by_set[s].append(g)
    for s in sorted(by_set):
        order = sorted(by_set[s], key=lambda g: hashlib.sha1(f"{seed}:{s}:{g}".encode())
                       .hexdigest())
        nxt = 0
        for g in order:
            if g in fold_of_group:
                continue
            fold_of_group[g] = nxt % k
            nxt += 1
    return np.array([fold_of_group[g] for g in groups.tolist()], dtype=np.int64)


@dataclass
class FitConfig:
    """Classifier shape and training settings."""

    hidden: int = 0
    """Hidden units (0: logistic regression)."""
    l2: float = 1e-3
    """Weight decay on the weights (not the biases), per unit of total sample weight."""
    epochs: int = 300
    """Full-batch Adam steps."""
    lr: float = 0.01
    """Adam learning rate."""
    seed: int = 0
    """Initialisation seed."""
    bag_weight: float = 1.0
    """Weight of the multiple-instance (bag) term relative to one example of weight 1."""


@dataclass
class Bags:
    """Positive bags for the multiple-instance term."""

    members: list[np.ndarray] = field(default_factory=list)
    """Row indices of each bag."""
    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Weight of each bag."""


def balanced_weights(sets: Sequence[str], labels: np.ndarray,
                     strata: Sequence[str] | None = None) -> np.ndarray:
    """Each set sums to 1; within a set each present class sums to the same share.

    ``strata`` (optional, one per example) splits a set further: within each stratum the
    classes weigh the same and a stratum holding only one class gets no weight, so a
    property that differs between the classes (e.g. answer length) carries no signal.
    Strata keep the set's total in proportion to their usable examples.
    """
    w = np.zeros(len(sets), dtype=np.float64)
    cells: dict[tuple[str, str], dict[bool, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, (s, y) in enumerate(zip(sets, labels.tolist(), strict=True)):
        cells[(s, strata[i] if strata is not None else "")][bool(y)].append(i)
    usable: dict[str, int] = defaultdict(int)
    for (s, stratum), by_class in cells.items():
        if strata is None or len(by_class) == 2 or not stratum:
            usable[s] += sum(len(v) for v in by_class.values())
    for (s, stratum), by_class in cells.items():
        if strata is not None and stratum and len(by_class) < 2:
            continue  # a one-class stratum would teach the stratum, not the label
        size = sum(len(v) for v in by_class.values())
        share = size / usable[s] if strata is not None else 1.0
        for rows in by_class.values():
            w[rows] = share / len(by_class) / len(rows)
    return w


def fit_binary(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    config: FitConfig,
    bags: Bags | None = None,
) -> Classifier:
    """Train one classifier on standardised ``x`` (labels ``y`` in {0, 1}, weights ``w``).

    ``bags``: extra positive bags over rows of ``x`` (rows that may also carry no label of
    their own: give them weight 0).
    """
    rng = np.random.default_rng(config.seed)
    x = np.ascontiguousarray(x, dtype=np.float32)
    y = np.asarray(y, dtype=np.float32)
    n, d = x.shape
    total = float(w.sum() + (bags.weights.sum() if bags else 0.0)) or 1.0
    w = (w / total).astype(np.float32)
    bag_w = (bags.weights / total * config.bag_weight) if bags else np.zeros(0)
    h = config.hidden
    params: dict[str, np.ndarray] = {}
    if h:
        params["w1"] = rng.normal(0, 1.0 / np.sqrt(d), (d, h)).astype(np.float32)
        params["b1"] = np.zeros(h, dtype=np.float32)
        params["w2"] = rng.normal(0, 1.0 / np.sqrt(h), h).astype(np.float32)
    else:
        params["w2"] = np.zeros(d, dtype=np.float32)
    params["b2"] = np.zeros(1, dtype=np.float32)
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for step in range(1, config.epochs + 1):
        if h:
            pre = x @ params["w1"] + params["b1"]
            act = np.tanh(pre)
        else:
            act = x
        z = act @ params["w2"] + params["b2"][0]
        p = (1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))).astype(np.float32)
        dz = w * (p - y)
        if bags is not None and bags.members:
            for members, bw in zip(bags.members, bag_w, strict=True):
                zs = z[members]
                top = zs.max()
                soft = np.exp(zs - top)
                soft /= soft.sum()
                bag_z = top + np.log(np.exp(zs - top).sum())
                bag_p = 1.0 / (1.0 + np.exp(-np.clip(bag_z, -40, 40)))
                dz[members] += bw * (bag_p - 1.0) * soft
        grads = {"w2": dz @ act + config.l2 * params["w2"],
                 "b2": np.array([dz.sum()], dtype=np.float32)}
        if h:
            dact = np.outer(dz, params["w2"]) * (1.0 - act * act)
            grads["w1"] = (dact.T @ x).T + config.l2 * params["w1"]
            grads["b1"] = dact.sum(axis=0)
        for k in params:
            g = grads[k].astype(np.float32)
            m[k] = beta1 * m[k] + (1 - beta1) * g
            v[k] = beta2 * v[k] + (1 - beta2) * g * g
            mh = m[k] / (1 - beta1**step)
            vh = v[k] / (1 - beta2**step)
            params[k] -= config.lr * mh / (np.sqrt(vh) + eps)
    return Classifier(
        w1=params.get("w1"), b1=params.get("b1"), w2=params["w2"], b2=float(params["b2"][0])
    )


def standardiser(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-column mean and standard deviation (constant columns get std 1)."""
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std < 1e-6] = 1.0
    return mean.astype(np.float32), std.astype(np.float32)
