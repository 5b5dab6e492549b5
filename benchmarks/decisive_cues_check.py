"""How often the word-order decisive cues fire, per set and gold label (no model; ~3 minutes).

These cues decide a claim before any model call (``grounded_rag.verification``). Japanese:
``role_swap`` (``roles.py``: the claim swaps who acts on whom, decided *contradicted*) and
``hedged`` (``hedges.py``: the claim copies a clause the evidence only hedges, reports or
makes conditional, decided *neutral*). Both languages: ``subject_swap`` (``subjects.py``: the
claim says of one named thing what the evidence says of another, decided *contradicted*).
English: ``kin_relation`` (``kin.py``: the claim gives two people another family relation
than the evidence does, decided *contradicted*; HaluEval's claims are short answers, so it
has nothing to read there, and its real screen is ``benchmarks/kin_check.py``). A
decisive cue must almost never fire on supported claims; this prints, for every verify set
in ``../shared/eval`` (or ``$GROUNDED_RAG_EVAL_DIR``), how many claims of each gold label each
cue of the claim's language fires on, through the product's own path (``check_claim``).
JaNLI is also broken down by its heuristic. Absent sets are skipped with a message.

    .venv/bin/python benchmarks/decisive_cues_check.py [--sets janli,halueval_qa,...] [--json]
    .venv/bin/python benchmarks/decisive_cues_check.py --sets janli --judged 100 [--judge head]

``--judged N`` also runs the local judge (the full cascade) on a balanced sample of N JaNLI
pairs with both cues switched off, then re-applies their decisions to the same verdicts:
balanced accuracy without and with them, from one model run (a decisive cue only adds
decisions; it never changes a verdict it does not make). Several minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from typing import Any

KINDS_BY_LANGUAGE = {"ja": ("role_swap", "hedged", "value_binding", "subject_swap"),
                     "en": ("subject_swap", "value_binding", "kin_relation")}
KINDS = ("role_swap", "hedged")
"""The Japanese cues, which ``--judged`` switches off on JaNLI."""
SETS = "janli,jnli,jsick,jhars,halueval_qa,halueval_summarization,expertqa,scifact"


def _label(item: Any, k: int) -> str:
    if item.gold_label3:
        return item.gold_label3
    gold = item.gold_claims[k] if item.gold_claims is not None else item.gold_hallucinated
    return "unlabelled" if gold is None else ("not supported" if gold else "supported")


def check_set(name: str) -> dict[str, Any]:
    """Fires per cue and gold label (and per JaNLI heuristic) for one set's claims."""
    from grounded_rag.evaluation._datasets import load_dataset
    from grounded_rag.verification.cues import check_claim

    data = load_dataset(name)
    totals: Counter[str] = Counter()
    fired: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[str, list[str]] = defaultdict(list)
    for item in data.items:
        kinds_here = KINDS_BY_LANGUAGE.get(item.language, ())
        if not kinds_here or not item.sources:
            continue
        texts = [s["text"] for s in item.sources]
        for k, claim in enumerate(item.claims):
            label = _label(item, k)
            heuristic = (item.extra or {}).get("heuristics")
            keys = [label] + ([f"{heuristic} / {label}"] if heuristic else [])
            report = check_claim(claim, texts, language=item.language,
                                 question=item.claim_question)
            kinds = {c.kind for c in report.cues}
            for key in keys:
                totals[key] += 1
                for kind in kinds_here:
                    fired[kind][key] += kind in kinds
            for kind in kinds_here:
                if kind in kinds and len(examples[f"{kind}, {label}"]) < 2:
                    examples[f"{kind}, {label}"].append(f"{claim} <- {texts[0][:80]}")
    return {"set": name, "claims": sum(totals[k] for k in totals if " / " not in k),
            "fired": {kind: {k: [fired[kind][k], totals[k]] for k in sorted(totals)}
                      for kind in sorted(fired)},
            "examples": dict(examples)}


