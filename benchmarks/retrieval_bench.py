"""Retrieval benchmarks: recall per embedder, fusion weights, latency vs LangChain, ingest.

Usage (from the repository root; on a shared machine with one thread and the model lock)::

    GROUNDED_RAG_THREADS=1 flock /tmp/grag-model.lock \\
        python benchmarks/retrieval_bench.py warm              # embed every pool once (cached)
    python benchmarks/retrieval_bench.py recall               # BM25 / MiniLM / e5 side by side
    python benchmarks/retrieval_bench.py weights              # per-language fusion weights
    python benchmarks/retrieval_bench.py latency --sizes 10000 100000   # ours vs LangChain
    python benchmarks/retrieval_bench.py ingest --mb 5 --embedders minilm e5 --threads 2
    python benchmarks/retrieval_bench.py tokenizers           # sudachi vs fugashi, if installed

Recall data is read from ../shared/eval (never copied into the repository) at passage
level (each passage is one chunk); document and question vectors are cached per text under
``~/.cache/grounded-rag-bench`` (``$GROUNDED_RAG_BENCH_CACHE``), so only ``warm`` embeds.
The cross-language set ``xlang_en_ja.jsonl`` holds 50 English translations of JSQuAD dev
questions (see ``RETRIEVAL.md`` for how they were made).

Latency indexes real passages with their real e5 vectors (JSQuAD, JaQuAD, NoMIRACL,
SciFact: ~10k); the 100k index adds repeats of the non-JSQuAD passages (vector plus a
little noise) as distractors. Every query is embedded by the real e5 model inside the
timing (no query cache), on ``--threads`` threads (default 1).

The sub-commands live next to this script: warm, recall and weights in
``_retrieval_recall.py``, latency in ``_retrieval_latency.py``, ingest and tokenizers in
``_retrieval_indexing.py``; ``_pools.py`` reads the evaluation pools.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _retrieval_common import load_average  # noqa: E402
from _retrieval_indexing import bench_ingest, bench_tokenizers, ingest_child  # noqa: E402
from _retrieval_latency import bench_latency  # noqa: E402
from _retrieval_recall import bench_recall, bench_warm, bench_weights  # noqa: E402


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_ingest_child":
        ingest_child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--threads", type=int, default=1, help="embedder threads (default 1)")
    sub = ap.add_subparsers(dest="what", required=True)
    warm = sub.add_parser("warm", help="embed every pool once into the cache")
    warm.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    warm.add_argument(
        "--sets", nargs="+", default=["jsquad", "jaquad", "nomiracl", "xlang", "scifact"]
    )
    warm.add_argument("--part", default="0/1", help="i/n: every n-th passage from the i-th")
    warm.add_argument("--jsquad-questions", type=int, default=1000)
    rec = sub.add_parser("recall", help="recall per pool: BM25, MiniLM, e5")
    rec.add_argument(
        "--sets", nargs="+", default=["jsquad", "jaquad", "scifact", "nomiracl", "xlang"]
    )
    rec.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    rec.add_argument("--jsquad-questions", type=int, default=1000, help="first N (0 = all)")
    wts = sub.add_parser("weights", help="choose per-language fusion weights on dev folds")
    wts.add_argument("--embedder", default="e5")
    wts.add_argument("--which", nargs="+", default=["ja", "en", "cross_lexical"])
    lat = sub.add_parser("latency", help="ours vs LangChain EnsembleRetriever")
    lat.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    lat.add_argument("--queries", type=int, default=300)
    lat.add_argument("--fill", choices=["repeat", "synthetic"], default="repeat")
    ing = sub.add_parser("ingest", help="ingest throughput and peak memory on a big file")
    ing.add_argument("--mb", type=float, default=5.0)
    ing.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    sub.add_parser("tokenizers").add_argument("--n", type=int, default=1000)
    args = ap.parse_args()
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    if args.what == "warm":
        bench_warm(
            args.embedders, args.sets, args.jsquad_questions or None, args.threads, args.part
        )
    elif args.what == "recall":
        bench_recall(args.sets, args.embedders, args.jsquad_questions or None, args.threads)
    elif args.what == "weights":
        bench_weights(args.embedder, args.threads, args.which)
    elif args.what == "latency":
        bench_latency(args.sizes, args.queries, args.threads, args.fill)
    elif args.what == "ingest":
        bench_ingest(args.mb, args.embedders, args.threads)
    elif args.what == "tokenizers":
        bench_tokenizers(args.n)
    print(json.dumps({"python": sys.version.split()[0], "cpus": os.cpu_count(),
                      "load": load_average()}))


if __name__ == "__main__":
    main()
