"""langchain-google-genai's structured output for the generator and the judge, from recordings.

The cassettes in ``tests/data/recordings/`` (format: ``tests/recordings.py``) hold the
requests the Gemini client sent and the replies it got; replaying them needs no key and no
network. The ones shipped are ``"source": "hand-made"``: written in the documented
``generateContent`` reply shape, with the requests the real client builds (produced by
``make_cassettes`` below). With a key, ``GROUNDED_RAG_RECORD_GEMINI_KEY=... pytest
tests/unit/test_gemini_recorded.py -k record`` replaces them with real exchanges.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from grounded_rag import build_graph
from tests.fakes import StaticRetriever
from tests.fakes import evidence as ev
from tests.recordings import FORMAT, RECORDINGS, load, recording_transport, replay_transport

SPEC = ev("spec#sec2", "The X100 battery lasts up to 10 hours on a single charge.",
          title="X100 > Battery")
QUESTION = "How long does the X100 battery last?"
MODEL = "gemini-2.5-flash"


def gemini(transport: httpx.BaseTransport, key: str = "replay") -> Any:
    from langchain_google_genai import ChatGoogleGenerativeAI

    return ChatGoogleGenerativeAI(model=MODEL, google_api_key=key, max_retries=0,
                                  temperature=0, client_args={"transport": transport})


def run_graph(generator_transport: httpx.BaseTransport, judge_transport: httpx.BaseTransport,
              key: str = "replay") -> dict[str, Any]:
    graph = build_graph(retriever=StaticRetriever([SPEC]), generator=gemini(generator_transport,
                                                                            key),
                        extractor="rules", verifier=gemini(judge_transport, key))
    return graph.invoke({"question": QUESTION})


def _reply(payload: Any, finish: str = "STOP") -> httpx.Response:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return httpx.Response(200, json={
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                        "finishReason": finish, "index": 0}],
        "usageMetadata": {"promptTokenCount": 180, "candidatesTokenCount": 40,
                          "totalTokenCount": 220}, "modelVersion": MODEL})


def make_cassettes(directory: Path = RECORDINGS) -> None:
    """Write the hand-made cassettes: the real client's requests, documented reply shapes."""
    answer = {"answerable": True, "statements": [
        {"text": "The X100 battery lasts up to 10 hours.", "citations": ["S1.1"]}]}
    verdicts = {"verdicts": [{"claim": 0, "verdict": "supported",
                              "reason": "The spec states up to 10 hours on a single charge.",
                              "evidence_quote": "The X100 battery lasts up to 10 hours on a "
                                                "single charge."}]}
    cut = json.dumps(answer)[:40]  # a reply cut off by the token limit
    replies = {"gemini_generator": [_reply(cut, "MAX_TOKENS"), _reply(answer)],
               "gemini_judge": [_reply(verdicts)]}
    transports = {}
    for name, queue in replies.items():
        upstream = httpx.MockTransport(lambda request, q=queue: q.pop(0))
        transports[name] = recording_transport("google_genai", upstream)
    run_graph(transports["gemini_generator"], transports["gemini_judge"])
    for name, transport in transports.items():
        path = transport.save(name, directory)
        data = json.loads(path.read_text(encoding="utf-8"))
        data["source"] = "hand-made"
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def test_cassettes_are_in_the_documented_format():
    for name in ("gemini_generator", "gemini_judge"):
        data = load(name)
        assert data["format"] == FORMAT and data["provider"] == "google_genai"
        text = json.dumps(data)
        assert "x-goog-api-key" not in text.lower() and "replay" not in text  # no credentials
        for item in data["interactions"]:
            assert item["request"]["path"] == f"/v1/models/{MODEL}:generateContent"


def test_generator_and_judge_structured_output_replayed():
    generator, judge = replay_transport("gemini_generator"), replay_transport("gemini_judge")
    out = run_graph(generator, judge)
    assert out["status"] == "answered"
    assert out["answer"] == "The X100 battery lasts up to 10 hours[1]."
    claim = out["claims"][0]
    assert claim["verdict"] == "supported"
    assert claim["reason"] == "The spec states up to 10 hours on a single charge."
    assert claim["citations"][0]["quote"] == SPEC["text"] and claim["citations"][0]["match"] == 1
    # The truncated first reply (finishReason MAX_TOKENS) was retried, once.
    assert len(generator.sent) == 2 and len(judge.sent) == 1
    # Both roles asked for JSON under the schema (Gemini's native structured output).
    for body, schema in ((generator.sent[0], "CitedAnswer"), (judge.sent[0], "JudgedClaims")):
        config = body["generationConfig"]
        assert config["responseMimeType"] == "application/json"
        assert config["responseJsonSchema"]["title"] == schema
    assert "S1.1" in generator.sent[0]["contents"][0]["parts"][0]["text"]  # numbered sentences
    assert "Claim 0:" in judge.sent[0]["contents"][0]["parts"][0]["text"]


def test_replay_refuses_an_unrecorded_request():
    generator = replay_transport("gemini_judge")  # one exchange only
    with pytest.raises(AssertionError, match="was not recorded"):
        run_graph(generator, replay_transport("gemini_judge"))


def test_make_cassettes_round_trip(tmp_path):
    make_cassettes(tmp_path)
    for name in ("gemini_generator", "gemini_judge"):
        written = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        shipped = load(name)
        assert [i["response"] for i in written["interactions"]] == [
            i["response"] for i in shipped["interactions"]]


@pytest.mark.skipif(not os.environ.get("GROUNDED_RAG_RECORD_GEMINI_KEY"),
                    reason="records real Gemini exchanges: set GROUNDED_RAG_RECORD_GEMINI_KEY")
def test_record_real_gemini_exchanges():  # pragma: no cover - needs a key and the network
    key = os.environ["GROUNDED_RAG_RECORD_GEMINI_KEY"]
    generator = recording_transport("google_genai")
    judge = recording_transport("google_genai")
    out = run_graph(generator, judge, key=key)
    assert out["status"] in ("answered", "abstained")
    generator.save("gemini_generator")
    judge.save("gemini_judge")
