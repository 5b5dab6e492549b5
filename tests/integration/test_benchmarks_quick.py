"""Every benchmark suite runs at its quick size and writes its figures (so none rots).

Each suite of ``benchmarks/run.py`` runs as CI would (``run.py --quick SUITE``), in its own
process; the test reads the JSON the suite wrote and checks it holds the run's context and
figures. Suites whose third-party data is absent skip inside the script and still write
their JSON (with what they skipped).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import run as bench_run  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def test_the_suite_lists_every_script_of_the_folder() -> None:
    scripts = {p.name for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_")}
    listed = {script for script, _, _ in bench_run.SUITES.values()} | {"run.py"}
    assert scripts == listed, scripts ^ listed


@pytest.mark.parametrize("suite", [s for s in bench_run.SUITES if s != "inventory"])
def test_suite_runs_at_its_quick_size(suite: str, tmp_path: Path) -> None:
    names = [suite, "inventory"] if suite == "first_corpus" else [suite]
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick",
                           "--out", str(tmp_path), *names], cwd=ROOT, capture_output=True,
                          text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    for name in names:
        record = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        assert record["quick"] is True
        assert record["commit"] and record["cores"] >= 1 and len(record["load"]) == 3
        assert record["figures"], record
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert [s["suite"] for s in summary] == names
    assert all(s["rc"] == 0 and s["json"] for s in summary)
