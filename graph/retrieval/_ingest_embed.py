"""Ingest's chunking orchestration: pick the documents to (re)index, chunk and embed them."""

from __future__ import annotations

import hashlib
import json
import signal
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from grounded_rag.retrieval._errors import StoreMismatchError
from grounded_rag.retrieval._identity import EmbedderIdentity
from grounded_rag.retrieval._ingest_report import IngestReport
from grounded_rag.retrieval.chunking import (
    DEFAULT_MAX_CHARS,
    Chunk,
    Document,
    chunk_document,
    index_text,
)
from grounded_rag.retrieval.store import AnyStore
from grounded_rag.retrieval.text_analysis import tokenize

CHUNKER_VERSION = "1"
"""Bumped when chunking or tokenization changes, so every document is re-indexed."""
EMBED_BATCH = 32
"""Chunks per embedding call; the progress bar moves once per batch."""


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


@dataclass
class _Pending:
    """A document being embedded: its rows fill in as its chunk batches finish."""

    doc: Document
    digest: str
    chunks: list[Chunk]
    rows: list[tuple[str, Chunk, list[str]] | None]
    remaining: int
    queued: bool = False


def _plan(
    docs: Iterable[Document], existing: dict[str, tuple[str, str, str]], report: IngestReport
) -> tuple[list[_Pending], set[str]]:
    """Chunk the new and changed documents; also returns every document id seen.

    ``existing`` is the store's ``doc_id -> (hash, version, source)``; unchanged, duplicate
    and empty documents are recorded in ``report`` and left out.
    """
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
    return todo, seen


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


class _VectorWriter:
    """Buffers vectors and writes them to Chroma in large batches (fewer, cheaper upserts)."""

    def __init__(self, store: AnyStore, identity: EmbedderIdentity, flush_at: int = 1024) -> None:
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
                    f"{self.store.location} holds {self.identity.dimension}-d vectors"
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
