"""Ingestion: load files, chunk, embed, and commit them into a store idempotently."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from grounded_rag.retrieval.chunking import (
    DEFAULT_MAX_CHARS,
    Chunk,
    Document,
    chunk_document,
    index_text,
)
from grounded_rag.retrieval.loaders import file_url, iter_inputs, load_file
from grounded_rag.retrieval.store import Store, resolve_store_dir
from grounded_rag.retrieval.text_analysis import tokenize

CHUNKER_VERSION = "1"
"""Bumped when chunking or tokenization changes, so every document is re-indexed."""
COMMIT_EVERY = 5000
"""Chunks written between two commits: an interrupted long run keeps what it finished."""


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

    @property
    def ok(self) -> bool:
        """True when no input failed."""
        return not self.errors

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


def _default_embeddings() -> Any:
    from grounded_rag.retrieval.embeddings import MiniLMEmbeddings

    return MiniLMEmbeddings()


def ingest_documents(
    docs: Iterable[Document],
    store: Store,
    embeddings: Any,
    *,
    report: IngestReport,
    prune: bool = False,
    keep_sources: set[str] | None = None,
    progress: bool = True,
) -> IngestReport:
    """Write documents into an open store (the core of :func:`ingest_paths`)."""
    from tqdm import tqdm

    from grounded_rag.retrieval.embeddings import embeddings_name

    with store.write_lock():
        if store.meta("dirty") == "1":  # a previous run died between write and cleanup
            store.collect_garbage()
            store.set_meta("dirty", "0")
        store.check_embeddings(embeddings_name(embeddings), None)
        existing = store.documents()
        todo: list[tuple[Document, str, list[Chunk]]] = []
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
            todo.append((doc, digest, chunks))
        removed: list[str] = []
        if prune:
            keep = keep_sources or set()
            removed = [
                d for d, (_, _, src) in existing.items() if d not in seen and src not in keep
            ]
            report.removed.extend(sorted(removed))
        if not todo and not removed:
            return report

        store.set_meta("dirty", "1")
        total = sum(len(c) for _, _, c in todo)
        bar = tqdm(
            total=total,
            unit="chunk",
            desc="ingest",
            file=sys.stderr,
            disable=not progress or total == 0,
        )
        pending: list[tuple[str, str, str, str, str, str, list[tuple[str, Chunk, list[str]]]]] = []
        pending_chunks = 0
        committed_chunks = store.chunk_count()
        try:
            for doc, digest, chunks in todo:
                version = digest[:12]
                texts = [index_text(c) for c in chunks]
                keys = [f"{c.id}@{version}" for c in chunks]
                vectors = embeddings.embed_documents(texts)
                if store.meta("dimension") is None and len(vectors):
                    store.set_meta("dimension", str(len(vectors[0])))
                store.check_embeddings(
                    embeddings_name(embeddings), len(vectors[0]) if len(vectors) else None
                )
                store.add_vectors(keys, vectors, [doc.doc_id] * len(keys))
                rows = [(k, c, tokenize(t)) for k, c, t in zip(keys, chunks, texts, strict=True)]
                pending.append((doc.doc_id, digest, version, doc.title, doc.url, doc.source, rows))
                pending_chunks += len(rows)
                report.chunks_written += len(rows)
                bar.update(len(rows))
                # Commit points grow with the store, so BM25 rebuilds stay linear overall.
                if pending_chunks >= max(COMMIT_EVERY, committed_chunks):
                    committed_chunks += pending_chunks
                    store.delete_vectors(store.commit(pending, []))
                    pending, pending_chunks = [], 0
            store.delete_vectors(store.commit(pending, removed))
            store.set_meta("dirty", "0")
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
    chroma_url: str | None = None,
    base_url: str | None = None,
) -> IngestReport:
    """Ingest files and directories into a store; per-file errors are collected, not raised.

    Unchanged documents (same content hash) are skipped, changed ones replaced, and with
    ``prune=True`` documents whose source no longer produced them are removed (documents of
    files that failed to load this time are kept). Any LangChain ``Embeddings`` can be
    passed; the store remembers which one built it. References show each file's path
    relative to the directory it was found in (a file given by name: its name), prefixed
    with ``base_url`` when given, never the absolute path on this machine.
    """
    directory = resolve_store_dir(store_dir)
    report = IngestReport(store=str(directory))
    paths = list(paths)
    docs: list[Document] = []
    failed_sources: set[str] = set()
    for file, doc_id, explicit, root in _inputs(paths):
        if not explicit and file.suffix.lower() not in (
            ".md",
            ".markdown",
            ".txt",
            ".text",
            ".html",
            ".htm",
            ".pdf",
            ".jsonl",
        ):
            report.skipped.append(f"{file}: unsupported type, skipped")
            continue
        rel = file.name if explicit else file.relative_to(root).as_posix()
        result = load_file(file, doc_id, url=file_url(rel, base_url))
        docs.extend(result.documents)
        if result.documents and result.documents[0].encoding != "utf-8":
            report.encodings[str(file)] = result.documents[0].encoding
        for err in result.errors:
            report.errors.append(str(err))
        if result.errors:
            failed_sources.add(result.source)
    if not docs and not report.errors and not prune:
        report.errors.append(
            "no supported files found in "
            + ", ".join(map(str, paths))
            + " (supported: .md .txt .html .pdf .jsonl)"
        )
    if not docs and not prune:
        return report
    store = Store(directory, chroma_url=chroma_url, create=True)
    try:
        ingest_documents(
            docs,
            store,
            embeddings or _default_embeddings(),
            report=report,
            prune=prune,
            keep_sources=failed_sources,
            progress=progress,
        )
    finally:
        store.close()
    return report


def _inputs(paths: list[Any]) -> Iterable[tuple[Any, str | None, bool, Any]]:
    """:func:`iter_inputs` per given path, with that path (the root of relative urls)."""
    for raw in paths:
        for file, doc_id, explicit in iter_inputs([raw]):
            yield file, doc_id, explicit, raw
