"""Stage scores of the answer-or-abstain decision, per small-corpus question past the gate.

For every question that clears the pre-model gate on its own collection (the gate-mode
retrieval of ``grounded-rag eval small-corpus``), one JSON line with what each stage knows
before the answer is written:

- ``relevance``: the best evidence relevance (and the gate it cleared);
- ``answerability``: the shipped answerability head's best passage score (Japanese
  questions only, as in the graph; ``--english-answerability`` scores English ones too);
- ``generator``: the generator's log-odds of ``"answerable": true`` over ``false`` at that
  point of its JSON reply, on the exact first-draft prompt of the graph (prompt plus a few
  tokens; no answer is written).

These lines are what ``benchmarks/decision_fit.py`` fits and cross-validates the combiner
on. ``--nomiracl N`` scores N NoMIRACL dev queries instead (balanced over language and
answerable; each query's own ten passages are its corpus; split ``nomiracl``): their
no-answer queries come with on-topic passages, the hard negatives that the small-corpus
collections lack. Unanswerable questions that clear the gate are few, so all of them are
kept; answerable ones are sampled per (split, language, type).

    .venv/bin/python benchmarks/decision_scores.py \
        [--per-group 14] [--out eval-results/decision-scores.jsonl] [--nomiracl N]

Resumable: ids already in ``--out`` are skipped. Model work: about one answerability pass
(three short prompts; none with ``--no-answerability``) and one generator prompt per
question. The generator's prompt state at ``--state-layer`` is read on that same prompt
evaluation (``grounded_rag.local.prompt_state``): ``prompt_state_fit.py`` fits its head.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-group", type=int, default=14,
                    help="answerable questions per (split, language, type)")
    ap.add_argument("--out", default="eval-results/decision-scores.jsonl")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--splits", default="dev,heldout")
    ap.add_argument("--nomiracl", type=int, default=0, metavar="N",
                    help="score N NoMIRACL dev queries (balanced) instead of small corpora")
    ap.add_argument("--english-answerability", action="store_true",
                    help="also score English questions with the answerability head")
    ap.add_argument("--no-answerability", action="store_true",
                    help="skip the answerability head (4-7 s a question): recorded as null")
    ap.add_argument("--state-layer", type=int, default=16, metavar="L",
                    help="record the generator's prompt state at layer L (float16, base64; "
                         "the product's tap on the generator context; -2: none)")
    args = ap.parse_args()

    from grounded_rag.context import apply_preset, validate_settings
    from grounded_rag.lang import detect_language
    from grounded_rag.local.answerability import LocalAnswerabilityJudge
    from grounded_rag.local.chat import turn_end
    from grounded_rag.local.decoding import Choice, complete, grammar_for
    from grounded_rag.local.runtime import get_runtime, render_chat
    from grounded_rag.schemas import CitedAnswer

    settings = apply_preset(validate_settings({}))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        done = {json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()
                if line.strip()}
    if args.nomiracl:
        todo = _nomiracl_todo(args.nomiracl, args.seed, settings)
    else:
        todo = _small_corpus_todo(args, settings)
    judge = LocalAnswerabilityJudge(judge="head", thresholds={
                                        "ja": 0.0, "en": 0.0 if args.english_answerability
                                        else None},
                                    passages=settings.answerability_passages)
    rt = get_runtime(None)
    from grounded_rag.local.prompt_state import head_score, state_head, tap_for

    head = state_head()
    schema = {"type": "json_object", "schema": CitedAnswer.model_json_schema()}
    grammar = grammar_for(schema)
    print(f"decision scores: {len(todo)} questions past the gate "
          f"({sum(1 for t in todo if not t[0]['answerable'])} unanswerable); "
          f"{len(done)} already in {out}", file=sys.stderr, flush=True)
    with out.open("a", encoding="utf-8") as handle:
        for n, (meta, question, evidence, gate) in enumerate(todo, 1):
            if meta["id"] in done:
                continue
            t0 = time.perf_counter()
            lang = detect_language(question)
            ans = ({"passages": []} if args.no_answerability
                   else judge.assess(question, evidence, language=lang))
            t1 = time.perf_counter()
            chat = first_draft_chat(question, evidence, lang, settings.evidence_tokens)
            hidden = None
            with rt.lock:
                tokens = render_chat(rt, chat)
                if args.state_layer != -2:  # read while the prompt is evaluated anyway
                    hidden = tap_for(rt, args.state_layer).evaluate(tokens)
                result = complete(rt, tokens, max_tokens=8, grammar=grammar,
                                  stop=[turn_end(rt)],
                                  choices=[Choice("answerable", '"answerable":')])
            t2 = time.perf_counter()
            record = {
                **meta, "asked": lang,
                "relevance": gate["best_relevance"], "gate_score": gate["gate_score"],
                "gate": gate["gate"], "gold_rank": gate.get("gold_rank"),
                "answerability": (round(float(ans["score"]), 4) if ans["passages"]
                                  else None),
                # per passage, in retrieval order (the best of the first k is a variant)
                "answerability_passages": [round(float(next(
                    s["score"] for s in ans["passages"] if s["source_id"] == e["source_id"])), 4)
                    for e in evidence[: len(ans["passages"])]] if ans["passages"] else None,
                "generator": result.choices.get("answerable"),
                "prompt_tokens": len(tokens),
                **({"state_layer": args.state_layer, "state": base64.b64encode(
                    hidden.astype(np.float16).tobytes()).decode("ascii")}
                   if hidden is not None else {}),
                **({"prompt_state": round(head_score(head, hidden, lang), 4)}
                   if hidden is not None and head is not None
                   and head.layers[0] == args.state_layer else {}),
                "answerability_s": round(t1 - t0, 2), "generator_s": round(t2 - t1, 2),
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            handle.flush()
            print(f"  {n}/{len(todo)} {meta['id']} {meta['language']}/{meta['type']} "
                  f"ans={record['answerability']} gen={record['generator']} "
                  f"({t2 - t0:.1f} s)", file=sys.stderr, flush=True)


def first_draft_chat(question: str, evidence: list[Any], language: str,
                     evidence_tokens: int) -> list[dict[str, str]]:
    """The graph's first-draft prompt for ``question`` over ``evidence``, as chat messages."""
    from grounded_rag.nodes.write import answer_messages, evidence_view
    from grounded_rag.prompts import generate as generate_prompts
    from grounded_rag.verification.handles import render_view

    view = evidence_view(question, evidence, evidence_tokens)
    sources = render_view(view, evidence, header=generate_prompts.SOURCE_HEADER)
    messages = answer_messages(question, sources, language)
    return [{"role": "system", "content": messages[0].content},
            {"role": "user", "content": messages[1].content}]


