"""Can the generator's own prompt tell an answerable question from a hard negative?

The answerability head reads three separate passage prompts (4-7 s a question here), which
the decision to write cannot afford by default. The generator's first-draft prompt is
evaluated anyway: if a linear head on its hidden state at the end of the prompt (or just
after ``{"answerable":``) separates answerable questions from NoMIRACL's on-topic
no-answer queries, answerability comes at no extra model pass. This script measures that:

- ``extract``: for every question of ``decision_scores.py``'s lines (small corpora and
  ``--nomiracl``), the exact first-draft prompt of the graph is evaluated on a scoring
  context and the last-position hidden states of a few layers are kept (float16, under
  ``--out``); one prompt evaluation per question, nothing generated;
- ``fit``: a logistic head per layer and position, 5 folds (NoMIRACL by query, small
  corpora by collection; nothing scored by a head that saw its query or collection), and
  its query-level AUROC per language next to the stage scores the combiner reads today.

    .venv/bin/python benchmarks/prompt_state_probe.py extract \\
        --scores eval-results/ds-nomiracl.jsonl,eval-results/ds-small.jsonl
    .venv/bin/python benchmarks/prompt_state_probe.py fit --scores ...
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

LAYERS = (12, 16, 20, 22, 24, -1)
POSITIONS = ("prompt", "answerable")


def _records(paths: str) -> list[dict[str, Any]]:
    return [json.loads(line) for path in paths.split(",") for line in Path(path).read_text(
        encoding="utf-8").splitlines() if line.strip()]


def extract(args: argparse.Namespace) -> None:
    from decision_scores import _nomiracl_todo, _small_corpus_todo, first_draft_chat

    from grounded_rag.context import apply_preset, validate_settings
    from grounded_rag.lang import detect_language
    from grounded_rag.local.probe import HiddenStateReader
    from grounded_rag.local.runtime import get_runtime, render_chat

    settings = apply_preset(validate_settings({}))
    wanted = {r["id"] for r in _records(args.scores)}
    out = Path(args.out)
    todo = [t for t in _nomiracl_todo(197, 0, settings) if t[0]["id"] in wanted]
    todo += [t for t in _small_corpus_todo(argparse.Namespace(
        seed=0, splits="dev,heldout", per_group=14), settings) if t[0]["id"] in wanted]
    rt = get_runtime(None)
    reader = HiddenStateReader(rt, layers=LAYERS)
    opening = rt.tokenize('{"answerable":', special=False)
    ids, states = [], np.zeros((len(todo), len(POSITIONS), len(LAYERS), reader.n_embd),
                               dtype=np.float16)
    t0 = time.perf_counter()
    for n, (meta, question, evidence, _gate) in enumerate(todo):
        chat = first_draft_chat(question, evidence, detect_language(question),
                                settings.evidence_tokens)
        with rt.lock:
            tokens = render_chat(rt, chat)
            reader.evaluate(tokens)
            states[n, 0] = reader.hidden()
            reader.evaluate(tokens + opening)  # reuses the prompt: a few tokens more
            states[n, 1] = reader.hidden()
        ids.append(meta["id"])
        if (n + 1) % 10 == 0:
            print(f"  {n + 1}/{len(todo)} ({time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
    np.savez_compressed(out, ids=np.array(ids), states=states, layers=np.array(LAYERS))
    print(f"{len(ids)} prompts, {time.perf_counter() - t0:.0f} s -> {out}")


def _auroc(s: np.ndarray, y: np.ndarray) -> float:
    p, n = s[y == 1], s[y == 0]
    if not len(p) or not len(n):
        return float("nan")
    return float((p[:, None] > n[None, :]).mean() + 0.5 * (p[:, None] == n[None, :]).mean())


def fit(args: argparse.Namespace) -> None:
    from decision_fit import features, fit_logistic
    from decision_joint import _fold_of

    data = np.load(args.out)
    by_id = {r["id"]: r for r in _records(args.scores)}
    rows = [by_id[i] for i in data["ids"]]
    y = np.array([int(r["answerable"]) for r in rows])
    folds = np.array([_fold_of(r) for r in rows])
    lang = np.array([r["asked"] for r in rows])
    split = np.array(["nomiracl" if r["split"].startswith("nomiracl") else "small"
                      for r in rows])
    stage = np.array([features(r, ("generator", "relevance")) for r in rows])
    groups = [(f"{lg} {sp}", (lang == lg) & (split == sp))
              for lg in ("ja", "en") for sp in ("nomiracl", "small")]
    print("| feature | " + " | ".join(g for g, _ in groups) + " |")
    print("|---|" + "---|" * len(groups))

    def report(name: str, scores: np.ndarray) -> None:
        print(f"| {name} | " + " | ".join(f"{_auroc(scores[m], y[m]):.3f}" for _, m in groups)
              + " |")

    def oof(x: np.ndarray, l2: float) -> np.ndarray:
        s = np.zeros(len(y))
        for f in range(5):
            tr = folds != f
            mu, sd = x[tr].mean(0), x[tr].std(0) + 1e-6
            w = fit_logistic((x[tr] - mu) / sd, y[tr], l2=l2)
            s[~tr] = np.hstack([(x[~tr] - mu) / sd, np.ones(((~tr).sum(), 1))]) @ w
        return s

    report("generator log-odds (today)", stage[:, 0])
    report("generator + relevance, refit", oof(stage, 1.0))
    ans = np.array([r["answerability"] if r["answerability"] is not None else np.nan
                    for r in rows])
    report("answerability head (4-7 s more; NoMIRACL in its training)", np.nan_to_num(ans))
    states = data["states"].astype(np.float32)
    is_ja = (lang == "ja").astype(np.float32)[:, None]
    best: tuple[float, str, np.ndarray] | None = None
    for p, pos in enumerate(POSITIONS):
        for li, layer in enumerate(data["layers"]):
            x = np.hstack([states[:, p, li], is_ja])
            for l2 in (float(a) for a in args.l2.split(",")):
                s = oof(x, l2)
                name = f"state {pos} layer {layer} l2={l2:g}"
                report(name, s)
                mean = float(np.nanmean([_auroc(s[m], y[m]) for _, m in groups]))
                if best is None or mean > best[0]:
                    best = (mean, name, s)
    if best is not None:
        report(f"best ({best[1]}) + generator + relevance",
               oof(np.column_stack([best[2], stage]), 1.0))
    layer, l2 = args.operating.split(":")
    li = [int(v) for v in data["layers"]].index(int(layer))
    x = np.hstack([states[:, 0, li], is_ja])
    print(f"\nOperating points of the prompt-state head (layer {layer}, l2={l2}): the cut is "
          "placed on inner out-of-fold scores of the training folds, per language")
    print("| keep (training) | " + " | ".join(f"{g}: answerable kept, unanswerable refused"
                                              for g, _ in groups) + " |")
    print("|---|" + "---|" * len(groups))
    for keep in (0.97, 0.93, 0.90):
        kept = np.zeros(len(y), dtype=bool)
        for f in range(5):
            tr = folds != f
            mu, sd = x[tr].mean(0), x[tr].std(0) + 1e-6
            w = fit_logistic((x[tr] - mu) / sd, y[tr], l2=float(l2))
            inner = np.zeros(len(y))  # training questions scored by heads without their fold
            for g in set(range(5)) - {f}:
                sub = tr & (folds != g)
                mu2, sd2 = x[sub].mean(0), x[sub].std(0) + 1e-6
                w2 = fit_logistic((x[sub] - mu2) / sd2, y[sub], l2=float(l2))
                m = folds == g
                inner[m] = np.hstack([(x[m] - mu2) / sd2, np.ones((m.sum(), 1))]) @ w2
            test = ~tr
            s_test = np.hstack([(x[test] - mu) / sd, np.ones((test.sum(), 1))]) @ w
            for lg in ("ja", "en"):
                pos = np.sort(inner[tr & (lang == lg) & (y == 1)])
                cut = pos[int(len(pos) * (1 - keep))] if len(pos) else 0.0
                m = lang[test] == lg
                kept[np.flatnonzero(test)[m]] = s_test[m] >= cut
        cells = []
        for _, m in groups:
            pos, neg = m & (y == 1), m & (y == 0)
            cells.append(f"{kept[pos].sum()}/{pos.sum()}, {(~kept[neg]).sum()}/{neg.sum()}")
        print(f"| {keep} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("phase", choices=["extract", "fit"])
    ap.add_argument("--scores", default="eval-results/ds-nomiracl.jsonl,"
                    "eval-results/ds-small.jsonl")
    ap.add_argument("--out", default="eval-results/prompt-states.npz")
    ap.add_argument("--l2", default="10,100,1000", help="l2 strengths tried in fit")
    ap.add_argument("--operating", default="16:100", metavar="LAYER:L2",
                    help="the head whose operating points fit prints (prompt position)")
    args = ap.parse_args()
    extract(args) if args.phase == "extract" else fit(args)


if __name__ == "__main__":
    main()
