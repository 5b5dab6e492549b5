"""Could the local model put "Yes" / "No" in front of a verified answer to a yes/no question?

An answer to "Are Cardillac and La donna del lago both operas?" states what the sources say
of each ("Cardillac is an opera by Paul Hindemith[1]. La donna del lago … is an opera by
Gioachino Rossini[2].") but not "Yes". This measures whether the local model's P(Yes) on a
short prompt (the statements, the question, "Answer Yes or No") is good enough to add that
word: on HaluEval-QA dev's answerable yes/no questions (HotpotQA comparisons) with their
own knowledge paragraph as the statements, and with another question's paragraph (where no
lead should be given). A lead is given when P(Yes) >= hi ("Yes") or <= 1 - hi ("No").
No threshold was fitted: every operating point is printed. One model pass per prompt.

    .venv/bin/python benchmarks/yes_no_lead_check.py [--limit N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

SYSTEM = ("You answer yes/no questions using only the statements given. Statements not given "
          "do not count.")
USER = ("Statements:\n{statements}\n\nQuestion: {question}\n"
        "Do the statements answer the question with yes? Answer Yes or No.")
_AUX = re.compile(r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b",
                  re.I)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="questions (0: all)")
    args = parser.parse_args(argv)
    from _common import eval_path

    path = eval_path("halueval_qa", "pairs.dev.jsonl")
    if path is None:
        return 3
    rows = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    items = [r for r in rows if r["label"] == 0 and _AUX.match(r["question"].strip())
             and r["answer"].strip().lower() in ("yes", "no")]
    if args.limit:
        items = items[: args.limit]
    from grounded_rag.local.scorer import SupportScorer

    scorer = SupportScorer()
    started = time.perf_counter()
    scored = []
    for i, r in enumerate(items):
        other = items[(i + 17) % len(items)]["knowledge"]
        own, unrelated = scorer.score_questions([
            (SYSTEM, USER.format(statements=r["knowledge"].strip(), question=r["question"])),
            (SYSTEM, USER.format(statements=other.strip(), question=r["question"]))])
        scored.append((r["answer"].strip().lower(), own, unrelated))
    gold_yes = sum(1 for g, _, _ in scored if g == "yes")
    print(f"{len(scored)} yes/no questions ({gold_yes} yes), {2 * len(scored)} passes, "
          f"{time.perf_counter() - started:.0f} s")
    for hi in (0.5, 0.6, 0.7, 0.8, 0.9):
        lead = [(g, p) for g, p, _ in scored if p >= hi or p <= 1 - hi]
        right = sum(1 for g, p in lead if (p >= hi) == (g == "yes"))
        yes = sum(1 for _, p in lead if p >= hi)
        stray = sum(1 for _, _, q in scored if q >= hi or q <= 1 - hi)
        print(f"  hi={hi}: lead on {len(lead)}/{len(scored)} ({yes} Yes), right {right}; "
              f"lead on another question's statements {stray}/{len(scored)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
