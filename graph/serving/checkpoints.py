"""The served graph's checkpointer: where it lives, how to open it, what its outages raise."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = ["checkpointer_kind", "database_errors", "default_checkpoint_path",
           "open_checkpointer"]


def default_checkpoint_path(store_dir: str | None = None) -> Path:
    """Where the embedded SQLite checkpointer lives: next to the store."""
    base = store_dir or os.environ.get("GROUNDED_RAG_STORE") or ".grounded-rag"
    return Path(base) / "serving-checkpoints.sqlite"


def checkpointer_kind(spec: Any) -> str:
    """``sqlite``, ``postgres``, ``memory`` or the saver's class name."""
    if isinstance(spec, BaseCheckpointSaver):
        return type(spec).__name__
    if spec is None or str(spec).startswith("sqlite:"):
        return "sqlite"
    if str(spec).startswith(("postgresql://", "postgres://")):
        return "postgres"
    return str(spec)


@contextlib.asynccontextmanager
async def open_checkpointer(
    spec: str | BaseCheckpointSaver | None, *, store_dir: str | None = None
) -> AsyncIterator[BaseCheckpointSaver]:
    """Open the checkpointer a spec names, for the lifetime of the ``async with``.

    ``None`` -> SQLite next to the store; ``"sqlite:PATH"``; ``"postgresql://..."`` (a pool,
    tables created on first use); ``"memory"`` (nothing survives a restart); or a saver
    object, used as is.
    """
    if isinstance(spec, BaseCheckpointSaver):
        yield spec
        return
    if spec == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
        return
    if spec is None or spec.startswith("sqlite:"):
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = Path(spec.split(":", 1)[1]) if spec else default_checkpoint_path(store_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(str(path))
        try:
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            yield saver
        finally:
            await conn.close()
        return
    if spec.startswith(("postgresql://", "postgres://")):
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
