"""Which local judge reads an English claim against a Japanese source best: head or plain P(Yes)?

The default judge is chosen per claim language (``AUTO_JUDGES``: the trained head for
English). The head also reads model-free features (word overlap with the evidence, unseen
words, cue flags) that were fitted on claims in the evidence's own language; across
languages they read as "nothing of the claim is in the evidence". This check scores the
same cross-language claims with both judges, without the deterministic cues:

- claims: the English questions over Japanese passages of ``benchmarks/xlang_en_ja.jsonl``
  and ``xlang_en_ja.dev.jsonl`` (never used to fit a judge), each question's first gold
  English answer read with its question (the product's form for a bare answer: supported),
  and the gold answer of another question on a passage of the same article (a real fact of
  that article that does not answer this question: not supported);
- evidence: the gold Japanese passage.

It prints, per file and judge, the AUROC of the support score and the share of each class
on the right side of the judge's own threshold (head: its fitted support threshold; plain:
the English 0.45), and every operating point of the plain judge on the dev file. One model
pass per claim and judge.

    .venv/bin/python benchmarks/xlang_judge_check.py [--limit N]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = {"dev": ROOT / "benchmarks" / "xlang_en_ja.dev.jsonl",
         "other": ROOT / "benchmarks" / "xlang_en_ja.jsonl"}


def _auroc(pos: list[float], neg: list[float]) -> float:
    pairs = [(p > n) + 0.5 * (p == n) for p in pos for n in neg]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def _items(path: Path, passages: dict[str, dict], limit: int) -> list[tuple[str, str, str, bool]]:
    """(question, answer, passage text, supported) pairs: the gold and another's answer."""
    rows = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    rows = [r for r in rows if r["gold_pid"] in passages and r["answers_en"]]
    by_title: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_title[passages[r["gold_pid"]]["title"]].append(r)
    rng = random.Random(0)
    out = []
    for r in rows[: limit or None]:
        text = passages[r["gold_pid"]]["text"].split("[SEP]", 1)[-1].strip()
        out.append((r["question_en"], r["answers_en"][0], text, True))
        others = [o for o in by_title[passages[r["gold_pid"]]["title"]]
                  if o["id"] != r["id"] and o["answers_en"][0].lower()
                  not in {a.lower() for a in r["answers_en"]}]
        if others:
            out.append((r["question_en"], rng.choice(others)["answers_en"][0], text, False))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="questions per file (0: all)")
    args = parser.parse_args(argv)
    from _common import eval_path

    from grounded_rag.local.verifier import DEFAULT_THRESHOLDS, LocalVerifier

    path = eval_path("jsquad_ja", "passages.jsonl")
    if path is None:
        return 3
    passages = {p["pid"]: p for p in map(json.loads, path.open(encoding="utf-8"))}
    head = LocalVerifier(judge="head")
    plain = LocalVerifier(judge="logit", scorer=head.scorer)
    thresholds = {"head": head.threshold_for("en"), "logit": DEFAULT_THRESHOLDS["en"]}
    started = time.perf_counter()
    scores: dict[str, dict[str, list[tuple[float, bool]]]] = {}
    for name, file in FILES.items():
        items = _items(file, passages, args.limit)
        scores[name] = {}
        for judge, verifier in (("head", head), ("logit", plain)):
            claims = [{"text": a, "question": q, "evidence": [{
                "source_id": "p#0", "doc_id": "p", "title": "", "text": text,
                "relevance": 1.0}]} for q, a, text, _ in items]
            verdicts = [verifier.verify([c], language="en")[0] for c in claims]  # type: ignore[list-item]
            scores[name][judge] = [(float(v["support"]), gold)
                                   for v, (_, _, _, gold) in zip(verdicts, items, strict=True)]
        n_pos = sum(1 for _, _, _, g in items if g)
        print(f"{name}: {n_pos} supported, {len(items) - n_pos} not supported claims")
        for judge, rows in scores[name].items():
            pos = [s for s, g in rows if g]
            neg = [s for s, g in rows if not g]
            t = thresholds[judge]
            print(f"  {judge:5s} AUROC {_auroc(pos, neg):.3f}; at its threshold {t:.2f}: "
                  f"supported kept {sum(s >= t for s in pos)}/{len(pos)}, "
                  f"not supported refused {sum(s < t for s in neg)}/{len(neg)}")
    print("plain judge operating points on dev (threshold: kept / refused):")
    rows = scores["dev"]["logit"]
    pos = [s for s, g in rows if g]
    neg = [s for s, g in rows if not g]
    for t in (0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7):
        print(f"  {t:.2f}: {sum(s >= t for s in pos)}/{len(pos)} / "
              f"{sum(s < t for s in neg)}/{len(neg)}")
    print(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
