"""A user's first corpus, with the real local model: answer or abstain, and how long it takes.

Usage::

    .venv/bin/python benchmarks/first_corpus.py [--corpus first|frozen|injected] [--out FILE]
    .venv/bin/python benchmarks/first_corpus.py --quick --json FILE    # 2 questions (CI)

``--corpus frozen`` asks the frozen corpus instead (``tests/data/frozen_corpus``: four
documents in ``docs/``, ja + en, and the 32 questions of its ``questions.jsonl`` with their expected
outcomes, written before the verifier's redesign and never tuned on; see its README).
``--corpus injected``: ``tests/data/injected_corpus``, documents that hold orders to the
model beside their facts (an answer that obeys one is wrong; see its README).

It ingests the three short documents of ``tests/data/small_corpus`` (a Japanese travel
policy, a Japanese service contract, an English product sheet: 11 sections, the size of
corpus people try first and never used for fitting anything) into a fresh store and asks
the questions below through the default graph: answerable ones in both languages (one
almost word for word, one cross-language, one whose figure is written in 万 notation),
Japanese questions over the English sheet (whose answer should be in Japanese) and
unanswerable ones (a yes/no about an attribute no document states, an off-topic one).

Per question it prints the outcome, the expected fact found or not in the answer, the stage
that decided (``decided_by``), the stage scores, the wall time and the model work (prompt
tokens evaluated, tokens generated, forward passes, model calls; ``LocalRuntime.work``), and
a reference pass before and after (``latency_bench.reference_seconds``). Wrong values
delivered are the failure that matters most: an answered question whose ``forbidden`` value
appears in the answer is counted apart.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import add_result_args, write_result  # noqa: E402
from latency_bench import (  # noqa: E402
    ScorerCounter,
    median,
    reference_seconds,
    run_one,
    uptime,
)

CORPUS = ROOT / "tests" / "data" / "small_corpus"
FROZEN = ROOT / "tests" / "data" / "frozen_corpus"
INJECTED = ROOT / "tests" / "data" / "injected_corpus"

QUESTIONS: list[dict[str, Any]] = [
    # answerable, Japanese
    {"q": "悪天候で飛行機が欠航した場合、追加の宿泊費はどれくらい支給されますか？",
     "answerable": True, "expect": ["全額"]},
    {"q": "業務委託契約はいつ終了しますか？", "answerable": True, "expect": ["2027年3月31日"]},
    {"q": "旅費精算書はいつまでに提出しなければなりませんか？", "answerable": True,
     "expect": ["14日"]},
    {"q": "東京都内の出張の宿泊費の上限は1泊いくらですか？", "answerable": True,
     "expect": ["15,000円"], "forbidden": ["12,000"]},  # 12,000 is the other regions' cap
    # answerable, English over the English sheet
    {"q": "How much does the Aurora LX-3 weigh?", "answerable": True, "expect": ["410"]},
    {"q": "How long does the Aurora LX-3 take to recharge?", "answerable": True,
     "expect": ["3 hours"]},
    # answerable, English over the Japanese documents (cross-language)
    {"q": "What is the maximum hotel cost per night for business trips in Tokyo?",
     "answerable": True, "expect": ["15,000"], "forbidden": ["12,000"]},
    {"q": "What is the monthly fee in the service contract?", "answerable": True,
     "expect": ["45万", "450,000"],
     # 税別 is before tax: "tax-free" is a wrong fact with the right number
     "forbidden": ["45,000 yen", "45000 yen", "tax-free", "tax free", "tax-exempt"]},
    # answerable, Japanese over the English sheet (cross-language the other way): the
    # statement should follow the question's language, the quote stays English
    {"q": "Aurora LX-3の重さは何グラムですか？", "answerable": True, "expect": ["410"],
     "in_japanese": True},
    {"q": "Aurora LX-3の保証期間は何か月ですか？", "answerable": True, "expect": ["24"],
     "in_japanese": True},
    # 9 hours is how long a full charge powers a laptop, not how long the bank charges
    {"q": "Aurora LX-3本体のフル充電には何時間かかりますか？", "answerable": True,
     "expect": ["3時間", "3 hours"], "forbidden": ["9 hours", "9時間"], "in_japanese": True},
    # unanswerable
    {"q": "Can the Aurora LX-3 be carried in an airplane cabin?", "answerable": False},
    {"q": "Is the Aurora LX-3 waterproof?", "answerable": False},
    {"q": "出張中の食事代は支給されますか？", "answerable": False},
    {"q": "委託料の支払いに遅れた場合の遅延損害金は何％ですか？", "answerable": False},
    {"q": "What is the capital of Australia?", "answerable": False},
]
"""The Aurora sheet says water damage is not covered, not whether the device resists water,
so "waterproof" counts as not stated; the contract names no late-payment interest."""


def frozen_questions(root: Path = FROZEN) -> list[dict[str, Any]]:
    """The frozen corpus's questions: ``outcome`` is answer, abstain or correct-or-abstain
    (a false premise: abstaining, or an answer that states what the text says instead)."""
    rows = []
    for line in (root / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            item["answerable"] = item["outcome"] == "answer"
            rows.append(item)
    return rows


def grade(item: dict[str, Any], status: str, text: str) -> str:
    """``right``, ``wrong`` (something delivered that is not the expected outcome) or
    ``refused`` (an answerable question abstained)."""
    answered = status == "answered"
    outcome = item.get("outcome") or ("answer" if item["answerable"] else "abstain")
    has_fact = any(e in text for e in item.get("expect", []))
    bad_value = any(f in text for f in item.get("forbidden", []))
    if not answered:
        return "refused" if outcome == "answer" else "right"
    if outcome == "abstain":
        return "wrong"
    return "right" if has_fact and not bad_value else "wrong"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=("first", "frozen", "injected"), default="first",
                    help="first: tests/data/small_corpus (default); frozen, injected: "
                    "tests/data/frozen_corpus or injected_corpus and its questions.jsonl")
    ap.add_argument("--out", type=Path, help="also write one JSON line per question")
    ap.add_argument("--without", default="",
                    help="rules to switch off, to measure what they earn (comma-separated "
                    "names of grounded_rag.verification.rules.RULES: coverage, focus, ...)")
    ap.add_argument("--limit", type=int, default=0, help="ask only the first N questions")
    ap.add_argument("--only", default="", help="ask only the questions containing this text")
    add_result_args(ap)
    args = ap.parse_args()

    from grounded_rag.graph import build_graph
    from grounded_rag.retrieval import ingest_paths, open_retriever
    from grounded_rag.verification import rules
    from grounded_rag.verification.evidence import is_japanese

    off = set(args.without.split(",")) - {""}
    if rules.unknown(off):
        ap.error(f"--without: unknown rule(s) {rules.unknown(off)}; known: {sorted(rules.RULES)}")
    rules.switch_off(off)
    store = Path(tempfile.mkdtemp(prefix="grag-first-corpus-"))
    listed = {"frozen": FROZEN, "injected": INJECTED}.get(args.corpus)
    corpus = listed / "docs" if listed else CORPUS
    ingest_paths([corpus], store, progress=False)
    graph = build_graph(retriever=open_retriever(store))
    scorer = ScorerCounter()
    settings: dict[str, Any] = {}
    print(f"load before: {uptime()}", flush=True)
    run_one(graph, "旅費規程の目的は何ですか？", settings, scorer)  # warm-up: model load
    ref_before = reference_seconds()
    rows: list[dict[str, Any]] = []
    asked = frozen_questions(listed) if listed else QUESTIONS
    questions = asked[:args.limit] if args.limit else asked
    questions = [q for q in questions if args.only in q["q"]]
    if args.quick:  # one answerable and one unanswerable question
        questions = [next(q for q in questions if q["answerable"] is want) for want in (True, False)
                     if any(q["answerable"] is want for q in questions)]
    for item in questions:
        t0 = time.perf_counter()
        fired_before = rules.counts()
        row = run_one(graph, item["q"], settings, scorer)
        row["rules_fired"] = rules.since(fired_before)
        row["elapsed_s"] = round(time.perf_counter() - t0, 2)
        answered = row["status"] == "answered"
        text = row["answer"]
        row["expected_answerable"] = item["answerable"]
        row["with_fact"] = answered and any(e in text for e in item.get("expect", []))
        row["wrong_value"] = answered and any(f in text for f in item.get("forbidden", []))
        row["kind"] = item.get("kind", "")
        row["grade"] = grade(item, row["status"], text)
        row["verified"] = answered and bool(row["claims"]) and all(
            c["verdict"] == "supported" for c in row["claims"])
        if item.get("in_japanese"):  # the answer's words, without the [n] markers, in Japanese
            row["in_japanese"] = answered and is_japanese(re.sub(r"\[\d+\]", "", text))
        rows.append(row)
        verdict = {"right": "ok", "wrong": "WRONG", "refused": "MISS"}[row["grade"]]
        print(f"[{verdict}] {row['status']:<9} {row['wall_s']:6.1f} s "
              f"prompt {row['work'].get('prompt_tokens', 0):>5} gen "
              f"{row['work'].get('generated_tokens', 0):>4} calls "
              f"{row['work'].get('model_calls', 0):>2} | {item['q']}\n"
              f"      -> {text[:160]!r} decided_by={row.get('decided_by')} "
              f"scores={row.get('stage_scores')}", flush=True)
    ref_after = reference_seconds()
    print(f"load after: {uptime()}")
    ans = [r for r in rows if r["expected_answerable"]]
    una = [r for r in rows if not r["expected_answerable"]]
    answered_walls = [r["wall_s"] for r in rows if r["status"] == "answered"]
    ref = (ref_before + ref_after) / 2
    print(f"answerable answered with the fact: {sum(r['with_fact'] for r in ans)}/{len(ans)}"
          f" (answered {sum(r['status'] == 'answered' for r in ans)}/{len(ans)})")
    print(f"unanswerable abstained: {sum(r['status'] != 'answered' for r in una)}/{len(una)}")
    print(f"wrong values delivered: {sum(r['wrong_value'] for r in rows)}")
    wrong = [r for r in rows if r["grade"] == "wrong"]
    print(f"wrong outcomes delivered: {len(wrong)} (as verified: "
          f"{sum(r['verified'] for r in wrong)}); right {sum(r['grade'] == 'right' for r in rows)}"
          f"/{len(rows)}")
    bare = [c for r in rows if r["status"] == "answered" for c in r["claims"]
            if c["verdict"] == "supported" and c["uncovered"]]
    print(f"verified claims naming what their cited sentence lacks: {len(bare)}")
    for c in bare:
        print(f"  {c['text'][:100]!r} lacks {c['uncovered']}")
    kinds = sorted({r["kind"] for r in rows if r["kind"]})
    for kind in kinds:
        part = [r for r in rows if r["kind"] == kind]
        print(f"  {kind:<15} right {sum(r['grade'] == 'right' for r in part)}/{len(part)}"
              f"  wrong {sum(r['grade'] == 'wrong' for r in part)}")
    asked_ja = [r for r in rows if "in_japanese" in r]
    if asked_ja:
        print(f"Japanese questions over the English sheet answered in Japanese: "
              f"{sum(r['in_japanese'] for r in asked_ja)}/{len(asked_ja)}")
    print(f"reference pass: {ref_before:.2f} / {ref_after:.2f} s")
    if answered_walls:
        m = median(answered_walls)
        tokens = median([r["work"].get("prompt_tokens", 0) for r in rows
                         if r["status"] == "answered"])
        print(f"median answered: {m:.1f} s = {m / ref:.2f}x reference; "
              f"median prompt tokens {tokens:.0f}")
    verified_wrong = sum(r["verified"] for r in wrong)
    write_result(args.json, "first_corpus", {
        "corpus": args.corpus, "questions": len(rows),
        "right": sum(r["grade"] == "right" for r in rows),
        "answerable_with_fact": [sum(r["with_fact"] for r in ans), len(ans)],
        "unanswerable_abstained": [sum(r["status"] != "answered" for r in una), len(una)],
        "wrong": len(wrong), "wrong_as_verified": verified_wrong,
        "verified_claims_lacking": len(bare), "reference_s": [ref_before, ref_after],
        "median_answered_s": median(answered_walls) if answered_walls else None,
        "without": sorted(off)}, quick=args.quick)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
