"""``grounded-rag train-judge``: extract features, cross-validate, write the judge heads."""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_NO_DATA = 3


def register(sub: Any) -> None:
    """Add the ``train-judge`` subcommand."""
    parser = sub.add_parser(
        "train-judge",
        help="train the local judge heads (claims, answerability) from the dev sets",
        description=(
            "Reads the dev sets in ../shared/eval (and ../shared/train), runs the local model "
            "once per example to cache P(Yes) and hidden states (resumable; progress bar), "
            "then fits the heads with grouped k-fold cross-validation (no source text shared "
            "between folds), picks thresholds on the folds, and writes the heads with a "
            "report (per set and language: AUROC, balanced accuracy, 3-way accuracy, "
            "confusion). Exit codes: 0 done, 2 bad arguments, 3 no data or features."
        ),
    )
    parser.add_argument("--phase", choices=["all", "extract", "fit"], default="all",
                        help="extract features, fit heads, or both (default)")
    parser.add_argument("--sets", default=None,
                        help="comma-separated set names to extract (default: the whole plan)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="extract this share of each set's planned examples (default 1)")
    parser.add_argument("--task", choices=["all", "claim", "answerable"], default="all",
                        help="which head to fit (default both)")
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds")
    parser.add_argument("--search", choices=["small", "full"], default="small",
                        help="how many head shapes to compare on the folds")
    parser.add_argument("--cache", default=None,
                        help="feature cache root (default ~/.cache/grounded-rag/judge-features)")
    parser.add_argument("--threads", type=int, default=0,
                        help="llama.cpp threads for extraction (default: the thread policy)")
    parser.add_argument("--out", default="eval-results/judge",
                        help="where the report and the trained heads are written")
    parser.add_argument("--install", action="store_true",
                        help="also copy the heads into the package (grounded_rag/local/heads)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--json", action="store_true",
                        help="print the fitted heads' summary (per-set numbers) as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the requested phases."""
    from grounded_rag.training import _pipeline

    try:
        if args.phase in ("all", "extract"):
            _pipeline.extract_plan(
                sets=args.sets.split(",") if args.sets else None, scale=args.scale,
                cache_root=args.cache, threads=args.threads or None,
                progress=not args.no_progress,
            )
        if args.phase in ("all", "fit"):
            tasks = ("claim", "answerable") if args.task == "all" else (args.task,)
            summary = _pipeline.fit_heads(tasks=tasks, folds=args.folds, search=args.search,
                                          cache_root=args.cache, out=args.out,
                                          install=args.install)
            if args.json:
                import json

                print(json.dumps({task: {k: v for k, v in entry.items() if k != "search"}
                                  for task, entry in summary.items()},
                                 default=_pipeline._json, ensure_ascii=False))
    except FileNotFoundError as exc:
        print(f"train-judge: {exc}", file=sys.stderr)
        return EXIT_NO_DATA
    return 0
