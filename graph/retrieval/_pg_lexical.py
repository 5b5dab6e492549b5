"""The Postgres store's lexical index: the embedded store's bm25s index, kept in a table.

Each commit builds the BM25 index of the whole committed generation, exactly as the
embedded store does (:class:`~grounded_rag.retrieval._bm25.BM25Index` over every chunk's
terms from ``text_analysis.tokenize``, in document order), and writes it into the
``lexical`` table in the same transaction as the chunks. A worker loads the index of the
generation it serves once, into memory, and ranks queries there; so the networked store
ranks exactly as the embedded one (same library, same float32 scores, same tie order).

Why not BM25 in SQL: a first version scored in one SQL statement over a postings table
(term, chunk, tf, length), with scores equal to bm25s' to 2e-7. At 100k chunks a Japanese
JSQuAD question touches a median 28k postings and the statement took 33-62 ms (load 3 on
2 cores), against 0.3-1 ms in memory; see docs/store.md.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

from grounded_rag.retrieval._bm25 import BM25Index

PART_BYTES = 32 * 1024 * 1024
"""The index is stored in rows of at most this many bytes (Postgres caps a value at 1 GB)."""


def pack(index: BM25Index) -> Iterator[bytes]:
    """The index as a sequence of row-sized byte strings (its files, one after another)."""
    with tempfile.TemporaryDirectory(prefix="grounded-rag-lexical-") as tmp:
        index.save(Path(tmp))
        files = sorted(p for p in Path(tmp).iterdir() if p.is_file())
        header = json.dumps([[p.name, p.stat().st_size] for p in files]).encode()
        blob = bytearray(len(header).to_bytes(8, "big") + header)
        for p in files:
            blob += p.read_bytes()
    view = memoryview(blob)
    for start in range(0, len(view), PART_BYTES):
        yield bytes(view[start : start + PART_BYTES])


def unpack(parts: list[bytes]) -> BM25Index:
    """The index :func:`pack` wrote (its files pass through a temporary directory)."""
    blob = b"".join(parts)
    size = int.from_bytes(blob[:8], "big")
    names = json.loads(blob[8 : 8 + size])
    offset = 8 + size
    with tempfile.TemporaryDirectory(prefix="grounded-rag-lexical-") as tmp:
        for name, length in names:
            (Path(tmp) / name).write_bytes(blob[offset : offset + length])
            offset += length
        return BM25Index.load(Path(tmp))
