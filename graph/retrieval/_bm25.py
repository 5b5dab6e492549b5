"""A thin wrapper around a bm25s index: top-n search and document frequencies."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

KEYS_FILE = "keys.json"


class BM25Index:
    """BM25 over pre-tokenized chunks, addressed by chunk key."""

    def __init__(self, model: Any, keys: list[str]) -> None:
        self.model = model
        self.keys = keys
        indptr = np.asarray(model.scores["indptr"])
        self._df = np.diff(indptr)
        self._vocab: dict[str, int] = model.vocab_dict
        self.n_docs = len(keys)

    @classmethod
    def build(cls, keys: list[str], tokens: Sequence[list[str]]) -> BM25Index:
        """Index ``tokens[i]`` as the document with key ``keys[i]``."""
        import bm25s

        model = bm25s.BM25()
        model.index([list(t) for t in tokens], show_progress=False)
        return cls(model, list(keys))

    def save(self, directory: Path) -> None:
        """Write the index and its key list into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        self.model.save(str(directory), show_progress=False)
        (directory / KEYS_FILE).write_text(json.dumps(self.keys), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        """Load an index written by :meth:`save`."""
        import bm25s

        model = bm25s.BM25.load(str(directory), show_progress=False, mmap=False)
        keys = json.loads((directory / KEYS_FILE).read_text(encoding="utf-8"))
        return cls(model, keys)

    def search(self, tokens: list[str], n: int) -> list[tuple[str, float]]:
        """Top ``n`` (key, score) pairs with a positive score, best first."""
        known = [t for t in tokens if t in self._vocab]
        if not known or not self.keys:
            return []
        scores = self.model.get_scores(known)
        n = min(n, len(scores))
        top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.keys[i], float(scores[i])) for i in top if scores[i] > 0]

    def idf(self, token: str, *, min_docs: int = 0) -> float:
        """Smoothed inverse document frequency (unknown tokens get the maximum).

        ``min_docs`` counts a smaller index as that many documents, the rest without the
        token: in a store of ten sections a word of the topic is in every one of them and
        would weigh nothing, although a larger collection would find it informative.
        """
        i = self._vocab.get(token)
        df = int(self._df[i]) if i is not None and i < len(self._df) else 0
        n = max(self.n_docs, min_docs)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))
