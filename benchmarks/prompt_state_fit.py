"""Fit the prompt-state head and its floors; report the decision out of fold.

Reads the lines of ``decision_scores.py`` (small corpora and ``--nomiracl``) that carry the
generator's prompt state (``state``, layer ``state_layer``). Fitted on **small-corpus dev**
and **NoMIRACL** minus the whole-loop eval sample (``--eval-sample``: the queries that
``grounded-rag eval nomiracl --limit N --sample balanced`` runs); 5 folds, by collection
(small corpora) and by query (NoMIRACL), as ``decision_fit.py --joint``:

- the head: a logistic regression (``--l2``) on the standardised state plus ``is_ja``;
- per language, a cut on the head's *out-of-fold* scores (a head scoring its own training
  rows looks better than it is) that keeps ``--keep`` of the training answerable questions,
  halfway between the last answerable score it keeps and the first it lets go. The default
  ``--features prompt_state`` makes that cut a floor on the head's log-odds, which is what
  ships (``DEFAULT_DECISION.state_floors``); ``--features``/``--form`` try combiners that
  weigh the head with the generator and relevance instead (the docs say why they lost).

Reported, per language: answerable kept and unanswerable refused on the training folds
(nested: each fold scored by a head and cut fitted without it), on the small-corpus
held-out collections and on the eval sample (scored by what was fitted on all training
rows), for the shipped combiner, the head's decision, and both (what ships). The last line
prints the floors per operating point; ``--write`` saves the head fitted on all training
rows to ``graph/local/heads/prompt_state.{npz,json}``.

    .venv/bin/python benchmarks/prompt_state_fit.py \
        --scores eval-results/ds-nomiracl.jsonl,eval-results/ds-small.jsonl \
        --eval-sample 30 [--write]

No model is run; a minute.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
from pathlib import Path
from typing import Any

import numpy as np
from decision_fit import features, fit_logistic, rates, score
from decision_joint import _balanced_fit, _fold_of, _shipped_kept, eval_sample_ids

COMBINED = ("generator", "relevance", "prompt_state")
PRESET_KEEP = {"high_precision": 0.90, "balanced": 0.97, "fast": 0.99}
FLOOR_KEEP = {"high_precision": 0.90, "balanced": 0.97}
"""Shares of the training folds' answerable questions the shipped floors keep (``fast``
has none: it abstains less)."""


def _state(record: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(record["state"]), dtype=np.float16).astype(np.float32)


def _inputs(rows: list[dict[str, Any]]) -> np.ndarray:
    return np.array([np.append(_state(r), 1.0 if r["asked"] == "ja" else 0.0) for r in rows])


class Head:
    """Standardiser + logistic weights, fitted on ``x, y``."""

    def __init__(self, x: np.ndarray, y: np.ndarray, l2: float) -> None:
        self.mu, self.sd = x.mean(0), x.std(0) + 1e-6
        self.w = fit_logistic((x - self.mu) / self.sd, y, l2=l2)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return score(self.w, (x - self.mu) / self.sd)


def _oof(x: np.ndarray, y: np.ndarray, folds: np.ndarray, l2: float) -> np.ndarray:
    out = np.zeros(len(y))
    for f in np.unique(folds):
        test = folds == f
        out[test] = Head(x[~test], y[~test], l2)(x[test])
    return out


USED = {"names": COMBINED}
"""The features the ``free`` form weighs (``--features``)."""
FORM = {"value": "free"}
"""``free``: generator, relevance and the head each weighted; ``shipped``: the shipped
combiner's log-odds (its generator/relevance ratio, fitted on every gate-mode dev question)
and the head, so that only their two weights are fitted here; ``added``: the shipped log-odds
kept as it is (weight 1) and the head's evidence added to it (its weight and a bias
fitted)."""


def _shipped_logit(record: dict[str, Any]) -> float:
    from grounded_rag.verification.decision import DEFAULT_DECISION

    c = DEFAULT_DECISION.combiners[record["asked"]]
    f = dict(zip(COMBINED, features({**record, "answerability": None}, COMBINED), strict=True))
    return c.bias + sum(w * f.get(k, 0.0) for k, w in c.weights.items())


def _combined(rows: list[dict[str, Any]], head_scores: np.ndarray) -> np.ndarray:
    if FORM["value"] in ("shipped", "added"):
        return np.array([[_shipped_logit(r), max(-12.0, min(12.0, float(s)))]
                         for r, s in zip(rows, head_scores, strict=True)])
    return np.array([features({**r, "answerability": None, "prompt_state": s}, USED["names"])
                     for r, s in zip(rows, head_scores, strict=True)])


def _as_combiner(lang: str, w: np.ndarray) -> dict[str, Any]:
    """Fitted weights in the form ``Combiner`` takes (weights over COMBINED, bias)."""
    if FORM["value"] == "free":
        return {"weights": {n: round(float(v), 4) for n, v in zip(USED["names"], w[:-1],
                                                                   strict=True)},
                "bias": round(float(w[-1]), 4)}
    from grounded_rag.verification.decision import DEFAULT_DECISION

    c = DEFAULT_DECISION.combiners[lang]
    a, b = (1.0, float(w[-1])) if FORM["value"] == "added" else (float(w[0]), float(w[-1]))
    weights = {k: round(a * v, 4) for k, v in c.weights.items()}
    weights["prompt_state"] = round(float(w[1]), 4)
    return {"weights": weights, "bias": round(a * c.bias + b, 4)}


def midway_cut(scores: np.ndarray, y: np.ndarray, keep: float) -> float:
    """A cut that keeps at least ``keep`` of the answerable rows, placed halfway between the
    lowest answerable score it keeps and the highest one it lets go (a cut on a training
    score itself leaves no margin to a new question that scores like it)."""
    pos = np.sort(scores[y == 1])
    if not len(pos):
        return 0.0
    misses = int(len(pos) * (1 - keep) + 1e-9)
    below = pos[misses - 1] if misses else pos[0] - 0.5
    return float((below + pos[misses]) / 2)


def _apply(w: np.ndarray, xc: np.ndarray) -> np.ndarray:
    """Combined log-odds of rows ``xc`` (for ``added``: column 0 is an offset, weight 1)."""
    if FORM["value"] == "added":
        return xc[:, 0] + score(np.array([w[1], w[-1]]), xc[:, 1:])
    return score(w, xc)


def _fit_combiner(xc: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class-balanced logistic fit (with the offset column for ``added``); weights, scores."""
    if FORM["value"] != "added":
        w = _balanced_fit(xc, y)
        return w, score(w, xc)
    pos, neg = max(1, int(y.sum())), max(1, int((1 - y).sum()))
    weight = np.where(y == 1, len(y) / (2 * pos), len(y) / (2 * neg))
    xb = np.column_stack([xc[:, 1], np.ones(len(y))])
    v = np.zeros(2)
    for _ in range(200):  # Newton's method, offset xc[:, 0], l2 1 on the slope
        p = 1 / (1 + np.exp(-(xc[:, 0] + xb @ v)))
        grad = xb.T @ (weight * (p - y)) + np.array([v[0], 0.0])
        hess = (xb * (weight * p * (1 - p))[:, None]).T @ xb + np.diag([1.0, 1e-9])
        step = np.linalg.solve(hess, grad)
        step *= min(1.0, 2.0 / max(1e-12, float(np.abs(step).max())))  # damped
        v -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    w = np.array([1.0, v[0], v[1]])
    return w, _apply(w, xc)


