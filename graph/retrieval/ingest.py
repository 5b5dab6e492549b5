"""Ingestion: load files, chunk, embed, and commit them into a store idempotently.

Also re-embedding (:func:`reembed_store`): new vectors for the stored chunks with another
embedder, switched in atomically once complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from grounded_rag.retrieval._errors import StoreMismatchError
from grounded_rag.retrieval._identity import EmbedderIdentity
from grounded_rag.retrieval.chunking import (
    DEFAULT_MAX_CHARS,
    Chunk,
    Document,
    chunk_document,
    index_text,
)
from grounded_rag.retrieval.loaders import file_url, iter_inputs, load_file
from grounded_rag.retrieval.store import Store, _fail_point, resolve_store_dir
from grounded_rag.retrieval.text_analysis import tokenize

CHUNKER_VERSION = "1"
"""Bumped when chunking or tokenization changes, so every document is re-indexed."""
EMBED_BATCH = 32
"""Chunks per embedding call; the progress bar moves once per batch."""
COMMIT_INTERVAL_S = 30.0
"""Seconds between two commits of finished documents. A commit rebuilds the BM25 index over
the whole store, so this bounds that cost while a crash loses at most this much finished
work; Ctrl-C commits finished documents at once."""


@dataclass
class IngestReport:
    """What an ingest run did."""

    store: str
    """The store directory."""
    added: list[str] = field(default_factory=list)
    """Ids of new documents."""
    updated: list[str] = field(default_factory=list)
    """Ids of documents whose content changed and were replaced."""
    unchanged: list[str] = field(default_factory=list)
    """Ids of documents skipped because their content hash did not change."""
    removed: list[str] = field(default_factory=list)
    """Ids removed by ``prune``."""
    skipped: list[str] = field(default_factory=list)
    """Files skipped while walking directories (unsupported type)."""
    errors: list[str] = field(default_factory=list)
    """One message per failed file or line."""
    encodings: dict[str, str] = field(default_factory=dict)
    """Files that were not UTF-8, with the encoding detected and used to read them."""
    chunks_written: int = 0
    """Chunks embedded and written in this run."""
    chunks_reused: int = 0
    """Chunks whose vectors an interrupted earlier run had already written."""
    committed: list[str] = field(default_factory=list)
    """Ids of documents committed (visible to queries) by this run."""
    interrupted: bool = False
    """True when Ctrl-C stopped the run; finished documents were committed, run it again."""

    @property
    def ok(self) -> bool:
        """True when no input failed and the run was not interrupted."""
        return not self.errors and not self.interrupted

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "store": self.store,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "skipped": self.skipped,
            "errors": self.errors,
            "encodings": self.encodings,
            "chunks_written": self.chunks_written,
            "chunks_reused": self.chunks_reused,
            "interrupted": self.interrupted,
            "ok": self.ok,
        }


def content_hash(doc: Document) -> str:
    """Hash of everything that affects the indexed chunks."""
    payload = json.dumps(
        [
            CHUNKER_VERSION,
            DEFAULT_MAX_CHARS,
            doc.title,
            doc.url,
            doc.body_start,
            doc.text,
            [(h.start, h.level, h.text, h.label_end, h.kind) for h in doc.headings or []],
        ],
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _default_embeddings(name: str | None = None) -> Any:
    from grounded_rag.retrieval.embeddings import default_embeddings

    return default_embeddings(name)


def embeddings_for_store(store: Store, name: str | None = None) -> Any:
    """The embedder for an existing store: the built-in one that built it, else the default.

    ``name`` (``e5`` / ``minilm``) asks for a specific built-in; the store then refuses it
    with a message naming the re-embed command when it was built with another one.
    """
    from grounded_rag.retrieval.embeddings import builtin_for, default_embeddings

    if name is None:
        recorded = store.embedder()
        builtin = builtin_for(recorded.name) if recorded is not None else None
        if builtin is not None:
            return default_embeddings(builtin)
    return default_embeddings(name)


@dataclass
class _Pending:
    """A document being embedded: its rows fill in as its chunk batches finish."""

    doc: Document
    digest: str
    chunks: list[Chunk]
    rows: list[tuple[str, Chunk, list[str]] | None]
    remaining: int
    queued: bool = False


class _StopFlag:
    """SIGINT handler for the main thread: the first Ctrl-C asks for a clean stop.

    The loop finishes the batch in flight, commits every finished document and returns;
    a second Ctrl-C interrupts at once (the store still rolls back cleanly).
    """

    def __init__(self) -> None:
        self.stop = False
        self._previous: Any = None

    def __enter__(self) -> _StopFlag:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.stop:
            raise KeyboardInterrupt
        self.stop = True
        print(
            "\ninterrupt: finishing the current batch and saving finished documents "
            "(Ctrl-C again to abort now)",
            file=sys.stderr,
        )

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def ingest_documents(
    docs: Iterable[Document],
    store: Store,
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
        todo: list[_Pending] = []
        seen: set[str] = set()
        for doc in docs:
            if doc.doc_id in seen:
                report.errors.append(
                    f"{doc.source or doc.doc_id}: duplicate document id {doc.doc_id!r} "
                    "(two inputs map to the same id); rename one of them"
                )
                continue
            seen.add(doc.doc_id)
            digest = content_hash(doc)
            old = existing.get(doc.doc_id)
            if old is not None and old[0] == digest:
                report.unchanged.append(doc.doc_id)
                continue
            chunks = chunk_document(doc)
            if not chunks:
                report.errors.append(f"{doc.source or doc.doc_id}: no text left after parsing")
                continue
            (report.updated if old is not None else report.added).append(doc.doc_id)
            todo.append(_Pending(doc, digest, chunks, [None] * len(chunks), len(chunks)))
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


class _VectorWriter:
    """Buffers vectors and writes them to Chroma in large batches (fewer, cheaper upserts)."""

    def __init__(self, store: Store, identity: EmbedderIdentity, flush_at: int = 1024) -> None:
        self.store = store
        self.identity = identity
        self.flush_at = flush_at
        self.keys: list[str] = []
        self.vectors: list[Any] = []
        self.doc_ids: list[str] = []

    def add(self, keys: list[str], vectors: Any, doc_ids: list[str]) -> None:
        if len(vectors) and self.identity.dimension is None:
            # Embedders that do not declare a dimension: the first vector fixes it.
            self.identity = EmbedderIdentity(
                self.identity.name, self.identity.weights_sha256, len(vectors[0])
            )
            self.store.check_embeddings(self.identity)
        for v in vectors:
            if len(v) != self.identity.dimension:
                raise StoreMismatchError(
                    f"the embeddings returned a {len(v)}-d vector, but the store at "
                    f"{self.store.directory} holds {self.identity.dimension}-d vectors"
                )
        self.keys += keys
        self.vectors += list(vectors)
        self.doc_ids += doc_ids
        if len(self.keys) >= self.flush_at:
            self.flush()

    def flush(self) -> None:
        if self.keys:
            self.store.add_vectors(self.keys, self.vectors, self.doc_ids)
            self.keys, self.vectors, self.doc_ids = [], [], []


def _embed_batch(
    batch: list[tuple[_Pending, int]],
    embeddings: Any,
    writer: _VectorWriter,
    report: IngestReport,
    resuming: bool,
) -> None:
    keys = [f"{p.chunks[i].id}@{p.digest[:12]}" for p, i in batch]
    texts = [index_text(p.chunks[i]) for p, i in batch]
    # Vectors an interrupted run already wrote (same key = same content) are reused.
    done = writer.store.existing_vector_keys(keys) if resuming else set()
    fresh = [j for j, k in enumerate(keys) if k not in done]
    if fresh:
        vectors = embeddings.embed_documents([texts[j] for j in fresh])
        writer.add([keys[j] for j in fresh], vectors, [batch[j][0].doc.doc_id for j in fresh])
    report.chunks_written += len(fresh)
    report.chunks_reused += len(keys) - len(fresh)
    for (p, i), key, text in zip(batch, keys, texts, strict=True):
        p.rows[i] = (key, p.chunks[i], tokenize(text))
        p.remaining -= 1


def _commit(store: Store, ready: list[_Pending], removed: list[str], report: IngestReport) -> None:
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


def _finish(store: Store, report: IngestReport) -> None:
    """After a complete run: drop vectors and collections nothing refers to any more."""
    store.collect_garbage()
    store.set_meta("dirty", "0")


_SUFFIXES = (".md", ".markdown", ".txt", ".text", ".html", ".htm", ".pdf", ".jsonl")


def _load_inputs(
    paths: list[str | os.PathLike[str]], report: IngestReport, failed_sources: set[str],
    base_url: str | None = None,
) -> Iterator[Document]:
    """Load files one at a time (documents are chunked as they arrive, not all held first)."""
    for file, doc_id, explicit, root in _inputs(paths):
        if not explicit and file.suffix.lower() not in _SUFFIXES:
            report.skipped.append(f"{file}: unsupported type, skipped")
            continue
        rel = file.name if explicit else file.relative_to(root).as_posix()
        result = load_file(file, doc_id, url=file_url(rel, base_url))
        if result.documents and result.documents[0].encoding != "utf-8":
            report.encodings[str(file)] = result.documents[0].encoding
        for err in result.errors:
            report.errors.append(str(err))
        if result.errors:
            failed_sources.add(result.source)
        yield from result.documents


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
    passed; else ``embedder`` (``e5`` / ``minilm``) or, for an existing store, the built-in
    embedder that built it, or the default. The store remembers which one built it.
    References show each file's path relative to the directory it was found in (a file
    given by name: its name), prefixed with ``base_url`` when given, never the absolute
    path on this machine.
    """
    directory = resolve_store_dir(store_dir)
    report = IngestReport(store=str(directory))
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
    store = Store(directory, chroma_url=chroma_url, create=True)
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


