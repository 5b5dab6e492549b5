"""Where the answerability pass changes the decision: its verdicts against retrieval relevance.

For Japanese questions that clear the pre-model gate, runs the answerability check alone (no
generation) and prints, per band of the best same-language relevance, how many answerable and
unanswerable questions it refuses. A band where it refuses (almost) only answerable questions
is one where the pass costs a model call per passage and loses answers for nothing.

Sets (dev splits, read from ../shared/eval; skipped when absent):
- small-corpus dev collections (``grounded-rag eval small-corpus``): JSQuAD/JaQuAD titles,
  answerable factoid questions and other-title / off-topic ones;
- NoMIRACL ja dev: each query over its own 10 passages (topically close by construction).

Usage::

    .venv/bin/python benchmarks/answerability_skip_check.py [--limit 60] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

BANDS = (0.0, 0.05, 0.2, 0.5, 0.8, 1.01)


def _band(value: float) -> str:
    for lo, hi in zip(BANDS, BANDS[1:], strict=False):
        if lo <= value < hi:
            return f"{lo:.2f}-{min(hi, 1.0):.2f}"
    return "?"


def small_corpus_questions(limit: int, split: str = "dev") -> list[dict[str, Any]]:
    from grounded_rag.evaluation._small_corpus import build_small_corpus
    from grounded_rag.evaluation._small_corpus_gate import default_retriever_factory
    from grounded_rag.evaluation._small_corpus_run import load_sources

    data = build_small_corpus(load_sources(), seed=0)
    ja = [i for i in data.part(split) if i.language == "ja"]
    rng = random.Random(0)
    answerable = [i for i in ja if i.answerable]
    rng.shuffle(answerable)
    chosen = answerable[:limit] + [i for i in ja if not i.answerable]
    factory = default_retriever_factory()
    built: dict[str, Any] = {}
    out = []
    for item in chosen:
        if item.collection not in built:
            built[item.collection] = factory(data.collections[item.collection].documents)
        evidence = list(built[item.collection].retrieve(item.question, 6))[:6]
        out.append({"set": "small-corpus", "question": item.question,
                    "answerable": item.answerable, "evidence": evidence})
    return out


def nomiracl_questions(limit: int) -> list[dict[str, Any]]:
    from grounded_rag.evaluation._answer import memory_retriever_factory
    from grounded_rag.evaluation._datasets import load_dataset

    items = [i for i in load_dataset("nomiracl").items if i.language == "ja"]
    rng = random.Random(0)
    rng.shuffle(items)
    yes = [i for i in items if i.answerable][:limit // 2]
    no = [i for i in items if not i.answerable][:limit // 2]
    factory = memory_retriever_factory()
    out = []
    for item in yes + no:
        evidence = list(factory(item.corpus or []).retrieve(item.question, 6))[:6]
        out.append({"set": "nomiracl", "question": item.question,
                    "answerable": bool(item.answerable), "evidence": evidence})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60,
                        help="answerable small-corpus questions, and NoMIRACL queries")
    parser.add_argument("--json", default="", help="write the per-question rows here")
    parser.add_argument("--split", choices=["dev", "heldout"], default="dev",
                        help="which small-corpus collections")
    parser.add_argument("--sets", default="small-corpus,nomiracl",
                        help="comma-separated: small-corpus, nomiracl")
    args = parser.parse_args(argv)

    from grounded_rag.evaluation._datasets import DatasetError
    from grounded_rag.models import resolve_answerability
    from grounded_rag.retrieval.calibration import clears_gate, is_same_language

    questions: list[dict[str, Any]] = []
    wanted = set(args.sets.split(","))
    loaders = [(name, fn) for name, fn in (
        ("small-corpus", lambda n: small_corpus_questions(n, args.split)),
        ("nomiracl", nomiracl_questions)) if name in wanted]
    for name, loader in loaders:
        try:
            questions += loader(args.limit)
        except (DatasetError, FileNotFoundError) as exc:
            print(f"skipped {name}: {exc}", file=sys.stderr)
    if not questions:
        print("no evaluation data found (../shared/eval)", file=sys.stderr)
        return 0
    judge = resolve_answerability("local")
    rows = []
    started = time.perf_counter()
    for n, q in enumerate(questions, 1):
        evidence = q["evidence"]
        if not clears_gate(evidence, "ja", None)[0]:
            continue  # refused before any model call: the pass would not run
        best = max((float(e["relevance"]) for e in evidence if is_same_language(e, "ja")),
                   default=0.0)
        result = judge.assess(q["question"], evidence[:3], language="ja")
        rows.append({"set": q["set"], "question": q["question"],
                     "answerable": q["answerable"], "best_relevance": best,
                     "refused": not result["answerable"], "score": result["score"]})
        if n % 10 == 0:
            print(f"  {n}/{len(questions)}  {time.perf_counter() - started:.0f}s",
                  file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started
    print(f"answerability check on {len(rows)} Japanese questions past the gate, "
          f"{elapsed:.0f} s ({elapsed / max(len(rows), 1):.1f} s each)")
    print()
    print("| set | best relevance | answerable: refused / n | unanswerable: refused / n |")
    print("|---|---|---|---|")
    for name in ("small-corpus", "nomiracl", "both"):
        mine = [r for r in rows if name in ("both", r["set"])]
        for band in sorted({_band(r["best_relevance"]) for r in mine}):
            cell = [r for r in mine if _band(r["best_relevance"]) == band]
            yes = [r for r in cell if r["answerable"]]
            no = [r for r in cell if not r["answerable"]]
            print(f"| {name} | {band} | {sum(r['refused'] for r in yes)} / {len(yes)} "
                  f"| {sum(r['refused'] for r in no)} / {len(no)} |")
    print()
    print("| threshold | answerable refused | unanswerable refused |")
    print("|---|---|---|")
    for t in (0.72, 0.6, 0.5, 0.4, 0.3):
        yes = [r for r in rows if r["answerable"]]
        no = [r for r in rows if not r["answerable"]]
        print(f"| {t} | {sum(r['score'] < t for r in yes)} / {len(yes)} "
              f"| {sum(r['score'] < t for r in no)} / {len(no)} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
