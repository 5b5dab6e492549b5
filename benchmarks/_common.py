"""Shared helpers for the benchmark scripts (not part of the package)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

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
            f"skip: {p} not found (evaluation data lives in ../shared/eval; set GROUNDED_RAG_EVAL_DIR)",
            file=sys.stderr,
        )
        return None
    return p


def read_jsonl(path: Path, limit: int | None = None) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
                if limit and len(rows) >= limit:
                    break
    return rows


class CachedEmbeddings:
    """Wrap an Embeddings object with an on-disk cache of document vectors (outside the repo)."""

    def __init__(self, inner, name: str) -> None:
        self.inner = inner
        self.name = name
        self.model_name = getattr(inner, "model_name", "x")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        key = hashlib.sha256(("\x1e".join(texts) + self.model_name).encode()).hexdigest()[:16]
        path = CACHE_DIR / f"{self.name}-{key}.npy"
        if path.exists():
            return np.load(path).tolist()
        vecs = np.asarray(self.inner.embed_documents(texts), dtype=np.float32)
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
        return vecs.tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)
