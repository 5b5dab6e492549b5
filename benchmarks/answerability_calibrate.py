"""Measure the answerability probe on NoMIRACL dev: does it tell answerable from not?

For each query, the query's own 10 passages are indexed in memory (as the eval harness
does), the top passages are retrieved, and the probe of ``LocalAnswerabilityJudge`` scores
each of the top ``--passages`` on its own. One scan gives every way of reading the scores:

- AUROC per language of the top-ranked passage's score, of the best score among the top 2
  and top N, and of retrieval relevance alone;
- what the graph would do before writing anything, per language: answer rate on answerable
  queries and abstention rate on unanswerable ones, with the retrieval gate
  (``abstain_threshold``) and the probe together, at the product's defaults and over a grid.

``--split`` keeps only one half of the queries (a fixed hash of the query id), so
thresholds can be chosen on one half and confirmed on the other.

Reads ``../shared/eval/`` (never copied into the repo). Usage:

    .venv/bin/python benchmarks/answerability_calibrate.py --per-class 0 --out /tmp/scan.jsonl
    .venv/bin/python benchmarks/answerability_calibrate.py --from /tmp/scan.jsonl --split 1
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from collections.abc import Callable
from typing import Any

from grounded_rag.evaluation._answer import memory_retriever_factory
from grounded_rag.evaluation._datasets import default_eval_dir
from grounded_rag.evaluation._metrics import auroc
from grounded_rag.local.answerability import DEFAULT_ANSWERABLE_THRESHOLDS, LocalAnswerabilityJudge
from grounded_rag.retrieval.calibration import DEFAULT_ABSTAIN_THRESHOLD

Record = dict[str, Any]


def half(query_id: str) -> int:
    """Which half (0 or 1) a query falls in: a stable hash of its id."""
    return zlib.crc32(query_id.encode("utf-8")) % 2


def scan(rows: list[dict[str, Any]], passages: int, out: str) -> list[Record]:
    """Retrieve and score every row; one JSON line per query appended to ``out``."""
    measure = LocalAnswerabilityJudge(passages=passages, thresholds={"ja": 0.0, "en": 0.0})
    factory = memory_retriever_factory()
    done: dict[str, Record] = {}
    if out:
        try:
            with open(out, encoding="utf-8") as fh:
                done = {r["id"]: r for r in map(json.loads, fh)}
        except FileNotFoundError:
            pass
    records: list[Record] = []
    sink = open(out, "a", encoding="utf-8") if out else None  # noqa: SIM115
    try:
        for n, r in enumerate(rows, 1):
            if r["id"] in done:
                records.append(done[r["id"]])
                continue
            docs = [
                {
                    "id": str(p.get("docid", k)),
                    "title": p.get("title", ""),
                    "text": p.get("text", ""),
                    "url": "",
                }
                for k, p in enumerate(r["passages"])
            ]
            evidence = factory(docs).retrieve(r["question"], 6)
            start = time.perf_counter()
            result = measure.assess(r["question"], evidence, language=r["lang"])
            by_id = {p["source_id"]: p["score"] for p in result["passages"]}
            record = {
                "id": r["id"],
                "lang": r["lang"],
                "answerable": r["answerable"],
                "relevance": max((e["relevance"] for e in evidence), default=0.0),
                "scores": [by_id[e["source_id"]] for e in evidence[:passages]],
                "seconds": round(time.perf_counter() - start, 2),
            }
            records.append(record)
            if sink:
                sink.write(json.dumps(record, ensure_ascii=False) + "\n")
                sink.flush()
            print(
                f"[{n}/{len(rows)}] {r['lang']} answerable={r['answerable']!s:5} "
                f"scores={record['scores']} relevance={record['relevance']:.3f}",
                file=sys.stderr,
                flush=True,
            )
    finally:
        if sink:
            sink.close()
    return records


def rates(
    records: list[Record], gate: float, read: Callable[[Record], float], threshold: float | None
) -> tuple[float, float]:
    """(answer rate on answerable, abstention rate on unanswerable) of gate + probe."""

    def answers(r: Record) -> bool:
        return r["relevance"] >= gate and (threshold is None or read(r) >= threshold)

    yes = [r for r in records if r["answerable"]]
    no = [r for r in records if not r["answerable"]]
    return (
        sum(map(answers, yes)) / max(1, len(yes)),
        sum(not answers(r) for r in no) / max(1, len(no)),
    )


def report(records: list[Record], languages: list[str]) -> None:
    """Print AUROC per reading and the gate + probe decision rates."""
    readings: dict[str, Callable[[Record], float]] = {
        "top 1": lambda r: r["scores"][0],
        "best of top 2": lambda r: max(r["scores"][:2]),
        f"best of top {max(len(r['scores']) for r in records)}": lambda r: max(r["scores"]),
    }
    for lang in languages:
        rs = [r for r in records if r["lang"] == lang and r["scores"]]
        if not rs:
            continue
        gold = [not r["answerable"] for r in rs]  # positive = must abstain
        n_yes = len(rs) - sum(gold)
        print(f"[{lang}] {n_yes} answerable, {sum(gold)} unanswerable queries")
        aucs = [
            f"{name} {auroc(gold, [-read(r) for r in rs]) or 0:.3f}"
            for name, read in readings.items()
        ]
        relevance_auc = auroc(gold, [-r["relevance"] for r in rs]) or 0
        print(f"[{lang}] AUROC: " + ", ".join(aucs) + f", relevance {relevance_auc:.3f}")
        default = DEFAULT_ANSWERABLE_THRESHOLDS.get(lang)
        for gate in (DEFAULT_ABSTAIN_THRESHOLD, 0.0):
            a, b = rates(rs, gate, readings["top 1"], None)
            print(f"[{lang}] gate {gate:.2f} alone: answers {a:.2f}, abstains {b:.2f}")
            for name, read in readings.items():
                cells = []
                for t in (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97):
                    a, b = rates(rs, gate, read, t)
                    mark = "*" if default is not None and abs(t - default) < 1e-9 else ""
                    cells.append(f"{t}{mark} {a:.2f}/{b:.2f}")
                print(f"[{lang}]   + probe {name}: " + "  ".join(cells))
        seconds = sum(r["seconds"] for r in rs) / len(rs)
        print(f"[{lang}] probe seconds per query (all scanned passages): {seconds:.1f}")
    print("cells: threshold answers/abstains; * = the product's default threshold")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--per-class",
        type=int,
        default=10,
        help="answerable and unanswerable queries per language (0 = all)",
    )
    parser.add_argument("--languages", nargs="+", default=["ja", "en"])
    parser.add_argument("--passages", type=int, default=3, help="top passages scored")
    parser.add_argument(
        "--split",
        type=int,
        choices=(0, 1),
        default=None,
        help="keep only this half of the queries (hash of the query id)",
    )
    parser.add_argument(
        "--out",
        default="",
        help="append per-query scores to this JSONL "
        "file (also a cache: queries already in it are not scored again)",
    )
    parser.add_argument(
        "--from",
        dest="source",
        default="",
        help="report on a JSONL file written by --out, scoring nothing",
    )
    args = parser.parse_args()

    if args.source:
        with open(args.source, encoding="utf-8") as fh:
            records = [json.loads(line) for line in fh]
    else:
        path = default_eval_dir() / "nomiracl_ja_en" / "nomiracl.dev.jsonl"
        if not path.exists():
            print(f"skipped: {path} not found (set GROUNDED_RAG_EVAL_DIR)", file=sys.stderr)
            return 0
        rows = [json.loads(line) for line in path.open(encoding="utf-8")]
        chosen = []
        for lang in args.languages:
            pool = [r for r in rows if r.get("lang") == lang]
            yes = [r for r in pool if r["answerable"]]
            no = [r for r in pool if not r["answerable"]]
            if args.per_class:
                yes, no = yes[: args.per_class], no[: args.per_class]
            chosen += [x for pair in zip(yes, no, strict=False) for x in pair]
            chosen += yes[len(no) :] + no[len(yes) :]
        records = scan(chosen, args.passages, args.out)
    if args.split is not None:
        records = [r for r in records if half(r["id"]) == args.split]
    report(records, args.languages)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
