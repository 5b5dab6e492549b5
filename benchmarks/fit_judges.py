"""Calibrate the local judges: the support scorer's threshold and the answerability probe.

Usage::

    .venv/bin/python benchmarks/fit_judges.py verifier --limit 30
    .venv/bin/python benchmarks/fit_judges.py verifier --datasets jnli --limit 40 --mode cascade
    .venv/bin/python benchmarks/fit_judges.py answerability --per-class 0 --out /tmp/scan.jsonl
    .venv/bin/python benchmarks/fit_judges.py answerability --from /tmp/scan.jsonl --split 1
    flock /tmp/grag-model.lock .venv/bin/python benchmarks/fit_judges.py --quick --json FILE

Two subcommands (``SUBCOMMAND -h`` prints each one's method in full):

- ``verifier``: the local support scorer on HaluEval-QA and JNLI dev pairs: AUROC, the best
  balanced accuracy and its threshold (``grounded_rag.local.verifier.DEFAULT_THRESHOLDS``),
  or with ``--mode cascade`` the whole verifier's verdicts;
- ``answerability``: the answerability probe on NoMIRACL dev: AUROC of each way of reading
  its passage scores and the gate + probe decision rates over a grid
  (``grounded_rag.local.answerability.DEFAULT_ANSWERABLE_THRESHOLDS``).

``--quick`` (with or without a subcommand; without, both run) is the smallest run that
still takes every path: ``verifier --limit 1`` (two items per set, with ``--dump``) in both
modes, and ``answerability --per-class 1 --passages 2`` scanned into a temporary file, then
reported again ``--from`` it for one ``--split``. These scripts print thresholds and never
write into the package; the quick figures are not for reporting. The model runs hold
``/tmp/grag-model.lock`` (taken here when the command is not already run under ``flock`` on
it). Evaluation data is read from ../shared/eval; when it is absent the run prints a skip
line and exits 0.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import zlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402  # noqa: E402
    EVAL_DIR,
    LOCK_WAIT,
    add_result_args,
    eval_path,
    hold_model_lock,
    subcommand_main,
    write_result,
)

NAME = "fit_judges"

# == verifier: the support scorer's threshold =================================================

VERIFIER_DOC = """\
Calibrate the local support scorer's threshold on dev data and print AUROC / accuracy.

Reads ``../shared/eval/`` (never copied into the repo). Usage:

    .venv/bin/python benchmarks/fit_judges.py verifier --limit 30
    .venv/bin/python benchmarks/fit_judges.py verifier --datasets jnli --limit 40 --mode cascade

