"""Calibrate the local support scorer's threshold on dev data and print AUROC / accuracy.

Reads ``../shared/eval/`` (never copied into the repo). Usage:

    .venv/bin/python benchmarks/verifier_calibrate.py --limit 30
    .venv/bin/python benchmarks/verifier_calibrate.py --datasets jnli --limit 40 --mode cascade

``--limit N`` takes N positive and N negative items per dataset (seeded sample).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

EVAL_DIR = Path(
    os.environ.get("GROUNDED_RAG_EVAL_DIR", Path(__file__).resolve().parents[2] / "shared" / "eval")
)


def load_halueval(limit: int, seed: int) -> list[dict]:
    from grounded_rag.prompts.local_verify import QA_CLAIM_EN

    path = EVAL_DIR / "halueval_qa" / "pairs.dev.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    by_example: dict[int, list[dict]] = {}
    for r in rows:
        by_example.setdefault(r["example"], []).append(r)
    examples = sorted(k for k, v in by_example.items() if len(v) == 2)
    random.Random(seed).shuffle(examples)
    items = []
    for ex in examples[:limit]:
        for r in by_example[ex]:
            items.append(
                {
                    "evidence": r["knowledge"].strip(),
                    "claim": QA_CLAIM_EN.format(question=r["question"], answer=r["answer"]),
                    "positive": r["label"] == 0,  # 0 = faithful answer
                    "label3": "supported" if r["label"] == 0 else "not_supported",
                    "lang": "en",
                }
            )
    return items


def load_jnli(limit: int, seed: int) -> list[dict]:
    path = EVAL_DIR / "jnli_ja" / "jnli.dev.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    rng = random.Random(seed)
    rng.shuffle(rows)
    ent = [r for r in rows if r["label"] == "entailment"][:limit]
    con = [r for r in rows if r["label"] == "contradiction"][: limit // 2]
    neu = [r for r in rows if r["label"] == "neutral"][: limit - limit // 2]
    label_map = {"entailment": "supported", "contradiction": "contradicted", "neutral": "neutral"}
    return [
        {
            "evidence": r["sentence1"],
            "claim": r["sentence2"],
            "positive": r["label"] == "entailment",
            "label3": label_map[r["label"]],
            "lang": "ja",
        }
        for r in ent + con + neu
    ]


LOADERS = {"halueval": load_halueval, "jnli": load_jnli}


def auroc(scores: list[float], positives: list[bool]) -> float:
    pos = [s for s, p in zip(scores, positives, strict=True) if p]
    neg = [s for s, p in zip(scores, positives, strict=True) if not p]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def balanced_accuracy(scores: list[float], positives: list[bool], threshold: float) -> float:
    tp = sum(s >= threshold and p for s, p in zip(scores, positives, strict=True))
    tn = sum(s < threshold and not p for s, p in zip(scores, positives, strict=True))
    n_pos = sum(positives)
    n_neg = len(positives) - n_pos
    return 0.5 * (tp / max(n_pos, 1) + tn / max(n_neg, 1))


def best_threshold(scores: list[float], positives: list[bool]) -> tuple[float, float]:
    candidates = sorted(set(scores))
    best = (0.5, balanced_accuracy(scores, positives, 0.5))
    for a, b in zip(candidates, candidates[1:], strict=False):
        t = (a + b) / 2
        acc = balanced_accuracy(scores, positives, t)
        if acc > best[1]:
            best = (t, acc)
    return best


def run_scorer(items: list[dict], reuse: bool) -> tuple[list[float], float]:
    from grounded_rag.local.scorer import SupportScorer

    scorer = SupportScorer(reuse_prefix=reuse)
    scorer._rt()  # load outside the timing
    start = time.perf_counter()
    scores = []
    for lang in ("en", "ja"):
        idx = [i for i, it in enumerate(items) if it["lang"] == lang]
        if not idx:
            continue
        got = scorer.score_many(
            [(items[i]["evidence"], items[i]["claim"]) for i in idx], language=lang
        )
        scores.extend(zip(idx, got, strict=True))
    elapsed = time.perf_counter() - start
    scores.sort()
    s = scorer.stats
    print(
        f"  scorer: {s.pairs} pairs, {elapsed / max(s.pairs, 1):.2f} s/pair, "
        f"tokens evaluated {s.tokens_evaluated}, reused {s.tokens_reused}",
        file=sys.stderr,
    )
    return [v for _, v in scores], elapsed


def run_cascade(items: list[dict], threshold: float | None) -> tuple[list[dict], float]:
    from grounded_rag.local.verifier import LocalVerifier
    from grounded_rag.verification.cascade import CascadeVerifier

    verifier = CascadeVerifier(LocalVerifier(threshold=threshold))
    start = time.perf_counter()
    verdicts: list[dict | None] = [None] * len(items)
    for lang in ("en", "ja"):
        idx = [i for i, it in enumerate(items) if it["lang"] == lang]
        if not idx:
            continue
        claims = [
            {"text": items[i]["claim"], "evidence": [_evidence(items[i]["evidence"])]} for i in idx
        ]
        for i, v in zip(idx, verifier.verify(claims, language=lang), strict=True):
            verdicts[i] = dict(v)
    return [v for v in verdicts if v is not None], time.perf_counter() - start


def _evidence(text: str) -> dict:
    return {
        "source_id": "doc#sec1",
        "doc_id": "doc",
        "title": "",
        "url": "",
        "text": text,
        "score": 0.0,
        "relevance": 1.0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datasets", default="halueval,jnli")
    parser.add_argument("--limit", type=int, default=30, help="positives (and negatives) per set")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mode", choices=["scorer", "cascade"], default="scorer")
    parser.add_argument("--no-reuse", action="store_true", help="disable evidence-prefix reuse")
    parser.add_argument("--threshold", type=float, default=None, help="cascade: fixed threshold")
    parser.add_argument("--dump", type=Path, default=None, help="write per-item scores (JSONL)")
    args = parser.parse_args()

    if not EVAL_DIR.is_dir():
        print(f"eval data not found at {EVAL_DIR}; skipping", file=sys.stderr)
        return 0
    all_scores: list[float] = []
    all_pos: list[bool] = []
    for name in args.datasets.split(","):
        items = LOADERS[name](args.limit, args.seed)
        positives = [it["positive"] for it in items]
        print(f"{name}: {len(items)} items ({sum(positives)} positive)")
        if args.mode == "scorer":
            scores, elapsed = run_scorer(items, reuse=not args.no_reuse)
            t, acc = best_threshold(scores, positives)
            print(
                f"  AUROC {auroc(scores, positives):.3f}  best balanced accuracy {acc:.3f} "
                f"at threshold {t:.3f}  ({elapsed / len(items):.2f} s/item)"
            )
            all_scores += scores
            all_pos += positives
            if args.dump:
                with args.dump.open("a", encoding="utf-8") as fh:
                    for it, s in zip(items, scores, strict=True):
                        fh.write(
                            json.dumps(
                                {
                                    "set": name,
                                    "positive": it["positive"],
                                    "label3": it["label3"],
                                    "score": s,
                                }
                            )
                            + "\n"
                        )
        else:
            verdicts, elapsed = run_cascade(items, args.threshold)
            supported = [v["verdict"] == "supported" for v in verdicts]
            tp = sum(s and p for s, p in zip(supported, positives, strict=True))
            tn = sum((not s) and (not p) for s, p in zip(supported, positives, strict=True))
            bacc = 0.5 * (
                tp / max(sum(positives), 1) + tn / max(len(positives) - sum(positives), 1)
            )
            three = sum(
                v["verdict"] == it["label3"]
                or (it["label3"] == "not_supported" and v["verdict"] != "supported")
                for v, it in zip(verdicts, items, strict=True)
            )
            conf = Counter(
                (it["label3"], v["verdict"]) for v, it in zip(verdicts, items, strict=True)
            )
            print(
                f"  balanced accuracy (supported vs not) {bacc:.3f}  3-way accuracy "
                f"{three / len(items):.3f}  ({elapsed / len(items):.2f} s/item)"
            )
            print(f"  AUROC of support {auroc([v['support'] for v in verdicts], positives):.3f}")
            print(
                "  confusion (gold, predicted): "
                + ", ".join(f"{k[0]}->{k[1]}: {n}" for k, n in sorted(conf.items()))
            )
    if args.mode == "scorer" and len(args.datasets.split(",")) > 1:
        t, acc = best_threshold(all_scores, all_pos)
        print(
            f"pooled: AUROC {auroc(all_scores, all_pos):.3f}  "
            f"best balanced accuracy {acc:.3f} at threshold {t:.3f}"
        )
        for name_t in (0.5, t):
            print(
                f"  pooled balanced accuracy at {name_t:.3f}: "
                f"{balanced_accuracy(all_scores, all_pos, name_t):.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
