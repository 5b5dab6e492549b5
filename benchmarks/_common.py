"""Shared helpers for the benchmark scripts (not part of the package)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from grounded_rag.retrieval.vector_cache import CachedEmbeddings as _CachedEmbeddings

EVAL_DIR = Path(
    os.environ.get(
        "GROUNDED_RAG_EVAL_DIR", Path(__file__).resolve().parents[1] / ".." / "shared" / "eval"
    )
)
CACHE_DIR = Path(
    os.environ.get("GROUNDED_RAG_BENCH_CACHE", Path.home() / ".cache" / "grounded-rag-bench")
)


def eval_path(*parts: str) -> Path | None:
    """Path of an eval file, or None (with a message) when the shared data is absent."""
    p = EVAL_DIR.joinpath(*parts)
    if not p.exists():
        print(
            f"skip: {p} not found (evaluation data lives in ../shared/eval; "
            "set GROUNDED_RAG_EVAL_DIR)",
            file=sys.stderr,
        )
        return None
    return p


def knowledge_statements(knowledge: str) -> list[dict]:
    """A HaluEval-QA knowledge paragraph as verified statements quoting themselves.

    The paragraph runs two Wikipedia openings together at a full stop (or after a closing
    quote or bracket: "...of \"Janus\".)The Lady is..."); it is split there.
    """
    from grounded_rag.verification.evidence import RUN_TOGETHER, split_sentences

    text = RUN_TOGETHER.sub(" ", knowledge)
    return [{"text": s.text, "citations": [{"quote": s.text}]} for s in split_sentences(text)]


def read_jsonl(path: Path, limit: int | None = None) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
                if limit and len(rows) >= limit:
                    break
    return rows


class CachedEmbeddings(_CachedEmbeddings):
    """The package's on-disk embedding cache, kept in the benchmarks' cache folder."""

    def __init__(self, inner, name: str = "", *, cache_queries: bool = True) -> None:
        super().__init__(inner, name, cache_queries=cache_queries,
                         path=CACHE_DIR / "vectors.sqlite")


def add_result_args(parser) -> None:
    """The two flags every benchmark takes: ``--quick`` (the size CI runs) and ``--json``."""
    parser.add_argument("--quick", action="store_true",
                        help="the smallest run that still exercises every part (what CI runs)")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE",
                        help="also write the figures to FILE as JSON")


def write_result(path: Path | None, name: str, figures: dict, *, quick: bool = False) -> None:
    """Write ``figures`` with the run's context (commit, host load, cores) to ``path``.

    Does nothing when ``path`` is None. The figures must be JSON-serialisable.
    """
    if path is None:
        return
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False, timeout=10,
                                cwd=Path(__file__).resolve().parents[1]).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    record = {
        "benchmark": name,
        "quick": quick,
        "commit": commit,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load": [round(x, 2) for x in os.getloadavg()],
        "cores": os.cpu_count(),
        "figures": figures,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, ensure_ascii=False, indent=2, default=str) + "\n",
                    encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


# -- machine helpers: the load line, a CPU burner, the judge's counter --------------------

BURNER = ("import time\nend = time.monotonic() + {seconds}\n"
          "while time.monotonic() < end:\n    pass\n")


def uptime() -> str:
    """``uptime``'s line (the load averages), or the load averages alone."""
    try:
        out = subprocess.run(["uptime"], capture_output=True, text=True, check=False, timeout=5)
        if out.stdout.strip():
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    one, five, fifteen = os.getloadavg()
    return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f}"


def start_burner(seconds: float) -> subprocess.Popen[bytes]:
    """One busy-looping process, pinned to the last usable core, ending after ``seconds``."""
    proc = subprocess.Popen([sys.executable, "-c", BURNER.format(seconds=seconds)])
    try:
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(proc.pid, {cores[-1]})
    except (AttributeError, OSError):
        pass  # not pinnable here: it still holds one core's worth
    return proc


