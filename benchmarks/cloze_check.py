"""How often the cloze rule settles a bare value, right and wrong, on reading-comprehension sets.

``grounded_rag.verification.cloze`` supports a bare answer holding a number without the
model when one sentence of the evidence holds it word for word, holds most of the question
and names no other number the question does not name. Here, per set, with each question's
own passage as the evidence (no model, seconds):

* **right values**: the gold answers that hold a number (JSQuAD / JaQuAD dev; HaluEval-QA
  dev's right answers): how many the rule settles as supported;
* **wrong values from the same passage**: every other date, amount or count written in the
  passage (no number in common with the gold answer), given as the bare answer: how many
  the rule settles as supported (each one is a wrong value verified);
* **another question's value**: the gold value of another question on the same passage
  (no number in common), as if the generator answered the wrong question;
* **HaluEval's hallucinated answers** that hold a number, against their knowledge.

Nothing was fitted on these sets; the constants (``CLOZE_COVERAGE`` 0.8,
``CLOZE_MIN_TOKENS`` 3) were set from one small-corpus dev question before this ran.

    .venv/bin/python benchmarks/cloze_check.py [--show 5]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import eval_path, read_jsonl  # noqa: E402

from grounded_rag.verification.cloze import cloze_sentence  # noqa: E402

_VALUE = re.compile(
    r"\d[\d,.]*(?:年\d+月\d+日|年\d+月|年代|年|月\d+日|月|日|万|億|千|円|人|%|歳|回|位|km2|km|m)?")
_DIGITS = re.compile(r"\d+")


def _numbers(text: str) -> set[str]:
    return {d.lstrip("0") or "0" for d in _DIGITS.findall(text.replace(",", ""))}


def _evidence(text: str) -> list[dict]:
    return [{"source_id": "p#0", "doc_id": "p", "title": "", "url": "", "text": text,
             "score": 1.0, "relevance": 1.0}]


def _japanese(name: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """(question, gold value, passage) and (question, other value, passage) of one set."""
    qs, ps = eval_path(name, "questions.dev.jsonl"), eval_path(name, "passages.jsonl")
    if qs is None or ps is None:
        return [], []
    passages = {p["pid"]: p["text"].split(" [SEP] ", 1)[-1] for p in read_jsonl(ps)}
    right, wrong = [], []
    rows = read_jsonl(qs)
    for q in rows:
        text = passages.get(q.get("gold_pid", ""))
        answers = [a for a in q.get("answers", []) if _DIGITS.search(a)]
        if not text or not answers or q.get("is_impossible"):
            continue
        gold = answers[0]
        right.append((q["question"], gold, text))
        gold_numbers = set().union(*(_numbers(a) for a in q["answers"]))
        for value in dict.fromkeys(m.group(0) for m in _VALUE.finditer(text)):
            if not _numbers(value) & gold_numbers:
                wrong.append((q["question"], value, text))
    return right, wrong


def _other_answers(name: str) -> list[tuple[str, str, str]]:
    """(question, another question's gold value on the same passage, passage)."""
    qs, ps = eval_path(name, "questions.dev.jsonl"), eval_path(name, "passages.jsonl")
    if qs is None or ps is None:
        return []
    passages = {p["pid"]: p["text"].split(" [SEP] ", 1)[-1] for p in read_jsonl(ps)}
    by_passage: dict[str, list[dict]] = {}
    for q in read_jsonl(qs):
        if q.get("gold_pid") in passages and not q.get("is_impossible"):
            by_passage.setdefault(q["gold_pid"], []).append(q)
    out = []
    for pid, questions in by_passage.items():
        for q in questions:
            own = set().union(*(_numbers(a) for a in q["answers"])) if q["answers"] else set()
            for other in questions:
                value = next((a for a in other["answers"] if _DIGITS.search(a)), "")
                if other is not q and value and not _numbers(value) & own:
                    out.append((q["question"], value, passages[pid]))
    return out


def _halueval() -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    path = eval_path("halueval_qa", "pairs.dev.jsonl")
    if path is None:
        return [], []
    right, wrong = [], []
    for row in read_jsonl(path):
        if not _DIGITS.search(row["answer"]) or len(row["answer"].split()) > 5:
            continue
        item = (row["question"], row["answer"], row["knowledge"])
        (wrong if row["label"] else right).append(item)
    return right, wrong


_TERM = re.compile(r"[\u3400-\u9fff\u30a0-\u30ffA-Za-z]{2,}")
"""A run of kanji, katakana or Latin letters: a name or a term the passage writes."""


def _terms(name: str) -> tuple[list, list, list]:
    """The gap filler's part (names and terms, no digits): (question, gold answers,
    passage) per question; (question, wrong term, passage) for every term of the passage that
    is no part of a gold answer and holds none; (question, another question's answer, passage)."""
    qs, ps = eval_path(name, "questions.dev.jsonl"), eval_path(name, "passages.jsonl")
    if qs is None or ps is None:
        return [], [], []
    passages = {p["pid"]: p["text"].split(" [SEP] ", 1)[-1] for p in read_jsonl(ps)}
    rows = [q for q in read_jsonl(qs) if q.get("gold_pid") in passages
            and not q.get("is_impossible") and q.get("answers")
            and not any(_DIGITS.search(a) for a in q["answers"])]
    right, wrong, other = [], [], []
    by_passage: dict[str, list[dict]] = {}
    for q in rows:
        text, golds = passages[q["gold_pid"]], q["answers"]
        by_passage.setdefault(q["gold_pid"], []).append(q)
        right.append((q["question"], golds, text))
        for term in dict.fromkeys(_TERM.findall(text)):
            if not any(term in g or g in term for g in golds):
                wrong.append((q["question"], term, text))
    for questions in by_passage.values():
        for q in questions:
            for o in questions:
                value = o["answers"][0]
                if o is not q and not any(value in g or g in value for g in q["answers"]):
                    other.append((q["question"], value, passages[q["gold_pid"]]))
    return right, wrong, other


def _gap_part(show: int) -> list[str]:
    """Rows for names and terms (the gap filler of ``gap.py``); examples to show."""
    shown = []
    print()
    print("| set (answers without digits) | questions settled supported (a gold answer) "
          "| wrong terms of the passage settled | another question's answer settled |")
    print("|---|---|---|---|")
    for name in ("jsquad_ja", "jaquad_ja"):
        right, wrong, other = _terms(name)
        if not right:
            continue
        hits = [r for r in right
                if any(cloze_sentence(g, r[0], _evidence(r[2])) for g in r[1])]
        hits_wrong = [w for w in wrong if cloze_sentence(w[1], w[0], _evidence(w[2]))]
        hits_other = [o for o in other if cloze_sentence(o[1], o[0], _evidence(o[2]))]
        print(f"| {name} | {len(hits)} / {len(right)} | {len(hits_wrong)} / {len(wrong)} "
              f"| {len(hits_other)} / {len(other)} |")
        shown += [f"wrong term settled [{name}]: {q} -> {v}" for q, v, _ in hits_wrong[:show]]
        shown += [f"other answer settled [{name}]: {q} -> {v}" for q, v, _ in hits_other[:show]]
        shown += [f"term settled [{name}]: {q} -> {g[0]}" for q, g, _ in hits[:show]]
    return shown


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", type=int, default=3, help="examples to print per outcome")
    args = ap.parse_args()
    start = time.perf_counter()
    print("| set | right values settled supported | wrong values settled supported |")
    print("|---|---|---|")
    shown: list[str] = []
    for name, (right, wrong) in (("jsquad_ja", _japanese("jsquad_ja")),
                                 ("jaquad_ja", _japanese("jaquad_ja")),
                                 ("halueval_qa (hallucinated answers)", _halueval())):
        if not right and not wrong:
            continue
        hits_right = [r for r in right if cloze_sentence(r[1], r[0], _evidence(r[2]))]
        hits_wrong = [w for w in wrong if cloze_sentence(w[1], w[0], _evidence(w[2]))]
        print(f"| {name} | {len(hits_right)} / {len(right)} | {len(hits_wrong)} / {len(wrong)} |")
        if name.endswith("_ja"):
            others = _other_answers(name)
            hits_other = [o for o in others if cloze_sentence(o[1], o[0], _evidence(o[2]))]
            print(f"| {name}, another question's value | | {len(hits_other)} / {len(others)} |")
            shown += [f"other settled [{name}]: {q} -> {v}" for q, v, _ in hits_other[:args.show]]
        shown += [f"wrong settled [{name}]: {q} -> {v}" for q, v, _ in hits_wrong[:args.show]]
        shown += [f"right settled [{name}]: {q} -> {v}" for q, v, _ in hits_right[:args.show]]
    shown += _gap_part(args.show)
    print()
    print("\n".join(shown))
    print(f"\n{time.perf_counter() - start:.1f} s, no model")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
