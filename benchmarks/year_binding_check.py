"""The value-binding check on yearly series: false alarms on true clauses, catches on swaps.

``grounded_rag.verification.binding`` reads a year that labels a value (「2006年19.3万人、2007年
23.5万人」) as that value's case. Over every sentence of the JSQuAD and JaQuAD passages that
holds such a year (no model, seconds):

* **true clauses**: each clause of the sentence holding a value, as a claim against the
  passage's sentences: a flag is a false alarm;
* **swaps**: for a sentence with two year-labelled clauses, "<first year>年には<second
  clause's value>であった": a flag is a catch.

    .venv/bin/python benchmarks/year_binding_check.py [--show 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import eval_path, read_jsonl  # noqa: E402

from grounded_rag.verification.binding import (  # noqa: E402
    _CLAUSE,
    _clauses,
    _quantities,
    cases_in,
    misbound_value,
)
from grounded_rag.verification.evidence import split_sentences  # noqa: E402


def _years(cases: frozenset[str]) -> list[str]:
    return sorted(c[len("year "):] for c in cases if c.startswith("year "))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", type=int, default=5, help="examples to print per outcome")
    args = ap.parse_args()
    clauses = alarms = swaps = caught = 0
    shown: list[str] = []
    for name in ("jsquad_ja", "jaquad_ja"):
        path = eval_path(name, "passages.jsonl")
        if path is None:
            continue
        for passage in read_jsonl(path):
            sentences = [s.text for s in split_sentences(passage["text"].split(" [SEP] ")[-1])]
            for sentence in sentences:
                if not _years(cases_in(sentence)):
                    continue
                for part in _CLAUSE.split(sentence):
                    if part and part.strip() and _quantities(part, False):
                        clauses += 1
                        if misbound_value(part, sentences, xlang=False):
                            alarms += 1
                            shown.append(f"false alarm: {part}")
                labelled = [c for c in _clauses(sentence, False) if _years(c.cases)]
                if len(labelled) < 2 or labelled[0].values[0].text == labelled[1].values[0].text:
                    continue
                claim = f"{_years(labelled[0].cases)[0]}年には{labelled[1].values[0].text}であった"
                swaps += 1
                if misbound_value(claim, sentences, xlang=False):
                    caught += 1
                elif len([s for s in shown if s.startswith("missed")]) < args.show:
                    shown.append(f"missed: {claim} | {sentence[:100]}")
    print(f"true clauses flagged: {alarms} of {clauses}")
    print(f"swapped values caught: {caught} of {swaps}")
    print("\n".join(shown[: 2 * args.show]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