def _inputs(paths: list[Any]) -> Iterable[tuple[Any, str | None, bool, Any]]:
    """:func:`iter_inputs` per given path, with that path (the root of relative urls)."""
    for raw in paths:
        for file, doc_id, explicit in iter_inputs([raw]):
            yield file, doc_id, explicit, raw


@dataclass
class ReembedReport:
    """What a re-embed run did."""

    store: str
    """The store directory."""
    embedder: str
    """The embedder now serving (``name, weights sha256, dimension``)."""
    previous: str
    """The embedder that served before."""
    chunks_embedded: int = 0
    """Chunks embedded by this run."""
    chunks_reused: int = 0
    """Chunks an interrupted earlier re-embed had already done."""
    interrupted: bool = False
    """True when Ctrl-C stopped it before the switch (the old vectors still serve)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return dict(self.__dict__)


def reembed_store(
    store_dir: str | os.PathLike[str] | None = None,
    *,
    embeddings: Any = None,
    embedder: str | None = None,
    chroma_url: str | None = None,
    progress: bool = True,
    batch_size: int = EMBED_BATCH,
) -> ReembedReport:
    """Re-embed every stored chunk with another embedder, without re-reading documents.

    The new vectors go into a fresh Chroma collection while the old one keeps serving;
    one transaction then switches the collection and the recorded embedder together, so
    queries never fail or see a mix. Interrupted (Ctrl-C, crash), the old vectors keep
    serving and running it again resumes where it stopped.
    """
    from tqdm import tqdm

    from grounded_rag.retrieval.embeddings import default_embeddings, embedder_identity

    directory = resolve_store_dir(store_dir)
    store = Store(directory, chroma_url=chroma_url)
    try:
        store.require_documents()
        embeddings = embeddings or default_embeddings(embedder)
        identity = embedder_identity(embeddings)
        previous = store.embedder()
        report = ReembedReport(
            str(directory), identity.describe(), previous.describe() if previous else "none"
        )
        with store.write_lock():
            target = store.meta("reembed_collection") or ""
            if target and store.meta("reembed_model") != _identity_key(identity):
                store.drop_collection(target)  # a partial run for another embedder
                target = ""
            if not target:
                target = f"grounded-rag-{uuid.uuid4().hex[:12]}"
                store.set_meta("reembed_model", _identity_key(identity))
                store.set_meta("reembed_collection", target)
            collection = store.open_collection(target)
            rows = store.chunk_texts()
            bar = tqdm(
                total=len(rows),
                unit="chunk",
                desc="re-embed",
                file=sys.stderr,
                disable=not progress,
            )
            try:
                with _StopFlag() as flag:
                    for b in range(0, len(rows), batch_size):
                        if flag.stop:
                            report.interrupted = True
                            return report
                        batch = rows[b : b + batch_size]
                        keys = [k for k, _, _ in batch]
                        done = store.existing_vector_keys(keys, collection)
                        fresh = [r for r in batch if r[0] not in done]
                        if fresh:
                            vectors = embeddings.embed_documents([t for _, _, t in fresh])
                            if identity.dimension is None and len(vectors):
                                identity = EmbedderIdentity(
                                    identity.name, identity.weights_sha256, len(vectors[0])
                                )
                            store.add_vectors(
                                [k for k, _, _ in fresh],
                                vectors,
                                [d for _, d, _ in fresh],
                                collection=collection,
                            )
                        report.chunks_embedded += len(fresh)
                        report.chunks_reused += len(batch) - len(fresh)
                        bar.update(len(batch))
                        _fail_point("reembed_batch")
            finally:
                bar.close()
            store.switch_collection(target, identity)
            report.embedder = identity.describe()
    finally:
        store.close()
    return report


def _identity_key(identity: EmbedderIdentity) -> str:
    return f"{identity.name}|{identity.weights_sha256}"
