"""The structured-output ladder on OpenAI-compatible servers (``grounded_rag._structured``).

Each server is ``tests.openai_server.ScriptedServer``, a real HTTP server on loopback, so
the real ``openai`` client and ``langchain-openai`` build the requests and parse the replies.
The request sequences pinned here are the rule in ``_structured``'s docstring.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from grounded_rag._structured import (
    StructuredOutputUnsupported,
    forget_learned,
    invoke_structured,
    invoke_structured_raw,
    learned_method,
    parse_json_reply,
)
from grounded_rag.models import chat_model_from_spec
from grounded_rag.schemas import CitedAnswer, JudgedClaims
from tests.openai_server import Reply, ScriptedServer, completion, error, tool_call

ANSWER = {"answerable": True, "statements": [
    {"text": "The X100 battery lasts up to 10 hours.", "citations": ["S1.1"]}]}
VERDICTS = {"verdicts": [{"claim": 0, "verdict": "supported", "reason": "Stated.",
                          "evidence_quote": "The X100 battery lasts up to 10 hours"}]}
MESSAGES = [SystemMessage("Answer from the sources."), HumanMessage("How long?")]


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    forget_learned()
    monkeypatch.setenv("GROUNDED_RAG_MODEL_TIMEOUT", "5")
    monkeypatch.setenv("GROUNDED_RAG_MODEL_RETRIES", "1")
    monkeypatch.delenv("GROUNDED_RAG_STRUCTURED_OUTPUT", raising=False)
    monkeypatch.delenv("GROUNDED_RAG_API_KEY", raising=False)
    yield
    forget_learned()


def llama_cpp_like(payload_for: Any, *, schema_reply: str | None = None):
    """A server like llama-cpp-python's: no ``json_schema`` response format (422); a
    ``json_object`` response format decoded under the schema's grammar, tool calls likewise.

    ``schema_reply``: a server that takes ``json_object`` but ignores its schema, answering
    this text instead.
    """

    def handler(body: dict, n: int) -> Reply:
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return error(422, "response_format.type: Input should be 'text' or 'json_object'")
        if fmt.get("type") == "json_object":
            if schema_reply is not None:
                return completion(schema_reply)
            return completion(json.dumps(payload_for(fmt["schema"]["title"])))
        if body.get("tools"):
            name = body["tools"][0]["function"]["name"]
            return completion(tool_calls=[tool_call(name, payload_for(name))])
        return completion("I am a plain model.")

    return handler


def shapes(server: ScriptedServer) -> list[str | None]:
    """Each request's response format type (None: tool calls or plain text)."""
    return [(r.get("response_format") or {}).get("type") for r in server.requests]


# -- the structured-output ladder ----------------------------------------------------------------

def test_ladder_takes_json_object_with_schema_where_json_schema_is_refused():
    payloads = {"CitedAnswer": ANSWER, "JudgedClaims": VERDICTS}
    with ScriptedServer(llama_cpp_like(payloads.__getitem__)) as server:
        model = chat_model_from_spec(f"openai:served-model@{server.url}")
        first, raw = invoke_structured_raw(model, CitedAnswer, MESSAGES)
        assert first.answerable and first.statements[0].text.startswith("The X100")
        assert shapes(server) == ["json_schema", "json_object"]
        asked = server.requests[1]
        # the request the local model decodes under: the schema beside, not in, the prompt
        assert asked["response_format"]["schema"] == CitedAnswer.model_json_schema()
        assert [m["content"] for m in asked["messages"]] == [m.content for m in MESSAGES]
        assert "tools" not in asked
        assert raw is not None and json.loads(str(raw.content)) == ANSWER  # the reply itself
        assert learned_method(model) == "json_object_schema"
        verdicts = invoke_structured(model, JudgedClaims, MESSAGES)
        assert verdicts.verdicts[0].verdict == "supported"
        assert shapes(server)[2:] == ["json_object"]  # remembered: no re-probing
        assert server.requests[2]["response_format"]["schema"]["title"] == "JudgedClaims"


@pytest.mark.parametrize("ignored", ["I am a plain model.", '{"hours": 10}'])
def test_ladder_falls_back_to_tool_calls_and_remembers_it(ignored):
    """A server that takes ``json_object`` but ignores the schema (prose, or other JSON)."""
    with ScriptedServer(llama_cpp_like(lambda name: ANSWER, schema_reply=ignored)) as server:
        model = chat_model_from_spec(f"openai:served-model@{server.url}")
        first = invoke_structured(model, CitedAnswer, MESSAGES)
        assert first.answerable and first.statements[0].text.startswith("The X100")
        assert shapes(server) == ["json_schema", "json_object", None]
        assert server.requests[2]["tool_choice"]["function"]["name"] == "CitedAnswer"
        assert learned_method(model) == "function_calling"
        invoke_structured(model, CitedAnswer, MESSAGES)
        assert len(server.requests) == 4 and server.requests[3].get("tools")  # no re-probing


