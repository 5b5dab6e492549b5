"""The store's writers: one ingest at a time commits a new generation in one transaction."""

from __future__ import annotations

import contextlib
import json
import shutil
import uuid
from collections.abc import Iterator, Sequence

from grounded_rag.retrieval._bm25 import BM25Index
from grounded_rag.retrieval._identity import EmbedderIdentity
from grounded_rag.retrieval._store_catalog import _TOKEN_SEP
from grounded_rag.retrieval._store_vectors import _StoreVectors
from grounded_rag.retrieval.chunking import Chunk


def _fail_point(name: str) -> None:
    """Test hook: ``store._fail_point``, looked up at call time (it imports this module).

    Tests arm points by setting ``store._FAIL_POINTS``, so the check must run there.
    """
    from grounded_rag.retrieval import store

    store._fail_point(name)


class _StoreWrites(_StoreVectors):
    """Write-side access of :class:`~grounded_rag.retrieval.store.Store`."""

    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        """Exclusive lock on the store directory for one ingest at a time."""
        import fcntl

        with open(self.directory / ".lock", "w") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                from grounded_rag.retrieval._errors import RetrievalError

                raise RetrievalError(
                    f"another ingest is running on {self.directory}; wait for it to finish"
                ) from exc
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def commit(
        self,
        new_docs: list[tuple[str, str, str, str, str, str, list[tuple[str, Chunk, list[str]]]]],
        removed: Sequence[str],
    ) -> list[str]:
        """Atomically replace documents and switch to a freshly built BM25 generation.

        ``new_docs`` rows are ``(doc_id, hash, version, title, url, source, chunks)`` with
        chunks as ``(key, chunk, tokens)``; their vectors must already be written. Returns
        the vector keys that became garbage (old versions, removed documents).
        """
        db = self._db
        gen = str(int(self.meta("generation") or "0") + 1)
        old_dir = self.meta("bm25_dir") or ""
        new_dir = f"bm25-{gen}-{uuid.uuid4().hex[:6]}"
        replaced = [d[0] for d in new_docs] + list(removed)
        db.execute("BEGIN IMMEDIATE")
        try:
            garbage: list[str] = []
            for i in range(0, len(replaced), 500):
                part = replaced[i : i + 500]
                marks = ",".join("?" * len(part))
                garbage += [
                    r[0]
                    for r in db.execute(f"SELECT key FROM chunks WHERE doc_id IN ({marks})", part)
                ]
                db.execute(f"DELETE FROM chunks WHERE doc_id IN ({marks})", part)
                db.execute(f"DELETE FROM documents WHERE doc_id IN ({marks})", part)
            for doc_id, hash_, version, title, url, source, chunks in new_docs:
                db.execute(
                    "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (doc_id, hash_, version, title, url, source, len(chunks)),
                )
                db.executemany(
                    "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            key,
                            c.id,
                            c.doc_id,
                            n,
                            c.title,
                            c.url,
                            c.section,
                            c.text,
                            c.start,
                            c.end,
                            _TOKEN_SEP.join(toks),
                        )
                        for n, (key, c, toks) in enumerate(chunks)
                    ],
                )
            new_keys = {key for d in new_docs for key, _, _ in d[6]}
            garbage = [k for k in garbage if k not in new_keys]
            keys: list[str] = []
            tokens: list[list[str]] = []
            for key, toks in db.execute("SELECT key, tokens FROM chunks ORDER BY doc_id, ord"):
                keys.append(key)
                tokens.append(toks.split(_TOKEN_SEP) if toks else [])
            if keys:
                BM25Index.build(keys, tokens).save(self.directory / new_dir)
            self.set_meta("bm25_dir", new_dir if keys else "")
            self.set_meta("generation", gen)
            _fail_point("before_commit")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            shutil.rmtree(self.directory / new_dir, ignore_errors=True)
            raise
        if old_dir:
            shutil.rmtree(self.directory / old_dir, ignore_errors=True)
        return garbage

    def switch_collection(self, name: str, identity: EmbedderIdentity) -> None:
        """Atomically serve the vectors of collection ``name``, written by ``identity``.

        The previous collection is kept until the next ingest finishes, so a reader that
        loaded the old generation a moment ago can still finish its query.
        """
        db = self._db
        old = self.meta("collection") or ""
        stale = json.loads(self.meta("stale_collections") or "[]")
        db.execute("BEGIN IMMEDIATE")
        try:
            self.set_meta("collection", name)
            self._record_identity(identity)
            if old and old != name:
                self.set_meta("stale_collections", json.dumps([*stale, old]))
            db.execute("DELETE FROM meta WHERE key IN ('reembed_collection', 'reembed_model')")
            self.set_meta("generation", str(int(self.meta("generation") or "0") + 1))
            _fail_point("before_switch")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def collect_garbage(self) -> int:
        """Delete vectors, collections and BM25 directories nothing committed refers to."""
        for name in json.loads(self.meta("stale_collections") or "[]"):
            self.drop_collection(name)
        self.set_meta("stale_collections", "[]")
        committed = {r[0] for r in self._db.execute("SELECT key FROM chunks")}
        stale = [k for k in self.all_vector_keys() if k not in committed]
        self.delete_vectors(stale)
        current = self.meta("bm25_dir") or ""
        for p in self.directory.glob("bm25-*"):
            if p.name != current:
                shutil.rmtree(p, ignore_errors=True)
        return len(stale)
