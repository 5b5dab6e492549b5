"""The benchmark suite: one entry point for every benchmark and fit, each writing JSON.

Usage::

    .venv/bin/python benchmarks/run.py --list                  # the suites and their commands
    .venv/bin/python benchmarks/run.py --quick                 # every suite at its quick size
    .venv/bin/python benchmarks/run.py latency screens         # some suites at full size
    .venv/bin/python benchmarks/run.py --quick --out DIR       # results in DIR (default
                                                               # bench-results/, git-ignored)

Each suite is one script of this folder (a subcommand where the script has several) run in
its own process, one after another (never two model jobs at once on a small machine), with
``--json DIR/<suite>.json``: the figures it printed, the commit, the host's load and cores.
``--quick`` passes ``--quick`` to every script: the smallest run that still takes the same
path end to end (what CI runs, so no benchmark rots; its figures are not for reporting).
``DIR/summary.json`` lists each suite's exit status and wall time; the run fails when a
suite fails. Suites that need data that is absent (``../shared/eval``) print a skip line
and succeed. The full sizes are what the docs' figures come from (each docs row gives the
exact command, usually a subcommand of one script below).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SUITES: dict[str, tuple[str, list[str], str]] = {
    # name: (script, arguments, what it measures)
    "retrieval": ("retrieval_bench.py", ["all"],
                  "recall per embedder, fusion weights, latency vs LangChain's "
                  "EnsembleRetriever, ingest and tokenizers"),
    "store": ("store_bench.py", ["all"],
              "the embedded store vs Postgres + a Chroma server: recall, latency, ingest"),
    "startup": ("latency_bench.py", ["startup"],
                "CLI and import start-up, first retrieve of a fresh process"),
    "fresh": ("latency_bench.py", ["fresh"],
              "a new process's `ask` broken down, a warm process's second, `ask --server`"),
    "kernel": ("latency_bench.py", ["kernel"], "llama.cpp's raw prompt and decoding speed"),
    "latency": ("latency_bench.py", ["answer"],
                "verified-answer latency and model work, idle and with one core busy"),
    "first_corpus": ("first_corpus.py", ["--out", "{out}/first_corpus.jsonl"],
                     "a user's first corpus: right / refused / wrong as verified, latency"),
    "inventory": ("screens.py", ["inventory", "{out}/first_corpus.jsonl"],
                  "the verifier's rule table over the first_corpus run"),
    "screens": ("screens.py", [],
                "each model-free check's false alarms and catches on third-party data"),
    "eval": ("run.py", ["eval"], "the evaluation harness on the dev sets (grounded-rag eval)"),
    "presets": ("presets_bench.py", [], "the operating presets side by side"),
    "load": ("load_test.py", [], "HTTP serving: throughput, latency, overhead, bad input"),
    "served": ("served_demo.py", [],
               "the demo through an OpenAI-compatible server next to the in-process model"),
    "fit_relevance": ("fit_relevance.py", [], "relevance scorer and abstain threshold fit"),
    "fit_decision": ("fit_decision.py", [], "answer-or-abstain combiner and prompt-state floors"),
    "fit_judges": ("fit_judges.py", [], "support scorer threshold and answerability probe"),
}

EVAL_RUNS: list[tuple[str, int, list[str]]] = [
    # dataset, full sample size, extra arguments (the README's evaluation figures)
    ("halueval_qa", 100, ["--batching-check"]),
    ("halueval_qa", 200, ["--seed", "3"]),
    ("jnli", 150, ["--seed", "1"]),
    ("jnli", 45, ["--sample", "balanced"]),
    ("jhars", 144, []),
    ("jsick", 40, ["--sample", "balanced"]),
    ("janli", 40, ["--sample", "balanced"]),
    ("halueval_summarization", 20, []),
    ("scifact", 40, ["--task", "verify", "--sample", "balanced"]),
    ("expertqa", 40, []),
    ("nomiracl", 30, ["--sample", "balanced"]),
    ("jsquad", 20, ["--retrieval", "hybrid"]),
    ("small-corpus", 40, ["--mode", "loop", "--split", "heldout"]),
]
QUICK_EVAL = ("halueval_qa", "jnli", "nomiracl", "small-corpus")
"""Under ``--quick``: one verify set per language, one answer set, the small corpora; 2 items."""


def run_eval(quick: bool, json_path: Path | None) -> int:
    """The harness runs of :data:`EVAL_RUNS` through ``grounded-rag eval``."""
    sys.path.insert(0, str(HERE))
    from _common import EVAL_DIR, write_result

    if not EVAL_DIR.exists():
        print(f"skip: {EVAL_DIR} not found (evaluation data lives in ../shared/eval)",
              file=sys.stderr)
        write_result(json_path, "eval", {"skipped": str(EVAL_DIR)}, quick=quick)
        return 0
    out = (json_path.parent if json_path else ROOT / "eval-results") / "eval"
    runs, seen = [], set()
    for name, size, extra in EVAL_RUNS:
        if quick and (name not in QUICK_EVAL or name in seen):
            continue
        seen.add(name)
        cmd = [sys.executable, "-m", "grounded_rag.cli", "eval", name, "--limit",
               str(2 if quick else size), "--out", str(out), *extra]
        if quick:
            cmd.append("--no-resume")
        started = time.perf_counter()
        print("$ " + " ".join(cmd[1:]), flush=True)
        rc = subprocess.run(cmd, cwd=ROOT, check=False).returncode
        runs.append({"dataset": name, "args": cmd[4:], "rc": rc,
                     "seconds": round(time.perf_counter() - started, 1)})
        if rc:
            break
    reports = {}
    for path in sorted(out.glob("*.json")):
        try:
            reports[path.stem] = json.loads(path.read_text(encoding="utf-8")).get("metrics")
        except (OSError, ValueError, AttributeError):
            continue
    write_result(json_path, "eval", {"runs": runs, "metrics": reports}, quick=quick)
    return max((r["rc"] for r in runs), default=0)


def command(name: str, out: Path, quick: bool) -> list[str]:
    script, args, _ = SUITES[name]
    argv = [a.format(out=out) for a in args]
    return [sys.executable, str(HERE / script), *argv, *(["--quick"] if quick else []),
            "--json", str(out / f"{name}.json")]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["eval"]:
        rest = argparse.ArgumentParser(prog="run.py eval")
        rest.add_argument("--quick", action="store_true")
        rest.add_argument("--json", type=Path)
        a = rest.parse_args(argv[1:])
        return run_eval(a.quick, a.json)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suites", nargs="*", help=f"suites to run (default all): {', '.join(SUITES)}")
    ap.add_argument("--quick", action="store_true", help="every suite at its quick size (CI)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench-results")
    ap.add_argument("--list", action="store_true", help="print the suites and their commands")
    ap.add_argument("--keep-going", action="store_true", help="run the rest after a failure")
    args = ap.parse_args(argv)
    unknown = [s for s in args.suites if s not in SUITES]
    if unknown:
        ap.error(f"unknown suite(s) {unknown}; choose from {', '.join(SUITES)}")
    names = args.suites or list(SUITES)
    if args.list:
        for name in names:
            print(f"{name:<14} {SUITES[name][2]}\n{'':<14} "
                  + " ".join(command(name, args.out, args.quick)[1:]).replace(str(ROOT) + "/", ""))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    summary = []
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for name in names:
        cmd = command(name, args.out, args.quick)
        print(f"\n=== {name}: {' '.join(cmd[1:])}", flush=True)
        started = time.perf_counter()
        rc = subprocess.run(cmd, cwd=ROOT, env=env, check=False).returncode
        seconds = round(time.perf_counter() - started, 1)
        wrote = (args.out / f"{name}.json").exists()
        summary.append({"suite": name, "rc": rc, "seconds": seconds, "json": wrote})
        print(f"=== {name}: exit {rc}, {seconds} s" + ("" if wrote else ", no JSON written"),
              flush=True)
        if rc and not args.keep_going:
            break
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print("\n" + "\n".join(f"{s['suite']:<14} exit {s['rc']}  {s['seconds']:>7} s"
                           for s in summary))
    return 1 if any(s["rc"] for s in summary) or len(summary) < len(names) else 0


if __name__ == "__main__":
    raise SystemExit(main())
