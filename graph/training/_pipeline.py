"""The training command's two phases: extract the plan's features, fit and report the heads."""

from __future__ import annotations

import datetime as _dt
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grounded_rag.training._examples import ANSWERABLE, CLAIM, DEFAULT_PLAN, build_examples
from grounded_rag.training._extract import default_cache_root, extract, write_info
from grounded_rag.training._fit import FitConfig
from grounded_rag.training._report import write_report
from grounded_rag.training._train import (
    HeadConfig,
    Table,
    answerable_predictions,
    answerable_report,
    choose_answerable_thresholds,
    choose_claim_thresholds,
    claim_predictions,
    claim_report,
    decide_claims,
    fit_answerable_head,
    fit_claim_head,
    load_table,
    query_scores,
)

BASELINE_SUPPORT = 0.45
"""The plain scorer's support threshold (``LocalVerifier(judge='logit')``), for comparison."""

BASELINE_ANSWERABLE: dict[str, float | None] = {"ja": 0.97, "en": None}
"""The plain probe's thresholds (``LocalAnswerabilityJudge(judge='logit')``)."""


def feature_info(n_embd: int = 1536) -> dict[str, Any]:
    """What the feature cache of the running code is keyed on."""
    from grounded_rag.local.assets import DEFAULT_MODEL_SHA256
    from grounded_rag.local.features import prompt_fingerprint
    from grounded_rag.local.probe import DEFAULT_LAYERS

    return {"model_sha256": DEFAULT_MODEL_SHA256, "claim": prompt_fingerprint(CLAIM),
            "answerable": prompt_fingerprint(ANSWERABLE), "layers": list(DEFAULT_LAYERS),
            "n_embd": n_embd}


def feature_folder(cache_root: str | Path | None = None) -> Path:
    """The cache folder for the running code's prompts (a change of prompt = a new folder)."""
    info = feature_info()
    root = Path(cache_root) if cache_root else default_cache_root()
    return root / f"{info['claim'][:8]}-{info['answerable'][:8]}"


def _subset(examples: list[Any], share: float, seed: int = 0) -> list[Any]:
    """A seeded share of whole bags (a response's claims stay together)."""
    if share >= 1.0:
        return examples
    import random

    bags: dict[str, list[Any]] = {}
    for e in examples:
        bags.setdefault(e.bag, []).append(e)
    keys = sorted(bags)
    random.Random(seed).shuffle(keys)
    want = round(len(examples) * share)
    out: list[Any] = []
    for k in keys:
        if len(out) >= want:
            break
        out += bags[k]
    return out


def extract_plan(*, sets: Sequence[str] | None = None, scale: float = 1.0,
                 cache_root: str | Path | None = None, threads: int | None = None,
                 progress: bool = True) -> Path:
    """Extract (or resume) the features of the training plan; return the cache folder."""
    from grounded_rag.local.scorer import SupportScorer, reader_for

    scorer = SupportScorer()
    rt = scorer._rt()
    reader = reader_for(rt)
    if threads:
        reader.set_threads(threads)
    folder = feature_folder(cache_root)
    write_info(folder, feature_info(reader.n_embd))
    known = {p.name for p in DEFAULT_PLAN}
    unknown = sorted(set(sets or ()) - known)
    if unknown:
        raise FileNotFoundError(f"unknown set(s) {unknown}; the plan has {sorted(known)}")
    for plan in DEFAULT_PLAN:
        if sets and plan.name not in sets:
            continue
        examples = _subset(build_examples(plan), scale)
        extract(plan.name, examples, folder, scorer=scorer, progress=progress)
    return folder


