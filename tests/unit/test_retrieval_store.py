import hashlib
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from grounded_rag.retrieval import (
    EmptyStoreError,
    RetrievalError,
    StoreMismatchError,
    StoreNotFoundError,
    ingest_paths,
    open_retriever,
)
from grounded_rag.retrieval import store as store_mod
from grounded_rag.retrieval.store import Store
from grounded_rag.retrieval.text_analysis import tokenize


class HashEmbeddings(Embeddings):
    """Deterministic bag-of-words vectors: fast, offline, and similar texts stay similar."""

    model_name = "hash-64"

    def __init__(self, fail_after: int | None = None):
        self.calls = 0
        self.fail_after = fail_after

    def _vec(self, text):
        v = np.zeros(64)
        for t in tokenize(text) or ["empty"]:
            v[int(hashlib.md5(t.encode()).hexdigest(), 16) % 64] += 1
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("embedding service died")
        return [self._vec(t) for t in texts]

    def embed_query(self, text):
        return self._vec(text)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_docs(root):
    """Three small documents: a.md (two sections), b.md, sub/c.txt."""
    write(
        root / "a.md",
        "# Alpha\n\n## Scope\nAlpha covers apples.\n\n## Price\nApples cost 3 dollars.\n",
    )
    write(root / "b.md", "# Beta\n\n## Scope\nBeta covers bananas.\n")
    write(root / "sub" / "c.txt", "Gamma notes\n\nCherries are red.\n")
    return root


@pytest.fixture
def docs(tmp_path):
    return make_docs(tmp_path / "docs")


def ids(retriever, query, k=10):
    return [e["source_id"] for e in retriever.retrieve(query, k)]


def test_ingest_then_reingest_is_idempotent(backend, docs):
    emb = HashEmbeddings()
    r1 = backend.ingest([docs], embeddings=emb)
    assert sorted(r1.added) == ["a", "b", "sub/c"] and r1.ok
    assert r1.chunks_written == 4
    calls = emb.calls
    r2 = backend.ingest([docs], embeddings=emb)
    assert sorted(r2.unchanged) == ["a", "b", "sub/c"]
    assert r2.added == r2.updated == [] and r2.chunks_written == 0
    assert emb.calls == calls  # nothing re-embedded
    s = backend.store()
    assert s.chunk_count() == 4 and len(s.all_vector_keys()) == 4
    retr = backend.retriever(embeddings=emb)
    assert ids(retr, "apples price", 1) == ["a#sec3"]


def test_changed_document_is_replaced_and_prune_removes(backend, docs):
    emb = HashEmbeddings()
    backend.ingest([docs], embeddings=emb)
    write(docs / "a.md", "# Alpha\n\n## Scope\nAlpha covers apricots now.\n")
    (docs / "b.md").unlink()
    r = backend.ingest([docs], embeddings=emb)
    assert r.updated == ["a"] and r.removed == []  # no prune: b stays
    retr = backend.retriever(embeddings=emb)
    assert "a#sec3" not in ids(retr, "apples price")  # old section gone
    assert ids(retr, "apricots", 1) == ["a#sec2"]
    assert any(i.startswith("b#") for i in ids(retr, "bananas"))
    r = backend.ingest([docs], embeddings=emb, prune=True)
    assert r.removed == ["b"]
    s = backend.store()
    assert s.documents().keys() == {"a", "sub/c"}
    assert len(s.all_vector_keys()) == s.chunk_count() == 2  # no orphaned vectors
    assert not any(
        i.startswith("b#") for i in ids(backend.retriever(embeddings=emb), "bananas")
    )


def test_prune_keeps_documents_whose_file_failed_to_load(backend, docs):
    emb = HashEmbeddings()
    backend.ingest([docs], embeddings=emb)
    (docs / "b.md").write_bytes(b"")  # now unreadable as a document
    r = backend.ingest([docs], embeddings=emb, prune=True)
    assert not r.ok and "b.md" in r.errors[0] and "empty" in r.errors[0]
    assert "b" in backend.store().documents()


def test_failure_mid_ingest_leaves_previous_state_visible(backend, docs):
    backend.ingest([docs], embeddings=HashEmbeddings())
    before = backend.store().documents()
    write(docs / "a.md", "# Alpha\n\n## Scope\nAlpha covers avocados.\n")
    write(docs / "d.md", "# Delta\n\nDates are sweet.\n")
    # the first changed document embeds fine, the second one fails
    with pytest.raises(RuntimeError, match="embedding service died"):
        backend.ingest([docs], embeddings=HashEmbeddings(fail_after=1), batch_size=1)
    s = backend.store()
    assert s.documents() == before  # nothing half-written is visible
    emb = HashEmbeddings()
    retr = backend.retriever(embeddings=emb)
    assert ids(retr, "apples price", 1) == ["a#sec3"]
    assert not [i for i in ids(retr, "avocados dates") if i.startswith("d#")]
    for ev in retr.retrieve("avocados", 10):
        assert "avocados" not in ev["text"]
    # the vector finished before the failure is kept (not visible) and reused on resume;
    # the next ingest completes and cleans up what nothing refers to
    assert len(s.all_vector_keys()) > s.chunk_count()
    r = backend.ingest([docs], embeddings=emb)
    assert r.updated == ["a"] and r.added == ["d"]
    assert r.chunks_reused == 1 and r.chunks_written == 1
    s = backend.store()
    assert len(s.all_vector_keys()) == s.chunk_count()
    assert ids(backend.retriever(embeddings=emb), "avocados", 1) == ["a#sec2"]


