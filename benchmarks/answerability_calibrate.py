"""Measure the answerability probe on NoMIRACL dev: does it tell answerable from not?

For each query, the query's own 10 passages are indexed in memory (as the eval harness
does), the top passages are retrieved, and ``LocalAnswerabilityJudge`` scores them. Prints
AUROC per language for the probe and for retrieval relevance alone, and the abstention /
answer rates at the default thresholds and at the best threshold on this data.

Reads ``../shared/eval/`` (never copied into the repo). Usage:

    .venv/bin/python benchmarks/answerability_calibrate.py --per-class 10 --languages ja en
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from grounded_rag.evaluation._answer import memory_retriever_factory
from grounded_rag.evaluation._datasets import default_eval_dir
from grounded_rag.evaluation._metrics import auroc, best_threshold
from grounded_rag.local.answerability import LocalAnswerabilityJudge


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-class", type=int, default=10,
                        help="answerable and unanswerable queries per language")
    parser.add_argument("--languages", nargs="+", default=["ja", "en"])
    parser.add_argument("--passages", type=int, default=3, help="top passages scored")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="", help="write per-query scores to this JSON file")
    args = parser.parse_args()

    path = default_eval_dir() / "nomiracl_ja_en" / "nomiracl.dev.jsonl"
    if not path.exists():
        print(f"skipped: {path} not found (set GROUNDED_RAG_EVAL_DIR)", file=sys.stderr)
        return 0
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    judge = LocalAnswerabilityJudge(passages=args.passages)
    measure = LocalAnswerabilityJudge(passages=args.passages, scorer=judge.scorer,
                                      thresholds={"ja": 0.5, "en": 0.5})
    factory = memory_retriever_factory()
    records = []
    for lang in args.languages:
        pool = [r for r in rows if r.get("lang") == lang]
        random.Random(args.seed).shuffle(pool)
        yes = [r for r in pool if r["answerable"]][: args.per_class]
        no = [r for r in pool if not r["answerable"]][: args.per_class]
        for r in [x for pair in zip(yes, no, strict=False) for x in pair]:
            docs = [{"id": str(p.get("docid", k)), "title": p.get("title", ""),
                     "text": p.get("text", ""), "url": ""}
                    for k, p in enumerate(r["passages"])]
            evidence = factory(docs).retrieve(r["question"], 6)
            start = time.perf_counter()
            result = measure.assess(r["question"], evidence, language=lang)
            seconds = time.perf_counter() - start
            records.append({"lang": lang, "answerable": r["answerable"],
                            "probe": result["score"], "seconds": round(seconds, 2),
                            "relevance": max((e["relevance"] for e in evidence), default=0.0)})
            print(f"{lang} answerable={r['answerable']!s:5} probe={result['score']:.3f} "
                  f"relevance={records[-1]['relevance']:.3f} {seconds:.1f}s", flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(records, fh, indent=1)
    print()
    for lang in args.languages:
        rs = [r for r in records if r["lang"] == lang]
        if not rs:
            continue
        gold = [not r["answerable"] for r in rs]  # positive = must abstain
        threshold = judge.threshold_for(lang)
        if threshold is None:
            print(f"[{lang}] not checked by default (no threshold); scores measured with 0.5")
            threshold = 0.5
        abstain_ok = sum(1 for r in rs if not r["answerable"] and r["probe"] < threshold)
        answer_ok = sum(1 for r in rs if r["answerable"] and r["probe"] >= threshold)
        n_no = sum(gold)
        print(f"[{lang}] n={len(rs)}  AUROC probe {auroc(gold, [1 - r['probe'] for r in rs]):.3f}"
              f"  relevance {auroc(gold, [1 - r['relevance'] for r in rs]):.3f}")
        print(f"[{lang}] threshold {threshold}: abstains on {abstain_ok}/{n_no} unanswerable, "
              f"passes {answer_ok}/{len(rs) - n_no} answerable")
        best = best_threshold(gold, [1 - r["probe"] for r in rs])
        print(f"[{lang}] best on this data (in-sample): {best}")
        print(f"[{lang}] seconds per query: "
              f"{sum(r['seconds'] for r in rs) / len(rs):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
