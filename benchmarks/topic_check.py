"""How often a right Japanese answer would be called off the question by ``topic_uncited``.

A Japanese question that opens with what it asks about (「日本野球連盟はいつ設立された？」)
is answered off the question when no passage the answer cites writes that name
(``subjects.topic_uncited``). A right answer cites the passage that holds it, so this
counts, over JSQuAD's and JaQuAD's answerable dev questions, those whose topic their own
gold passage (title and text) does not write: an answer citing only that passage would be
sent back, and abstain if its revision cited nothing else. No model; a few seconds.

    .venv/bin/python benchmarks/topic_check.py [--show N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import EVAL_DIR, read_jsonl  # noqa: E402

from grounded_rag.verification.subjects import question_topic, topic_uncited  # noqa: E402

SETS = ("jsquad_ja", "jaquad_ja")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", type=int, default=10, help="print up to N flagged questions a set")
    args = ap.parse_args()
    for name in SETS:
        passages_path = EVAL_DIR / name / "passages.jsonl"
        questions_path = EVAL_DIR / name / "questions.dev.jsonl"
        if not (passages_path.exists() and questions_path.exists()):
            print(f"skip: {EVAL_DIR / name} has no data", file=sys.stderr)
            continue
        passages = {r["pid"]: r for r in read_jsonl(passages_path)}
        total = with_topic = flagged = 0
        shown: list[str] = []
        for row in read_jsonl(questions_path):
            gold = passages.get(row.get("gold_pid"))
            if row.get("is_impossible") or gold is None:
                continue
            total += 1
            question = str(row["question"])
            if not question_topic(question):
                continue
            with_topic += 1
            source = {"source_id": gold["pid"], "title": gold.get("title", ""),
                      "text": gold["text"]}
            statement = {"text": str(row["answers"][0]),
                         "citations": [{"source_id": gold["pid"], "quote": ""}]}
            topic = topic_uncited(question, [statement], [source])
            if topic:
                flagged += 1
                if len(shown) < args.show:
                    shown.append(f"    {question}  (topic {topic})")
        share = flagged / total if total else 0.0
        print(f"{name}: {total} answerable dev questions, {with_topic} with a topic, "
              f"{flagged} whose gold passage does not write it ({share:.2%} of all)")
        for line in shown:
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
