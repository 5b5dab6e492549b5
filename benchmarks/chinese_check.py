"""How often real Japanese text would read as Chinese (``answer_language.reads_as_chinese``).

A statement that reads as Chinese is in neither of the product's languages: for a Japanese
question it is sent back to be written in Japanese, and for an English one it is never the
earlier attempt delivered in the sources' language. A false reading would send a right
Japanese answer back for nothing, so this counts, over every Japanese set in ../shared/eval
(each string field of each row, split into sentences, each distinct sentence once: passages,
questions, answers, generated JHARS responses, NoMIRACL's Japanese side), the sentences it
reads as Chinese, and prints the first of them. No model; about a minute.

    .venv/bin/python benchmarks/chinese_check.py [--show N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import EVAL_DIR, read_jsonl  # noqa: E402

from grounded_rag.lang import detect_language  # noqa: E402
from grounded_rag.verification.answer_language import reads_as_chinese  # noqa: E402
from grounded_rag.verification.evidence import split_sentences  # noqa: E402

SETS = ("jsquad_ja", "jaquad_ja", "jhars_ja", "jnli_ja", "jsick_ja", "janli_ja", "nomiracl_ja_en")


def _strings(value: object) -> list[str]:
    """Every string inside a row (NoMIRACL keeps its passages in a list of objects)."""
    if isinstance(value, str):
        return [value] if len(value) >= 4 else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", type=int, default=20, help="print up to N sentences read so")
    args = ap.parse_args()
    seen: set[str] = set()
    hits: list[tuple[str, str]] = []
    per_set: dict[str, int] = {}
    for name in SETS:
        files = sorted((EVAL_DIR / name).glob("*.jsonl"))
        if not files:
            print(f"skip: {EVAL_DIR / name} has no data", file=sys.stderr)
            continue
        count = 0
        for path in files:
            for row in read_jsonl(path):
                for value in _strings(row):
                    if detect_language(value) != "ja":
                        continue
                    for sentence in split_sentences(value):
                        if sentence.text in seen:
                            continue
                        seen.add(sentence.text)
                        count += 1
                        if reads_as_chinese(sentence.text):
                            hits.append((name, sentence.text))
        per_set[name] = count
    for name, count in per_set.items():
        print(f"{name}: {count} Japanese sentences, "
              f"{sum(1 for n, _ in hits if n == name)} read as Chinese")
    print(f"all: {len(seen)} sentences, {len(hits)} read as Chinese")
    for name, text in hits[:args.show]:
        print(f"  {name}: {text[:100]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
