"""Fit the answer-or-abstain decision: stage scores, the combiner, the prompt-state head.

Usage::

    .venv/bin/python benchmarks/fit_decision.py scores \\
        [--per-group 14] [--out eval-results/decision-scores.jsonl] [--nomiracl N]
    .venv/bin/python benchmarks/fit_decision.py fit \\
        [--scores eval-results/decision-scores.jsonl] [--keep 0.97] [--held-out nomiracl]
    .venv/bin/python benchmarks/fit_decision.py fit --joint --scores A.jsonl,B.jsonl \\
        [--eval-sample 30] [--english-answerability]
    .venv/bin/python benchmarks/fit_decision.py state \\
        --scores eval-results/ds-nomiracl.jsonl,eval-results/ds-small.jsonl \\
        --eval-sample 30 [--write]
    flock /tmp/grag-model.lock .venv/bin/python benchmarks/fit_decision.py --quick --json FILE

Three steps, each a subcommand (``SUBCOMMAND -h`` prints its method in full):

- ``scores`` runs the model: per question past the pre-model gate, one JSON line with what
  each stage knows before the answer is written (relevance, the answerability head, the
  generator's log-odds of ``answerable`` and its prompt state);
- ``fit`` fits and cross-validates the logistic combiner on those lines
  (``grounded_rag.verification.decision.DEFAULT_DECISION``); ``--joint`` fits on small-corpus
  dev and NoMIRACL together;
- ``state`` fits the prompt-state head and its floors (``DEFAULT_DECISION.state_floors``;
  ``--write`` saves the head to ``graph/local/heads/prompt_state.{npz,json}``).

``--quick`` (with or without a subcommand) is the smallest run that still takes every path:
``scores`` on one small-corpus dev question per language and two NoMIRACL queries into a
temporary folder, then, on those lines, ``fit`` (held out: NoMIRACL; gate items made from
the same lines), ``fit --joint --eval-sample 30`` and ``state --eval-sample 0``. It never
writes shipped parameters (``--write`` is refused) and its figures are not for reporting.
The model runs hold ``/tmp/grag-model.lock`` (taken here when the command is not already
run under ``flock`` on it). Evaluation data is read from ../shared/eval; when it is absent
the run prints a skip line and exits 0.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import hashlib
import json
import math
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402  # noqa: E402
    LOCK_WAIT,
    add_result_args,
    eval_path,
    hold_model_lock,
    subcommand_main,
    write_result,
)

NAME = "fit_decision"

# == scores: the stage scores per question (runs the model) ===============================

SCORES_DOC = """\
Stage scores of the answer-or-abstain decision, per small-corpus question past the gate.

For every question that clears the pre-model gate on its own collection (the gate-mode
retrieval of ``grounded-rag eval small-corpus``), one JSON line with what each stage knows
before the answer is written:

- ``relevance``: the best evidence relevance (and the gate it cleared);
- ``answerability``: the shipped answerability head's best passage score (Japanese
  questions only, as in the graph; ``--english-answerability`` scores English ones too);
- ``generator``: the generator's log-odds of ``"answerable": true`` over ``false`` at that
  point of its JSON reply, on the exact first-draft prompt of the graph (prompt plus a few
  tokens; no answer is written).

