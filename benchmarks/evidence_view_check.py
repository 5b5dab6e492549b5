"""Does the generator's evidence view still hold the answer? Small-corpus questions, no LLM.

For each answerable small-corpus question: retrieve from its own collection (the product's
hybrid retriever over the default embedder), build the view the generator reads
(``nodes.write.evidence_view`` at the ``evidence_tokens`` budget), and count the questions
whose gold answer string is in the retrieved passages and in the view. ``--no-scores``
builds the view without the embedder's sentence scores (``retrieval.sentence_scores``), as
before they existed. Gold strings are matched verbatim, so a cross-language question counts
through its Japanese gold answer.

    .venv/bin/python benchmarks/evidence_view_check.py --type cross-language
    .venv/bin/python benchmarks/evidence_view_check.py --type cross-language --no-scores
"""

from __future__ import annotations

import argparse
import json
from collections import Counter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev", choices=["dev", "heldout"])
    parser.add_argument("--type", default=None,
                        help="only this question type (factoid, yes-no, cross-language)")
    parser.add_argument("--budget", type=int, default=None,
                        help="evidence_tokens (default: the product default)")
    parser.add_argument("--no-scores", action="store_true",
                        help="word overlap only, as before the embedder's sentence scores")
    parser.add_argument("--show-lost", action="store_true")
    args = parser.parse_args()

    from grounded_rag.context import Context
    from grounded_rag.evaluation._small_corpus import build_small_corpus
    from grounded_rag.evaluation._small_corpus_gate import default_retriever_factory
    from grounded_rag.evaluation._small_corpus_run import load_sources
    from grounded_rag.lang import detect_language
    from grounded_rag.nodes.write import evidence_view
    from grounded_rag.retrieval.sentence_scores import annotate
    from grounded_rag.verification.handles import render_view

    settings = Context()
    budget = settings.evidence_tokens if args.budget is None else args.budget
    data = build_small_corpus(load_sources(), seed=0)
    items = [i for i in data.part(args.split) if i.answerable
             and (args.type is None or i.group == args.type)]
    if not items:
        raise SystemExit("no questions: is ../shared/eval there (GROUNDED_RAG_EVAL_DIR)?")
    factory = default_retriever_factory()
    retrievers: dict[str, object] = {}
    counts: dict[str, Counter[str]] = {}
    for item in items:
        if item.collection not in retrievers:
            retrievers[item.collection] = factory(data.collections[item.collection].documents)
        retriever = retrievers[item.collection]
        evidence = list(retriever.retrieve(item.question, settings.top_k))[:settings.top_k]
        if not args.no_scores:
            evidence = annotate(item.question, evidence, getattr(retriever, "embeddings", None),
                                detect_language(item.question), budget,
                                settings.abstain_threshold)
        text = "\n".join(e["text"] for e in evidence)
        view = render_view(evidence_view(item.question, evidence, budget), evidence,
                           header="[{source_id}] {title}")
        in_passages = any(a in text for a in item.answers)
        in_view = any(a in view for a in item.answers)
        c = counts.setdefault(f"{item.language}/{item.group}", Counter())
        c["questions"] += 1
        c["gold in passages"] += in_passages
        c["gold in view"] += in_view
        if args.show_lost and in_passages and not in_view:
            print("lost:", item.question[:80], item.answers[:3])
    print(json.dumps({"split": args.split, "budget": budget, "scores": not args.no_scores,
                      "counts": {k: dict(v) for k, v in counts.items()}},
                     ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
