"""Ingestion: load files, chunk, embed, and commit them into a store idempotently.

Also re-embedding (:func:`reembed_store`): new vectors for the stored chunks with another
embedder, switched in atomically once complete.

This module holds the entry points and the batch loop; each step lives in its own module:
loading files (``_ingest_load``), choosing, chunking and embedding documents
(``_ingest_embed``), committing them (``_ingest_commit``), the run reports
(``_ingest_report``) and re-embedding (``_reembed``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import time
from collections.abc import Iterable
from typing import Any

# Names defined in the step modules, re-exported so ``ingest.X`` keeps working everywhere.
from grounded_rag.retrieval._ingest_commit import COMMIT_INTERVAL_S, _commit, _finish
from grounded_rag.retrieval._ingest_embed import CHUNKER_VERSION as CHUNKER_VERSION
from grounded_rag.retrieval._ingest_embed import (
    EMBED_BATCH,
    _embed_batch,
    _Pending,
    _plan,
    _StopFlag,
    _VectorWriter,
)
from grounded_rag.retrieval._ingest_embed import content_hash as content_hash
from grounded_rag.retrieval._ingest_embed import tokenize as tokenize
from grounded_rag.retrieval._ingest_load import _load_inputs
from grounded_rag.retrieval._ingest_report import IngestReport
from grounded_rag.retrieval._ingest_report import ReembedReport as ReembedReport
from grounded_rag.retrieval._reembed import reembed_store as reembed_store
from grounded_rag.retrieval.chunking import Document
from grounded_rag.retrieval.store import AnyStore, open_store, resolve_store, store_label


def _default_embeddings(name: str | None = None) -> Any:
    from grounded_rag.retrieval.embeddings import default_embeddings

    return default_embeddings(name)


def embeddings_for_store(store: AnyStore, name: str | None = None) -> Any:
    """The embedder for an existing store: the built-in one that built it, else the default.

    ``name`` (``e5`` / ``minilm`` / ``openai:MODEL[@URL]``) asks for a specific embedder;
    the store then refuses it with a message naming the re-embed command when it was built
    with another one.
    """
    from grounded_rag.retrieval.embeddings import builtin_for, default_embeddings

    if name is None:
        recorded = store.embedder()
        builtin = builtin_for(recorded.name) if recorded is not None else None
        if builtin is not None:
            return default_embeddings(builtin)
    return default_embeddings(name)


def ingest_documents(
    docs: Iterable[Document],
    store: AnyStore,
    embeddings: Any,
    *,
    report: IngestReport,
    prune: bool = False,
    keep_sources: set[str] | None = None,
    progress: bool = True,
    batch_size: int = EMBED_BATCH,
    commit_interval: float = COMMIT_INTERVAL_S,
) -> IngestReport:
    """Write documents into an open store (the core of :func:`ingest_paths`).

    Chunks of all changed documents are embedded in batches of ``batch_size`` (across
    document boundaries), their vectors written to Chroma in large batches, and finished
    documents committed every ``commit_interval`` seconds, each document atomically. The
    first SIGINT stops cleanly after the batch in flight and commits what is finished;
    vectors already written for unfinished documents are reused by the next run.
    """
    from tqdm import tqdm

    from grounded_rag.retrieval.embeddings import embedder_identity

    identity = embedder_identity(embeddings)
    with store.write_lock():
        store.check_embeddings(identity)
        existing = store.documents()
        todo, seen = _plan(docs, existing, report)
        removed: list[str] = []
        if prune:
            keep = keep_sources or set()
            removed = [
                d for d, (_, _, src) in existing.items() if d not in seen and src not in keep
            ]
            report.removed.extend(sorted(removed))
        if not todo and not removed:
            if store.meta("dirty") == "1":
                _finish(store, report)
            return report

        # Only a run that did not finish can have left vectors worth reusing.
        resuming = store.meta("dirty") == "1"
        store.set_meta("dirty", "1")
        total = sum(len(p.chunks) for p in todo)
        bar = tqdm(
            total=total,
            unit="chunk",
            desc="ingest",
            file=sys.stderr,
            disable=not progress or total == 0,
            smoothing=0.1,
        )
        writer = _VectorWriter(store, identity)
        ready: list[_Pending] = []
        last_commit = time.monotonic()
        work = [(p, i) for p in todo for i in range(len(p.chunks))]
        try:
            with _StopFlag() as flag:
                for b in range(0, len(work), batch_size):
                    if flag.stop:
                        break
                    batch = work[b : b + batch_size]
                    _embed_batch(batch, embeddings, writer, report, resuming)
                    for p, _ in batch:
                        if p.remaining == 0 and not p.queued:
                            p.queued = True
                            ready.append(p)
                    bar.update(len(batch))
                    if ready and time.monotonic() - last_commit >= commit_interval:
                        writer.flush()
                        _commit(store, ready, [], report)
                        ready, last_commit = [], time.monotonic()
                writer.flush()
                finished_all = not flag.stop
                _commit(store, ready, removed if finished_all else [], report)
                if finished_all:
                    _finish(store, report)
                else:
                    report.interrupted = True
        except BaseException:
            # Vectors already computed stay useful: the next run reuses them (resume).
            with contextlib.suppress(Exception):
                writer.flush()
            raise
        finally:
            bar.close()
    return report


def ingest_paths(
    paths: Iterable[str | os.PathLike[str]],
    store_dir: str | os.PathLike[str] | None = None,
    *,
    prune: bool = False,
    progress: bool = True,
    embeddings: Any = None,
    embedder: str | None = None,
    chroma_url: str | None = None,
    base_url: str | None = None,
    batch_size: int = EMBED_BATCH,
) -> IngestReport:
    """Ingest files and directories into a store; per-file errors are collected, not raised.

    Unchanged documents (same content hash) are skipped, changed ones replaced, and with
    ``prune=True`` documents whose source no longer produced them are removed (documents of
    files that failed to load this time are kept). Any LangChain ``Embeddings`` can be
    passed; else ``embedder`` (``e5`` / ``minilm`` / ``openai:MODEL[@URL]``) or, for an
    existing store, the built-in embedder that built it, or the default. The store
    remembers which one built it.
    References show each file's path relative to the directory it was found in (a file
    given by name: its name), prefixed with ``base_url`` when given, never the absolute
    path on this machine. ``store_dir`` may also be a ``postgresql://`` store URL (the
    networked store; its vectors on the Chroma server at ``chroma_url``).
    """
    directory = resolve_store(store_dir)
    report = IngestReport(store=store_label(directory))
    paths = list(paths)
    failed_sources: set[str] = set()
    docs = _load_inputs(paths, report, failed_sources, base_url)
    first = next(docs, None)
    if first is None and not report.errors and not prune:
        report.errors.append(
            "no supported files found in "
            + ", ".join(map(str, paths))
            + " (supported: .md .txt .html .pdf .jsonl)"
        )
    if first is None and not prune:
        return report
    store = open_store(directory, chroma_url=chroma_url, create=True)
    try:
        ingest_documents(
            itertools.chain([first] if first is not None else [], docs),
            store,
            embeddings or embeddings_for_store(store, embedder),
            report=report,
            prune=prune,
            keep_sources=failed_sources,
            progress=progress,
            batch_size=batch_size,
        )
    finally:
        store.close()
    return report
