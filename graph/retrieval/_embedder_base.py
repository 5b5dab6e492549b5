"""What the built-in embedders share: pinned weight files, thread count and query cache.

Weight files are located with ``importlib.util.find_spec`` and checked against pinned
sha256 hashes before first use; a missing or altered file is a :class:`ModelFileError`
naming the install command.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from grounded_rag.retrieval._errors import ModelFileError

DIMENSION = 384
"""Vector size of both built-in models."""
EMBEDDER_ENV = "GROUNDED_RAG_EMBEDDER"
"""``e5``, ``minilm`` or ``openai:<model>[@<url>]``: overrides the default embedder choice."""
THREADS_ENV = "GROUNDED_RAG_THREADS"


def package_dir(name: str, hint: str) -> Path:
    """The folder of the installed package ``name``; ``hint`` says how to install it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(
            f"the package {name!r} holding the offline embedding model is not installed; "
            f"install it with: {hint}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


@lru_cache(maxsize=8)
def _checked(path: str, expected: str, size: int, mtime: float, hint: str) -> None:
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if digest != expected:
        raise ModelFileError(
            f"{path} has sha256 {digest}, expected {expected}: the file is corrupt or a "
            f"different version; reinstall with: {hint}"
        )


def verify_file(path: Path, expected: str, hint: str) -> Path:
    """``path``, once its sha256 is ``expected`` (hashed again only when it changes)."""
    if not path.is_file():
        raise ModelFileError(f"{path} is missing; reinstall with: {hint}")
    st = path.stat()
    _checked(str(path), expected, st.st_size, st.st_mtime, hint)
    return path


def cached_query(cache: dict[str, list[float]], text: str,
                 embed: Callable[[str], list[float]]) -> list[float]:
    """``embed(text)`` through a small per-embedder cache.

    The graph re-asks the same question on retries; the cache is emptied past 256 entries.
    """
    hit = cache.get(text)
    if hit is None:
        hit = embed(text)
        if len(cache) > 256:
            cache.clear()
        cache[text] = hit
    return hit


def threads_default() -> int:
    """``$GROUNDED_RAG_THREADS`` when set, else the cores this process may use."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
