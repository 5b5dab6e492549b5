"""The served graph's checkpointer: where it lives, how to open it, what its outages raise."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = ["NEW_THREAD", "checkpointer_kind", "database_errors", "default_checkpoint_path",
           "default_checkpointer", "is_new_thread", "open_checkpointer",
           "skip_new_thread_reads"]

CHECKPOINT_FILE = "serving-checkpoints.sqlite"
"""The SQLite checkpointer's file in a store directory."""


NEW_THREAD = "__grounded_rag_new_thread"
"""A run's ``configurable`` flag: the server has just made up its thread id (the client sent
none), so no checkpoint of it can exist. Keys starting with ``__`` are never written to
checkpoint metadata, and a client cannot send it (unknown settings are refused)."""

OWNER = "owner"
"""Checkpoint metadata key: the name of the API key whose request started the thread. Every
run on the thread (a review's resume, a deferred verification) writes it again."""


def thread_owner(snapshot: Any) -> str | None:
    """The key name a thread belongs to (``None``: made without keys)."""
    owner = (getattr(snapshot, "metadata", None) or {}).get(OWNER)
    return owner if isinstance(owner, str) else None


def is_new_thread(config: Any) -> bool:
    """Whether ``config`` reads the latest checkpoint of a thread the server has just made up."""
    configurable = (config or {}).get("configurable") or {}
    return bool(configurable.get(NEW_THREAD) and not configurable.get("checkpoint_id")
                and not configurable.get("checkpoint_ns"))


def skip_new_thread_reads(saver: BaseCheckpointSaver) -> BaseCheckpointSaver:
    """Have ``saver`` answer a run's first read of a new thread (:data:`NEW_THREAD`) itself.

    A run starts by reading its thread's latest checkpoint. For a thread id the server has
    just made up there is none: that read is a database round trip (two with the pool's
    connection check) for nothing. ``saver`` is changed in place (its ``get_tuple`` and
    ``aget_tuple``); every other read, and every write, goes to the database as before.
    """
    if getattr(saver, "_skips_new_thread_reads", False):
        return saver
    read, aread = saver.get_tuple, saver.aget_tuple

    def get_tuple(config: Any) -> Any:
        return None if is_new_thread(config) else read(config)

    async def aget_tuple(config: Any) -> Any:
        return None if is_new_thread(config) else await aread(config)

    saver.get_tuple = get_tuple  # type: ignore[method-assign]
    saver.aget_tuple = aget_tuple  # type: ignore[method-assign]
    saver._skips_new_thread_reads = True  # type: ignore[attr-defined]
    return saver


def _is_url(spec: str) -> bool:
    return spec.startswith(("postgresql://", "postgres://"))


def default_checkpoint_path(store_dir: str | None = None) -> Path:
    """Where the embedded SQLite checkpointer lives: next to the store (a directory)."""
    base = store_dir or os.environ.get("GROUNDED_RAG_STORE") or ".grounded-rag"
    if _is_url(base):  # a path built from a URL would be a folder named after it
        raise ValueError(f"a postgresql:// store has no directory for a SQLite checkpointer; "
                         f"its default is {default_checkpointer(base)!r}")
    return Path(base) / CHECKPOINT_FILE


def default_checkpointer(store_dir: str | None = None) -> str:
    """The checkpointer spec used when none is given: where the store is.

    A directory store keeps ``sqlite:<store>/serving-checkpoints.sqlite``. A ``postgresql://``
    store (``store_dir`` or ``$GROUNDED_RAG_STORE``) is served from any number of machines,
    so its reviews and threads go to the same database: the store URL without its
    ``schema`` parameter, which names the store's tables and means nothing to libpq.
    """
    base = store_dir or os.environ.get("GROUNDED_RAG_STORE") or ""
    if _is_url(base):
        from grounded_rag.retrieval._pg_catalog import StoreURL

        return StoreURL.parse(base).conninfo
    return f"sqlite:{default_checkpoint_path(store_dir)}"


def checkpointer_kind(spec: Any) -> str:
    """``sqlite``, ``postgres``, ``memory`` or the saver's class name."""
    if isinstance(spec, BaseCheckpointSaver):
        return type(spec).__name__
    if spec is None or str(spec).startswith("sqlite:"):
        return "sqlite"
    if _is_url(str(spec)):
        return "postgres"
    return str(spec)


@contextlib.asynccontextmanager
async def open_checkpointer(
    spec: str | BaseCheckpointSaver | None, *, store_dir: str | None = None
) -> AsyncIterator[BaseCheckpointSaver]:
    """Open the checkpointer a spec names, for the lifetime of the ``async with``.

    ``None`` -> :func:`default_checkpointer` (SQLite next to a store directory, the
    database of a ``postgresql://`` store); ``"sqlite:PATH"``; ``"postgresql://..."`` (a pool,
    tables created on first use); ``"memory"`` (nothing survives a restart); or a saver
    object, used as is.
    """
    if isinstance(spec, BaseCheckpointSaver):
        yield spec
        return
    if spec is None:
        spec = default_checkpointer(store_dir)
    if spec == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
        return
    if spec.startswith("sqlite:"):
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = Path(spec.split(":", 1)[1])
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(str(path))
        try:
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            yield saver
        finally:
            await conn.close()
        return
    if _is_url(spec):
        from grounded_rag.serving._postgres import postgres_saver

        async with postgres_saver(spec) as pg_saver:
            yield pg_saver
        return
    raise ValueError(
        f"unknown checkpointer {spec!r}: use 'sqlite:PATH', 'postgresql://USER@HOST/DB' or "
        "'memory'"
    )


def database_errors() -> list[type[Exception]]:
    """Errors of an unreachable checkpointer database: answered 503 + Retry-After, not 500."""
    errors: list[type[Exception]] = []
    with contextlib.suppress(ImportError):
        import psycopg

        errors.append(psycopg.OperationalError)
    with contextlib.suppress(ImportError):
        from psycopg_pool import PoolTimeout

        errors.append(PoolTimeout)
    return errors
