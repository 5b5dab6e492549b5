"""How often the value cues decide a claim, per set and gold label, within and across languages.

The number and date cues (``quantity_mismatch``, ``date_mismatch`` in
``grounded_rag.verification.cues``) decide a claim *contradicted* before any model call. They
must almost never fire on entailed / supported claims. JSICK holds each pair in Japanese and
English, so its pairs are also checked crossed over: the English hypothesis against the
Japanese premise and the Japanese hypothesis against the English premise (the gold label of
the premise's language). JNLI, JaNLI and JSQuAD (the gold answer as the claim, its passage as
the evidence) give the Japanese-only pairs. No model; a few minutes on 2 cores. Data is read
from ``../shared/eval`` (or ``$GROUNDED_RAG_EVAL_DIR``); absent sets are skipped.

    .venv/bin/python benchmarks/value_cues_xlang_check.py [--sets jsick,jnli,janli,jsquad]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

KINDS = frozenset({"quantity_mismatch", "date_mismatch"})
Pair = tuple[str, str, list[str], str, str, str]
"""(set, claim, evidence texts, question, language, gold label)."""


def _eval_dir() -> Path:
    default = Path(__file__).resolve().parents[1].parent / "shared" / "eval"
    return Path(os.environ.get("GROUNDED_RAG_EVAL_DIR", default))


def _rows(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _pairs(name: str, root: Path) -> Iterator[Pair]:
    if name == "jsick":
        for r in _rows(root / "jsick_ja" / "jsick_test.dev.jsonl"):
            yield "jsick ja", r["hypothesis"], [r["premise"]], "", "ja", r["label"]
            yield "jsick en", r["hypothesis_en"], [r["premise_en"]], "", "en", r["label_en"]
            yield "jsick en->ja", r["hypothesis_en"], [r["premise"]], "", "en", r["label"]
            yield "jsick ja->en", r["hypothesis"], [r["premise_en"]], "", "ja", r["label_en"]
    elif name == "jnli":
        for r in _rows(root / "jnli_ja" / "jnli.dev.jsonl"):
            yield "jnli", r["sentence2"], [r["sentence1"]], "", "ja", r["label"]
    elif name == "janli":
        for r in _rows(root / "janli_ja" / "janli.dev.jsonl"):
            yield ("janli", r["sentence_B_Ja"], [r["sentence_A_Ja"]], "", "ja",
                   r["entailment_label_Ja"])
    elif name == "jsquad":
        passages = {p["pid"]: p["text"] for p in _rows(root / "jsquad_ja" / "passages.jsonl")}
        for r in _rows(root / "jsquad_ja" / "questions.dev.jsonl"):
            if r["answers"] and r["gold_pid"] in passages:
                yield ("jsquad", r["answers"][0], [passages[r["gold_pid"]]], r["question"], "ja",
                       "supported")
    elif name == "xlang":
        passages = {p["pid"]: p for p in _rows(root / "jsquad_ja" / "passages.jsonl")}
        by_title: dict[str, list[str]] = {}
        for p in passages.values():
            by_title.setdefault(p["title"], []).append(p["pid"])
        for path in sorted(Path(__file__).resolve().parent.glob("xlang_en_ja*.jsonl")):
            for r in _rows(path):
                gold = passages.get(r["gold_pid"])
                if gold is None:
                    continue
                others = [pid for pid in by_title[gold["title"]] if pid != gold["pid"]]
                for answer in r["answers_en"][:2]:
                    yield ("xlang en->ja", answer, [_body(gold["text"])], r["question_en"],
                           "en", "supported")
                    if others:  # a fixed pick among the article's other passages
                        other = passages[others[_stable_index(gold["pid"], len(others))]]
                        yield ("xlang en->ja", answer, [_body(other["text"])], r["question_en"],
                               "en", "other passage")
    else:
        raise ValueError(f"unknown set {name!r}")


def _body(text: str) -> str:
    return text.split(" [SEP] ", 1)[-1]  # JSQuAD passages open with "title [SEP] "


def _stable_index(key: str, n: int) -> int:
    """A stable index in ``range(n)`` for ``key`` (not Python's salted ``hash``)."""
    return sum(key.encode("utf-8")) % n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="jsick,jnli,janli,jsquad")
    parser.add_argument("--kinds", default=",".join(sorted(KINDS)),
                        help="decisive cue kinds to count (comma-separated)")
    args = parser.parse_args(argv)
    kinds = frozenset(args.kinds.split(","))
    from grounded_rag.verification.cues import check_claim

    root = _eval_dir()
    totals: Counter[tuple[str, str]] = Counter()
    fired: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], str] = {}
    started = time.perf_counter()
    for name in args.sets.split(","):
        try:
            for part, claim, texts, question, lang, label in _pairs(name, root):
                report = check_claim(claim, texts, language=lang, question=question)
                totals[part, label] += 1
                hit = next((c for c in report.cues if c.decisive and c.kind in kinds), None)
                if hit is not None:
                    fired[part, label] += 1
                    examples.setdefault((part, label), f"{claim} <- {texts[0][:80]} ({hit.detail})")
        except FileNotFoundError as exc:
            print(f"skipped {name}: {exc}", file=sys.stderr)
    if not totals:
        return 3
    print(f"{sum(totals.values())} claims, {time.perf_counter() - started:.0f} s")
    for key in sorted(totals):
        print(f"  {key[0]:14s} {key[1]:18s} cue decides {fired[key]:4d} of {totals[key]:5d}")
    for (part, label), line in sorted(examples.items()):
        print(f"    e.g. [{part}, {label}] {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
