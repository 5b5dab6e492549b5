"""What the retrieval benchmark's parts share: the load-average line and the embedders."""

from __future__ import annotations

import os

from _common import CachedEmbeddings

from grounded_rag.retrieval.embeddings import E5Embeddings, MiniLMEmbeddings


def load_average() -> str:
    """``load average`` and its three numbers, printed next to every timing."""
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def make_embedder(name: str, threads: int = 1, *, cached: bool = True):
    """A built-in embedder, wrapped in the on-disk vector cache unless ``cached=False``."""
    inner = E5Embeddings(threads=threads) if name == "e5" else MiniLMEmbeddings(threads=threads)
    return CachedEmbeddings(inner, name) if cached else inner
