"""The U.S. state a passage gives for "in what state" questions, on HaluEval-QA dev, no model.

``place.state_fillers`` pins a state when the passage a question is about names one state
only. Each right-answer question asking for a U.S. state is checked:

- against its own knowledge paragraph: the state pinned, and whether it is the gold answer;
- against its paragraph among nine other questions' paragraphs (a small store);
- against every other question's paragraph alone (a pin there would be a state the
  question's own sources never gave: it should be none);
- whether the gold answer itself would be called off the question (``gap.gap_unwritten``).

A second, no model.

    .venv/bin/python benchmarks/place_check.py [--show]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import eval_path, read_jsonl  # noqa: E402

from grounded_rag.verification.gap import gap_unwritten  # noqa: E402
from grounded_rag.verification.place import asks_state, state_fillers  # noqa: E402


def _passage(n: int, text: str) -> dict:
    return {"source_id": f"doc-{n}#0", "text": text, "title": ""}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="print every question")
    args = parser.parse_args(argv)
    path = eval_path("halueval_qa", "pairs.dev.jsonl")
    if path is None:
        return 0
    rows = [r for r in read_jsonl(path) if not r["label"]]
    paragraphs = list(dict.fromkeys(r["knowledge"] for r in rows))
    asking = [r for r in rows if asks_state(r["question"])]
    pinned = right = in_store = in_store_right = stranger_pins = gold_off = 0
    for n, row in enumerate(asking):
        gold = row["answer"]
        own = state_fillers(row["question"], [_passage(0, row["knowledge"])])
        others = [p for p in paragraphs if p != row["knowledge"]]
        store = [_passage(i + 1, p) for i, p in enumerate(others[n * 9:(n + 1) * 9])]
        mixed = state_fillers(row["question"], [_passage(0, row["knowledge"]), *store])
        pinned += bool(own)
        right += bool(own) and own[0][0].lower() in gold.lower()
        in_store += bool(mixed)
        in_store_right += bool(mixed) and mixed[0][0].lower() in gold.lower()
        strays = [p for p in others if state_fillers(row["question"], [_passage(1, p)])]
        stranger_pins += len(strays)
        gold_off += bool(own) and bool(gap_unwritten([gold], own))
        if args.show:
            print(f"{row['question'][:90]!r} gold {gold!r}: own {own[0][0] if own else '-'}, "
                  f"in a store of ten {mixed[0][0] if mixed else '-'}, "
                  f"over other paragraphs {len(strays)}")
    print(f"{len(asking)} right-answer questions asking for a U.S. state:")
    print(f"  over their own paragraph: a state pinned for {pinned}, the gold answer {right}")
    print(f"  among nine other paragraphs: pinned {in_store}, the gold answer {in_store_right}")
    print(f"  over each of the {len(paragraphs) - 1} other paragraphs alone: {stranger_pins} "
          "pins in all")
    print(f"  gold answers called off the question (the pin not written): {gold_off}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
