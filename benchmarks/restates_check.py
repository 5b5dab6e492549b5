"""How often "A is B" statements are read as restating themselves, on HaluEval-QA dev, no model.

``restates.restates_itself`` calls an English "A is B" statement off the question when it
only says that A is A ("The mayor of Kyoto is Kyoto City Mayor"). Checked here:

each sentence of a question's own knowledge paragraph, read as a statement answering that
question (true sentences, most of them answers or facts next to one), for the questions the
off-question check reads this way (a question word, no either/or). Every one flagged is
shown, to be read as a false alarm or not.

A few seconds, no model.

    .venv/bin/python benchmarks/restates_check.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import eval_path, knowledge_statements, read_jsonl  # noqa: E402

from grounded_rag.verification.on_question import _CHOICE, _WH  # noqa: E402
from grounded_rag.verification.restates import restates_itself  # noqa: E402


def main() -> int:
    path = eval_path("halueval_qa", "pairs.dev.jsonl")
    if path is None:
        return 0
    rows = {r["question"]: r for r in read_jsonl(path)
            if not r["label"] and _WH.search(r["question"]) and not _CHOICE.search(r["question"])}
    sentences = flagged = 0
    for question, row in rows.items():
        for statement in knowledge_statements(row["knowledge"]):
            sentences += 1
            if restates_itself(statement["text"], question):
                flagged += 1
                print(f"- {question!r}\n    {statement['text'][:160]!r}")
    print(f"{len(rows)} questions, {sentences} knowledge sentences read as their answers: "
          f"{flagged} read as restating themselves")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
