"""The country cue (``verification.country``) screened on English claims, no model.

- HaluEval-QA dev: every answer (right and hallucinated) against its knowledge paragraph,
  with its question. A cue on a right answer is a false alarm; on a hallucinated one, a
  catch.
- ExpertQA attribution dev: every claim with evidence, against that evidence (any cue is
  read as a false alarm to look at: the labels rate attribution, not country facts).
- SciFact dev: every claim against each cited abstract.

    .venv/bin/python benchmarks/country_check.py [--show N]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import eval_path, read_jsonl  # noqa: E402

from grounded_rag.verification.country import country_mismatch  # noqa: E402
from grounded_rag.verification.evidence import split_sentences  # noqa: E402


def cue(claim: str, texts: list[str], question: str = "") -> tuple[str, str, str] | None:
    """The cue as ``cues.check_claim`` computes it, over the texts' sentences."""
    return country_mismatch(claim, [s.text for t in texts for s in split_sentences(t)],
                            question)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", type=int, default=0, help="print this many cues per set")
    args = parser.parse_args(argv)
    halueval = eval_path("halueval_qa", "pairs.dev.jsonl")
    if halueval is None:
        return 0
    counts: Counter[tuple[str, str]] = Counter()
    shown: Counter[str] = Counter()

    def record(name: str, label: str, found: tuple | None, claim: str) -> None:
        counts[(name, label)] += 1
        if found is not None:
            counts[(name, label + " with a cue")] += 1
            if shown[name] < args.show:
                shown[name] += 1
                print(f"  [{name}, {label}] {claim[:90]!r}: {found[1]} vs {found[2]} in "
                      f"{found[0][:90]!r}")

    for row in read_jsonl(halueval):
        label = "hallucinated" if row["label"] else "right"
        record("HaluEval-QA", label, cue(row["answer"], [row["knowledge"]], row["question"]),
               row["answer"])
    expertqa = eval_path("expertqa_attribution", "claims.dev.jsonl")
    for row in read_jsonl(expertqa) if expertqa else []:
        if row["evidence"]:
            record("ExpertQA", "claims", cue(row["claim"], row["evidence"], row["question"]),
                   row["claim"])
    scifact = eval_path("scifact", "claims.dev.jsonl")
    corpus_path = eval_path("scifact", "corpus.jsonl")
    if scifact and corpus_path:
        corpus = {d["doc_id"]: d for d in read_jsonl(corpus_path)}
        for row in read_jsonl(scifact):
            for doc_id in row["cited_doc_ids"]:
                doc = corpus.get(doc_id)
                if doc is None:
                    continue
                abstract = doc.get("abstract")
                text = " ".join(abstract) if isinstance(abstract, list) else str(abstract)
                record("SciFact", "pairs", cue(row["claim"], [text]), row["claim"])
    for name in ("HaluEval-QA", "ExpertQA", "SciFact"):
        labels = sorted({label for n, label in counts if n == name and "with" not in label})
        print(f"{name}: " + ", ".join(
            f"{counts[(name, label + ' with a cue')]} of {counts[(name, label)]} {label}"
            for label in labels))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