``--limit N`` takes N positive and N negative items per dataset (seeded sample).
``--quick``: ``--limit 1`` (two items per set) and, with no ``--mode`` given, both modes.
"""

VERIFIER_FILES = {"halueval": ("halueval_qa", "pairs.dev.jsonl"),
                  "jnli": ("jnli_ja", "jnli.dev.jsonl")}


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


def verifier_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fit_judges.py verifier", description=VERIFIER_DOC,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="halueval,jnli")
    parser.add_argument("--limit", type=int, default=None,
                        help="positives (and negatives) per set (default 30; 1 under --quick)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mode", choices=["scorer", "cascade"], default=None,
                        help="scorer (default) or cascade (under --quick: both unless given)")
    parser.add_argument("--no-reuse", action="store_true", help="disable evidence-prefix reuse")
    parser.add_argument("--threshold", type=float, default=None, help="cascade: fixed threshold")
    parser.add_argument("--dump", type=Path, default=None, help="write per-item scores (JSONL)")
    add_result_args(parser)
    return parser


def verifier_main(argv: list[str]) -> int:
    args = verifier_parser().parse_args(argv)
    figures = run_verifier(args)
    write_result(args.json, f"{NAME} verifier", figures, quick=args.quick)
    return 0


def run_verifier(args: argparse.Namespace) -> dict[str, Any]:
    """The calibration of ``args`` (both modes under ``--quick`` unless one is given)."""
    names = args.datasets.split(",")
    missing = ["/".join(VERIFIER_FILES[n]) for n in names if eval_path(*VERIFIER_FILES[n]) is None]
    if missing:
        return {"skipped": missing}
    if args.limit is None:
        args.limit = 1 if args.quick else 30
    modes = [args.mode] if args.mode else (["scorer", "cascade"] if args.quick else ["scorer"])
    hold_model_lock()
    figures: dict[str, Any] = {"limit": args.limit, "seed": args.seed}
    with tempfile.TemporaryDirectory(prefix="fit-judges-quick-") as tmp:
        if args.quick and args.dump is None:
            args.dump = Path(tmp) / "dump.jsonl"  # the --dump path, in a file thrown away
        for mode in modes:
            args.mode = mode
            figures[mode] = _verifier_mode(args, names)
        if args.dump is not None and args.dump.exists():
            figures["dumped"] = len(args.dump.read_text(encoding="utf-8").splitlines())
    return figures


def _verifier_mode(args: argparse.Namespace, names: list[str]) -> dict[str, Any]:
    all_scores: list[float] = []
    all_pos: list[bool] = []
    figures: dict[str, Any] = {}
    for name in names:
        items = LOADERS[name](args.limit, args.seed)
        positives = [it["positive"] for it in items]
        print(f"{name}: {len(items)} items ({sum(positives)} positive)")
        fig: dict[str, Any] = {"items": len(items), "positive": sum(positives)}
        if args.mode == "scorer":
            scores, elapsed = run_scorer(items, reuse=not args.no_reuse)
            t, acc = best_threshold(scores, positives)
            print(
                f"  AUROC {auroc(scores, positives):.3f}  best balanced accuracy {acc:.3f} "
                f"at threshold {t:.3f}  ({elapsed / len(items):.2f} s/item)"
            )
            fig.update({"auroc": auroc(scores, positives), "best_balanced_accuracy": acc,
                        "threshold": t, "seconds_per_item": elapsed / len(items)})
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
            support_auc = auroc([v["support"] for v in verdicts], positives)
            print(f"  AUROC of support {support_auc:.3f}")
            print(
                "  confusion (gold, predicted): "
                + ", ".join(f"{k[0]}->{k[1]}: {n}" for k, n in sorted(conf.items()))
            )
            fig.update({"balanced_accuracy": bacc, "three_way_accuracy": three / len(items),
                        "auroc_support": support_auc, "seconds_per_item": elapsed / len(items),
                        "confusion": {f"{k[0]}->{k[1]}": n for k, n in sorted(conf.items())}})
        figures[name] = fig
    if args.mode == "scorer" and len(names) > 1:
        t, acc = best_threshold(all_scores, all_pos)
        print(
            f"pooled: AUROC {auroc(all_scores, all_pos):.3f}  "
            f"best balanced accuracy {acc:.3f} at threshold {t:.3f}"
        )
        pooled: dict[str, Any] = {"auroc": auroc(all_scores, all_pos),
                                  "best_balanced_accuracy": acc, "threshold": t, "at": {}}
        for name_t in (0.5, t):
            at = balanced_accuracy(all_scores, all_pos, name_t)
            print(f"  pooled balanced accuracy at {name_t:.3f}: {at:.3f}")
            pooled["at"][f"{name_t:.3f}"] = at
        figures["pooled"] = pooled
    return figures


# == answerability: the answerability probe on NoMIRACL =======================================

ANSWERABILITY_DOC = """\
Measure the answerability probe on NoMIRACL dev: does it tell answerable from not?

For each query, the query's own 10 passages are indexed in memory (as the eval harness
does), the top passages are retrieved, and the probe of ``LocalAnswerabilityJudge`` scores
each of the top ``--passages`` on its own. One scan gives every way of reading the scores:

- AUROC per language of the top-ranked passage's score, of the best score among the top 2
  and top N, and of retrieval relevance alone;
