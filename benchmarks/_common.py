"""Shared helpers for the benchmark scripts (not part of the package)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from grounded_rag.retrieval.vector_cache import CachedEmbeddings as _CachedEmbeddings

EVAL_DIR = Path(
    os.environ.get(
        "GROUNDED_RAG_EVAL_DIR", Path(__file__).resolve().parents[1] / ".." / "shared" / "eval"
    )
)
CACHE_DIR = Path(
    os.environ.get("GROUNDED_RAG_BENCH_CACHE", Path.home() / ".cache" / "grounded-rag-bench")
)


def eval_path(*parts: str) -> Path | None:
    """Path of an eval file, or None (with a message) when the shared data is absent."""
    p = EVAL_DIR.joinpath(*parts)
    if not p.exists():
        print(
            f"skip: {p} not found (evaluation data lives in ../shared/eval; "
            "set GROUNDED_RAG_EVAL_DIR)",
            file=sys.stderr,
        )
        return None
    return p


def knowledge_statements(knowledge: str) -> list[dict]:
    """A HaluEval-QA knowledge paragraph as verified statements quoting themselves.

    The paragraph runs two Wikipedia openings together at a full stop (or after a closing
    quote or bracket: "...of \"Janus\".)The Lady is..."); it is split there.
    """
    from grounded_rag.verification.evidence import RUN_TOGETHER, split_sentences

    text = RUN_TOGETHER.sub(" ", knowledge)
    return [{"text": s.text, "citations": [{"quote": s.text}]} for s in split_sentences(text)]


def read_jsonl(path: Path, limit: int | None = None) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
                if limit and len(rows) >= limit:
                    break
    return rows


class CachedEmbeddings(_CachedEmbeddings):
    """The package's on-disk embedding cache, kept in the benchmarks' cache folder."""

    def __init__(self, inner, name: str = "", *, cache_queries: bool = True) -> None:
        super().__init__(inner, name, cache_queries=cache_queries,
                         path=CACHE_DIR / "vectors.sqlite")