These lines are what ``fit_decision.py fit`` fits and cross-validates the combiner on.
``--nomiracl N`` scores N NoMIRACL dev queries instead (balanced over language and
answerable; each query's own ten passages are its corpus; split ``nomiracl``): their
no-answer queries come with on-topic passages, the hard negatives that the small-corpus
collections lack. Unanswerable questions that clear the gate are few, so all of them are
kept; answerable ones are sampled per (split, language, type).

    .venv/bin/python benchmarks/fit_decision.py scores \\
        [--per-group 14] [--out eval-results/decision-scores.jsonl] [--nomiracl N]

Resumable: ids already in ``--out`` are skipped. Model work: about one answerability pass
(three short prompts; none with ``--no-answerability``) and one generator prompt per
question. The generator's prompt state at ``--state-layer`` is read on that same prompt
evaluation (``grounded_rag.local.prompt_state``): ``fit_decision.py state`` fits its head.
``--quick``: one dev question per language (``--limit 1 --per-group 1 --splits dev``) into
a temporary file unless ``--out`` is given.
"""

QUICK_SCORES = ["--limit", "1", "--per-group", "1", "--splits", "dev"]
"""``scores`` under ``--quick``: one small-corpus dev question per language."""
QUICK_NOMIRACL = 2
"""NoMIRACL queries the quick run scores beside them."""


def scores_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="fit_decision.py scores", description=SCORES_DOC,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-group", type=int, default=14,
                    help="answerable questions per (split, language, type)")
    ap.add_argument("--out", default=None,
                    help="JSONL written (and resumed); default eval-results/decision-scores.jsonl"
                         " (a temporary file under --quick)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--splits", default="dev,heldout")
    ap.add_argument("--limit", type=int, default=0, metavar="N",
                    help="at most N questions per language past the gate, from the fewest "
                         "collections (0: no limit)")
    ap.add_argument("--nomiracl", type=int, default=0, metavar="N",
                    help="score N NoMIRACL dev queries (balanced) instead of small corpora")
    ap.add_argument("--english-answerability", action="store_true",
                    help="also score English questions with the answerability head")
    ap.add_argument("--no-answerability", action="store_true",
                    help="skip the answerability head (4-7 s a question): recorded as null")
    ap.add_argument("--state-layer", type=int, default=16, metavar="L",
                    help="record the generator's prompt state at layer L (float16, base64; "
                         "the product's tap on the generator context; -2: none)")
    add_result_args(ap)
    return ap


def scores_main(argv: list[str]) -> int:
    ap = scores_parser()
    args = ap.parse_args(argv)
    missing = _missing_data(nomiracl_only=bool(args.nomiracl))
    if missing:
        write_result(args.json, f"{NAME} scores", {"skipped": missing}, quick=args.quick)
        return 0
    with tempfile.TemporaryDirectory(prefix="fit-decision-scores-") as tmp:
        if args.quick:
            args = ap.parse_args([*QUICK_SCORES, *argv])
            if args.out is None:
                args.out = str(Path(tmp) / "scores.jsonl")
        figures = run_scores(args)
    write_result(args.json, f"{NAME} scores", figures, quick=args.quick)
    return 0


def run_scores(args: argparse.Namespace) -> dict[str, Any]:
    """Score the questions of ``args`` into ``args.out``; the figures of the run."""
    hold_model_lock()
    from grounded_rag.context import apply_preset, validate_settings
    from grounded_rag.lang import detect_language
    from grounded_rag.local.answerability import LocalAnswerabilityJudge
    from grounded_rag.local.chat import turn_end
    from grounded_rag.local.decoding import Choice, complete, grammar_for
    from grounded_rag.local.runtime import get_runtime, render_chat
    from grounded_rag.schemas import CitedAnswer

    started = time.perf_counter()
    settings = apply_preset(validate_settings({}))
    out = Path(args.out or "eval-results/decision-scores.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        done = {json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()
                if line.strip()}
    if args.nomiracl:
        todo = _nomiracl_todo(args.nomiracl, args.seed, settings)
    else:
        todo = _small_corpus_todo(args, settings)
    judge = LocalAnswerabilityJudge(judge="head", thresholds={
                                        "ja": 0.0, "en": 0.0 if args.english_answerability
                                        else None},
                                    passages=settings.answerability_passages)
    rt = get_runtime(None)
    from grounded_rag.local.prompt_state import head_score, state_head, tap_for

    head = state_head()
    schema = {"type": "json_object", "schema": CitedAnswer.model_json_schema()}
    grammar = grammar_for(schema)
    n_unanswerable = sum(1 for t in todo if not t[0]["answerable"])
    print(f"decision scores: {len(todo)} questions past the gate "
          f"({n_unanswerable} unanswerable); "
          f"{len(done)} already in {out}", file=sys.stderr, flush=True)
    scored = []
    with out.open("a", encoding="utf-8") as handle:
        for n, (meta, question, evidence, gate) in enumerate(todo, 1):
            if meta["id"] in done:
                continue
            t0 = time.perf_counter()
            lang = detect_language(question)
            ans = ({"passages": []} if args.no_answerability
                   else judge.assess(question, evidence, language=lang))
            t1 = time.perf_counter()
            chat = first_draft_chat(question, evidence, lang, settings.evidence_tokens)
            hidden = None
            with rt.lock:
                tokens = render_chat(rt, chat)
                if args.state_layer != -2:  # read while the prompt is evaluated anyway
                    hidden = tap_for(rt, args.state_layer).evaluate(tokens)
                result = complete(rt, tokens, max_tokens=8, grammar=grammar,
                                  stop=[turn_end(rt)],
                                  choices=[Choice("answerable", '"answerable":')])
            t2 = time.perf_counter()
            record = {
                **meta, "asked": lang,
                "relevance": gate["best_relevance"], "gate_score": gate["gate_score"],
                "gate": gate["gate"], "gold_rank": gate.get("gold_rank"),
                "answerability": (round(float(ans["score"]), 4) if ans["passages"]
                                  else None),
                # per passage, in retrieval order (the best of the first k is a variant)
                "answerability_passages": [round(float(next(
                    s["score"] for s in ans["passages"] if s["source_id"] == e["source_id"])), 4)
                    for e in evidence[: len(ans["passages"])]] if ans["passages"] else None,
                "generator": result.choices.get("answerable"),
                "prompt_tokens": len(tokens),
                **({"state_layer": args.state_layer, "state": base64.b64encode(
                    hidden.astype(np.float16).tobytes()).decode("ascii")}
                   if hidden is not None else {}),
                **({"prompt_state": round(head_score(head, hidden, lang), 4)}
                   if hidden is not None and head is not None
                   and head.layers[0] == args.state_layer else {}),
                "answerability_s": round(t1 - t0, 2), "generator_s": round(t2 - t1, 2),
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            scored.append({k: record.get(k) for k in (
                "id", "split", "language", "type", "answerable", "kept", "asked", "relevance",
                "answerability", "generator", "prompt_state", "prompt_tokens",
                "answerability_s", "generator_s")})
            print(f"  {n}/{len(todo)} {meta['id']} {meta['language']}/{meta['type']} "
                  f"ans={record['answerability']} gen={record['generator']} "
                  f"({t2 - t0:.1f} s)", file=sys.stderr, flush=True)
    return {"out": str(out), "questions": len(todo), "unanswerable": n_unanswerable,
            "already": len(done), "scored": scored,
            "seconds": round(time.perf_counter() - started, 1)}


def first_draft_chat(question: str, evidence: list[Any], language: str,
                     evidence_tokens: int) -> list[dict[str, str]]:
    """The graph's first-draft prompt for ``question`` over ``evidence``, as chat messages."""
    from grounded_rag.nodes.write import answer_messages, evidence_view
    from grounded_rag.prompts import generate as generate_prompts
    from grounded_rag.verification.citations import render_view

    view = evidence_view(question, evidence, evidence_tokens)
    sources = render_view(view, evidence, header=generate_prompts.SOURCE_HEADER)
    messages = answer_messages(question, sources, language)
    return [{"role": "system", "content": messages[0].content},
            {"role": "user", "content": messages[1].content}]


Todo = list[tuple[dict[str, Any], str, list[Any], dict[str, Any]]]
"""(record fields, question, evidence, gate fields) per question to score."""


def _small_corpus_todo(args: argparse.Namespace, settings: Any) -> Todo:
    """Small-corpus questions past the gate, sampled per (split, language, type)."""
    from grounded_rag.evaluation._small_corpus import build_small_corpus
    from grounded_rag.evaluation._small_corpus_gate import default_retriever_factory, gate_record
    from grounded_rag.evaluation._small_corpus_run import load_sources

    data = build_small_corpus(load_sources(), seed=args.seed)
    factory = default_retriever_factory()
    rng = random.Random(args.seed)
    chosen = []
    for split in args.splits.split(","):
        groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for item in data.part(split):
            groups[(item.language, item.group)].append(item)
        for key in sorted(groups):
            pool = groups[key]
            if pool[0].answerable:
                rng.shuffle(pool)
                pool = pool[: args.per_group * 3]  # gate below drops a few
            chosen.extend(pool)
    by_collection: dict[str, list[Any]] = defaultdict(list)
    for item in chosen:
        by_collection[item.collection].append(item)
    kept: dict[tuple[str, str, str], int] = defaultdict(int)
    per_language: dict[str, int] = defaultdict(int)  # for --limit
    todo: Todo = []
    for cid in sorted(by_collection):
        if args.limit and all(per_language[i.language] >= args.limit
                              for i in by_collection[cid]):
            continue  # --limit: every language of this collection is full (nothing embedded)
        retriever = factory(data.collections[cid].documents)
        for item in by_collection[cid]:
            if args.limit and per_language[item.language] >= args.limit:
                continue
            evidence = list(retriever.retrieve(item.question, settings.top_k))[: settings.top_k]
            gate = gate_record(item, evidence, settings.abstain_threshold, 0)
            if not gate["kept"]:
                continue
            key = (item.split, item.language, item.group)
            if item.answerable and kept[key] >= args.per_group:
                continue
            kept[key] += 1
            per_language[item.language] += 1
            meta = {"id": item.id, "collection": item.collection, "split": item.split,
                    "language": item.language, "type": item.group, "qtype": item.qtype,
                    "answerable": item.answerable}
            todo.append((meta, item.question, evidence, gate))
    # Unanswerable ones first (the rarer class), then the answerable ones round-robin over
    # the groups, so a run stopped early still has every group.
    seen: dict[tuple[str, str, str], int] = defaultdict(int)
    order = []
    for meta, *_ in todo:
        group = (meta["split"], meta["language"], meta["type"])
        order.append((meta["answerable"], seen[group]))
        seen[group] += 1
    return [t for _, t in sorted(zip(order, todo, strict=True), key=lambda p: p[0])]


def _nomiracl_todo(limit: int, seed: int, settings: Any) -> Todo:
    """``limit`` NoMIRACL dev queries (balanced), each retrieved from its own ten passages.

    Every query is kept, past the gate or not (``gate.kept`` says which), since the graph's
    gate decides before the stages scored here; the fit reads only those it kept.
    """
    from grounded_rag.evaluation._answer import memory_retriever_factory
    from grounded_rag.evaluation._datasets import load_dataset, sample_items
    from grounded_rag.evaluation._small_corpus_gate import gate_fields
    from grounded_rag.lang import detect_language

    data = load_dataset("nomiracl")
    items = sample_items(data.items, limit, strategy="balanced", seed=seed)
    factory = memory_retriever_factory("hybrid")
    todo: Todo = []
    for item in items:
        evidence = list(factory(item.corpus or []).retrieve(item.question, settings.top_k))
        evidence = evidence[: settings.top_k]
        gate = gate_fields(evidence, detect_language(item.question), settings.abstain_threshold)
        kept = gate["kept"]
        meta = {"id": f"nomiracl:{item.id}", "collection": f"nomiracl:{item.id}",
                "split": "nomiracl", "language": item.language, "type": "nomiracl",
                "qtype": "nomiracl", "answerable": bool(item.answerable), "kept": kept}
        todo.append((meta, item.question, evidence, gate))
    return todo


# == fit: the combiner on the stage scores (no model) =====================================

FIT_DOC = """\
Fit and cross-validate the pre-answer decision on the stage scores of ``fit_decision.py scores``.

Per question language, a logistic combiner of the stage scores (the generator's log-odds of
``answerable``, the answerability head's logit, the log of relevance over its gate) is fitted
on the **dev** collections with leave-collections-out folds (5 folds by collection hash), and
its cut is chosen on the training folds to keep a share of the answerable questions
(``--keep``). Reported per language, for each feature set and for today's rules:

- answerable questions let through to the writer (kept) and unanswerable ones refused, on
  the dev folds (each question scored by a model that never saw its collection);
- the same on the **held-out** collections, scored by the model fitted on all of dev.

The last lines print the coefficients fitted on all of dev, in the form
``grounded_rag.verification.decision.DEFAULT_DECISION`` takes.

    .venv/bin/python benchmarks/fit_decision.py fit \\
        [--scores eval-results/decision-scores.jsonl] [--keep 0.97] [--held-out nomiracl]

No model is run; a few seconds. ``--joint``: see below.

{joint}
``--quick``: ``scores --quick`` and two NoMIRACL queries into a temporary folder, gate
items made from the small-corpus lines, then this fit on them (``--scores`` is refused).
"""

JOINT_DOC = """\
``--joint``: the answer-or-abstain combiner fitted on small-corpus dev **and** NoMIRACL together.

With the lines of ``fit_decision.py scores`` (small-corpus lines and ``--nomiracl`` lines,
several files comma-separated). Per question language:

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

DEFAULT_SCORES = "eval-results/decision-scores.jsonl"

OPERATING_POINTS = (0.93, 0.97, 0.99)
"""Shares of answerable dev questions kept: high_precision, balanced, fast."""

FEATURE_SETS = {
    "generator": ("generator",),
    "generator+relevance": ("generator", "relevance"),
    "generator+answerability": ("generator", "answerability"),
    "all three": ("generator", "answerability", "relevance"),
    "answerability+relevance": ("answerability", "relevance"),
}


def features(record: dict[str, Any], names: tuple[str, ...]) -> list[float]:
    from grounded_rag.verification.decision import stage_features

    values = stage_features(generator=record["generator"], answerability=record["answerability"],
                            relevance=record["gate_score"], gate=record["gate"],
                            prompt_state=record.get("prompt_state"))
    return [values[n] for n in names]


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 50) -> np.ndarray:
    """L2-regularised logistic regression by Newton's method; weights with the bias last."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    reg = np.eye(xb.shape[1]) * l2
    reg[-1, -1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) + reg @ w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + reg + np.eye(len(w)) * 1e-9
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w


def score(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.hstack([x, np.ones((len(x), 1))]) @ w


def cut_for(scores: np.ndarray, y: np.ndarray, keep: float) -> float:
    """The highest cut that keeps at least ``keep`` of the answerable questions."""
    pos = np.sort(scores[y == 1])
    if not len(pos):
        return 0.0
    misses = int(len(pos) * (1 - keep) + 1e-9)
    return float(pos[misses])


def fold_of(collection: str, k: int = 5) -> int:
    return int(hashlib.sha1(collection.encode()).hexdigest(), 16) % k


def rates(kept: np.ndarray, y: np.ndarray) -> tuple[str, str]:
    pos, neg = y == 1, y == 0
    a = f"{kept[pos].sum()}/{pos.sum()} ({kept[pos].mean():.2f})" if pos.any() else "-"
    b = (f"{(~kept[neg]).sum()}/{neg.sum()} ({(~kept[neg]).mean():.2f})"
         if neg.any() else "-")
    return a, b


def table_row(table: list[list[str]], *cells: str) -> None:
    """Print one markdown table row and keep its cells (the run's figures)."""
    print("| " + " | ".join(cells) + " |")
    table.append(list(cells))


def fit_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="fit_decision.py fit",
                                 description=FIT_DOC.format(joint=JOINT_DOC),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scores", default=None,
                    help=f"lines of `scores` (files comma-separated; default {DEFAULT_SCORES})")
    ap.add_argument("--keep", type=float, default=0.97)
    ap.add_argument("--held-out", default="heldout",
                    help="the split reported as held out: heldout (small corpora) or "
                         "nomiracl (lines of `fit_decision.py scores --nomiracl`)")
    ap.add_argument("--gate-items", default="eval-results/small-corpus/gate-both.items.jsonl",
                    help="per-question output of `grounded-rag eval small-corpus --mode gate`")
    ap.add_argument("--joint", action="store_true",
                    help="fit on small-corpus dev and NoMIRACL together (query folds) and "
                         "report both out of fold, plus the small-corpus held-out part")
    ap.add_argument("--eval-sample", type=int, default=0, metavar="N",
                    help="with --joint: leave out the NoMIRACL queries of the whole-loop eval "
                         "sample (`grounded-rag eval nomiracl --limit N --sample balanced`)")
    ap.add_argument("--english-answerability", action="store_true",
                    help="with --joint: let English combiners read the answerability head")
    add_result_args(ap)
    return ap


def fit_main(argv: list[str]) -> int:
    ap = fit_parser()
    args = ap.parse_args(argv)
    if not args.quick:
        figures = run_fit(args)
        write_result(args.json, f"{NAME} fit", figures, quick=False)
        return 0
    if args.scores:
        ap.error("--quick scores its own input: leave out --scores")
    missing = _missing_data()
    if missing:
        write_result(args.json, f"{NAME} fit", {"skipped": missing}, quick=True)
        return 0
    with tempfile.TemporaryDirectory(prefix="fit-decision-quick-") as tmp:
        args.scores, figures = quick_scores(Path(tmp))
        if args.held_out == "heldout":
            args.held_out = "nomiracl"  # the quick lines hold no held-out collection
        args.gate_items = quick_gate_items(args.scores, Path(tmp))
        figures["fit"] = run_fit(args)
    write_result(args.json, f"{NAME} fit", figures, quick=True)
    return 0


def run_fit(args: argparse.Namespace) -> dict[str, Any]:
    """The fit of ``args`` (``--joint`` or not); prints its tables, returns their figures."""
    args.scores = args.scores or DEFAULT_SCORES
    records = [json.loads(line) for path in args.scores.split(",") for line in Path(
        path).read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.joint:
        return joint_report(records, args.keep, english_answerability=args.english_answerability,
                            eval_sample=args.eval_sample)
    # NoMIRACL lines (fit_decision.py scores --nomiracl) keep the queries the gate stopped too
    records = [r for r in records if r.get("generator") is not None and r.get("kept", True)]
    for r in records:
        if r["asked"] != "ja":
            r["answerability"] = None  # as in the graph: English is not checked
    print(f"{len(records)} questions past the gate; keep target {args.keep}")
    header = ["language", "rule", "dev folds: answerable kept", "dev folds: unanswerable refused",
              "held-out: answerable kept", "held-out: unanswerable refused"]
    print("| " + " | ".join(header) + " |")
    print("|---|---|---|---|---|---|")
    table: list[list[str]] = []
    fitted: dict[str, Any] = {}
    for lang in ("ja", "en"):
        rows = [r for r in records if r["asked"] == lang]
        dev = [r for r in rows if r["split"] == "dev"]
        held = [r for r in rows if r["split"] == args.held_out]
        if not dev:
            table_row(table, lang, f"no dev questions in {args.scores}: nothing to fit",
                      "", "", "", "")
            continue
        y_dev = np.array([int(r["answerable"]) for r in dev])
        y_held = np.array([int(r["answerable"]) for r in held])
        # today's rules: the greedy decline (and for Japanese the head at 0.40)
        for name, rule in (("greedy generator", lambda r: r["generator"] >= 0),
                           ("today (head 0.40 ja + greedy)",
                            lambda r: r["generator"] >= 0 and (
                                r["asked"] != "ja" or r["answerability"] >= 0.40))):
            kd = np.array([rule(r) for r in dev], dtype=bool)
            kh = np.array([rule(r) for r in held], dtype=bool)
            table_row(table, lang, name, *rates(kd, y_dev), *rates(kh, y_held))
        scored = all(r["answerability"] is not None for r in rows)
        for set_name, names in FEATURE_SETS.items():
            if "answerability" in names and not scored:
                continue  # the graph does not run the answerability head in this language
            x_dev = np.array([features(r, names) for r in dev])
            x_held = np.array([features(r, names) for r in held])
            folds = np.array([fold_of(r["collection"]) for r in dev])
            kept = np.zeros(len(dev), dtype=bool)
            for f in range(5):
                train, test = folds != f, folds == f
                if not test.any() or len(set(y_dev[train])) < 2:
                    continue
                w = fit_logistic(x_dev[train], y_dev[train])
                cut = cut_for(score(w, x_dev[train]), y_dev[train], args.keep)
                kept[test] = score(w, x_dev[test]) >= cut
            w = fit_logistic(x_dev, y_dev)
            cut = cut_for(score(w, x_dev), y_dev, args.keep)
            kh = score(w, x_held) >= cut if len(held) else np.zeros(0, dtype=bool)
            table_row(table, lang, set_name, *rates(kept, y_dev), *rates(kh, y_held))
            train_scores = score(w, x_dev)
            fitted[f"{lang}:{set_name}"] = {
                "weights": {n: round(float(v), 4) for n, v in zip(names, w[:-1], strict=True)},
                "bias": round(float(w[-1]), 4), "cut": round(cut, 4),
                # operating points: the cut that keeps this share of answerable dev questions
                "cuts": {str(k): round(cut_for(train_scores, y_dev, k), 4)
                         for k in OPERATING_POINTS}}
    print()
    for key, value in fitted.items():
        print(key, json.dumps(value))
    figures: dict[str, Any] = {"questions": len(records), "keep": args.keep,
                               "held_out": args.held_out, "header": header, "rows": table,
                               "fitted": fitted}
    if Path(args.gate_items).exists():
        product = fit_product(args.gate_items, records)
        figures["product"] = product
        figures["product_rows"] = report_product(product, records)
    return figures


def fit_product(gate_items: str, scores: list[dict[str, Any]], p_cut: float = 0.5
                ) -> dict[str, Any]:
    """The shipped combiner: relevance fitted on every gate-mode dev question, the generator's
    log-likelihood ratio on the scored dev questions; summed (the two read different things:
    retrieval vs the writer reading the evidence)."""
    gate = [json.loads(line) for line in Path(gate_items).read_text(
        encoding="utf-8").splitlines() if line.strip()]
    out: dict[str, Any] = {}
    dev_scores = [r for r in scores if r["split"] == "dev"]
    # generator LLR, pooled over languages, classes weighted equally (logit = LLR)
    g = np.array([[features(r, ("generator",))[0]] for r in dev_scores])
    yg = np.array([int(r["answerable"]) for r in dev_scores])
    wpos = len(yg) / (2 * max(1, yg.sum()))
    wneg = len(yg) / (2 * max(1, (1 - yg).sum()))
    # weighted fit by duplication of rows in proportion (rounded) keeps the solver simple
    reps = np.where(yg == 1, round(wpos * 10), round(wneg * 10))
    wg = fit_logistic(np.repeat(g, reps, axis=0), np.repeat(yg, reps), l2=5.0)
    for lang in ("ja", "en"):
        rows = [r for r in gate if r["split"] == "dev" and r["kept"] and r["language"] == lang]
        if not rows:
            continue  # no gate-mode dev question in this language: nothing to fit
        x = np.array([[math.log10(max(r["gate_score"], 1e-9) / r["gate"])] for r in rows])
        y = np.array([int(r["answerable"]) for r in rows])
        wr = fit_logistic(x, y, l2=1.0)
        out[lang] = {"weights": {"generator": round(float(wg[0]), 4),
                                 "relevance": round(float(wr[0]), 4)},
                     "bias": round(float(wr[1] + wg[1]), 4),
                     "cut": round(math.log(p_cut / (1 - p_cut)), 4),
                     "n_relevance": len(rows), "n_generator": len(dev_scores)}
    return out


def report_product(fitted: dict[str, Any], scores: list[dict[str, Any]]) -> list[list[str]]:
    print("\nShipped form (relevance on all gate-mode dev questions + generator LLR):")
    print("| language | split | answerable kept | unanswerable refused |")
    print("|---|---|---|---|")
    table: list[list[str]] = []
    for lang in ("ja", "en"):
        if lang not in fitted:
            continue
        f = fitted[lang]
        for split in sorted({r["split"] for r in scores}):
            rows = [r for r in scores if r["asked"] == lang and r["split"] == split]
            if not rows:
                continue
            y = np.array([int(r["answerable"]) for r in rows])
            z = np.array([f["bias"] + sum(f["weights"][k] * v for k, v in zip(
                ("generator", "relevance"), features(r, ("generator", "relevance")),
                strict=True)) for r in rows])
            kept = z >= f["cut"]
            table_row(table, lang, split, *rates(kept, y))
    print(json.dumps(fitted))
    return table


# -- fit --joint ----------------------------------------------------------------------------

SETS = {
    "generator+relevance": ("generator", "relevance"),
    "all three": ("generator", "relevance", "answerability"),
    "answerability+relevance": ("relevance", "answerability"),
}


def _fold(key: str, k: int = 5) -> int:
    return int(hashlib.sha1(key.encode()).hexdigest(), 16) % k


def eval_sample_ids(limit: int, seed: int = 0) -> set[str]:
    """The ids (as ``fit_decision.py scores`` writes them) of the whole-loop NoMIRACL eval
    sample."""
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


def _row(lang: str, name: str, parts: dict[str, tuple[np.ndarray, np.ndarray]]) -> list[str]:
    cells = []
    for split in ("dev", "nomiracl", "heldout", "nomiracl-eval"):
        kept, y = parts.get(split, (np.zeros(0, dtype=bool), np.zeros(0)))
        cells.extend(rates(kept, y) if len(y) else ("-", "-"))
    print(f"| {lang} | {name} | " + " | ".join(cells) + " |")
    return [lang, name, *cells]


JOINT_HEADER = ["language", "rule", "small-corpus dev (folds): answerable kept",
                "unanswerable refused", "NoMIRACL (folds): answerable kept",
                "unanswerable refused", "small-corpus held-out: answerable kept",
                "unanswerable refused", "NoMIRACL eval sample: answerable kept",
                "unanswerable refused"]


def joint_report(records: list[dict[str, Any]], keep: float, *,
                 english_answerability: bool = False, eval_sample: int = 0) -> dict[str, Any]:
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
    print("| " + " | ".join(JOINT_HEADER) + " |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    table: list[list[str]] = []
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
        table.append(_row(lang, "shipped combiner", parts(shipped_fit, shipped_held)))
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
            table.append(_row(lang, set_name, parts(kept, kh)))
            fitted[f"{lang}:{set_name}"] = {
                "weights": {n: round(float(v), 4) for n, v in zip(names, w[:-1], strict=True)},
                "bias": round(float(w[-1]), 4), "cut": round(cut, 4),
                "cuts": {str(k): round(cut_for(score(w, x), y, k), 4)
                         for k in OPERATING_POINTS}}
    print()
    for key, value in fitted.items():
        print(key, json.dumps(value))
    return {"questions": len(records), "stopped_by_gate": len(stopped), "keep": keep,
            "joint": True, "header": JOINT_HEADER, "rows": table, "fitted": fitted}


# == state: the prompt-state head and its floors (no model) ===============================

STATE_DOC = """\
Fit the prompt-state head and its floors; report the decision out of fold.

Reads the lines of ``fit_decision.py scores`` (small corpora and ``--nomiracl``) that carry
the generator's prompt state (``state``, layer ``state_layer``). Fitted on **small-corpus
dev** and **NoMIRACL** minus the whole-loop eval sample (``--eval-sample``: the queries that
``grounded-rag eval nomiracl --limit N --sample balanced`` runs); 5 folds, by collection
(small corpora) and by query (NoMIRACL), as ``fit_decision.py fit --joint``:

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

    .venv/bin/python benchmarks/fit_decision.py state \\
        --scores eval-results/ds-nomiracl.jsonl,eval-results/ds-small.jsonl \\
        --eval-sample 30 [--write]

No model is run; a minute. ``--quick``: on the lines of ``scores --quick`` and two NoMIRACL
queries, scored into a temporary folder, with ``--eval-sample 0`` unless given (so that the
NoMIRACL lines train); ``--scores`` and ``--write`` are refused.
"""

DEFAULT_STATE_SCORES = "eval-results/ds-nomiracl.jsonl,eval-results/ds-small.jsonl"

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
        if len(set(y.tolist())) < 2:
            # One class only (only a tiny run meets it: every fold of a real one has both):
            # no logistic fit exists, and Newton's method would spend all its steps pushing
            # the bias out. The head says that class, at the clipped log-odds.
            self.w = np.zeros(x.shape[1] + 1)
            self.w[-1] = 12.0 if len(y) and y[0] == 1 else -12.0
            return
        self.w = fit_logistic((x - self.mu) / self.sd, y, l2=l2)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return score(self.w, (x - self.mu) / self.sd)


def _oof(x: np.ndarray, y: np.ndarray, folds: np.ndarray, l2: float) -> np.ndarray:
    out = np.zeros(len(y))
    for f in np.unique(folds):
        test = folds == f
        if test.all():
            continue  # one fold only (a tiny run): nothing to train on, scores stay 0
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
        if not m.any():
            continue  # no training row in this language (a tiny run): no combiner, keeps all
        sub = [r for r, keep_row in zip(rows, m, strict=True) if keep_row]
        xc = _combined(sub, oof[m])
        w, s = _fit_combiner(xc, y[m])
        combiners[lg] = {"w": w, "cut": midway_cut(s, y[m], keep),
                         "cuts": {p: midway_cut(s, y[m], k) for p, k in PRESET_KEEP.items()}}
    return head, combiners


def _decide(head: Head, combiners: dict[str, Any], rows: list[dict[str, Any]],
            x: np.ndarray) -> np.ndarray:
    hs = head(x)
    kept = np.ones(len(rows), dtype=bool)
    for i, r in enumerate(rows):
        c = combiners.get(r["asked"])
        if c is not None:
            kept[i] = _apply(c["w"], _combined([r], hs[i : i + 1]))[0] >= c["cut"]
    return kept


def state_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="fit_decision.py state", description=STATE_DOC,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scores", default=None,
                    help=f"lines of `scores` (comma-separated; default {DEFAULT_STATE_SCORES})")
    ap.add_argument("--eval-sample", type=int, default=None, metavar="N",
                    help="leave out the NoMIRACL queries of the whole-loop eval sample of N "
                         "(default 30; 0 under --quick, so its NoMIRACL lines train)")
    ap.add_argument("--l2", type=float, default=100.0)
    ap.add_argument("--keep", type=float, default=0.97)
    ap.add_argument("--features", default="prompt_state",
                    help="with --form free: the features weighed (of %(default)s)")
    ap.add_argument("--form", choices=["free", "shipped", "added"], default="free",
                    help="combiner form (see FORM)")
    ap.add_argument("--write", action="store_true",
                    help="save the head fitted on all training rows into the package")
    add_result_args(ap)
    return ap


def state_main(argv: list[str]) -> int:
    ap = state_parser()
    args = ap.parse_args(argv)
    if not args.quick:
        figures = run_state(args)
        write_result(args.json, f"{NAME} state", figures, quick=False)
        return 0
    if args.write:
        ap.error("--write saves the shipped head: not with --quick")
    if args.scores:
        ap.error("--quick scores its own input: leave out --scores")
    missing = _missing_data()
    if missing:
        write_result(args.json, f"{NAME} state", {"skipped": missing}, quick=True)
        return 0
    with tempfile.TemporaryDirectory(prefix="fit-decision-quick-") as tmp:
        args.scores, figures = quick_scores(Path(tmp))
        figures["state"] = run_state(args)
    write_result(args.json, f"{NAME} state", figures, quick=True)
    return 0


def run_state(args: argparse.Namespace) -> dict[str, Any]:
    """The prompt-state fit of ``args``; prints its table and floors, returns them."""
    if args.write and getattr(args, "quick", False):
        raise SystemExit("--write saves the shipped head: not with --quick")
    args.scores = args.scores or DEFAULT_STATE_SCORES
    if args.eval_sample is None:
        args.eval_sample = 0 if getattr(args, "quick", False) else 30
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
    layer = layers.pop()
    print(f"{len(fit_rows)} training rows ({int(y.sum())} answerable), {len(held)} held out; "
          f"layer {layer}, l2={args.l2:g}, keep {args.keep}")

    nested = np.zeros(len(fit_rows), dtype=bool)
    head_oof = np.zeros(len(fit_rows))
    for f in range(5):
        test = folds == f
        if not test.any() or test.all():
            continue  # an empty fold, or (a tiny run) no rows left to train on
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

    def cells(rows: list[dict[str, Any]], kept: np.ndarray, lg: str, split: str) -> list[str]:
        m = np.array([r["asked"] == lg and r["split"] == split for r in rows], dtype=bool)
        if not m.any():
            return ["-", "-"]
        yy = np.array([int(r["answerable"]) for r in rows])[m]
        return list(rates(kept[m], yy))

    header = ["language", "decision", *JOINT_HEADER[2:]]
    print("| " + " | ".join(header) + " |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    table: list[list[str]] = []
    for lg in ("ja", "en"):
        for name, kf, kh in (("shipped (generator + relevance)", shipped_fit, shipped_held),
                             ("+ prompt-state head", nested, kept_held),
                             ("shipped + prompt-state floor (both must keep)",
                              nested & shipped_fit,
                              kept_held & shipped_held)):
            table_row(table, lg, name, *cells(fit_rows, kf, lg, "dev"),
                      *cells(fit_rows, kf, lg, "nomiracl"), *cells(held, kh, lg, "heldout"),
                      *cells(held, kh, lg, "nomiracl-eval"))
    print("\nThe combiner of --form/--features, fitted on all training rows:")
    fitted = {}
    for lg, c in combiners.items():
        balanced = c["cuts"]["balanced"]
        fitted[lg] = {**_as_combiner(lg, c["w"]), "cut": round(balanced, 4),
                      "shifts": {p: round(v - balanced, 4) for p, v in c["cuts"].items()}}
        print(lg, json.dumps(fitted[lg]))
    oof = _oof(x, y, folds, args.l2)
    lang = np.array([r["asked"] for r in fit_rows])
    floors = {lg: {p: round(midway_cut(oof[lang == lg], y[lang == lg], k), 4)
                   for p, k in FLOOR_KEEP.items()} for lg in ("ja", "en")}
    print("\nPrompt-state floors (DEFAULT_DECISION.state_floors; the head's out-of-fold "
          f"log-odds that keep {FLOOR_KEEP} of the training answerable questions):")
    print(json.dumps(floors))
    if args.write:
        _write(head, fit_rows, args)
    return {"training_rows": len(fit_rows), "answerable": int(y.sum()), "held_out": len(held),
            "layer": layer, "l2": args.l2, "keep": args.keep, "form": args.form,
            "features": list(USED["names"]), "header": header, "rows": table,
            "combiners": fitted, "floors": floors, "wrote": bool(args.write)}


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
            "command": "benchmarks/fit_decision.py state --write"})
    judge.save(HEADS_DIR / f"{TASK}.npz")
    print(f"wrote {HEADS_DIR / TASK}.npz and .json")


# == --quick: every step at the smallest size ===============================================

def _missing_data(*, nomiracl_only: bool = False) -> list[str]:
    """The evaluation files the model steps read that are absent (each printed as a skip)."""
    need = [("nomiracl_ja_en", "nomiracl.dev.jsonl")]
    if not nomiracl_only:
        need += [("jsquad_ja", "questions.dev.jsonl"), ("jsquad_ja", "passages.jsonl"),
                 ("halueval_qa", "pairs.dev.jsonl")]
    return ["/".join(parts) for parts in need if eval_path(*parts) is None]


def quick_scores(tmp: Path) -> tuple[str, dict[str, Any]]:
    """The smallest input of ``fit`` and ``state``: ``scores --quick`` (one small-corpus dev
    question per language) and ``scores --nomiracl 2``, into ``tmp``; (paths, figures)."""
    small, nomiracl = tmp / "scores-small.jsonl", tmp / "scores-nomiracl.jsonl"
    figures = {}
    for label, argv in (("scores", [*QUICK_SCORES, "--out", str(small)]),
                        ("scores_nomiracl", ["--nomiracl", str(QUICK_NOMIRACL),
                                             "--out", str(nomiracl)])):
        print(f"\n== fit_decision.py scores {' '.join(argv)}", flush=True)
        args = scores_parser().parse_args(argv)
        args.quick = True
        figures[label] = run_scores(args)
    return f"{small},{nomiracl}", figures


def quick_gate_items(scores: str, tmp: Path) -> str:
    """Gate-mode item lines (what ``grounded-rag eval small-corpus --mode gate`` writes per
    question) made from the small-corpus lines of ``scores``, for ``fit_product``."""
    path = tmp / "gate-items.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for file in scores.split(","):
            for line in Path(file).read_text(encoding="utf-8").splitlines():
                r = json.loads(line) if line.strip() else {}
                if r.get("split") in ("dev", "heldout"):
                    fh.write(json.dumps({k: r[k] for k in (
                        "id", "split", "language", "answerable", "gate_score", "gate")}
                        | {"kept": True}) + "\n")
    return str(path)


def quick_main(argv: list[str]) -> int:
    """``--quick`` without a subcommand: every subcommand's quick path on one scored input."""
    ap = argparse.ArgumentParser(prog="fit_decision.py --quick",
                                 description="scores, fit, fit --joint and state, tiny")
    add_result_args(ap)
    args = ap.parse_args(argv)
    missing = _missing_data()
    if missing:
        write_result(args.json, NAME, {"skipped": missing}, quick=True)
        return 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fit-decision-quick-") as tmp:
        scores, figures = quick_scores(Path(tmp))
        gate_items = quick_gate_items(scores, Path(tmp))
        print("\n== fit_decision.py fit --held-out nomiracl", flush=True)
        figures["fit"] = run_fit(fit_parser().parse_args(
            ["--scores", scores, "--held-out", "nomiracl", "--gate-items", gate_items]))
        print("\n== fit_decision.py fit --joint --eval-sample 30", flush=True)
        figures["fit_joint"] = run_fit(fit_parser().parse_args(
            ["--scores", scores, "--joint", "--eval-sample", "30"]))
        print("\n== fit_decision.py state --eval-sample 0", flush=True)
        figures["state"] = run_state(state_parser().parse_args(
            ["--scores", scores, "--eval-sample", "0"]))
    figures["seconds"] = round(time.perf_counter() - started, 1)
    figures["lock_wait_seconds"] = LOCK_WAIT["seconds"]
    write_result(args.json, NAME, figures, quick=True)
    return 0


SUBCOMMANDS = {"scores": scores_main, "fit": fit_main, "state": state_main}


def main(argv: list[str] | None = None) -> int:
    return subcommand_main("fit_decision.py", __doc__, SUBCOMMANDS, quick_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
