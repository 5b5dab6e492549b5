"""The networked store (Postgres + a Chroma server) where it differs from the embedded one:
the BM25 index kept in Postgres ranks as the embedded one does, one ingest at a time across
machines, and every failure names what to fix. The guarantees both stores share are tested on both
(``backend`` fixture in tests/unit/test_retrieval_store.py, test_store_generations.py,
test_retrieval_embedders.py)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

import grounded_rag
from grounded_rag.retrieval import (
    EmptyStoreError,
    RetrievalError,
    StoreMismatchError,
    StoreNotFoundError,
)
from grounded_rag.retrieval._errors import StoreUnavailableError
from grounded_rag.retrieval._pg_store import PostgresStore, drop_store
from grounded_rag.retrieval.store import open_store
from grounded_rag.retrieval.text_analysis import has_japanese, tokenize
from tests.integration.servers import PrivatePostgres
from tests.store_backends import Backend
from tests.unit.test_retrieval_store import HashEmbeddings, ids, make_docs

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]
SAMPLES = Path(grounded_rag.__file__).parent / "samples" / "corpus"
QUESTIONS = [
    "How long does the battery last?", "本契約の有効期間はいつからいつまでですか？",
    "taxi fares after 22:00", "在宅勤務の申請は誰が承認しますか", "ファイルサーバーの再起動手順",
    "incident severity levels", "the the of", "月額料金", "AOZORA A1 重量", "xyzzy nothing",
]


def test_both_stores_answer_alike_in_japanese_and_english(tmp_path, pg_store):
    url, chroma = pg_store
    networked = Backend("postgres", url, chroma)
    embedded = Backend("embedded", str(tmp_path / "store"))
    for store in (networked, embedded):
        assert store.ingest([SAMPLES], embeddings=HashEmbeddings()).ok
    lexical = networked.store().bm25_index()
    reference = embedded.store().bm25_index()
    assert lexical.keys == reference.keys and len(lexical.keys) > 20
    found = {"ja": 0, "en": 0}
    for mode in ("hybrid", "bm25"):
        near = networked.retriever(embeddings=HashEmbeddings(), mode=mode)
        local = embedded.retriever(embeddings=HashEmbeddings(), mode=mode)
        for question in QUESTIONS:
            hits = near.retrieve(question, 5)
            assert hits == local.retrieve(question, 5), (mode, question)
            if hits and mode == "bm25":
                found["ja" if has_japanese(question) else "en"] += 1
    assert found["ja"] >= 4 and found["en"] >= 3  # both languages found their terms
    for question in QUESTIONS:
        tokens = tokenize(question)
        assert lexical.search(tokens, 20) == reference.search(tokens, 20)
        for token in [*tokens, "never-indexed"]:
            assert lexical.idf(token, min_docs=1000) == reference.idf(token, min_docs=1000)
    networked.close()
    embedded.close()


def test_the_store_url_may_come_from_the_environment(tmp_path, pg_store, monkeypatch):
    url, chroma = pg_store
    monkeypatch.setenv("GROUNDED_RAG_STORE", url)
    monkeypatch.setenv("GROUNDED_RAG_CHROMA_URL", chroma)
    machine = Backend("postgres", "", None)  # nothing passed: the environment decides
    report = machine.ingest([make_docs(tmp_path / "docs")], embeddings=HashEmbeddings())
    assert report.ok and report.store == url
    assert ids(machine.retriever(embeddings=HashEmbeddings()), "apples price", 1) == ["a#sec3"]
    monkeypatch.delenv("GROUNDED_RAG_CHROMA_URL")  # the store remembers where its vectors are
    assert ids(machine.retriever(embeddings=HashEmbeddings()), "bananas", 1) == ["b#sec2"]
    machine.close()
    assert not (tmp_path / ".grounded-rag").exists() and not Path(".grounded-rag").exists()


def test_one_ingest_at_a_time_across_machines(tmp_path, pg_store):
    url, chroma = pg_store
    first = Backend("postgres", url, chroma)
    first.ingest([make_docs(tmp_path / "docs")], embeddings=HashEmbeddings())
    holder = open_store(url, chroma_url=chroma)
    try:
        with holder.write_lock():
            with pytest.raises(RetrievalError, match="another ingest is running"):
                first.ingest([tmp_path / "docs"], embeddings=HashEmbeddings(), prune=True)
        assert first.ingest([tmp_path / "docs"], embeddings=HashEmbeddings()).ok  # released
    finally:
        holder.close()
        first.close()


def test_errors_name_the_flag_and_the_fix(tmp_path, pg_store):
    url, chroma = pg_store
    with pytest.raises(StoreNotFoundError, match="grounded-rag ingest PATH... --store"):
        open_store(url, chroma_url=chroma)
    empty = open_store(url, chroma_url=chroma, create=True)
    with pytest.raises(EmptyStoreError, match="grounded-rag ingest"):
        empty.require_documents()
    empty.close()
    # Postgres unreachable: the URL (password hidden) and --store are named
    dead = url.replace("127.0.0.1:5432", "127.0.0.1:9").replace("://", "://me:secret@", 1)
    with pytest.raises(StoreUnavailableError, match="--store") as exc:
        open_store(dead, chroma_url=chroma)
    assert "me:***@127.0.0.1:9" in str(exc.value) and "secret" not in str(exc.value)
    # Chroma unreachable: named with --chroma-url
    with pytest.raises(StoreUnavailableError, match="Chroma server at http://127.0.0.1:9 "
                       r"\(--chroma-url"):
        open_store(url, chroma_url="http://127.0.0.1:9")
    # Built against one Chroma server, opened against another that lacks its vectors
    Backend("postgres", url, chroma).ingest([make_docs(tmp_path / "d")],
                                            embeddings=HashEmbeddings())
    store = open_store(url, chroma_url=chroma)
    store.set_meta("collection", "grounded-rag-not-on-this-server")
    store.bm25_index()
    with pytest.raises(StoreMismatchError, match="has no collection"):
        store.vector_search([0.1] * 64, 3)
    # Another table layout: refused, with the command that builds a fresh store
    store.set_meta("format", "pg-0")
    store.close()
    with pytest.raises(StoreMismatchError, match=r"schema=\w+_v2 --chroma-url URL"):
        open_store(url, chroma_url=chroma)
    with pytest.raises(StoreMismatchError, match="plain lower-case name"):
        open_store(url.replace("schema=", "schema=Bad;"), chroma_url=chroma)


def test_a_database_restart_is_an_outage_then_queries_resume(
        tmp_path, chroma_url, monkeypatch):
    monkeypatch.setenv("GROUNDED_RAG_PG_TIMEOUT", "2")
    try:
        server = PrivatePostgres()
    except (FileNotFoundError, OSError) as exc:
        pytest.skip(f"no PostgreSQL server binaries: {exc}")
    url = f"{server.url}?schema=restart_{uuid.uuid4().hex[:6]}"
    try:
        server.start()
        machine = Backend("postgres", url, chroma_url)
        machine.ingest([make_docs(tmp_path / "docs")], embeddings=HashEmbeddings())
        retriever = machine.retriever(embeddings=HashEmbeddings())
        assert ids(retriever, "apples price", 1) == ["a#sec3"]
        server.stop()
        with pytest.raises(StoreUnavailableError, match="Postgres store at .*--store"):
            retriever.retrieve("apples price", 1)  # a RetrievalError: the server says 503
        server.start()
        assert ids(retriever, "apples price", 1) == ["a#sec3"]  # same retriever, reconnected
        machine.close()
        drop_store(url, chroma_url=chroma_url)
    finally:
        server.cleanup()


def test_drop_store_removes_tables_and_vectors(tmp_path, pg_store):
    url, chroma = pg_store
    Backend("postgres", url, chroma).ingest([make_docs(tmp_path / "docs")],
                                            embeddings=HashEmbeddings())
    store = PostgresStore(url, chroma_url=chroma)
    collection = store.meta("collection")
    client = store._vector_client()
    store.close()
    assert collection in [c.name for c in client.list_collections()]
    drop_store(url, chroma_url=chroma)
    assert collection not in [c.name for c in client.list_collections()]
    with pytest.raises(StoreNotFoundError):
        open_store(url, chroma_url=chroma)
