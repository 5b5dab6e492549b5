"""``grounded-rag eval``: run the evaluation harness from the command line."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from grounded_rag._console import EXIT_NOT_READY, EXIT_USAGE, CommandError, clean, print_json


def register(sub: Any) -> None:
    """Add the ``eval`` subcommand."""
    parser = sub.add_parser(
        "eval",
        help="measure verification / answer quality and cost on an evaluation set",
        description=(
            "Evaluate on a JSONL set from ../shared/eval (format detected from its fields): "
            "HaluEval QA / summarization, JHARS, JNLI, JSICK, JaNLI, SciFact, ExpertQA "
            "(--task verify) and JSQuAD, JaQuAD, SciFact, NoMIRACL (--task answer). FILE may "
            "be a path, a folder, or a short name (jnli, jhars, halueval_qa, nomiracl, ...). "
            "Per-item results are cached under OUT/cache, so a stopped run resumes. "
            "FILE small-corpus builds many small collections from the dev sets and measures "
            "the answer-or-abstain decision on them (--mode gate: retrieval and the "
            "pre-model gate, no LLM; --mode loop: the whole graph)."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="dataset file(s) or names")
    parser.add_argument("--task", choices=["verify", "answer"], default=None,
                        help="default: the set's own task")
    parser.add_argument("--limit", type=int, default=None,
                        help="evaluate a deterministic sample of N items")
    parser.add_argument("--sample", choices=["stratified", "balanced", "head"],
                        default="stratified", help="how --limit picks items (default stratified)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed")
    parser.add_argument("--model", default=None,
                        help="model spec for verifier and generator (local, openai:gpt-4.1-mini, "
                        "google_genai:gemini-2.5-flash); default: the product default")
    parser.add_argument("--retrieval", choices=["hybrid", "bm25", "vector"], default="hybrid",
                        help="answer task: in-memory retrieval mode (default hybrid)")
    parser.add_argument("--set", dest="settings", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="graph setting, e.g. --set abstain_threshold=0.4 or --set "
                        "preset=fast; the verify task uses verify_mode, verify_sample_rate, "
                        "verify_execution and verifier_model")
    parser.add_argument("--price", default=None, metavar="IN,OUT",
                        help="USD per million input,output tokens for cost per question")
    parser.add_argument("--batching-check", action="store_true",
                        help="also check model calls per verifier call as claims grow")
    parser.add_argument("--out", default="eval-results",
                        help="output folder for reports and the cache (default eval-results/)")
    parser.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True,
                        help="reuse cached per-item results (default: on)")
    parser.add_argument("--judge", choices=["head", "logit"], default=None,
                        help="local judges: trained heads (default with the bundled model) or "
                        "the plain Yes/No scorer")
    parser.add_argument("--answerability-heads", default=None, metavar="DIR",
                        help="answer task: per-fold answerability heads written by "
                        "`grounded-rag train-judge` (each query is judged by the head that "
                        "never saw it)")
    parser.add_argument("--mode", choices=["gate", "loop"], default="gate",
                        help="small-corpus: gate (retrieval + abstain gate, no LLM; default) "
                        "or loop (the whole graph per question)")
    parser.add_argument("--split", choices=["dev", "heldout", "both"], default="both",
                        help="small-corpus: which part to report (collections split by id "
                        "hash; thresholds are fitted on dev only); default both")
    parser.add_argument("--only", choices=["answerable", "unanswerable"], default=None,
                        help="small-corpus: sample only answerable (or unanswerable) questions")
    parser.add_argument("--json", action="store_true", help="print the report(s) as JSON")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(func=run)


def _parse_settings(pairs: list[str]) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects KEY=VALUE, got {pair!r}")
        settings[key.strip()] = value.strip()
    return settings


def _parse_price(text: str | None) -> tuple[float, float] | None:
    if not text:
        return None
    parts = text.split(",")
    if len(parts) != 2:
        raise ValueError(f"--price expects IN,OUT (USD per million tokens), got {text!r}")
    return float(parts[0]), float(parts[1])


def _summary_line(report: dict[str, Any]) -> str:
    from grounded_rag.evaluation._report import HEADLINE

    metrics = report["metrics"]
    shown = ", ".join(
        f"{k}={metrics[k]:.3f}" for k in HEADLINE[report["task"]]
        if isinstance(metrics.get(k), (int, float))
    )
    extra = ""
    if report["task"] == "verify" and metrics.get("sentence_level"):
        extra = f"; sentence-level f1={metrics['sentence_level'].get('f1')}"
    return (f"{report['dataset']} {report['task']} [{report['model']}] "
            f"n={report['n_evaluated']} ({report['n_cached']} cached, {report['n_errors']} "
            f"errors): {shown or 'no metrics'}{extra}")


def run(args: argparse.Namespace) -> int:
    """Run ``grounded-rag eval``."""
    from grounded_rag.evaluation import DatasetError, run_eval
    from grounded_rag.models import MissingExtraError

    try:
        settings = _parse_settings(args.settings)
        price = _parse_price(args.price)
    except ValueError as exc:
        raise CommandError(str(exc), code=EXIT_USAGE, kind="invalid_option") from None
    answerability = None
    if args.answerability_heads:
        from grounded_rag.training.folds import FoldedAnswerabilityJudge

        try:
            answerability = FoldedAnswerabilityJudge.from_dir(args.answerability_heads)
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc), code=EXIT_USAGE, kind="invalid_option") from None
    if "small-corpus" in args.files:
        if len(args.files) > 1:
            raise CommandError("small-corpus runs on its own; give it as the only FILE",
                               code=EXIT_USAGE, kind="invalid_option")
        return _run_small_corpus(args, settings)
    reports = []
    status = 0
    for name in args.files:
        try:
            report = run_eval(
                name, task=args.task, limit=args.limit, model=args.model,
                retrieval=args.retrieval, settings=settings, out_dir=args.out,
                resume=args.resume, sample=args.sample, seed=args.seed, price=price,
                check_batching=args.batching_check, progress=not args.no_progress,
                judge_mode=args.judge, answerability=answerability,
            )
        except MissingExtraError as exc:
            print(f"skipped {clean(name)}: {clean(exc)}", file=sys.stderr)
            status = max(status, EXIT_NOT_READY)
            continue
        except (DatasetError, ValueError) as exc:
            print(f"skipped {clean(name)}: {clean(exc)}", file=sys.stderr)
            status = max(status, EXIT_USAGE)
            continue
        reports.append(report)
        if not args.json:
            print(clean(_summary_line(report)))
            files = report.get("files", {})
            if files:
                print(f"  report: {clean(files.get('markdown'))}  "
                      f"chart: {clean(files.get('chart'))}")
            for target in report.get("targets", []):
                mark = {True: "met", False: "NOT met", None: "n/a"}[target["met"]]
                print(f"  target {target['label']} {target['goal']}: {target['value']} ({mark})")
    if args.json:
        payload: Any = reports[0] if len(reports) == 1 else reports
        print_json(payload)
    return status


def _run_small_corpus(args: argparse.Namespace, settings: dict[str, Any]) -> int:
    from grounded_rag.evaluation import DatasetError
    from grounded_rag.evaluation._small_corpus_run import run_small_corpus
    from grounded_rag.models import MissingExtraError

    try:
        report = run_small_corpus(
            mode=args.mode, split=args.split, limit=args.limit, seed=args.seed,
            settings=settings, model=args.model, out_dir=args.out, resume=args.resume,
            progress=not args.no_progress, only=args.only)
    except MissingExtraError as exc:
        print(f"skipped small-corpus: {clean(exc)}", file=sys.stderr)
        return EXIT_NOT_READY
    except (DatasetError, ValueError) as exc:
        print(f"skipped small-corpus: {clean(exc)}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print_json({k: v for k, v in report.items() if k != "markdown"})
        return 0
    print(clean(report["markdown"]))
    files = report.get("files", {})
    if files:
        print(f"report: {clean(files['markdown'])}  items: {clean(files['items'])}")
    print(f"{report['mode']} mode: {report['duration_s']} s")
    return 0