- what the graph would do before writing anything, per language: answer rate on answerable
  queries and abstention rate on unanswerable ones, with the retrieval gate
  (``abstain_threshold``; by default the language's gate of ``DEFAULT_GATES``) and the
  probe together, at the product's defaults and over a grid.

``--split`` keeps only one half of the queries (a fixed hash of the query id), so
thresholds can be chosen on one half and confirmed on the other.

Reads ``../shared/eval/`` (never copied into the repo). Usage:

    .venv/bin/python benchmarks/fit_judges.py answerability --per-class 0 --out /tmp/scan.jsonl
    .venv/bin/python benchmarks/fit_judges.py answerability --from /tmp/scan.jsonl --split 1

``--quick``: ``--per-class 1 --passages 2`` scanned into a temporary file (unless ``--out``
is given), then reported again ``--from`` that file for the half of its first query.
"""

Record = dict[str, Any]


def half(query_id: str) -> int:
    """Which half (0 or 1) a query falls in: a stable hash of its id."""
    return zlib.crc32(query_id.encode("utf-8")) % 2


def scan(rows: list[dict[str, Any]], passages: int, out: str) -> list[Record]:
    """Retrieve and score every row; one JSON line per query appended to ``out``."""
    from grounded_rag.evaluation._answer import memory_retriever_factory
    from grounded_rag.local.answerability import LocalAnswerabilityJudge

    hold_model_lock()
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


def report(records: list[Record], languages: list[str]) -> dict[str, Any]:
    """Print AUROC per reading and the gate + probe decision rates; return them."""
    from grounded_rag.evaluation._metrics import auroc as auroc_of
    from grounded_rag.local.answerability import DEFAULT_ANSWERABLE_THRESHOLDS
    from grounded_rag.retrieval.calibration import DEFAULT_ABSTAIN_THRESHOLD, gate_thresholds

    figures: dict[str, Any] = {}
    if not records:
        print("no queries to report on")
        return figures
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
        auc_of = {name: auroc_of(gold, [-read(r) for r in rs]) or 0
                  for name, read in readings.items()}
        aucs = [f"{name} {auc:.3f}" for name, auc in auc_of.items()]
        relevance_auc = auroc_of(gold, [-r["relevance"] for r in rs]) or 0
        print(f"[{lang}] AUROC: " + ", ".join(aucs) + f", relevance {relevance_auc:.3f}")
        fig: dict[str, Any] = {"answerable": n_yes, "unanswerable": sum(gold),
                               "auroc": {**auc_of, "relevance": relevance_auc}, "gates": {}}
        default = DEFAULT_ANSWERABLE_THRESHOLDS.get(lang)
        # the product's default gate for this language (same-language evidence), and none
        default_gate = gate_thresholds(lang, DEFAULT_ABSTAIN_THRESHOLD)[0]
        for gate in (default_gate, 0.0):
            a, b = rates(rs, gate, readings["top 1"], None)
            print(f"[{lang}] gate {gate:g} alone: answers {a:.2f}, abstains {b:.2f}")
            gate_fig: dict[str, Any] = {"alone": [a, b]}
            for name, read in readings.items():
                cells = []
                grid = {}
                for t in (0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97):
                    a, b = rates(rs, gate, read, t)
                    mark = "*" if default is not None and abs(t - default) < 1e-9 else ""
                    cells.append(f"{t}{mark} {a:.2f}/{b:.2f}")
                    grid[str(t)] = [a, b]
                print(f"[{lang}]   + probe {name}: " + "  ".join(cells))
                gate_fig[name] = grid
            fig["gates"][f"{gate:g}"] = gate_fig
        seconds = sum(r["seconds"] for r in rs) / len(rs)
        print(f"[{lang}] probe seconds per query (all scanned passages): {seconds:.1f}")
        fig["seconds_per_query"] = seconds
        figures[lang] = fig
    print("cells: threshold answers/abstains; * = the product's default threshold")
    return figures


def answerability_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fit_judges.py answerability",
                                     description=ANSWERABILITY_DOC,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--per-class",
        type=int,
        default=None,
        help="answerable and unanswerable queries per language (0 = all; default 10, "
        "1 under --quick)",
    )
    parser.add_argument("--languages", nargs="+", default=["ja", "en"])
    parser.add_argument("--passages", type=int, default=None,
                        help="top passages scored (default 3; 2 under --quick)")
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
    add_result_args(parser)
    return parser


def answerability_main(argv: list[str]) -> int:
    args = answerability_parser().parse_args(argv)
    figures = run_answerability(args)
    write_result(args.json, f"{NAME} answerability", figures, quick=args.quick)
    return 0


def run_answerability(args: argparse.Namespace) -> dict[str, Any]:
    if args.per_class is None:
        args.per_class = 1 if args.quick else 10
    if args.passages is None:
        args.passages = 2 if args.quick else 3
    if args.source:
        with open(args.source, encoding="utf-8") as fh:
            records = [json.loads(line) for line in fh]
        return _answerability_report(records, args)
    path = eval_path("nomiracl_ja_en", "nomiracl.dev.jsonl")
    if path is None:
        return {"skipped": "nomiracl_ja_en/nomiracl.dev.jsonl"}
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
    with tempfile.TemporaryDirectory(prefix="fit-judges-quick-") as tmp:
        if args.quick and not args.out:
            args.out = str(Path(tmp) / "scan.jsonl")  # the --out cache, in a file thrown away
        records = scan(chosen, args.passages, args.out)
        figures = _answerability_report(records, args)
        if args.quick and args.split is None and records:
            # the --from and --split paths: the scan read back, one half of it
            print(f"\n== fit_judges.py answerability --from {args.out} "
                  f"--split {half(records[0]['id'])}")
            again = argparse.Namespace(**{**vars(args), "source": args.out,
                                          "split": half(records[0]["id"])})
            figures["from_split"] = run_answerability(again)
    return figures


def _answerability_report(records: list[Record], args: argparse.Namespace) -> dict[str, Any]:
    if args.split is not None:
        records = [r for r in records if half(r["id"]) == args.split]
    return {"queries": len(records), "split": args.split, "passages": args.passages,
            "languages": report(records, args.languages)}


# == --quick: both subcommands at the smallest size ===========================================

def quick_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="fit_judges.py --quick",
                                 description="verifier and answerability, tiny")
    add_result_args(ap)
    args = ap.parse_args(argv)
    started = time.perf_counter()
    print("== fit_judges.py verifier --quick", flush=True)
    figures = {"verifier": run_verifier(verifier_parser().parse_args(["--quick"]))}
    print("\n== fit_judges.py answerability --quick", flush=True)
    figures["answerability"] = run_answerability(answerability_parser().parse_args(["--quick"]))
    figures["seconds"] = round(time.perf_counter() - started, 1)
    figures["lock_wait_seconds"] = LOCK_WAIT["seconds"]
    write_result(args.json, NAME, figures, quick=True)
    return 0


SUBCOMMANDS = {"verifier": verifier_main, "answerability": answerability_main}


def main(argv: list[str] | None = None) -> int:
    return subcommand_main("fit_judges.py", __doc__, SUBCOMMANDS, quick_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
