"""How often a "Yes" / "No" lead is given on same-value comparisons, and whether the gold agrees.

``grounded_rag.verification.same_value`` puts "Yes" or "No" in front of a verified answer to
"Are A and B from the same country?" (nationality, continent, family, genus, year) when each
compared thing's quoted sentence gives one value of that kind. Here the statements are the
sentences of each HaluEval-QA dev question's knowledge paragraph (two Wikipedia openings,
run together at a full stop, split there); the questions are every right-answer yes/no
question the rule reads as a same-value comparison. No model; a second.

    .venv/bin/python benchmarks/same_value_check.py [--show]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import eval_path, knowledge_statements, read_jsonl  # noqa: E402

from grounded_rag.verification.same_value import asked_kind, same_value_lead  # noqa: E402

_YES_NO = re.compile(r"^(?:is|are|was|were|do|does|did)\b", re.I)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", action="store_true", help="print every question and its lead")
    args = ap.parse_args()
    path = eval_path("halueval_qa", "pairs.dev.jsonl")
    if path is None:
        return 0
    rows = [r for r in read_jsonl(path) if not r["label"] and _YES_NO.match(r["question"].strip())]
    outcome: Counter[tuple[str, str]] = Counter()
    other: Counter[str] = Counter()
    asked = [r for r in rows if asked_kind(r["question"]) is not None]
    for n, row in enumerate(asked):
        question = row["question"].strip()
        gold = row["answer"].strip().lower()
        gold = "yes" if gold.startswith("yes") else "no" if gold.startswith("no") else "other"
        lead = same_value_lead(question, knowledge_statements(row["knowledge"]))  # type: ignore[arg-type]
        outcome[(lead or "none", gold)] += 1
        if args.show:
            print(f"{lead or '-':>4} gold {gold:>3} | {question}")
        # the same question over the next question's paragraph: no lead may be given
        stranger = asked[(n + 1) % len(asked)]["knowledge"]
        other[same_value_lead(question, knowledge_statements(stranger)) or "none"] += 1  # type: ignore[arg-type]
    print(f"{len(asked)} same-value questions of {len(rows)} right-answer yes/no questions")
    print("| lead | gold yes | gold no | gold other | another question's paragraph |")
    print("|---|---|---|---|---|")
    for lead in ("Yes", "No", "none"):
        print(f"| {lead} | {outcome[(lead, 'yes')]} | {outcome[(lead, 'no')]} "
              f"| {outcome[(lead, 'other')]} | {other[lead]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