Todo = list[tuple[dict[str, Any], str, list[Any], dict[str, Any]]]
"""(record fields, question, evidence, gate fields) per question to score."""


def _small_corpus_todo(args: argparse.Namespace, settings: Any) -> Todo:
    """Small-corpus questions past the gate, sampled per (split, language, type)."""
    from grounded_rag.evaluation._small_corpus import build_small_corpus
    from grounded_rag.evaluation._small_corpus_gate import default_retriever_factory, gate_record
    from grounded_rag.evaluation._small_corpus_run import load_sources

    data = build_small_corpus(load_sources(), seed=args.seed)
    factory = default_retriever_factory()
    rng = random.Random(args.seed)
    chosen = []
    for split in args.splits.split(","):
        groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for item in data.part(split):
            groups[(item.language, item.group)].append(item)
        for key in sorted(groups):
            pool = groups[key]
            if pool[0].answerable:
                rng.shuffle(pool)
                pool = pool[: args.per_group * 3]  # gate below drops a few
            chosen.extend(pool)
    by_collection: dict[str, list[Any]] = defaultdict(list)
    for item in chosen:
        by_collection[item.collection].append(item)
    kept: dict[tuple[str, str, str], int] = defaultdict(int)
    todo: Todo = []
    for cid in sorted(by_collection):
        retriever = factory(data.collections[cid].documents)
        for item in by_collection[cid]:
            evidence = list(retriever.retrieve(item.question, settings.top_k))[: settings.top_k]
            gate = gate_record(item, evidence, settings.abstain_threshold, 0)
            if not gate["kept"]:
                continue
            key = (item.split, item.language, item.group)
            if item.answerable and kept[key] >= args.per_group:
                continue
            kept[key] += 1
            meta = {"id": item.id, "collection": item.collection, "split": item.split,
                    "language": item.language, "type": item.group, "qtype": item.qtype,
                    "answerable": item.answerable}
            todo.append((meta, item.question, evidence, gate))
    # Unanswerable ones first (the rarer class), then the answerable ones round-robin over
    # the groups, so a run stopped early still has every group.
    seen: dict[tuple[str, str, str], int] = defaultdict(int)
    order = []
    for meta, *_ in todo:
        group = (meta["split"], meta["language"], meta["type"])
        order.append((meta["answerable"], seen[group]))
        seen[group] += 1
    return [t for _, t in sorted(zip(order, todo, strict=True), key=lambda p: p[0])]


def _nomiracl_todo(limit: int, seed: int, settings: Any) -> Todo:
    """``limit`` NoMIRACL dev queries (balanced), each retrieved from its own ten passages.

    Every query is kept, past the gate or not (``gate.kept`` says which), since the graph's
    gate decides before the stages scored here; the fit reads only those it kept.
    """
    from grounded_rag.evaluation._answer import memory_retriever_factory
    from grounded_rag.evaluation._datasets import load_dataset, sample_items
    from grounded_rag.evaluation._small_corpus_gate import gate_fields
    from grounded_rag.lang import detect_language

    data = load_dataset("nomiracl")
    items = sample_items(data.items, limit, strategy="balanced", seed=seed)
    factory = memory_retriever_factory("hybrid")
    todo: Todo = []
    for item in items:
        evidence = list(factory(item.corpus or []).retrieve(item.question, settings.top_k))
        evidence = evidence[: settings.top_k]
        gate = gate_fields(evidence, detect_language(item.question), settings.abstain_threshold)
        kept = gate["kept"]
        meta = {"id": f"nomiracl:{item.id}", "collection": f"nomiracl:{item.id}",
                "split": "nomiracl", "language": item.language, "type": "nomiracl",
                "qtype": "nomiracl", "answerable": bool(item.answerable), "kept": kept}
        todo.append((meta, item.question, evidence, gate))
    return todo

if __name__ == "__main__":
    main()
