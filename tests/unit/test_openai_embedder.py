"""The ``openai:`` embedder: a store built over HTTP records it, reopens with it, refuses others.

The server is ``tests.openai_server.ScriptedServer`` on loopback with toy bag-of-words
vectors (deterministic, 16-d), so the real ``openai`` SDK and the real store run.
"""

from __future__ import annotations

import hashlib
import math

import pytest

from grounded_rag._structured import ModelServerError
from grounded_rag.retrieval import open_retriever
from grounded_rag.retrieval._errors import StoreMismatchError
from grounded_rag.retrieval.embeddings import (
    OpenAIEndpointEmbeddings,
    builtin_for,
    default_embeddings,
    embedder_identity,
    openai_embeddings,
)
from grounded_rag.retrieval.ingest import ingest_paths
from tests.openai_server import Reply, ScriptedServer, error

DIM = 16


def toy_vector(text: str) -> list[float]:
    vec = [0.0] * DIM
    for word in text.lower().replace(".", " ").split():
        vec[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIM] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def embeddings_reply(body: dict, n: int) -> Reply:
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    return Reply(body={"object": "list", "model": body["model"],
                       "data": [{"object": "embedding", "index": i, "embedding": toy_vector(t)}
                                for i, t in enumerate(texts)],
                       "usage": {"prompt_tokens": 1, "total_tokens": 1}})


def test_spec_parsing_and_identity(monkeypatch):
    monkeypatch.setenv("GROUNDED_RAG_EMBEDDER_BASE_URL", "http://127.0.0.1:9/v1")
    emb = openai_embeddings("openai:multilingual-e5-small-q4#input_type")
    assert isinstance(emb, OpenAIEndpointEmbeddings)
    assert emb.base_url == "http://127.0.0.1:9/v1" and emb.input_type and not emb.e5_prefixes
    identity = embedder_identity(emb)
    assert identity.name == "OpenAIEndpointEmbeddings:multilingual-e5-small-q4#input_type"
    assert builtin_for(identity.name) == "openai:multilingual-e5-small-q4#input_type"
    emb = openai_embeddings("openai:BAAI/bge-m3#e5+input_type@http://10.0.0.2:8000/v1")
    assert emb.model == "BAAI/bge-m3" and emb.base_url == "http://10.0.0.2:8000/v1"
    assert emb.model_name == "BAAI/bge-m3#input_type+e5"
    assert isinstance(default_embeddings("openai:Toy-Model"), OpenAIEndpointEmbeddings)
    assert default_embeddings("openai:Toy-Model").model == "Toy-Model"  # case kept
    with pytest.raises(ValueError, match="unknown flag"):
        openai_embeddings("openai:m#fast")
    with pytest.raises(ValueError, match="expected openai:<model>"):
        openai_embeddings("openai:")


def test_store_built_over_http_records_reopens_and_refuses_others(monkeypatch, corpus, tmp_path):
    with ScriptedServer(embeddings_reply) as server:
        monkeypatch.setenv("GROUNDED_RAG_EMBEDDER", "openai:toy#input_type")
        monkeypatch.setenv("GROUNDED_RAG_EMBEDDER_BASE_URL", server.url)
        store = tmp_path / "store"
        report = ingest_paths([corpus], store, progress=False)
        assert not report.errors and len(report.added) == 2
        assert {r["input_type"] for r in server.requests} == {"passage"}
        monkeypatch.delenv("GROUNDED_RAG_EMBEDDER")  # reopening follows what the store says
        retriever = open_retriever(store)
        hits = retriever.retrieve("How long does the X100 battery last?", 2)
        assert hits[0]["source_id"].startswith("battery")
        assert server.requests[-1]["input_type"] == "query"
        assert server.requests[-1]["input"] == ["How long does the X100 battery last?"]
        from grounded_rag.retrieval.store import Store

        recorded = Store(store).embedder()
        assert recorded is not None
        assert recorded.name == "OpenAIEndpointEmbeddings:toy#input_type"
        assert recorded.dimension == DIM
        # Another embedder (built in, or the same model without the flag) is refused.
        with pytest.raises(StoreMismatchError, match="OpenAIEndpointEmbeddings:toy#input_type"):
            open_retriever(store, embedder="minilm")
        with pytest.raises(StoreMismatchError):
            open_retriever(store, embeddings=openai_embeddings(f"openai:toy@{server.url}"))


def test_embedding_server_failure_is_a_clear_error_and_nothing_is_written(monkeypatch, corpus,
                                                                          tmp_path):
    monkeypatch.setenv("GROUNDED_RAG_MODEL_RETRIES", "1")
    with ScriptedServer(lambda body, n: error(503, "loading model")) as server:
        emb = openai_embeddings(f"openai:toy@{server.url}")
        store = tmp_path / "store"
        with pytest.raises(ModelServerError, match=f"the embeddings server at {server.url} "
                           r"\(model 'toy'\) failed"):
            ingest_paths([corpus], store, embeddings=emb, progress=False)
        assert len(server.requests) == 2  # bounded: 1 + GROUNDED_RAG_MODEL_RETRIES
    # Nothing half-written: no document and no chunk made it into the store.
    from grounded_rag.retrieval.store import Store

    assert (store / "catalog.sqlite").exists()  # the store was opened before the failure
    opened = Store(store)
    assert opened.document_count() == 0 and opened.chunk_count() == 0
