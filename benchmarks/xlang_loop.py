"""The whole loop on the small-corpus cross-language questions only (local model; minutes).

``grounded-rag eval small-corpus --mode loop`` samples ten cross-language questions among
forty; this runs every English question over Japanese passages of one part (dev: 71, of
which ``--limit`` samples; held-out: 29) with any graph settings, and writes the same report
and items file. Each question is asked over its own collection (the title's Japanese
sections plus English paragraphs). The report's ``fact drafted, lost`` column counts the
misses whose drafts held the fact.

    .venv/bin/python benchmarks/xlang_loop.py --split dev --limit 30 --out DIR [--set language=ja]

``--set language=ja`` writes (and verifies) the answers in the sources' language: the upper
bound of drafting cross-language answers in Japanese (docs/decisions.md, "Cross-language
answers drafted in the sources' language").
"""

from __future__ import annotations

import argparse

from grounded_rag.evaluation._small_corpus import CROSS, build_small_corpus
from grounded_rag.evaluation._small_corpus_run import load_sources, run_small_corpus


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "heldout"), default="dev")
    ap.add_argument("--limit", type=int, default=0, help="sample N questions (0: all)")
    ap.add_argument("--out", default="eval-results/xlang-loop")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="graph setting, e.g. language=ja")
    args = ap.parse_args()
    settings = dict(s.split("=", 1) for s in args.set)
    data = build_small_corpus(load_sources(), seed=0)
    every = data.part

    def cross_only(name: str) -> list:
        return [i for i in every(name) if i.qtype == CROSS and i.answerable]

    data.part = cross_only  # type: ignore[method-assign]
    report = run_small_corpus(mode="loop", split=args.split, limit=args.limit or None,
                              settings=settings, out_dir=args.out, resume=False,
                              progress=False, data=data, only="answerable")
    print(report["markdown"])
    print("items:", report["files"]["items"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