def _fit_decision(rows: list[dict[str, Any]], x: np.ndarray, y: np.ndarray, folds: np.ndarray,
                  l2: float, keep: float) -> tuple[Head, dict[str, Any]]:
    """The head on all of ``rows``; per language a combiner on out-of-fold head scores."""
    head = Head(x, y, l2)
    oof = _oof(x, y, folds, l2)
    lang = np.array([r["asked"] for r in rows])
    combiners = {}
    for lg in ("ja", "en"):
        m = lang == lg
        sub = [r for r, keep_row in zip(rows, m, strict=True) if keep_row]
        xc = _combined(sub, oof[m])
        w, s = _fit_combiner(xc, y[m])
        combiners[lg] = {"w": w, "cut": midway_cut(s, y[m], keep),
                         "cuts": {p: midway_cut(s, y[m], k) for p, k in PRESET_KEEP.items()}}
    return head, combiners


def _decide(head: Head, combiners: dict[str, Any], rows: list[dict[str, Any]],
            x: np.ndarray) -> np.ndarray:
    hs = head(x)
    kept = np.zeros(len(rows), dtype=bool)
    for i, r in enumerate(rows):
        c = combiners[r["asked"]]
        kept[i] = _apply(c["w"], _combined([r], hs[i : i + 1]))[0] >= c["cut"]
    return kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scores", default="eval-results/ds-nomiracl.jsonl,"
                    "eval-results/ds-small.jsonl")
    ap.add_argument("--eval-sample", type=int, default=30, metavar="N")
    ap.add_argument("--l2", type=float, default=100.0)
    ap.add_argument("--keep", type=float, default=0.97)
    ap.add_argument("--features", default="prompt_state",
                    help="with --form free: the features weighed (of %(default)s)")
    ap.add_argument("--form", choices=["free", "shipped", "added"], default="free",
                    help="combiner form (see FORM)")
    ap.add_argument("--write", action="store_true",
                    help="save the head fitted on all training rows into the package")
    args = ap.parse_args()
    FORM["value"] = args.form
    USED["names"] = tuple(args.features.split(","))
    records = [json.loads(line) for path in args.scores.split(",") for line in Path(
        path).read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [r for r in records if r.get("state") and r.get("generator") is not None
               and r.get("kept", True)]
    layers = {r["state_layer"] for r in records}
    if len(layers) != 1:
        raise SystemExit(f"lines with states of several layers: {sorted(layers)}")
    held_ids = eval_sample_ids(args.eval_sample) if args.eval_sample else set()
    for r in records:
        if r["id"] in held_ids:
            r["split"] = "nomiracl-eval"
    fit_rows = [r for r in records if r["split"] in ("dev", "nomiracl")]
    held = [r for r in records if r["split"] in ("heldout", "nomiracl-eval")]
    x, xh = _inputs(fit_rows), _inputs(held)
    y = np.array([int(r["answerable"]) for r in fit_rows])
    folds = np.array([_fold_of(r) for r in fit_rows])
    print(f"{len(fit_rows)} training rows ({int(y.sum())} answerable), {len(held)} held out; "
          f"layer {layers.pop()}, l2={args.l2:g}, keep {args.keep}")

    nested = np.zeros(len(fit_rows), dtype=bool)
    head_oof = np.zeros(len(fit_rows))
    for f in range(5):
        test = folds == f
        train_rows = [r for r, t in zip(fit_rows, test, strict=True) if not t]
        head, combiners = _fit_decision(train_rows, x[~test], y[~test], folds[~test], args.l2,
                                        args.keep)
        test_rows = [r for r, t in zip(fit_rows, test, strict=True) if t]
        nested[test] = _decide(head, combiners, test_rows, x[test])
        head_oof[test] = head(x[test])
    head, combiners = _fit_decision(fit_rows, x, y, folds, args.l2, args.keep)
    kept_held = _decide(head, combiners, held, xh) if held else np.zeros(0, dtype=bool)
    shipped_fit = np.array([_shipped_kept(r) for r in fit_rows], dtype=bool)
    shipped_held = np.array([_shipped_kept(r) for r in held], dtype=bool)

    def cells(rows: list[dict[str, Any]], kept: np.ndarray, lg: str, split: str) -> str:
        m = np.array([r["asked"] == lg and r["split"] == split for r in rows], dtype=bool)
        if not m.any():
            return "- | -"
        yy = np.array([int(r["answerable"]) for r in rows])[m]
        return " | ".join(rates(kept[m], yy))

    print("| language | decision | small-corpus dev (folds): answerable kept | unanswerable "
          "refused | NoMIRACL (folds): answerable kept | unanswerable refused | small-corpus "
          "held-out: answerable kept | unanswerable refused | NoMIRACL eval sample: "
          "answerable kept | unanswerable refused |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for lg in ("ja", "en"):
        for name, kf, kh in (("shipped (generator + relevance)", shipped_fit, shipped_held),
                             ("+ prompt-state head", nested, kept_held),
                             ("shipped + prompt-state floor (both must keep)",
                              nested & shipped_fit,
                              kept_held & shipped_held)):
            print(f"| {lg} | {name} | {cells(fit_rows, kf, lg, 'dev')} | "
                  f"{cells(fit_rows, kf, lg, 'nomiracl')} | {cells(held, kh, lg, 'heldout')} | "
                  f"{cells(held, kh, lg, 'nomiracl-eval')} |")
    print("\nThe combiner of --form/--features, fitted on all training rows:")
    for lg, c in combiners.items():
        balanced = c["cuts"]["balanced"]
        print(lg, json.dumps({
            **_as_combiner(lg, c["w"]), "cut": round(balanced, 4),
            "shifts": {p: round(v - balanced, 4) for p, v in c["cuts"].items()}}))
    oof = _oof(x, y, folds, args.l2)
    lang = np.array([r["asked"] for r in fit_rows])
    floors = {lg: {p: round(midway_cut(oof[lang == lg], y[lang == lg], k), 4)
                   for p, k in FLOOR_KEEP.items()} for lg in ("ja", "en")}
    print("\nPrompt-state floors (DEFAULT_DECISION.state_floors; the head's out-of-fold "
          f"log-odds that keep {FLOOR_KEEP} of the training answerable questions):")
    print(json.dumps(floors))
    if args.write:
        _write(head, fit_rows, args)


def _write(head: Head, rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    from grounded_rag.local.assets import DEFAULT_MODEL_SHA256
    from grounded_rag.local.features import prompt_fingerprint
    from grounded_rag.local.heads import HEADS_DIR, Classifier, JudgeHead
    from grounded_rag.local.prompt_state import TASK

    n = {"small_corpus_dev": sum(r["split"] == "dev" for r in rows),
         "nomiracl": sum(r["split"] == "nomiracl" for r in rows)}
    judge = JudgeHead(
        task=TASK, layers=(int(rows[0]["state_layer"]),), extras=("is_ja",), use_margin=False,
        mean=head.mu.astype(np.float32), std=head.sd.astype(np.float32),
        classifiers={"answerable": Classifier(w1=None, b1=None, w2=head.w[:-1].astype(
            np.float32), b2=float(head.w[-1]))},
        thresholds={"ja": 0.0, "en": 0.0},
        meta={"model_sha256": DEFAULT_MODEL_SHA256, "prompt_fingerprint": prompt_fingerprint(
            TASK), "trained_on": n, "held_out_sets": [
            "small-corpus heldout", f"NoMIRACL eval sample ({args.eval_sample})"],
            "folds": 5, "config": f"layer {rows[0]['state_layer']} logreg l2={args.l2:g}",
            "created": datetime.date.today().isoformat(),
            "command": "benchmarks/prompt_state_fit.py --write"})
    judge.save(HEADS_DIR / f"{TASK}.npz")
    print(f"wrote {HEADS_DIR / TASK}.npz and .json")


if __name__ == "__main__":
    main()