def search_space(task: str, search: str) -> list[HeadConfig]:
    """Head shapes compared on the folds."""
    small = [
        HeadConfig(layers=(20,), fit=FitConfig(l2=1e-2)),
        HeadConfig(layers=(20,), fit=FitConfig(l2=1e-1)),
        HeadConfig(layers=(14, 20), fit=FitConfig(l2=1e-2)),
        HeadConfig(layers=(14, 20), fit=FitConfig(l2=1e-1)),
        HeadConfig(layers=(22,), fit=FitConfig(l2=1e-1)),
        HeadConfig(layers=(18,), fit=FitConfig(hidden=32, l2=1e-2)),
        # The ablation: margin and model-free features only, no hidden states.
        HeadConfig(layers=(), fit=FitConfig(l2=1e-3)),
    ]
    if search == "small":
        return small
    out = list(small)
    for layers in [(12,), (14,), (16,), (20,), (22,), (24,), (-1,), (16, 22), (12, 18, 24)]:
        for l2 in (1e-3, 1e-2, 1e-1):
            out.append(HeadConfig(layers=layers, fit=FitConfig(l2=l2)))
    for layers in [(14,), (16,), (20,), (14, 20)]:
        out.append(HeadConfig(layers=layers, fit=FitConfig(hidden=32, l2=1e-2)))
    out.append(HeadConfig(layers=(18,), fit=FitConfig(l2=1e-2), use_extras=False))
    out.append(HeadConfig(layers=(18,), fit=FitConfig(l2=1e-2), use_margin=False))
    out.append(HeadConfig(layers=(), fit=FitConfig(l2=1e-3)))  # margin and extras only
    seen: set[str] = set()
    unique = []
    for c in out:
        if c.label() not in seen:
            seen.add(c.label())
            unique.append(c)
    return unique


def _train_mean(report: dict[str, dict[str, Any]], key: str) -> float:
    vals = [e[key] for name, e in report.items()
            if not e.get("held_out") and "-" not in name and e.get(key) is not None]
    return float(np.mean(vals)) if vals else 0.0


def _claim_run(table: Table, config: HeadConfig) -> dict[str, Any]:
    preds = claim_predictions(table, config)
    t_sup, t_con = choose_claim_thresholds(table, preds["support"], preds["contradiction"])
    verdicts = decide_claims(table, preds["support"], preds["contradiction"], t_sup, t_con)
    report = claim_report(table, verdicts, preds["support"], preds["contradiction"])
    score = _train_mean(report, "balanced_accuracy") + _train_mean(report, "accuracy_3way")
    return {"config": config, "preds": preds, "thresholds": (t_sup, t_con),
            "verdicts": verdicts, "report": report, "score": score}


def _answerable_run(table: Table, config: HeadConfig) -> dict[str, Any]:
    p = answerable_predictions(table, config)
    thresholds = choose_answerable_thresholds(table, p)
    report = answerable_report(table, p, thresholds)
    q = [e["auroc"] for k, e in report.items() if k.endswith("-queries") and e.get("auroc")]
    passages = [e["auroc"] for k, e in report.items()
                if not k.endswith("-queries") and e.get("auroc") is not None]
    score = float(np.mean(q or [0])) + float(np.mean(passages or [0]))
    return {"config": config, "preds": p, "thresholds": thresholds, "report": report,
            "score": score}


def _baseline_claims(table: Table) -> dict[str, Any]:
    p_yes = np.array([float(r.get("p_yes") or 0.0) for r in table.meta])
    p_con = np.full(len(p_yes), np.nan)
    verdicts = decide_claims(table, p_yes, p_con, BASELINE_SUPPORT, 1.0, soft_rules=True)
    return {"report": claim_report(table, verdicts, p_yes, p_con)}


def _baseline_answerable(table: Table) -> dict[str, Any]:
    p_yes = np.array([float(r.get("p_yes") or 0.0) for r in table.meta])
    thresholds = {k: (v if v is not None else 0.0) for k, v in BASELINE_ANSWERABLE.items()}
    return {"report": answerable_report(table, p_yes, thresholds)}


