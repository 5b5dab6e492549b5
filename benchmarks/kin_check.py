"""Family relations read from English passages: false alarms and catches (no model; seconds).

``kin.wrong_relation`` contradicts a claim that gives two people another family relation
than its evidence does ("X's husband was Y" over "Y was the son of … and his wife X"). This
reads every English paragraph of the dev sets in ``../shared/eval`` (or
``$GROUNDED_RAG_EVAL_DIR``): HaluEval-QA knowledge, NoMIRACL's English passages, SciFact
abstracts and ExpertQA evidence. For each sentence in which ``kin.relations`` reads a
relation:

- **in context**: the sentence as a claim against the other sentences of its paragraph
  (a fire is a false alarm, or a source that contradicts itself);
- **other relation**: its family word replaced by one of another relation (son -> husband,
  wife -> sister …), against the whole paragraph; a fire is a catch;
- **same relation**: the word replaced by its other-gender form (son -> daughter), which the
  rule does not tell apart; a fire is a false alarm.

The rule was written from one held-out small-corpus answer (docs/evaluation.md), before
these numbers were taken.

    .venv/bin/python benchmarks/kin_check.py [--show N]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import eval_path, read_jsonl  # noqa: E402

from grounded_rag.verification.evidence import split_sentences  # noqa: E402
from grounded_rag.verification.kin import relations, wrong_relation  # noqa: E402

OTHER = {"son": "husband", "daughter": "wife", "husband": "brother", "wife": "sister",
         "father": "son", "mother": "daughter", "brother": "father", "sister": "mother",
         "grandson": "son", "granddaughter": "daughter", "uncle": "father", "aunt": "mother",
         "nephew": "son", "niece": "daughter", "cousin": "brother", "widow": "daughter",
         "stepson": "son", "stepdaughter": "daughter"}
SAME = {"son": "daughter", "daughter": "son", "husband": "wife", "wife": "husband",
        "father": "mother", "mother": "father", "brother": "sister", "sister": "brother",
        "grandson": "granddaughter", "uncle": "aunt", "nephew": "niece"}


def paragraphs() -> list[str]:
    """English paragraphs of the dev sets that are present (absent ones are skipped)."""
    out: set[str] = set()
    path = eval_path("halueval_qa", "pairs.dev.jsonl")
    if path is not None:
        out |= {r["knowledge"] for r in read_jsonl(path)}
    path = eval_path("nomiracl_ja_en", "nomiracl.dev.jsonl")
    if path is not None:
        out |= {p["text"] for r in read_jsonl(path) if r["lang"] == "en" for p in r["passages"]}
    path = eval_path("scifact", "corpus.jsonl")
    if path is not None:
        for r in read_jsonl(path):
            text = r.get("abstract") or r.get("text") or ""
            out.add(" ".join(text) if isinstance(text, list) else str(text))
    path = eval_path("expertqa_attribution", "claims.dev.jsonl")
    if path is not None:
        out |= {r[k] for r in read_jsonl(path) for k in ("evidence", "passage")
                if isinstance(r.get(k), str)}
    if not out:
        print("no English dev set found under ../shared/eval: nothing to check")
    return sorted(out)


def _swap(sentence: str, table: dict[str, str]) -> str | None:
    """The sentence with its first family word of ``table`` replaced (None: none there)."""
    m = re.search(r"\b(" + "|".join(sorted(table, key=len, reverse=True)) + r")\b", sentence)
    if m is None:
        return None
    return sentence[:m.start()] + table[m.group(1)] + sentence[m.end():]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=5, help="examples of each kind to print")
    args = parser.parse_args()
    texts = paragraphs()
    counts = {"in context": [0, 0], "other relation": [0, 0], "same relation": [0, 0]}
    shown: dict[str, list[str]] = {k: [] for k in counts}
    read = 0
    for text in texts:
        sentences = [s.text for s in split_sentences(text)]
        for i, sentence in enumerate(sentences):
            if not relations(sentence):
                continue
            read += 1
            trials = [("in context", sentence, sentences[:i] + sentences[i + 1:])]
            for kind, table in (("other relation", OTHER), ("same relation", SAME)):
                changed = _swap(sentence, table)
                if changed is not None:
                    trials.append((kind, changed, sentences))
            for kind, claim, context in trials:
                fired = wrong_relation(claim, context) is not None
                counts[kind][0] += fired
                counts[kind][1] += 1
                if fired and len(shown[kind]) < args.show:
                    shown[kind].append(claim)
    print(f"{len(texts)} paragraphs, {read} sentences with a family relation read")
    for kind, (fired, total) in counts.items():
        role = "catches" if kind == "other relation" else "false alarms"
        print(f"  {kind:15} fires on {fired:4} of {total:4} ({role})")
        for claim in shown[kind]:
            print(f"    - {claim[:160]}")


if __name__ == "__main__":
    main()