def test_crash_just_before_commit_rolls_back(backend, docs, monkeypatch):
    emb = HashEmbeddings()
    backend.ingest([docs], embeddings=emb)
    gen, chunks = backend.committed()
    write(docs / "b.md", "# Beta\n\n## Scope\nBeta covers blueberries.\n")
    monkeypatch.setattr(store_mod, "_FAIL_POINTS", {"before_commit"})
    with pytest.raises(RuntimeError, match="injected"):
        backend.ingest([docs], embeddings=emb)
    assert backend.committed() == (gen, chunks)
    s = backend.store()
    if not backend.networked:
        store = Path(backend.spec)
        assert (store / s.meta("bm25_dir")).is_dir()
        assert len(list(store.glob("bm25-*"))) == 1  # the half-built index was removed
    assert all(
        "blueberries" not in e["text"]
        for e in backend.retriever(embeddings=emb).retrieve("blueberries", 5)
    )


def test_missing_and_empty_store_errors_tell_the_user_what_to_do(tmp_path):
    with pytest.raises(StoreNotFoundError, match="grounded-rag ingest") as exc:
        open_retriever(tmp_path / "nope", embeddings=HashEmbeddings())
    assert isinstance(exc.value, RetrievalError)
    Store(tmp_path / "empty", create=True).close()
    with pytest.raises(EmptyStoreError, match="grounded-rag ingest"):
        open_retriever(tmp_path / "empty", embeddings=HashEmbeddings())


def test_store_dir_from_environment(tmp_path, docs, monkeypatch):
    monkeypatch.setenv("GROUNDED_RAG_STORE", str(tmp_path / "envstore"))
    r = ingest_paths([docs / "a.md"], embeddings=HashEmbeddings(), progress=False)
    assert r.store == str(tmp_path / "envstore") and r.added == ["a"]
    assert open_retriever(embeddings=HashEmbeddings()).retrieve("apples", 1)


def test_other_embeddings_are_refused(backend, docs):
    backend.ingest([docs], embeddings=HashEmbeddings())

    class Other(HashEmbeddings):
        model_name = "other"

    with pytest.raises(StoreMismatchError, match="hash-64"):
        backend.retriever(embeddings=Other())


def test_vectors_are_opened_where_they_were_written(tmp_path, docs, monkeypatch):
    store = tmp_path / "store"
    ingest_paths([docs], store, embeddings=HashEmbeddings(), progress=False)
    # An embedded store opened against a Chroma server (never contacted): refused, with
    # the fix named, and nothing in the store is touched
    with pytest.raises(StoreMismatchError, match="without --chroma-url"):
        open_retriever(store, embeddings=HashEmbeddings(), chroma_url="http://127.0.0.1:9")
    monkeypatch.setenv("GROUNDED_RAG_CHROMA_URL", "http://127.0.0.1:9")
    with pytest.raises(StoreMismatchError, match="GROUNDED_RAG_CHROMA_URL"):
        open_retriever(store, embeddings=HashEmbeddings())
    monkeypatch.delenv("GROUNDED_RAG_CHROMA_URL")
    assert open_retriever(store, embeddings=HashEmbeddings()).retrieve("apples", 1)
    # A store recorded as living on a server, opened without one: refused (before, it
    # found an empty embedded collection and answered nothing)
    server = Store(tmp_path / "server", create=True)
    server.set_meta("vectors_at", "server")
    server.close()
    with pytest.raises(StoreMismatchError, match="--chroma-url URL"):
        Store(tmp_path / "server")


def test_results_carry_evidence_fields(backend, docs):
    backend.ingest([docs], embeddings=HashEmbeddings())
    ev = backend.retriever(embeddings=HashEmbeddings()).retrieve("apples cost", 3)[0]
    assert ev["source_id"] == "a#sec3" and ev["doc_id"] == "a"
    assert ev["title"] == "Alpha — Price" and ev["section"] == "Alpha > Price"
    assert ev["url"].endswith("a.md")
    doc_text = (docs / "a.md").read_text()
    assert doc_text[ev["start"] : ev["end"]] == ev["text"]
    assert 0 <= ev["relevance"] <= 1 and ev["score"] > 0
