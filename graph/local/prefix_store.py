"""System-prompt KV caches kept on disk, so that a new process does not evaluate them again.

:meth:`grounded_rag.local.runtime.LocalRuntime.keep_prefix` keeps the KV cache of the
generator's fixed system prompts in memory, which helps a server or a benchmark from its
second answer on. A command-line ``ask`` is a new process each time, and without a copy on
disk it evaluates the system prompt (150-200 tokens, 2-3 s on 2 cores) before every answer.

A saved copy is the llama.cpp sequence state of exactly those tokens (a few MB). Its file
name is a hash of everything the state depends on: the model file (name, size, modification
time), the llama.cpp build and its CPU features, the context size and KV cache types, and
the token ids. A file that llama.cpp does not accept is ignored (the prefix is evaluated and
saved again); at most :data:`MAX_FILES` are kept, the least recently used go first.
``$GROUNDED_RAG_PREFIX_DISK=off`` keeps them in memory only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grounded_rag.local.runtime import LocalRuntime

log = logging.getLogger(__name__)

SWITCH_ENV = "GROUNDED_RAG_PREFIX_DISK"
"""Set to ``off`` to keep system-prompt caches in memory only."""

DIR_NAME = "prefixes"
"""Folder beside the model folder (:func:`grounded_rag.local.assets.cache_dir`):
``~/.cache/grounded-rag/prefixes``."""

MAX_FILES = 8
"""Saved prefixes kept (a system prompt per language and kind; ~4-6 MB each)."""


def enabled() -> bool:
    """Whether prefixes are read from and written to disk."""
    return os.environ.get(SWITCH_ENV, "").strip().lower() not in {"off", "0", "false", "no"}


def folder() -> Path:
    """Where the saved prefixes live."""
    from grounded_rag.local.assets import cache_dir

    return cache_dir().parent / DIR_NAME


def key(runtime: LocalRuntime, prefix: Sequence[int]) -> str:
    """The file stem for ``prefix`` on this model, build and context."""
    import llama_cpp

    try:
        stat = runtime.path.stat()
        model = [runtime.path.name, stat.st_size, stat.st_mtime_ns]
    except OSError:
        model = [str(runtime.path), 0, 0]
    params = getattr(runtime.llama, "context_params", None)
    facts = {
        "model": model,
        "llama_cpp": getattr(llama_cpp, "__version__", "?"),
        "cpu": _system_info(),
        "n_ctx": runtime.n_ctx,
        "kv": [int(getattr(params, "type_k", -1)), int(getattr(params, "type_v", -1)),
               int(getattr(params, "flash_attn_type", getattr(params, "flash_attn", -1)))],
        "tokens": list(prefix),
    }
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()[:32]


@lru_cache(maxsize=1)
def _system_info() -> str:
    """llama.cpp's CPU features (kernels built for other features round differently)."""
    import llama_cpp

    try:
        info = llama_cpp.llama_print_system_info()
    except Exception:  # noqa: BLE001 - an older binding: the version alone must do
        return "?"
    return info.decode("utf-8", "replace") if isinstance(info, bytes) else str(info)


def load(runtime: LocalRuntime, prefix: Sequence[int]) -> bytes | None:
    """The saved state of ``prefix``, or None (none saved, unreadable, or switched off)."""
    if not enabled():
        return None
    path = folder() / f"{key(runtime, prefix)}.kv"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        os.utime(path)  # recently used: pruned last
    except OSError:
        pass
    return data or None


def save(runtime: LocalRuntime, prefix: Sequence[int], data: bytes) -> None:
    """Write the state of ``prefix`` (atomically); failures are logged, never raised."""
    if not enabled() or not data:
        return
    where = folder()
    try:
        where.mkdir(parents=True, exist_ok=True)
        target = where / f"{key(runtime, prefix)}.kv"
        fd, tmp = tempfile.mkstemp(dir=where, suffix=".part")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
        _prune(where)
    except OSError as exc:
        log.info("could not save a system-prompt cache in %s: %s", where, exc)


def forget(runtime: LocalRuntime, prefix: Sequence[int]) -> None:
    """Remove the saved state of ``prefix`` (llama.cpp refused it)."""
    try:
        (folder() / f"{key(runtime, prefix)}.kv").unlink(missing_ok=True)
    except OSError:
        pass


def _prune(where: Path) -> None:
    files = sorted(where.glob("*.kv"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in files[MAX_FILES:]:
        old.unlink(missing_ok=True)
    stale = time.time() - 3600
    for part in where.glob("*.part"):  # left by a writer that died
        if part.stat().st_mtime < stale:
            part.unlink(missing_ok=True)