def stop_burner(proc: subprocess.Popen[bytes]) -> None:
    """Stop the burner (it would end by itself at its deadline anyway)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ScorerCounter:
    """Counts the local scorer's prompt evaluations (answerability check, verification), on
    its own context and after the generator's sources."""

    def __init__(self) -> None:
        self.calls = 0
        self.evaluated = 0
        self.reused = 0

    def install(self) -> None:
        # The judge scores on its own llama.cpp context (grounded_rag.local.probe).
        from grounded_rag.local.probe import EvalResult, HiddenStateReader

        original = HiddenStateReader.evaluate
        counter = self

        def evaluate(reader: Any, tokens: Any, **kwargs: Any) -> EvalResult:
            result = original(reader, tokens, **kwargs)
            counter.calls += 1
            counter.evaluated += result.evaluated
            counter.reused += result.reused
            return result

        HiddenStateReader.evaluate = evaluate  # type: ignore[method-assign]

        # Japanese claims are read after the generator's sources, on its own context.
        from grounded_rag.local.scorer import SupportScorer

        after = SupportScorer.read_after_sources

        def read_after_sources(scorer: Any, pairs: Any, **kwargs: Any) -> Any:
            stats = scorer.stats
            before = (stats.model_calls, stats.prompt_tokens, stats.reused_tokens)
            readings = after(scorer, pairs, **kwargs)
            counter.calls += stats.model_calls - before[0]
            counter.evaluated += stats.prompt_tokens - before[1]
            counter.reused += stats.reused_tokens - before[2]
            return readings

        SupportScorer.read_after_sources = read_after_sources  # type: ignore[method-assign]

    def snapshot(self) -> tuple[int, int, int]:
        return self.calls, self.evaluated, self.reused


# -- the model lock -----------------------------------------------------------------------

MODEL_LOCK = Path("/tmp/grag-model.lock")
_HELD: list[int] = []
LOCK_WAIT = {"seconds": 0.0}
"""Seconds this process waited for the lock (the quick runs report it beside their time)."""


def hold_model_lock() -> None:
    """Hold ``flock /tmp/grag-model.lock`` until the process ends (others share the cores).

    Not when a parent already holds it (``flock /tmp/grag-model.lock CMD``, or a suite run
    under it): a second lock on the file would wait on that one forever.
    """
    if _HELD:
        return
    import fcntl

    holder = _lock_holder_above()
    if holder:
        print(f"{MODEL_LOCK} is held by parent process {holder}: running under it",
              file=sys.stderr, flush=True)
        _HELD.append(-1)
        return
    fd = os.open(MODEL_LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"waiting for {MODEL_LOCK} (another model job holds it)", file=sys.stderr,
              flush=True)
        started = time.perf_counter()
        fcntl.flock(fd, fcntl.LOCK_EX)
        LOCK_WAIT["seconds"] = round(time.perf_counter() - started, 1)
        print(f"holding {MODEL_LOCK} after {LOCK_WAIT['seconds']} s", file=sys.stderr,
              flush=True)
    _HELD.append(fd)


def _lock_holder_above() -> int | None:
    """The pid of this process's parent (or theirs, up the tree) that holds the lock, from
    ``/proc/locks``; None when none does or ``/proc`` is not there to tell."""
    try:
        st = os.stat(MODEL_LOCK)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    holders = set()
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == key:  # not "->" waiters
            holders.add(int(parts[4]))
    pid = os.getppid()
    while pid > 1:
        if pid in holders:
            return pid
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            pid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
    return None


def subcommand_main(name: str, doc: str | None, subcommands: dict[str, Any], quick_main: Any,
                    argv: list[str] | None) -> int:
    """A script of subcommands: ``SUB ...``, or ``--quick`` for all of them at quick size."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in subcommands:
        return int(subcommands[argv[0]](argv[1:]))
    if "--quick" in argv and not any(a in ("-h", "--help") for a in argv):
        return int(quick_main(argv))
    print(doc)
    if argv[:1] in (["-h"], ["--help"]):
        return 0
    print(f"{name}: give a subcommand ({', '.join(subcommands)}) or --quick", file=sys.stderr)
    return 2


def skip_without_eval_data(json_path: Path | None, name: str, *, quick: bool) -> bool:
    """True (after a skip line and a JSON saying so) when the evaluation data is absent."""
    if EVAL_DIR.exists():
        return False
    print(f"skip: {EVAL_DIR} not found (evaluation data lives in ../shared/eval; "
          "set GROUNDED_RAG_EVAL_DIR)")
    write_result(json_path, name, {"skipped": str(EVAL_DIR)}, quick=quick)
    return True
