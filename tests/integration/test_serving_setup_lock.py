"""Workers that start together on a fresh database set the checkpointer's tables up once,
without waiting for each other forever.

The saver's migrations build indexes with ``CREATE INDEX CONCURRENTLY``, which waits for
every transaction open at the time to end. A worker that waited for the set-up lock inside
a statement (``pg_advisory_lock``) kept a transaction open while the lock holder's index
build waited for it: a wait through two workers that Postgres cannot see as a deadlock. It
hung a two-worker server on a fresh database for good (seen once in CI).
"""

from __future__ import annotations

import asyncio

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_savers_started_together_on_a_fresh_database_all_get_ready(own_database):
    import psycopg

    from grounded_rag.serving._postgres import SETUP_LOCK_ID, postgres_saver

    async def one_worker(ready: list[int], i: int) -> None:
        async with postgres_saver(own_database) as saver:
            assert await saver.aget_tuple({"configurable": {"thread_id": f"t{i}"}}) is None
            ready.append(i)

    async def main() -> list[int]:
        ready: list[int] = []
        # Hold the set-up lock so that all three workers are waiting for it at once; then
        # let go: one migrates (building indexes concurrently) while the others still wait.
        with psycopg.connect(own_database, autocommit=True) as holder:
            holder.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK_ID,))
            workers = [asyncio.create_task(one_worker(ready, i)) for i in range(3)]
            await asyncio.sleep(1.0)
            assert ready == []  # nobody set up while the lock was held
            holder.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK_ID,))
        await asyncio.wait_for(asyncio.gather(*workers), timeout=60)
        return ready

    assert sorted(asyncio.run(main())) == [0, 1, 2]
    with psycopg.connect(own_database) as conn:
        indexes = {row[0] for row in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'checkpoints'")}
        invalid = conn.execute("SELECT count(*) FROM pg_index WHERE NOT indisvalid").fetchone()
    assert any("thread_id" in name for name in indexes), indexes
    assert invalid == (0,)  # no half-built index left behind
