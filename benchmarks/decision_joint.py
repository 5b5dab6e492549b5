"""The answer-or-abstain combiner fitted on small-corpus dev **and** NoMIRACL together.

Called by ``decision_fit.py --joint`` with the lines of ``decision_scores.py`` (small-corpus
lines and ``--nomiracl`` lines, several files comma-separated). Per question language:

- **small-corpus dev**, 5 folds by collection, and **NoMIRACL**, 5 folds by query: each
  question is scored by a combiner fitted on the other four folds of both;
- **small-corpus held-out**: scored by the combiner fitted on all of dev and NoMIRACL;
- **NoMIRACL eval sample** (``--eval-sample N``: the queries ``grounded-rag eval nomiracl
  --limit N --sample balanced`` runs): left out of every fit, folds included, and reported
  beside, so that the whole-loop run on them is held out for the combiner too.

NoMIRACL queries the gate stopped count as refused (the gate decides before any stage
scored here); only those past the gate are fitted on. The cut is chosen on the training
folds to keep ``keep`` of their answerable questions (small-corpus and NoMIRACL pooled).
The shipped combiner (``DEFAULT_DECISION``) is reported on the same rows, then the
coefficients fitted on everything, in the form ``Combiner`` takes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
from decision_fit import OPERATING_POINTS, cut_for, features, fit_logistic, rates, score

SETS = {
    "generator+relevance": ("generator", "relevance"),
    "all three": ("generator", "relevance", "answerability"),
    "answerability+relevance": ("relevance", "answerability"),
}


def _fold(key: str, k: int = 5) -> int:
    return int(hashlib.sha1(key.encode()).hexdigest(), 16) % k


def eval_sample_ids(limit: int, seed: int = 0) -> set[str]:
    """The ids (as decision_scores.py writes them) of the whole-loop NoMIRACL eval sample."""
    from grounded_rag.evaluation._datasets import load_dataset, sample_items

    items = sample_items(load_dataset("nomiracl").items, limit, strategy="balanced", seed=seed)
    return {f"nomiracl:{item.id}" for item in items}


def _fold_of(record: dict[str, Any]) -> int:
    return _fold(record["collection"] if record["split"] != "nomiracl" else record["id"])


def _balanced_fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A logistic fit with both classes weighted equally (rows repeated in proportion)."""
    pos, neg = max(1, int(y.sum())), max(1, int((1 - y).sum()))
    reps = np.where(y == 1, max(1, round(10 * len(y) / (2 * pos))),
                    max(1, round(10 * len(y) / (2 * neg))))
    return fit_logistic(np.repeat(x, reps, axis=0), np.repeat(y, reps), l2=1.0)


def _shipped_kept(record: dict[str, Any]) -> bool:
    from grounded_rag.verification.decision import DEFAULT_DECISION

    t = DEFAULT_DECISION.generator_threshold(
        record["asked"], answerability=record.get("answerability"),
        relevance=record["gate_score"], gate=record["gate"])
    return t is None or record["generator"] >= t


def _row(lang: str, name: str, parts: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    cells = []
    for split in ("dev", "nomiracl", "heldout", "nomiracl-eval"):
        kept, y = parts.get(split, (np.zeros(0, dtype=bool), np.zeros(0)))
        cells.extend(rates(kept, y) if len(y) else ("-", "-"))
    print(f"| {lang} | {name} | " + " | ".join(cells) + " |")


def joint_report(records: list[dict[str, Any]], keep: float, *,
                 english_answerability: bool = False, eval_sample: int = 0) -> None:
    records = [r for r in records if r.get("generator") is not None]
    held_ids = eval_sample_ids(eval_sample) if eval_sample else set()
    for r in records:
        if r["id"] in held_ids:
            r["split"] = "nomiracl-eval"
    stopped = [r for r in records if not r.get("kept", True)]
    records = [r for r in records if r.get("kept", True)]
    for r in records:
        if r["asked"] != "ja" and not english_answerability:
            r["answerability"] = None  # as in the graph: English is not checked
    print(f"{len(records)} questions past the gate ({len(stopped)} NoMIRACL queries stopped "
          f"by it, counted as refused); keep target {keep}")
    print("| language | rule | small-corpus dev (folds): answerable kept | unanswerable "
          "refused | NoMIRACL (folds): answerable kept | unanswerable refused | small-corpus "
          "held-out: answerable kept | unanswerable refused | NoMIRACL eval sample: "
          "answerable kept | unanswerable refused |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    fitted: dict[str, Any] = {}
    for lang in ("ja", "en"):
        rows = [r for r in records if r["asked"] == lang]
        fit_rows = [r for r in rows if r["split"] in ("dev", "nomiracl")]
        held = [r for r in rows if r["split"] in ("heldout", "nomiracl-eval")]
        gate_stopped = [r for r in stopped if r["asked"] == lang]
        if not fit_rows:
            continue

        def parts(kept_fit: np.ndarray, kept_held: np.ndarray,
                  fit_rows: list[dict[str, Any]] = fit_rows, held: list[dict[str, Any]] = held,
                  gate_stopped: list[dict[str, Any]] = gate_stopped
                  ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
            out = {}
            for split in ("dev", "nomiracl", "heldout", "nomiracl-eval"):
                rows, kept_all = (fit_rows, kept_fit) if split in ("dev", "nomiracl") else (
                    held, kept_held)
                mask = np.array([r["split"] == split for r in rows], dtype=bool)
                kept = kept_all[mask] if len(rows) else np.zeros(0, dtype=bool)
                y = np.array([int(r["answerable"]) for r in rows])[mask] if len(rows) else (
                    np.zeros(0))
                stop = [r for r in gate_stopped if r["split"] == split]
                if stop:  # stopped by the gate: refused before any stage scored here
                    kept = np.concatenate([kept, np.zeros(len(stop), dtype=bool)])
                    y = np.concatenate([y, [int(r["answerable"]) for r in stop]])
                out[split] = (kept, y)
            return out

        shipped_fit = np.array([_shipped_kept(r) for r in fit_rows], dtype=bool)
        shipped_held = np.array([_shipped_kept(r) for r in held], dtype=bool)
        _row(lang, "shipped combiner", parts(shipped_fit, shipped_held))
        scored = all(r.get("answerability") is not None for r in rows)
        y = np.array([int(r["answerable"]) for r in fit_rows])
        folds = np.array([_fold_of(r) for r in fit_rows])
        for set_name, names in SETS.items():
            if "answerability" in names and not scored:
                continue
            x = np.array([features(r, names) for r in fit_rows])
            xh = np.array([features(r, names) for r in held]).reshape(len(held), len(names))
            kept = np.zeros(len(fit_rows), dtype=bool)
            for f in range(5):
                train, test = folds != f, folds == f
                if not test.any():
                    continue
                w = _balanced_fit(x[train], y[train])
                kept[test] = score(w, x[test]) >= cut_for(score(w, x[train]), y[train], keep)
            w = _balanced_fit(x, y)
            cut = cut_for(score(w, x), y, keep)
            kh = score(w, xh) >= cut if len(held) else np.zeros(0, dtype=bool)
            _row(lang, set_name, parts(kept, kh))
            fitted[f"{lang}:{set_name}"] = {
                "weights": {n: round(float(v), 4) for n, v in zip(names, w[:-1], strict=True)},
                "bias": round(float(w[-1]), 4), "cut": round(cut, 4),
                "cuts": {str(k): round(cut_for(score(w, x), y, k), 4)
                         for k in OPERATING_POINTS}}
    print()
    for key, value in fitted.items():
        print(key, json.dumps(value))
