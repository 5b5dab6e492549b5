"""The pre-model predicate check on HaluEval-QA dev's yes/no questions, no model.

``on_question.predicate_absent`` stops a yes/no question before any model call when no
passage speaks to what it asks. Each right-answer yes/no question is checked against its
own knowledge paragraph (where it should pass: a stop is a false refusal) and against
another question's paragraph (where it should stop). A second.

    .venv/bin/python benchmarks/predicate_screen.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import eval_path, read_jsonl  # noqa: E402

from grounded_rag.verification import asked  # noqa: E402
from grounded_rag.verification.on_question import predicate_absent  # noqa: E402


def main() -> int:
    path = eval_path("halueval_qa", "pairs.dev.jsonl")
    if path is None:
        return 0
    questions = [r for r in read_jsonl(path) if not r["label"] and asked.is_yes_no(r["question"])]
    own = other = 0
    for n, row in enumerate(questions):
        stranger = questions[(n + 7) % len(questions)]["knowledge"]
        own += bool(predicate_absent(row["question"], [
            {"source_id": "own#0", "text": row["knowledge"], "title": ""}], "en"))  # type: ignore[list-item]
        other += bool(predicate_absent(row["question"], [
            {"source_id": "other#0", "text": stranger, "title": ""}], "en"))  # type: ignore[list-item]
    print(f"{len(questions)} yes/no questions: stopped over their own paragraph {own} "
          f"(false refusals), over another question's {other}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
