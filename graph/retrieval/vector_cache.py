"""An on-disk per-text cache of embeddings (SQLite), for evaluation and benchmarks.

Evaluating the answer task over a shared corpus (JSQuAD's 2,304 passages, SciFact's
5,183 abstracts) embeds every passage; with multilingual-e5 on 2 cores that is minutes per
run. :class:`CachedEmbeddings` keys each vector by model (class, name, weight hash), kind
(passage or query) and text, so any later run, pool or subset reuses what an earlier one
embedded, and an interrupted run keeps its finished batches. The store itself never uses
it (a store keeps its vectors in Chroma).
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def default_vector_cache() -> Path:
    """``~/.cache/grounded-rag/vectors.sqlite`` (``$GROUNDED_RAG_CACHE`` moves it)."""
    from grounded_rag.local.assets import cache_dir

    return cache_dir().parent / "vectors.sqlite"


class CachedEmbeddings:
    """Wrap an Embeddings object with an on-disk per-text cache (SQLite, outside the repo).

    Keyed by model (name + weight hash), kind (passage / query) and text, so any pool or
    subset reuses what an earlier run embedded; an interrupted run keeps finished batches.
    """

    def __init__(self, inner: Any, name: str = "", *, cache_queries: bool = True,
                 path: Path | None = None, progress: bool = True) -> None:
        self.inner = inner
        self.name = name
        self.model_name = getattr(inner, "model_name", "x")
        for attr in ("dimension", "weights_sha256", "multilingual"):
            if hasattr(inner, attr):
                setattr(self, attr, getattr(inner, attr))
        self._model_key = (
            f"{type(inner).__name__}:{self.model_name}:{getattr(inner, 'weights_sha256', '')}"
        )
        self.cache_queries = cache_queries
        self.progress = progress
        self.path = Path(path) if path is not None else default_vector_cache()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS v (k TEXT PRIMARY KEY, vec BLOB NOT NULL)")

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha256(f"{self._model_key}\x1f{kind}\x1f{text}".encode()).hexdigest()

    def _get(self, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            for k, blob in self._db.execute(f"SELECT k, vec FROM v WHERE k IN ({marks})", part):
                out[k] = np.frombuffer(blob, dtype=np.float32)
        return out

    def embed_documents(
        self, texts: list[str], *, batch: int = 64, label: str = ""
    ) -> list[list[float]]:
        """Vectors for passages: cached ones read, missing ones embedded and stored."""
        keys = [self._key("p", t) for t in texts]
        have = self._get(keys)
        missing = sorted(
            {i for i, k in enumerate(keys) if k not in have}, key=lambda i: len(texts[i])
        )
        first_of: dict[str, int] = {}
        for i in missing:  # one embedding per distinct text
            first_of.setdefault(keys[i], i)
        todo = list(first_of.values())
        t0 = time.perf_counter()
        for b in range(0, len(todo), batch):
            idx = todo[b : b + batch]
            vecs = np.asarray(self.inner.embed_documents([texts[i] for i in idx]), dtype=np.float32)
            self._db.executemany(
                "INSERT OR REPLACE INTO v VALUES (?, ?)",
                [(keys[i], v.tobytes()) for i, v in zip(idx, vecs, strict=True)],
            )
            self._db.commit()
            for i, v in zip(idx, vecs, strict=True):
                have[keys[i]] = v
            done = min(b + batch, len(todo))
            rate = done / max(time.perf_counter() - t0, 1e-9)
            if not self.progress:
                continue
            print(
                f"  embed {label or self.name}: {done}/{len(todo)} new ({rate:.1f}/s)",
                file=sys.stderr,
                flush=True,
            )
        return [have[k].tolist() for k in keys]

    def embed_query(self, text: str) -> list[float]:
        """The vector of a query (cached unless ``cache_queries`` is off)."""
        if not self.cache_queries:
            return self.inner.embed_query(text)
        key = self._key("q", text)
        got = self._get([key])
        if key in got:
            return got[key].tolist()
        vec = np.asarray(self.inner.embed_query(text), dtype=np.float32)
        self._db.execute("INSERT OR REPLACE INTO v VALUES (?, ?)", (key, vec.tobytes()))
        self._db.commit()
        return vec.tolist()

    def embed_queries(self, texts: list[str]) -> None:
        """Fill the query cache for many questions (one commit)."""
        keys = [self._key("q", t) for t in texts]
        have = self._get(keys)
        rows = []
        known = set(have)
        for t, k in zip(texts, keys, strict=True):
            if k not in known:
                rows.append((k, np.asarray(self.inner.embed_query(t), dtype=np.float32).tobytes()))
                known.add(k)
        self._db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
        self._db.commit()
