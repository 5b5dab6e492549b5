"""``openai:`` models on OpenAI-compatible servers: base URLs, faults, the loop over HTTP.

The structured-output ladder itself is pinned in ``tests/unit/test_structured_ladder.py``.

Every server here is ``tests.openai_server.ScriptedServer``: a real HTTP server on loopback,
started and stopped by the test, so the real ``openai`` client (timeouts, retries,
``Retry-After``) and ``langchain-openai`` parsing run.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from grounded_rag import build_graph
from grounded_rag._structured import (
    ModelServerError,
    StructuredOutputFailure,
    invoke_structured,
)
from grounded_rag.models import chat_model_from_spec, split_base_url, with_base_url
from grounded_rag.schemas import CitedAnswer
from tests.fakes import StaticRetriever
from tests.fakes import evidence as ev
from tests.openai_server import Reply, ScriptedServer, completion, error
from tests.unit.test_structured_ladder import (  # fresh: the same autouse fixture
    ANSWER,
    MESSAGES,
    VERDICTS,
    fresh,  # noqa: F401
    llama_cpp_like,
    shapes,
)

SPEC = ev("spec#sec2", "The X100 battery lasts up to 10 hours on a single charge.",
          title="X100 > Battery")


# -- specs and base URLs --------------------------------------------------------------------------

def test_spec_base_url_parsing():
    assert split_base_url("openai:qwen2.5:1.5b@http://127.0.0.1:11434/v1") == (
        "openai:qwen2.5:1.5b", "http://127.0.0.1:11434/v1")
    assert split_base_url("openai:gpt-4.1-mini") == ("openai:gpt-4.1-mini", None)
    assert split_base_url("local") == ("local", None)
    assert with_base_url("openai:m", "http://h:1/v1/") == "openai:m@http://h:1/v1"
    assert with_base_url("openai:m@http://a/v1", "http://b/v1") == "openai:m@http://a/v1"
    assert with_base_url("local", "http://b/v1") == "local"
    assert with_base_url("google_genai:gemini-2.5-flash", "http://b/v1") == (
        "google_genai:gemini-2.5-flash")
    with pytest.raises(ValueError, match="must start with http"):
        with_base_url("openai:m", "127.0.0.1:8000")
    with pytest.raises(ValueError, match="for openai: models"):
        chat_model_from_spec("google_genai:gemini@http://127.0.0.1:1/v1")
    with pytest.raises(ValueError, match="expected openai:<model>"):
        chat_model_from_spec("openai:@http://127.0.0.1:1/v1")


def test_spec_url_gets_its_own_key_never_the_openai_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    model = chat_model_from_spec("openai:qwen@http://127.0.0.1:9/v1")
    assert model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.model_name == "qwen"
    assert model.openai_api_key.get_secret_value() == "not-needed"
    monkeypatch.setenv("GROUNDED_RAG_API_KEY", "server-key")
    model = chat_model_from_spec("openai:qwen2@http://127.0.0.1:9/v1")
    assert model.openai_api_key.get_secret_value() == "server-key"
    assert model.request_timeout == 5.0 and model.max_retries == 1


def test_openai_base_url_env_is_honoured(monkeypatch):
    with ScriptedServer(llama_cpp_like(lambda name: ANSWER)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        model = chat_model_from_spec("openai:served-model")
        assert model.openai_api_base == server.url
        reply = invoke_structured(model, CitedAnswer, MESSAGES)
    assert reply.statements[0].citations == ["S1.1"]
    assert server.requests[-1]["model"] == "served-model"


def test_preset_tier_judge_is_not_sent_to_openai_for_a_served_generator():
    from grounded_rag.context import apply_preset

    served = apply_preset({"generator_model": "openai:qwen@http://127.0.0.1:9/v1",
                           "preset": "cost_optimized"})
    assert served.verifier_model == ""  # the judge is the served generator itself
    hosted = apply_preset({"generator_model": "openai:gpt-4.1-mini", "preset": "cost_optimized"})
    assert hosted.verifier_model == "openai:gpt-4.1-nano"


# -- faults: bounded retries, then a clear error or finding --------------------------------------

def test_stall_times_out_within_the_bound(monkeypatch):
    monkeypatch.setenv("GROUNDED_RAG_MODEL_TIMEOUT", "0.5")
    with ScriptedServer(lambda body, n: Reply(stall_s=30, body={})) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        start = time.monotonic()
        with pytest.raises(ModelServerError, match=r"did not answer within 0\.5 s after 2 "
                           r"attempt\(s\)") as info:
            invoke_structured(model, CitedAnswer, MESSAGES)
        elapsed = time.monotonic() - start
    assert len(server.requests) == 2  # 1 + GROUNDED_RAG_MODEL_RETRIES
    assert elapsed < 5, elapsed  # 2 x 0.5 s timeouts + the client's short backoff
    assert info.value.code == 1 and info.value.kind == "model_server"


def test_429_retry_after_is_honoured_then_succeeds():
    def handler(body: dict, n: int) -> Reply:
        if n == 1:
            return error(429, "slow down", **{"Retry-After": "1"})
        return completion(json.dumps(ANSWER))

    with ScriptedServer(handler) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        assert invoke_structured(model, CitedAnswer, MESSAGES).answerable
    assert len(server.requests) == 2
    assert server.times[1] - server.times[0] >= 0.95  # waited as told


def test_429_forever_is_a_clear_error_after_the_retries():
    with ScriptedServer(lambda body, n: error(429, "quota", **{"Retry-After": "0"})) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        with pytest.raises(ModelServerError, match="kept answering 429") as info:
            invoke_structured(model, CitedAnswer, MESSAGES)
    assert info.value.status == 429 and len(server.requests) == 2


def test_500_is_retried_then_succeeds_or_fails_clearly():
    with ScriptedServer(lambda body, n: error(500, "boom") if n == 1
                        else completion(json.dumps(ANSWER))) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        assert invoke_structured(model, CitedAnswer, MESSAGES).answerable
    assert len(server.requests) == 2
    with ScriptedServer(lambda body, n: error(500, "boom")) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        with pytest.raises(ModelServerError, match="kept failing with HTTP 500 after 2"):
            invoke_structured(model, CitedAnswer, MESSAGES)
    assert len(server.requests) == 2


@pytest.mark.parametrize("content_type", ["application/json", "text/html"])
def test_a_reply_that_is_not_a_chat_completion_is_a_clear_error(content_type):
    reply = Reply(raw=b"<html>gateway hiccup</html>", headers={"Content-Type": content_type})
    with ScriptedServer(lambda body, n: reply) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        with pytest.raises(ModelServerError, match=f"the model server at {server.url} "
                           r"\(model 'm'\) sent a reply that is not a chat completion"):
            invoke_structured(model, CitedAnswer, MESSAGES)
    assert len(server.requests) == 1  # nothing the model could fix: no retry


def test_malformed_json_content_is_retried_then_a_finding():
    with ScriptedServer(lambda body, n: completion('{"answerable": true, "statements": [')
                        if body.get("response_format") else error(400, "no tools")) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        with pytest.raises(StructuredOutputFailure) as info:
            invoke_structured(model, CitedAnswer, MESSAGES)
    # json_schema and json_object once each (malformed), tools refused, plain JSON once
    # (malformed): bounded.
    assert len(info.value.errors) == 4 and len(server.requests) == 4
    assert shapes(server) == ["json_schema", "json_object", None, None]


# -- the whole graph over HTTP -------------------------------------------------------------------

def graph_on(server: ScriptedServer, **kwargs: Any):
    model = chat_model_from_spec(f"openai:served-model@{server.url}")
    return build_graph(retriever=StaticRetriever([SPEC]), generator=model, extractor="rules",
                       verifier=model, **kwargs)


@pytest.mark.parametrize(("schema_reply", "kinds"), [
    (None, ["json_schema", "json_object:CitedAnswer", "json_object:JudgedClaims"]),
    ("I am a plain model.", ["json_schema", "json_object:CitedAnswer", "tool:CitedAnswer",
                             "tool:JudgedClaims"]),
])
def test_graph_answers_and_verifies_over_the_learned_method(schema_reply, kinds):
    payloads = {"CitedAnswer": ANSWER, "JudgedClaims": VERDICTS}
    with ScriptedServer(llama_cpp_like(payloads.__getitem__,
                                       schema_reply=schema_reply)) as server:
        out = graph_on(server).invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered"
    assert out["answer"] == "The X100 battery lasts up to 10 hours[1]."
    assert out["claims"][0]["verdict"] == "supported"
    # the generator probes the ladder; the judge uses the method learned for the server
    seen = [(f"{r['response_format']['type']}:{r['response_format']['schema']['title']}"
             if (r.get("response_format") or {}).get("type") == "json_object"
             else r["response_format"]["type"] if r.get("response_format")
             else f"tool:{r['tools'][0]['function']['name']}") for r in server.requests]
    assert seen == kinds


def test_graph_abstains_with_a_finding_on_malformed_replies():
    def handler(body: dict, n: int) -> Reply:
        if body.get("tools"):
            name = body["tools"][0]["function"]["name"]
            return completion(tool_calls=[{"id": "c", "type": "function", "function": {
                "name": name, "arguments": '{"answerable": tru'}}])
        return error(422, "no json_schema") if body.get("response_format") else completion("?")

    with ScriptedServer(handler) as server:
        out = graph_on(server).invoke({"question": "How long does the X100 battery last?"},
                                      config={"configurable": {"max_retries": 1}})
    assert out["status"] == "abstained" and out["decided_by"] == "generator"
    assert any(f["type"] == "malformed_output" for f in out["findings"])
    assert len(server.requests) <= 2 * 4  # two attempts x (at most) the four methods


def test_graph_stops_on_a_dead_server_and_writes_no_answer(monkeypatch):
    monkeypatch.setenv("GROUNDED_RAG_MODEL_TIMEOUT", "0.3")
    with ScriptedServer(lambda body, n: Reply(stall_s=30, body={})) as server:
        graph = graph_on(server, checkpointer=InMemorySaver())
        cfg = {"configurable": {"thread_id": "dead"}}
        with pytest.raises(ModelServerError, match="did not answer within 0.3 s"):
            graph.invoke({"question": "How long does the X100 battery last?"}, cfg)
        state = graph.get_state(cfg)
    assert state.next == ("generate_answer",)  # resumable from the last finished step
    assert "status" not in state.values and "answer" not in state.values


def test_cli_prints_a_server_error_as_one_line(monkeypatch, capsys, tmp_path):
    from grounded_rag import ask_cli
    from grounded_rag.cli import main

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise ModelServerError("the model server at http://127.0.0.1:1/v1 (model 'm') could "
                               "not be reached after 3 attempt(s)")

    monkeypatch.setattr(ask_cli, "run_question", fail)
    code = main(["ask", "How long?", "--model", "openai:m", "--base-url",
                 "http://127.0.0.1:1/v1", "--store", str(tmp_path), "--json"])
    assert code == 1
    captured = capsys.readouterr()
    assert "error: the model server at http://127.0.0.1:1/v1" in captured.err
    assert json.loads(captured.out)["error"]["kind"] == "model_server"


def test_a_verifier_named_by_spec_resolves_without_deadlock():
    import threading

    from grounded_rag.models import resolve_verifier

    done: list[Any] = []
    thread = threading.Thread(
        target=lambda: done.append(resolve_verifier("openai:judge@http://127.0.0.1:9/v1", "")),
        daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert done, "resolve_verifier hung (the model lock re-entered)"
    assert type(done[0].inner.model).__name__ == "ChatOpenAI"


def test_base_url_flag_needs_an_openai_model(capsys):
    from grounded_rag.cli import main

    assert main(["ask", "How long?", "--base-url", "http://127.0.0.1:1/v1"]) == 2
    assert "--base-url needs an openai: model" in capsys.readouterr().err
    assert main(["ask", "How long?", "--model", "openai:m", "--base-url", "127.0.0.1:1"]) == 2
    assert "must start with http" in capsys.readouterr().err


def test_base_url_flag_points_every_openai_role_at_the_server():
    import argparse

    from grounded_rag.ask_cli import _settings

    args = argparse.Namespace(store=None, model="openai:qwen2.5:1.5b",
                              verifier_model="openai:judge", max_retries=None, top_k=None,
                              preset=None, verify_mode=None,
                              base_url="http://127.0.0.1:11434/v1/")
    settings = _settings(args)
    assert settings["generator_model"] == "openai:qwen2.5:1.5b@http://127.0.0.1:11434/v1"
    assert settings["verifier_model"] == "openai:judge@http://127.0.0.1:11434/v1"
