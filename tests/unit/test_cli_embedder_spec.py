"""``--embedder`` takes the specs of ``$GROUNDED_RAG_EMBEDDER``, served ``openai:`` ones too.

Spelling is checked while the arguments are parsed (exit 2, the flag named); a served
embedder given on the command line builds, records and reopens a store exactly as the
environment variable does. The server is ``tests.openai_server.ScriptedServer`` on loopback
with the toy bag-of-words vectors of ``test_openai_embedder``.
"""

from __future__ import annotations

import json

import pytest

from grounded_rag._console import EXIT_NOT_READY, EXIT_OK, EXIT_USAGE
from grounded_rag.cli import build_parser, main
from tests.openai_server import ScriptedServer
from tests.unit.test_openai_embedder import DIM, embeddings_reply

SERVED_ENV = ("GROUNDED_RAG_EMBEDDER", "GROUNDED_RAG_EMBEDDER_BASE_URL", "GROUNDED_RAG_API_KEY")


@pytest.fixture(autouse=True)
def no_embedder_env(monkeypatch):
    """Only the flag chooses: no spec, URL or key from the environment of the machine."""
    for name in SERVED_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("command", [["ingest", "docs"], ["ingest", "--reembed"],
                                     ["retrieve", "q"]])
@pytest.mark.parametrize(("given", "parsed"), [
    ("e5", "e5"),
    ("MiniLM", "minilm"),
    ("openai:text-embedding-3-small", "openai:text-embedding-3-small"),
    ("openai:nomic-embed@http://127.0.0.1:8080/v1", "openai:nomic-embed@http://127.0.0.1:8080/v1"),
    ("openai:BAAI/bge-m3#e5+input_type@https://embed.example.com/v1",
     "openai:BAAI/bge-m3#e5+input_type@https://embed.example.com/v1"),
    ("openai:textembedding-gecko@003", "openai:textembedding-gecko@003"),
])
def test_good_specs_parse(command, given, parsed):
    args = build_parser().parse_args([*command, "--embedder", given])
    assert args.embedder == parsed


@pytest.mark.parametrize(("given", "why"), [
    ("bert", "unknown embedder 'bert'"),
    ("", "unknown embedder ''"),
    ("openai:", "expected openai:<model>"),
    ("openai:#e5@http://127.0.0.1:8080/v1", "expected openai:<model>"),
    ("openai:m#fast", "unknown flag"),
    ("openai:m@ftp://127.0.0.1/v1", "must be http:// or https://"),
    ("openai:m@http://", "must be http:// or https://"),
    ("openai:m@https:///v1", "name a host"),
])
@pytest.mark.parametrize("command", [["ingest", "docs"], ["ingest", "--reembed"],
                                     ["retrieve", "q"]])
def test_bad_specs_are_usage_errors_naming_the_flag(command, given, why, capsys):
    with pytest.raises(SystemExit) as done:
        main([*command, "--embedder", given])
    assert done.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "argument --embedder:" in err and why in err, err


def test_served_embedder_from_the_flag_builds_reopens_and_reembeds_a_store(corpus, tmp_path,
                                                                            monkeypatch, capsys):
    from grounded_rag.retrieval.store import Store

    store = tmp_path / "store"
    question = "How long does the X100 battery last?"
    with ScriptedServer(embeddings_reply) as server:
        spec = f"openai:fake-model@{server.url}"
        assert main(["ingest", str(corpus), "--store", str(store), "--embedder", spec,
                     "--no-progress", "--json"]) == EXIT_OK
        report = json.loads(capsys.readouterr().out)
        assert len(report["added"]) == 2 and not report["errors"]
        assert server.requests and {r["model"] for r in server.requests} == {"fake-model"}
        embedded = [t for r in server.requests for t in r["input"]]
        assert any("battery lasts up to 10 hours" in t for t in embedded)
        assert all("input_type" not in r for r in server.requests)  # no flag, no field

        # Recorded as the environment variable records it (model, no URL) with the dimension.
        recorded = Store(store).embedder()
        assert recorded is not None
        assert recorded.name == "OpenAIEndpointEmbeddings:fake-model"
        assert recorded.dimension == DIM

        asked = len(server.requests)
        assert main(["retrieve", question, "--store", str(store), "--embedder", spec, "--k",
                     "1", "--json"]) == EXIT_OK
        hits = json.loads(capsys.readouterr().out)
        assert hits[0]["source_id"].startswith("battery")
        assert server.requests[asked]["input"] == [question]

        # Without the flag the store's record chooses the model; the URL comes from the env.
        monkeypatch.setenv("GROUNDED_RAG_EMBEDDER_BASE_URL", server.url)
        asked = len(server.requests)
        assert main(["retrieve", question, "--store", str(store), "--k", "1",
                     "--json"]) == EXIT_OK
        hits = json.loads(capsys.readouterr().out)
        assert hits[0]["source_id"].startswith("battery")
        assert [r["model"] for r in server.requests[asked:]] == ["fake-model"]

        # Another served model is refused before any request, naming the one to use.
        asked = len(server.requests)
        assert main(["retrieve", question, "--store", str(store), "--embedder",
                     f"openai:other-model@{server.url}"]) == EXIT_NOT_READY
        err = capsys.readouterr().err
        assert "built with embeddings OpenAIEndpointEmbeddings:fake-model" in err
        assert "--embedder openai:fake-model" in err
        assert len(server.requests) == asked

        # --reembed takes a served spec too: the store switches to it and records it.
        asked = len(server.requests)
        assert main(["ingest", "--reembed", "--store", str(store), "--embedder",
                     f"openai:fake-model#e5@{server.url}", "--no-progress", "--json"]) == EXIT_OK
        switched = json.loads(capsys.readouterr().out)
        assert switched["previous"].startswith("OpenAIEndpointEmbeddings:fake-model,")
        assert switched["embedder"].startswith("OpenAIEndpointEmbeddings:fake-model#e5,")
        assert switched["chunks_embedded"] >= 2
        resent = [t for r in server.requests[asked:] for t in r["input"]]
        assert resent and all(t.startswith("passage: ") for t in resent)
        reopened = Store(store).embedder()
        assert reopened is not None and reopened.name == "OpenAIEndpointEmbeddings:fake-model#e5"