def test_a_validation_error_naming_json_object_is_a_refusal():
    """A 5xx whose message is a validation error about ``json_object``: the next method."""

    def handler(body: dict, n: int) -> Reply:
        fmt = (body.get("response_format") or {}).get("type")
        if fmt:
            return error(500, f"1 validation error: response_format.type: Input should be "
                              f"'text', not {fmt!r}")
        return completion(tool_calls=[tool_call("CitedAnswer", ANSWER)])

    with ScriptedServer(handler) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        assert invoke_structured(model, CitedAnswer, MESSAGES).answerable
    # each refused shape is asked twice (the client's one retry of a 5xx), then tools
    assert shapes(server) == ["json_schema"] * 2 + ["json_object"] * 2 + [None]
    assert learned_method(model) == "function_calling"


def test_an_older_llama_server_refusing_json_schema_with_500_gets_json_object():
    """Older llama.cpp servers: HTTP 500 'response_format type must be one of ...'."""

    def handler(body: dict, n: int) -> Reply:
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return error(500, 'response_format type must be one of "text" or "json_object", '
                              'but got: json_schema')
        assert fmt["type"] == "json_object" and fmt["schema"]["title"] == "CitedAnswer"
        return completion(json.dumps(ANSWER))

    with ScriptedServer(handler) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        assert invoke_structured(model, CitedAnswer, MESSAGES).answerable
    assert shapes(server) == ["json_schema", "json_schema", "json_object"]  # 500 retried once
    assert learned_method(model) == "json_object_schema"


def test_ladder_uses_json_schema_where_the_server_takes_it():
    def handler(body: dict, n: int) -> Reply:
        assert body["response_format"]["type"] == "json_schema"
        return completion(json.dumps(ANSWER))

    with ScriptedServer(handler) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        assert invoke_structured(model, CitedAnswer, MESSAGES).answerable
    assert learned_method(model) == "json_schema" and len(server.requests) == 1


def test_ladder_ends_in_plain_json_with_repair():
    def handler(body: dict, n: int) -> Reply:
        if body.get("response_format") or body.get("tools"):
            return error(400, "unsupported parameter")
        prompt = body["messages"][-1]["content"]
        assert "Reply with one JSON object only" in prompt and '"statements"' in prompt
        return completion('Sure! Here it is:\n```json\n{"answerable": true, "statements": '
                          '[{"text": "The X100 battery lasts up to 10 hours.", '
                          '"citations": ["S1.1"],},]}\n```\nHope that helps.')

    with ScriptedServer(handler) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        reply = invoke_structured(model, CitedAnswer, MESSAGES)
    assert reply.statements[0].citations == ["S1.1"]
    assert learned_method(model) == "json"
    assert len(server.requests) == 4


def test_a_server_that_refuses_every_method_is_a_clear_error():
    with ScriptedServer(lambda body, n: error(400, "bad request shape")) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        with pytest.raises(StructuredOutputUnsupported) as info:
            invoke_structured(model, CitedAnswer, MESSAGES)
    message = str(info.value)
    assert f"the model server at {server.url} (model 'm') refused every structured-output" \
        in message
    for method in ("json_schema: HTTP 400", "json_object_schema: HTTP 400",
                   "function_calling: HTTP 400", "json: HTTP 400"):
        assert method in message
    assert "GROUNDED_RAG_STRUCTURED_OUTPUT=json" in message
    assert len(server.requests) == 4  # 400 is not retried


def test_forced_method(monkeypatch):
    monkeypatch.setenv("GROUNDED_RAG_STRUCTURED_OUTPUT", "function_calling")
    with ScriptedServer(llama_cpp_like(lambda name: VERDICTS)) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        reply = invoke_structured(model, JudgedClaims, MESSAGES)
    assert reply.verdicts[0].verdict == "supported"
    assert len(server.requests) == 1 and server.requests[0]["tools"]
    monkeypatch.setenv("GROUNDED_RAG_STRUCTURED_OUTPUT", "json_object_schema")
    with ScriptedServer(llama_cpp_like(lambda name: VERDICTS)) as server:
        model = chat_model_from_spec(f"openai:m@{server.url}")
        reply = invoke_structured(model, JudgedClaims, MESSAGES)
    assert reply.verdicts[0].verdict == "supported"
    assert shapes(server) == ["json_object"]
    monkeypatch.setenv("GROUNDED_RAG_STRUCTURED_OUTPUT", "xml")
    with pytest.raises(ValueError, match="GROUNDED_RAG_STRUCTURED_OUTPUT must be"):
        invoke_structured(model, JudgedClaims, MESSAGES)


def test_parse_json_reply_repairs_and_refuses():
    cut = '{"answerable": true, "statements": [{"text": "A.", "citations": ["S1.1"]}, {"te'
    assert parse_json_reply(cut, CitedAnswer).statements[0].text == "A."
    wrapped = json.dumps({"CitedAnswer": ANSWER})
    assert parse_json_reply(wrapped, CitedAnswer).answerable
    with pytest.raises(ValueError, match="no JSON object"):
        parse_json_reply("I cannot answer that.", CitedAnswer)
    with pytest.raises(ValueError):  # pydantic's ValidationError is a ValueError
        parse_json_reply('{"answerable": "maybe"}', CitedAnswer)