def fit_heads(*, tasks: Sequence[str], folds: int = 5, search: str = "small",
              cache_root: str | Path | None = None, out: str | Path = "eval-results/judge",
              install: bool = False) -> dict[str, Any]:
    """Cross-validate head shapes, fit the best on all training rows, write heads + report."""
    folder = feature_folder(cache_root)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    info = json.loads((folder / "features.json").read_text(encoding="utf-8")) if (
        folder / "features.json").exists() else feature_info()
    held = [p.name for p in DEFAULT_PLAN if p.held_out]
    summary: dict[str, Any] = {}
    for task in tasks:
        names = [p.name for p in DEFAULT_PLAN if p.task == task]
        table = load_table(folder, names, task, k=folds, held_out=held)
        runner = _claim_run if task == CLAIM else _answerable_run
        runs = []
        for config in search_space(task, search):
            run = runner(table, config)
            print(f"{task}: {config.label():45s} score {run['score']:.4f}", file=sys.stderr,
                  flush=True)
            runs.append(run)
        best = max(runs, key=lambda r: r["score"])
        baseline = (_baseline_claims if task == CLAIM else _baseline_answerable)(table)
        counts: dict[str, int] = {}
        for row in table.meta:
            if row["held_out"]:
                continue
            counts[row["set"]] = counts.get(row["set"], 0) + 1
        meta = {
            "model_sha256": info["model_sha256"], "prompt_fingerprint": info[task],
            "trained_on": counts, "held_out_sets": sorted({r["set"] for r in table.meta
                                                           if r["held_out"]}),
            "folds": folds, "config": best["config"].label(),
            "created": _dt.date.today().isoformat(),
            "command": "grounded-rag train-judge",
        }
        if task == CLAIM:
            head = fit_claim_head(table, best["config"], best["thresholds"], meta)
        else:
            head = fit_answerable_head(table, best["config"], best["thresholds"], meta)
        head.save(out_dir / f"{task}.npz")
        if install:
            from grounded_rag.local.heads import HEADS_DIR

            HEADS_DIR.mkdir(parents=True, exist_ok=True)
            for suffix in (".npz", ".json"):
                shutil.copyfile(out_dir / f"{task}{suffix}", HEADS_DIR / f"{task}{suffix}")
        _write_oof(out_dir / f"oof_{task}.jsonl", table, best)
        if task == ANSWERABLE:
            _write_fold_heads(out_dir, table, best, meta)
        summary[task] = {
            "best": best["config"].label(), "thresholds": best["thresholds"],
            "report": best["report"], "baseline": baseline["report"],
            "search": [{"config": r["config"].label(), "score": round(r["score"], 4)}
                       for r in runs],
            "head_bytes": sum((out_dir / f"{task}{s}").stat().st_size
                              for s in (".npz", ".json")),
        }
        if task == ANSWERABLE:
            summary[task]["nomiracl_queries"] = {
                lang: {"n": len(g)} for lang, (g, _, _) in query_scores(table, best["preds"])
                .items()}
    (out_dir / "report.json").write_text(json.dumps(summary, indent=2, default=_json),
                                         encoding="utf-8")
    write_report(summary, out_dir / "report.md")
    print(f"wrote {out_dir / 'report.md'}", file=sys.stderr, flush=True)
    return summary


def _json(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(type(obj).__name__)


def _write_oof(path: Path, table: Table, run: dict[str, Any]) -> None:
    preds = run["preds"]
    with path.open("w", encoding="utf-8") as fh:
        for i, row in enumerate(table.meta):
            rec = {"id": row["id"], "set": row["set"], "fold": int(table.folds[i]),
                   "decided": row["decided"], "p_yes": row.get("p_yes")}
            if isinstance(preds, dict):
                rec.update({k: (None if np.isnan(v[i]) else round(float(v[i]), 5))
                            for k, v in preds.items()})
                rec["verdict"] = run["verdicts"][i]
            else:
                rec["answerable"] = None if np.isnan(preds[i]) else round(float(preds[i]), 5)
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def _write_fold_heads(out_dir: Path, table: Table, best: dict[str, Any],
                      meta: dict[str, Any]) -> None:
    """One answerability head per fold (fit without it, thresholds from the other folds)."""
    from grounded_rag.local.heads import installed_heads_digest
    from grounded_rag.training._train import _answerable_fit
    from grounded_rag.training.folds import write_fold_index

    config = best["config"]
    heads: dict[int, str] = {}
    for f in sorted(set(table.folds.tolist()) - {-1}):
        train = (table.folds != f) & (table.folds != -1)
        mean, std, clf = _answerable_fit(table, config, train)
        others = best["preds"].copy()
        others[table.folds == f] = np.nan
        thresholds = choose_answerable_thresholds(table, others)
        from grounded_rag.local.heads import JudgeHead

        head = JudgeHead(task=ANSWERABLE, layers=config.layers,
                         extras=table.extra_columns(config),
                         use_margin=config.use_margin, mean=mean, std=std,
                         classifiers={"answerable": clf}, thresholds=thresholds,
                         meta={**meta, "fold": f})
        name = f"answerable-fold{f}.npz"
        head.save(out_dir / name)
        heads[f] = name
    fold_of = {str(row["question"]).strip(): int(table.folds[i])
               for i, row in enumerate(table.meta)
               if row.get("question") and table.folds[i] != -1}
    write_fold_index(out_dir, heads, fold_of, "answerable.npz",
                     digest=installed_heads_digest() + "-" + config.label().replace(" ", "_"))
