"""The Postgres checkpointer shared by several workers: a pool that survives restarts.

- Every connection is checked as it leaves the pool. After a database restart the first
  check that fails also has the pool check all its idle connections at once, so the dead
  ones are replaced together instead of costing one request (and one back-off) each. (A
  served run checkpoints once, when it ends, so a request takes two or three connections
  from the pool: the checks are a small part of its cost.)
- Table set-up (the saver's migrations) runs under an advisory lock: workers starting
  together would otherwise build the same indexes at once, which deadlocks. The lock is
  *polled* (``pg_try_advisory_lock``), never waited for inside a statement: a worker
  blocked in ``pg_advisory_lock`` holds a transaction open, and the migrations' ``CREATE
  INDEX CONCURRENTLY`` in the worker holding the lock waits for every open transaction to
  end, so the two would wait for each other forever (the waits go through two connections
  of different workers, which Postgres' deadlock detector cannot see).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

SETUP_LOCK_ID = 0x67726167
"""The advisory lock key held while one worker sets up the tables ("grag")."""


async def _take_setup_lock(conn: Any, poll: float = 0.1) -> None:
    """Take the set-up lock on ``conn`` (autocommit), polling so no transaction stays open."""
    while True:
        row = await (await conn.execute("SELECT pg_try_advisory_lock(%s) AS got",
                                        (SETUP_LOCK_ID,))).fetchone()
        if row["got"]:
            return
        await asyncio.sleep(poll)


@contextlib.asynccontextmanager
async def postgres_saver(spec: str) -> AsyncIterator[Any]:
    """An ``AsyncPostgresSaver`` on a connection pool, its tables set up, for the ``with``.

    ``$GROUNDED_RAG_PG_POOL`` sets the pool size (default 10); ``$GROUNDED_RAG_PG_TIMEOUT``
    how long a request waits for a connection (default 10 s) before it fails, which the
    server answers with 503 + Retry-After.
    """
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    purges: set[asyncio.Task[None]] = set()

    async def check(conn: Any) -> None:
        try:
            await conn.execute("")
        except Exception:
            if not purges:  # one sweep at a time
                task = asyncio.create_task(pool.check())
                purges.add(task)
                task.add_done_callback(purges.discard)
            raise

    pool = AsyncConnectionPool(
        conninfo=spec, max_size=int(os.environ.get("GROUNDED_RAG_PG_POOL", "10")),
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=False, check=check, timeout=float(os.environ.get("GROUNDED_RAG_PG_TIMEOUT", "10")),
    )
    await pool.open(wait=True, timeout=15)
    try:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        async with pool.connection() as lock_conn:
            await _take_setup_lock(lock_conn)
            try:
                await saver.setup()
            finally:
                await lock_conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK_ID,))
        yield saver
    finally:
        for task in list(purges):
            task.cancel()
        await pool.close()
