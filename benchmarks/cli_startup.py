"""CLI start-up times: `grounded-rag --help`, `ask ''`, `import grounded_rag`, `python -c pass`.

Usage::

    .venv/bin/python benchmarks/cli_startup.py                # 10 runs each
    .venv/bin/python benchmarks/cli_startup.py --runs 3 --store .grounded-rag-demo

Each command runs once to warm the file cache, then ``--runs`` times; the script prints the
median, min and max wall time, ``uptime``'s load before and after, and Markdown rows for
docs/performance.md. With ``--store`` (a built store, e.g. after ``bash scripts/demo.sh``)
it also times one ``grounded-rag retrieve`` call. Targets: ``--help`` <= 0.5 s,
``ask ''`` <= 1 s, ``import grounded_rag`` <= 1 s on an idle 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"grounded-rag --help": 0.5, "grounded-rag ask ''": 1.0, "import grounded_rag": 1.0}


def load() -> str:
    """The load averages, as ``uptime`` prints them."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} CPUs)"


def timed(argv: list[str], runs: int) -> list[float]:
    """Wall times of ``runs`` runs of ``argv`` after one warm-up run."""
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "ANONYMIZED_TELEMETRY": "False"}
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                       cwd=ROOT, check=False)
        if i:
            times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs per command")
    parser.add_argument("--store", default=None, help="also time `grounded-rag retrieve`")
    args = parser.parse_args()

    python = sys.executable
    cli = str(Path(python).with_name("grounded-rag"))
    if not Path(cli).exists():
        print(f"error: {cli} not found; run `bash scripts/setup.sh` first", file=sys.stderr)
        return 3
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "import grounded_rag": [python, "-c", "import grounded_rag"],
        "grounded-rag --help": [cli, "--help"],
        "grounded-rag ask ''": [cli, "ask", ""],
    }
    if args.store:
        commands["grounded-rag retrieve (one query)"] = [
            cli, "retrieve", "How long does the battery last?", "--store", args.store, "--json"]

    before = load()
    print(f"load before: {before}")
    rows = []
    for label, argv in commands.items():
        times = timed(argv, args.runs)
        median = statistics.median(times)
        target = TARGETS.get(label)
        verdict = "" if target is None else (" (met)" if median <= target else " (NOT met)")
        print(f"{label:<36} median {median:6.3f} s  min {min(times):6.3f}  "
              f"max {max(times):6.3f}  n={len(times)}"
              f"{'' if target is None else f'  target <= {target} s{verdict}'}")
        rows.append((label, median, min(times), target))
    after = load()
    print(f"load after:  {after}")
    print("\nMarkdown rows for docs/performance.md:\n")
    print("| command | median | min | target |\n|---|---|---|---|")
    for label, median, fastest, target in rows:
        print(f"| `{label}` | {median:.3f} s | {fastest:.3f} s | "
              f"{'' if target is None else f'<= {target} s'} |")
    print(f"\n({args.runs} runs each after one warm-up; load {before} before, {after} after)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