def judged(limit: int, judge: str, seed: int = 0) -> dict[str, Any]:
    """Balanced accuracy on a JaNLI sample, the cascade without and with the two cues."""
    from grounded_rag.evaluation import run_eval
    from grounded_rag.evaluation._datasets import load_dataset, sample_items
    from grounded_rag.verification import cues

    data = load_dataset("janli")
    items = {i.id: i for i in sample_items(data.items, limit, strategy="balanced", seed=seed)}
    fires = {}
    for i, item in items.items():
        kinds = {c.kind for c in cues.check_claim(item.claims[0], item.sources[0]["text"],
                                                  language="ja").cues}
        fires[i] = bool(kinds & set(KINDS))
    originals = cues.role_swap, cues.hedged_clause
    cues.role_swap = lambda *a, **k: None  # type: ignore[assignment]
    cues.hedged_clause = lambda *a, **k: None  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        rows: list[dict[str, Any]] = []
        run_eval("janli", limit=limit, sample="balanced", seed=seed, out_dir=None,
                 judge_mode=judge, progress=False, on_item=rows.append)
        seconds = time.perf_counter() - started
    finally:
        cues.role_swap, cues.hedged_clause = originals
    if not rows:
        raise RuntimeError("the evaluation returned no per-item results")

    def balanced(flag_of: Any) -> float:
        rates = []
        for gold in (True, False):
            group = [r for r in rows if bool(items[r["id"]].gold_hallucinated) is gold]
            rates.append(sum(flag_of(r) is gold for r in group) / max(1, len(group)))
        return round(sum(rates) / 2, 3)

    before = balanced(lambda r: bool(r["pred_hallucinated"]))
    after = balanced(lambda r: bool(r["pred_hallucinated"]) or fires[r["id"]])
    changed = sum(1 for r in rows if fires[r["id"]] and not r["pred_hallucinated"])
    wrong = sum(1 for r in rows if fires[r["id"]] and not items[r["id"]].gold_hallucinated)
    return {"n": len(rows), "judge": judge, "seconds": round(seconds, 1),
            "balanced_accuracy_without_cues": before, "balanced_accuracy_with_cues": after,
            "cue_fires": sum(fires[r["id"]] for r in rows), "verdicts_changed": changed,
            "fires_on_entailed": wrong}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=SETS)
    parser.add_argument("--judged", type=int, default=0, metavar="N",
                        help="also judge a balanced JaNLI sample of N with the local model")
    parser.add_argument("--judge", choices=["head", "logit"], default="head")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from grounded_rag.evaluation._datasets import DatasetError

    results: list[dict[str, Any]] = []
    for name in args.sets.split(","):
        start = time.perf_counter()
        try:
            result = check_set(name)
        except (DatasetError, FileNotFoundError) as exc:
            print(f"skipped {name}: {exc}", file=sys.stderr)
            continue
        result["seconds"] = round(time.perf_counter() - start, 1)
        results.append(result)
        if args.json:
            continue
        print(f"{name}: {result['claims']} claims, {result['seconds']} s")
        for kind in result["fired"]:
            for key, (hit, total) in result["fired"][kind].items():
                print(f"  {kind:9s} {key:44s} fires on {hit:5d} of {total:5d} ({hit / total:.1%})")
        for label, shown in result["examples"].items():
            for line in shown:
                print(f"    e.g. [{label}] {line}")
    if args.judged:
        outcome = judged(args.judged, args.judge)
        results.append({"set": "janli-judged", **outcome})
        if not args.json:
            print(f"janli judged ({outcome['judge']}), balanced sample of {outcome['n']}: "
                  f"balanced accuracy {outcome['balanced_accuracy_without_cues']} without the "
                  f"two cues, {outcome['balanced_accuracy_with_cues']} with them "
                  f"({outcome['cue_fires']} fire, {outcome['fires_on_entailed']} on entailed "
                  f"pairs, {outcome['verdicts_changed']} verdicts changed; "
                  f"{outcome['seconds']} s)")
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
    return 0 if results else 3


if __name__ == "__main__":
    sys.exit(main())
