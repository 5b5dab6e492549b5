"""Readers of a store while ingests switch generations: never a half-written or mixed one."""

from __future__ import annotations

import threading
import time

import pytest

from grounded_rag.retrieval import ingest_paths, open_retriever
from grounded_rag.retrieval import store as store_mod
from grounded_rag.retrieval.store import Store
from tests.store_backends import Backend
from tests.unit.test_retrieval_store import HashEmbeddings, write


def corpus(root, version: int) -> None:
    """Version ``version`` of a small corpus: documents added, changed and removed by version.

    Every chunk says which version wrote it, so a chunk of the wrong generation is visible.
    """
    for old in root.glob("*.md"):
        old.unlink()
    for i in range(version % 3, 6 + version % 4):
        write(root / f"doc{i}.md", f"# Doc {i}\n\n## Fruit\nApples and pears in doc {i}, "
              f"version {version}.\n\n## Price\nPears cost {version} coins in doc {i}.\n")


def committed_chunks(store_dir) -> tuple[str, set[tuple[str, str]]]:
    """(generation, {(chunk id, text)}) as committed now."""
    store = Store(store_dir)
    try:
        gen = store.meta("generation")
        rows = store._db.execute("SELECT chunk_id, text FROM chunks").fetchall()
        return gen, {(r[0], r[1]) for r in rows}
    finally:
        store.close()


def test_a_reader_that_finds_its_generation_deleted_loads_the_next_one(tmp_path, monkeypatch):
    docs, store_dir, emb = tmp_path / "docs", tmp_path / "store", HashEmbeddings()
    corpus(docs, 1)
    ingest_paths([docs], store_dir, embeddings=emb, prune=True, progress=False)
    retriever = open_retriever(store_dir, embeddings=emb)
    corpus(docs, 2)
    ingest_paths([docs], store_dir, embeddings=emb, prune=True, progress=False)

    real_load = store_mod.BM25Index.load
    raced = []

    def load_after_a_newer_commit(directory):
        # The reader has read generation 2's directory name; a writer now commits
        # generation 3 and deletes that directory before the reader opens it.
        if not raced:
            raced.append(directory.name)
            corpus(docs, 3)
            ingest_paths([docs], store_dir, embeddings=emb, prune=True, progress=False)
        return real_load(directory)

    monkeypatch.setattr(store_mod.BM25Index, "load", load_after_a_newer_commit)
    hits = retriever.retrieve("pears coins", 10)
    assert raced and not (store_dir / raced[0]).exists()
    gen, chunks = committed_chunks(store_dir)
    assert retriever.backend.pinned_generation().number == gen
    assert hits and all((h["source_id"], h["text"]) in chunks for h in hits)
    assert all("version 3" in h["text"] or "3 coins" in h["text"] for h in hits)


@pytest.mark.integration
def test_a_reader_whose_generation_is_replaced_mid_query_answers_from_the_new_one(
        tmp_path, pg_store, monkeypatch):
    """Networked store: another machine commits between a query's search and its fetch."""
    from grounded_rag.retrieval._pg_store import PostgresStore

    url, chroma = pg_store
    machine = Backend("postgres", url, chroma)
    docs, emb = tmp_path / "docs", HashEmbeddings()
    corpus(docs, 1)
    machine.ingest([docs], embeddings=emb, prune=True)
    retriever = machine.retriever(embeddings=emb)
    first = machine.committed()[0]
    real_search = PostgresStore.vector_search
    raced: list[str | None] = []

    def search_then_another_commit(self, vector, n):
        found = real_search(self, vector, n)
        if not raced:  # the query has pinned its generation and ranked its chunks
            raced.append(self.pinned_generation().number)
            corpus(docs, 2)
            Backend("postgres", url, chroma).ingest([docs], embeddings=emb, prune=True)
        return found

    monkeypatch.setattr(PostgresStore, "vector_search", search_then_another_commit)
    try:
        hits = retriever.retrieve("pears coins", 10)
        gen, chunks = machine.committed()
    finally:
        machine.close()
    assert raced == [first] and gen != first
    assert retriever.backend.pinned_generation().number == gen
    assert hits and all((h["source_id"], h["text"]) in chunks for h in hits)
    assert all("version 2" in h["text"] or "2 coins" in h["text"] for h in hits)


def test_concurrent_readers_during_reingest_see_whole_generations(tmp_path, backend):
    """One shared retriever (as in a server worker), 8 reader threads, 6 re-ingests."""
    docs, emb = tmp_path / "docs", HashEmbeddings()
    corpus(docs, 0)
    backend.ingest([docs], embeddings=emb, prune=True)
    generations = dict([backend.committed()])
    retriever = backend.retriever(embeddings=emb)
    store = retriever.backend
    done = threading.Event()
    seen: list[tuple[str | None, list[tuple[str, str]]]] = []
    errors: list[BaseException] = []

    def read() -> None:
        while not done.is_set():
            try:
                hits = retriever.retrieve("apples pears coins doc", 8)
                seen.append((store.pinned_generation().number,
                             [(h["source_id"], h["text"]) for h in hits]))
            except BaseException as exc:  # every error counts
                errors.append(exc)
                return

    readers = [threading.Thread(target=read) for _ in range(8)]
    for thread in readers:
        thread.start()
    try:
        for version in range(1, 7):
            corpus(docs, version)
            report = backend.ingest([docs], embeddings=emb, prune=True)
            assert report.ok
            gen, chunks = backend.committed()
            generations[gen] = chunks
            time.sleep(0.05)
    finally:
        done.set()
        for thread in readers:
            thread.join(timeout=30)
    assert errors == []
    assert len(generations) == 7
    seen_generations = {gen for gen, _ in seen}
    assert len(seen_generations) >= 3, seen_generations  # the readers really overlapped
    for gen, hits in seen:
        assert gen in generations
        assert hits, gen
        stray = [hit for hit in hits if hit not in generations[gen]]
        assert stray == [], (gen, stray)
