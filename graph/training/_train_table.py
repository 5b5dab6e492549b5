"""Training data as arrays: cached features of one task in a table with grouped folds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from grounded_rag.local.features import ANSWERABLE_EXTRAS, CLAIM_EXTRAS
from grounded_rag.training._examples import CLAIM
from grounded_rag.training._extract import FeatureSet, load_features
from grounded_rag.training._fit import FitConfig, assign_folds, group_ids

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
