"""Retrieval benchmarks: recall per embedder, fusion weights, latency vs LangChain, ingest.

Usage (from the repository root; on a shared machine with one thread and the model lock)::

    GROUNDED_RAG_THREADS=1 flock /tmp/grag-model.lock \\
        python benchmarks/retrieval_bench.py warm              # embed every pool once (cached)
    python benchmarks/retrieval_bench.py recall               # BM25 / MiniLM / e5 side by side
    python benchmarks/retrieval_bench.py weights              # per-language fusion weights
    python benchmarks/retrieval_bench.py latency --sizes 10000 100000   # ours vs LangChain
    python benchmarks/retrieval_bench.py --threads 2 ingest --mb 5 --embedders minilm e5
    python benchmarks/retrieval_bench.py tokenizers           # sudachi vs fugashi, if installed
    python benchmarks/retrieval_bench.py all                  # all of the above, in that order

    # every part at its smallest size (what CI runs: ``benchmarks/run.py --quick``)
    flock /tmp/grag-model.lock python benchmarks/retrieval_bench.py all --quick --json FILE

Every sub-command takes ``--quick`` (each pool cut to its first 8 questions over at most 16
passages, gold passages kept; latency on a few hundred passages; ingest of a 10 kB file;
figures not for reporting) and ``--json FILE`` (the printed figures, the commit, the host's
load and cores, as JSON).

Recall data is read from ../shared/eval (never copied into the repository; absent, the
script prints a skip line and exits 0) at passage level (each passage is one chunk);
document and question vectors are cached per text under ``~/.cache/grounded-rag-bench``
(``$GROUNDED_RAG_BENCH_CACHE``), so only ``warm`` embeds.
The cross-language set ``xlang_en_ja.jsonl`` holds 50 English translations of JSQuAD dev
questions (see ``RETRIEVAL.md`` for how they were made).

Latency indexes real passages with their real e5 vectors (JSQuAD, JaQuAD, NoMIRACL,
SciFact: ~10k); the 100k index adds repeats of the non-JSQuAD passages (vector plus a
little noise) as distractors. Every query is embedded by the real e5 model inside the
timing (no query cache), on ``--threads`` threads (default 1).

The sub-commands' code (and the evaluation pools) live in ``_retrieval.py`` next to this
script.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _retrieval as rb  # noqa: E402
from _common import add_result_args, skip_without_eval_data, write_result  # noqa: E402

PARTS = ("warm", "recall", "weights", "latency", "ingest", "tokenizers")
"""What ``all`` runs, in this order (``warm`` first: the others then read the cache)."""

QUICK_LATENCY = ([300], rb.QUICK[0])
"""``--quick`` latency: one index of 300 passages, the quick JSQuAD pool's 8 questions."""
QUICK_INGEST_MB = 0.01
QUICK_TOKENIZER_PASSAGES = 200


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--threads", type=int, default=1, help="embedder threads (default 1)")
    sub = ap.add_subparsers(dest="what", required=True)
    parsers = {name: sub.add_parser(name, help=text) for name, text in (
        ("warm", "embed every pool once into the cache"),
        ("recall", "recall per pool: BM25, MiniLM, e5"),
        ("weights", "choose per-language fusion weights on dev folds"),
        ("latency", "ours vs LangChain EnsembleRetriever"),
        ("ingest", "ingest throughput and peak memory on a big file"),
        ("tokenizers", "sudachi vs fugashi: index time and BM25 recall"),
        ("all", "every part above, in that order, at its defaults"),
    )}
    warm, rec, wts, lat, ing, tok = (parsers[p] for p in PARTS)
    warm.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    warm.add_argument(
        "--sets", nargs="+", default=["jsquad", "jaquad", "nomiracl", "xlang", "scifact"]
    )
    warm.add_argument("--part", default="0/1", help="i/n: every n-th passage from the i-th")
    warm.add_argument("--jsquad-questions", type=int, default=1000)
    rec.add_argument(
        "--sets", nargs="+", default=["jsquad", "jaquad", "scifact", "nomiracl", "xlang"]
    )
    rec.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    rec.add_argument("--jsquad-questions", type=int, default=1000, help="first N (0 = all)")
    wts.add_argument("--embedder", default="e5")
    wts.add_argument("--which", nargs="+", default=["ja", "en", "cross_lexical"])
    lat.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    lat.add_argument("--queries", type=int, default=300)
    lat.add_argument("--fill", choices=["repeat", "synthetic"], default="repeat")
    ing.add_argument("--mb", type=float, default=5.0)
    ing.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    tok.add_argument("--n", type=int, default=1000)
    for p in parsers.values():
        add_result_args(p)
    return ap


def _defaults(ap: argparse.ArgumentParser, part: str) -> argparse.Namespace:
    """The sub-command's own defaults (what ``all`` runs each part with)."""
    return ap.parse_args([part])


def run_part(part: str, a: argparse.Namespace, threads: int, quick: bool) -> dict:
    """One sub-command with its arguments ``a``; returns its figures."""
    small = rb.QUICK if quick else None
    if part == "warm":
        return rb.bench_warm(a.embedders, a.sets, a.jsquad_questions or None, threads, a.part,
                             small)
    if part == "recall":
        return rb.bench_recall(a.sets, a.embedders, a.jsquad_questions or None, threads, small)
    if part == "weights":
        return rb.bench_weights(a.embedder, threads, a.which, small)
    if part == "latency":
        sizes, queries = QUICK_LATENCY if quick else (a.sizes, a.queries)
        return rb.bench_latency(sizes, queries, threads, a.fill, small)
    if part == "ingest":
        return rb.bench_ingest(min(a.mb, QUICK_INGEST_MB) if quick else a.mb, a.embedders,
                               threads)
    if part == "tokenizers":
        return rb.bench_tokenizers(min(a.n, rb.QUICK[0]) if quick else a.n,
                                   QUICK_TOKENIZER_PASSAGES if quick else None)
    raise ValueError(part)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_ingest_child":
        rb.ingest_child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    ap = _parser()
    args = ap.parse_args()
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    if skip_without_eval_data(args.json, "retrieval", quick=args.quick):
        return
    parts = PARTS if args.what == "all" else (args.what,)
    figures: dict = {"threads": args.threads, "python": sys.version.split()[0]}
    for part in parts:
        a = _defaults(ap, part) if args.what == "all" else args
        if len(parts) > 1:
            print(f"== {part}", flush=True)
        figures[part] = run_part(part, a, args.threads, args.quick)
    figures["load"] = rb.load_average()
    print(json.dumps({"python": figures["python"], "cpus": os.cpu_count(),
                      "load": figures["load"]}))
    write_result(args.json, "retrieval", figures, quick=args.quick)


if __name__ == "__main__":
    main()
