"""Provider paths (OpenAI, Gemini) through their real LangChain clients, with scripted HTTP.

No key and no network: each client gets an httpx mock transport that replays replies in the
provider's wire format (hand-written, shaped like the documented responses), so the real
request building and structured-output parsing code runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from grounded_rag import build_graph
from tests.fakes import StaticRetriever
from tests.fakes import evidence as ev

SPEC = ev("spec#sec2", "The X100 battery lasts up to 10 hours on a single charge.")
ANSWER = {"answerable": True, "statements": [
    {"text": "The X100 battery lasts up to 10 hours.",
     "citations": ["S1.1"]}]}
VERDICTS = {"verdicts": [{"claim": 0, "verdict": "supported", "reason": "Stated.",
                          "evidence_quote": "The X100 battery lasts up to 10 hours"}]}


def _replayer(replies: list[tuple[str, dict | str]], wrap: Callable[[str, str], dict]):
    """A handler answering successive requests with (finish, content) replies."""
    seen: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        finish, content = replies[min(len(seen) - 1, len(replies) - 1)]
        text = content if isinstance(content, str) else json.dumps(content)
        return httpx.Response(200, json=wrap(finish, text))

    return handler, seen


def _openai_body(finish: str, text: str) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
            "model": "gpt-4.1-mini-2025-04-14",
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": text, "refusal": None}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}}


def _gemini_body(finish: str, text: str) -> dict:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": finish, "index": 0}],
            "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 30,
                              "totalTokenCount": 150},
            "modelVersion": "gemini-2.5-flash"}


def _openai(handler):
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="gpt-4.1-mini", api_key="sk-test", max_retries=0, temperature=0,
                      http_client=httpx.Client(transport=httpx.MockTransport(handler)))


def _gemini(handler):
    from langchain_google_genai import ChatGoogleGenerativeAI

    return ChatGoogleGenerativeAI(model="gemini-2.5-flash", google_api_key="test", max_retries=0,
                                  temperature=0,
                                  client_args={"transport": httpx.MockTransport(handler)})


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_graph_runs_end_to_end_on_provider_clients(provider):
    wrap, make = (_openai_body, _openai) if provider == "openai" else (_gemini_body, _gemini)
    gen_handler, gen_seen = _replayer([("stop" if provider == "openai" else "STOP", ANSWER)], wrap)
    judge_handler, judge_seen = _replayer(
        [("stop" if provider == "openai" else "STOP", VERDICTS)], wrap)
    graph = build_graph(retriever=StaticRetriever([SPEC]), generator=make(gen_handler),
                        extractor="rules", verifier=make(judge_handler))
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered"
    assert out["answer"] == "The X100 battery lasts up to 10 hours[1]."
    assert out["claims"][0]["verdict"] == "supported"
    assert len(gen_seen) == 1 and len(judge_seen) == 1
    if provider == "openai":
        fmt = gen_seen[0]["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "CitedAnswer"
    else:
        config = gen_seen[0]["generationConfig"]
        assert config["responseMimeType"] == "application/json"
        assert "statements" in json.dumps(config["responseJsonSchema"])


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_truncated_structured_reply_is_retried(provider):
    wrap, make = (_openai_body, _openai) if provider == "openai" else (_gemini_body, _gemini)
    stop, length = ("stop", "length") if provider == "openai" else ("STOP", "MAX_TOKENS")
    truncated = json.dumps(ANSWER)[:40]
    gen_handler, gen_seen = _replayer([(length, truncated), (stop, ANSWER)], wrap)
    judge_handler, _ = _replayer([(stop, VERDICTS)], wrap)
    graph = build_graph(retriever=StaticRetriever([SPEC]), generator=make(gen_handler),
                        extractor="rules", verifier=make(judge_handler))
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert out["status"] == "answered"
    assert len(gen_seen) == 2
    assert out["attempts"] == 1


def test_unusable_judge_reply_becomes_neutral_findings_not_a_crash():
    gen_handler, _ = _replayer([("stop", ANSWER)], _openai_body)
    judge_handler, judge_seen = _replayer([("stop", "not json at all")], _openai_body)
    graph = build_graph(retriever=StaticRetriever([SPEC]), generator=_openai(gen_handler),
                        extractor="rules", verifier=_openai(judge_handler))
    out = graph.invoke({"question": "How long?"}, config={"configurable": {"max_retries": 0}})
    assert out["status"] == "abstained"
    unsupported = [f for f in out["findings"] if f["type"] == "unsupported"]
    assert unsupported and "verifier reply unusable" in unsupported[0]["detail"]
    assert len(judge_seen) == 2  # retried once before giving up
