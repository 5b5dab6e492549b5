"""How often the "Yes" / "No" leads are given on both-questions, and whether the gold agrees.

``grounded_rag.verification.yes_lead`` puts "Yes" in front of a verified answer to "Are A
and B both X?" when each compared thing has a statement of its own saying X. Here the
statements are the sentences of each HaluEval-QA dev question's knowledge paragraph (two
Wikipedia openings, one per compared thing, run together at a full stop, split there), the
question is every right-answer yes/no question with "both". The "No" row is
``same_value.both_country_lead`` ("Are A and B both from <country>?", a quote giving another
country). No model; a second.

    .venv/bin/python benchmarks/yes_lead_check.py [--show]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import eval_path, knowledge_statements, read_jsonl  # noqa: E402

from grounded_rag.verification.same_value import both_country_lead  # noqa: E402
from grounded_rag.verification.yes_lead import yes_lead  # noqa: E402

_YES_NO = re.compile(r"^(?:is|are|was|were|do|does|did)\b", re.I)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", action="store_true", help="print each lead the gold disagrees with")
    args = ap.parse_args()
    path = eval_path("halueval_qa", "pairs.dev.jsonl")
    if path is None:
        return 0
    outcome: Counter[tuple[str, str]] = Counter()
    for row in read_jsonl(path):
        question = row["question"].strip()
        if row["label"] or not _YES_NO.match(question) or " both " not in f" {question} ":
            continue
        gold = row["answer"].strip().lower()
        gold = "yes" if gold.startswith("yes") else "no" if gold.startswith("no") else "other"
        statements = knowledge_statements(row["knowledge"])
        lead = ("Yes" if yes_lead(question, statements)  # type: ignore[arg-type]
                else both_country_lead(question, statements) or "none")  # type: ignore[arg-type]
        outcome[(lead, gold)] += 1
        if args.show and lead != "none" and gold != lead.lower():
            print(f"{lead} on {gold}: {question}")
    print("| lead | gold yes | gold no | gold other |")
    print("|---|---|---|---|")
    for lead in ("Yes", "No", "none"):
        print(f"| {lead} | {outcome[(lead, 'yes')]} | {outcome[(lead, 'no')]} "
              f"| {outcome[(lead, 'other')]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
