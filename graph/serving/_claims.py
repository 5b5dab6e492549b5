"""Which worker finishes a deferred verification: one, when several share a Postgres database.

Every worker resumes the verifications left pending when it starts, and a worker that
replaces a dead one starts while the others are still verifying. Without a claim each of
them would run the same verification again. A claim is a Postgres session-level advisory
lock, taken on one connection this worker keeps for claims only: it is released when the
verification ends, and by the database itself when the worker dies (its connection
closes), so a crashed worker's verifications can be taken over at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["ThreadClaims"]


def _lock_key(thread_id: str) -> int:
    """A signed 64-bit advisory lock key for a thread (namespaced, stable across workers)."""
    digest = hashlib.sha256(b"grounded-rag/deferred/" + thread_id.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class ThreadClaims:
    """Advisory-lock claims on threads, held on one dedicated connection of this worker."""

    def __init__(self, conninfo: str) -> None:
        self.conninfo = conninfo
        self._conn: Any = None
        self._lock = asyncio.Lock()

    async def _connection(self) -> Any:
        import psycopg

        if self._conn is None or self._conn.closed:
            self._conn = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True,
                                                               connect_timeout=10)
        return self._conn

    async def claim(self, thread_id: str) -> bool:
        """True when this worker may run the thread's verification (no one else holds it).

        When the database cannot be asked, the answer is True: a verification run twice
        is better than one never run.
        """
        async with self._lock:
            try:
                conn = await self._connection()
                cur = await conn.execute("SELECT pg_try_advisory_lock(%s)",
                                         (_lock_key(thread_id),))
                row = await cur.fetchone()
                return bool(row[0])
            except Exception as exc:
                log.warning("could not claim thread %s (%s); verifying it anyway", thread_id,
                            exc)
                self._conn = None
                return True

    async def release(self, thread_id: str) -> None:
        """Let the thread go (nothing to do when the claim connection was lost)."""
        async with self._lock:
            conn = self._conn
            if conn is None or conn.closed:
                return
            try:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (_lock_key(thread_id),))
            except Exception as exc:
                log.warning("could not release thread %s: %s", thread_id, exc)
                self._conn = None

    async def aclose(self) -> None:
        """Close the claim connection (every claim still held is released with it)."""
        async with self._lock:
            if self._conn is not None and not self._conn.closed:
                await self._conn.close()
            self._conn = None
