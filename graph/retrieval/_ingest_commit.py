"""Ingest's committing step: make finished documents visible, then clean up after a full run."""

from __future__ import annotations

from grounded_rag.retrieval._ingest_embed import _Pending
from grounded_rag.retrieval._ingest_report import IngestReport
from grounded_rag.retrieval.store import AnyStore

COMMIT_INTERVAL_S = 30.0
"""Seconds between two commits of finished documents. A commit rebuilds the BM25 index over
the whole store, so this bounds that cost while a crash loses at most this much finished
work; Ctrl-C commits finished documents at once."""


def _commit(
    store: AnyStore, ready: list[_Pending], removed: list[str], report: IngestReport
) -> None:
    if not ready and not removed:
        return
    rows = [
        (
            p.doc.doc_id,
            p.digest,
            p.digest[:12],
            p.doc.title,
            p.doc.url,
            p.doc.source,
            [r for r in p.rows if r is not None],
        )
        for p in ready
    ]
    store.delete_vectors(store.commit(rows, removed))
    report.committed.extend(p.doc.doc_id for p in ready)


def _finish(store: AnyStore, report: IngestReport) -> None:
    """After a complete run: drop vectors and collections nothing refers to any more."""
    store.collect_garbage()
    store.set_meta("dirty", "0")
