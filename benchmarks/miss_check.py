"""Where the small-corpus loop's misses come from (no model; the embedder only; a minute).

Reads the items files of ``grounded-rag eval small-corpus --mode loop`` runs and sorts the
answerable questions answered without the expected fact:

- **lost**: a draft held the fact; a check or a revision lost it;
- **no draft**: the generator declined (or wrote nothing usable);
- **never drafted**: no draft held it. For those that are not yes/no questions, it rebuilds
  the sources block the generator was shown (same retrieval, sentence selection and
  rendering as the write node, default settings) and tells whether the expected fact was in
  it: the generator was shown the answer and wrote something else.

    .venv/bin/python benchmarks/miss_check.py DIR/small-corpus/loop-dev-*.items.jsonl [...]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from grounded_rag.context import Context
from grounded_rag.evaluation._answer import contains_answer
from grounded_rag.evaluation._small_corpus import build_small_corpus
from grounded_rag.evaluation._small_corpus_gate import default_retriever_factory
from grounded_rag.evaluation._small_corpus_loop import fact_drafted_lost
from grounded_rag.evaluation._small_corpus_run import load_sources
from grounded_rag.lang import detect_language
from grounded_rag.nodes.write import evidence_view
from grounded_rag.prompts import generate as generate_prompts
from grounded_rag.retrieval.sentence_scores import annotate
from grounded_rag.verification.handles import render_view


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("items", nargs="+", help="loop-mode items files")
    ap.add_argument("--show", action="store_true", help="print each miss")
    args = ap.parse_args()
    data = build_small_corpus(load_sources(), seed=0)
    items = {i.id: i for part in ("dev", "heldout") for i in data.part(part)}
    factory, settings = default_retriever_factory(), Context()
    counts: Counter[str] = Counter()
    total = 0
    for path in args.items:
        with open(path, encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle]
        for r in records:
            if not r.get("answerable"):
                continue
            total += 1
            if r.get("answer_match"):
                continue
            kind = ("lost" if fact_drafted_lost(r)
                    else "no draft" if not r.get("drafts") else "never drafted")
            counts[kind] += 1
            shown = None
            item = items.get(r["id"])
            golds = [g for g in (item.answers if item else []) if g.lower() not in ("yes", "no")]
            if kind == "never drafted" and item is not None and golds:
                retriever = factory(data.collections[item.collection].documents)
                evidence = list(retriever.retrieve(item.question, settings.top_k))
                evidence = annotate(item.question, evidence[: settings.top_k],
                                    getattr(retriever, "embeddings", None),
                                    detect_language(item.question), settings.evidence_tokens,
                                    settings.abstain_threshold)
                view = evidence_view(item.question, evidence, settings.evidence_tokens)
                shown = contains_answer(
                    render_view(view, evidence, header=generate_prompts.SOURCE_HEADER), golds)
                counts["never drafted, not yes/no"] += 1
                counts["never drafted, fact shown"] += shown
            if args.show:
                print(f"{kind:14s} shown={shown} {r.get('question', '')[:70]} | {golds[:2]}")
    print(f"answerable questions: {total}; without the fact: "
          f"{counts['lost'] + counts['no draft'] + counts['never drafted']}")
    for key in ("lost", "no draft", "never drafted", "never drafted, not yes/no",
                "never drafted, fact shown"):
        print(f"  {key}: {counts[key]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
