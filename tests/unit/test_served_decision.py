"""A served generator's answer-or-decline decision, read from logprobs (``_served_decision``).

Every server is ``tests.openai_server.ScriptedServer`` on loopback, shaped like
llama-cpp-python's (``json_schema`` refused with 422; ``json_object`` with the schema, and
forced tool calls, decoded under the schema's grammar); the real ``openai`` client and
``langchain-openai`` parse the replies.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from grounded_rag import build_graph
from grounded_rag._served_decision import (
    answerable_log_odds,
    decide_on_server,
    forget_refusals,
    logprobs_refusal,
)
from grounded_rag._structured import forget_learned
from grounded_rag.models import chat_model_from_spec
from grounded_rag.nodes import write
from grounded_rag.schemas import CitedAnswer
from grounded_rag.verification.decision import Combiner, Decision
from tests.fakes import ScriptedVerifier, StaticRetriever
from tests.fakes import evidence as ev
from tests.openai_server import Reply, ScriptedServer, completion, error, tool_call

SPEC = ev("spec#sec2", "The X100 battery lasts up to 10 hours on a single charge.",
          title="X100 > Battery")
VERDICTS = {"verdicts": [{"claim": 0, "verdict": "supported", "reason": "Stated.",
                          "evidence_quote": "The X100 battery lasts up to 10 hours"}]}
MESSAGES = [SystemMessage("Answer from the sources."), HumanMessage("How long?")]
ANSWER = {"answerable": True, "statements": [
    {"text": "The X100 battery lasts up to 10 hours.", "citations": ["S1.1"]}]}
DECLINE = {"answerable": False, "statements": []}
QUESTION = "How long does the X100 battery last?"
LOGITS_ALL = "logprobs is not supported for models created with logits_all=False"


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    forget_learned()
    forget_refusals()
    monkeypatch.setenv("GROUNDED_RAG_MODEL_TIMEOUT", "5")
    monkeypatch.setenv("GROUNDED_RAG_MODEL_RETRIES", "1")
    monkeypatch.delenv("GROUNDED_RAG_STRUCTURED_OUTPUT", raising=False)
    yield
    forget_learned()
    forget_refusals()


def threshold_at(monkeypatch, value: float) -> None:
    """English decisions at generator log-odds ``value``, whatever the relevance."""
    combiner = Combiner(weights={"generator": 1.0}, bias=0.0, cut=value)
    monkeypatch.setattr(write, "DEFAULT_DECISION", Decision(combiners={"en": combiner}))


def entry(token: str, logprob: float, top: dict[str, float] | None = None) -> dict[str, Any]:
    alternatives = top if top is not None else {token: logprob}
    return {"token": token, "logprob": logprob, "bytes": None,
            "top_logprobs": [{"token": t, "logprob": lp, "bytes": None}
                             for t, lp in alternatives.items()]}


def content_for(payload: dict[str, Any], value_tokens: tuple[str, ...],
                top: dict[str, float]) -> tuple[str, list[dict[str, Any]]]:
    """The tool call's arguments and chat logprobs for them, the way a server sends them.

    The text before the value comes in small tokens; ``value_tokens`` write the value of
    ``answerable`` (a leading space included), the first with ``top`` as its alternatives.
    """
    arguments = json.dumps(payload)
    colon = arguments.index('"answerable":') + len('"answerable":')
    word = "true" if payload["answerable"] else "false"
    assert "".join(value_tokens) == " " + word
    before, after = arguments[:colon], arguments[colon + len(word) + 1:]
    tokens = [entry(before[i:i + 5], -0.01) for i in range(0, len(before), 5)]
    tokens.append(entry(value_tokens[0], top[value_tokens[0]], top))
    tokens += [entry(t, -0.01) for t in value_tokens[1:]]
    tokens.append(entry(after, -0.2))
    assert "".join(t["token"] for t in tokens) == arguments
    return arguments, tokens


def with_logprobs(payload: dict[str, Any], value_tokens: tuple[str, ...],
                  top: dict[str, float]) -> Reply:
    arguments, content = content_for(payload, value_tokens, top)
    reply = completion(tool_calls=[{"id": "call_1", "type": "function", "function": {
        "name": "CitedAnswer", "arguments": arguments}}])
    reply.body["choices"][0]["logprobs"] = {"content": content, "refusal": None}
    return reply


def llama_server(generator: Any, *, takes_schema: bool = True):
    """A llama-cpp-python-like server; ``generator(body)`` answers the CitedAnswer calls.

    ``json_schema`` is refused (422). ``generator`` writes a tool call; a request with the
    ``json_object`` response format and the schema gets its arguments as the reply's text,
    logprobs and all (``takes_schema`` False: a server that ignores that schema, answering
    prose, so the ladder settles on tool calls).
    """

    def handler(body: dict, n: int) -> Reply:
        fmt = body.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return error(422, "response_format.type: Input should be 'text' or 'json_object'")
        if fmt.get("type") == "json_object":
            if not takes_schema:
                return completion("I am a plain model.")
            if fmt["schema"]["title"] == "JudgedClaims":
                return completion(json.dumps(VERDICTS))
            return as_text(generator(body))
        tools = body.get("tools")
        if tools and tools[0]["function"]["name"] == "JudgedClaims":
            return completion(tool_calls=[tool_call("JudgedClaims", VERDICTS)])
        return generator(body)

    return handler


def as_text(reply: Reply) -> Reply:
    """A tool-call completion as the same object written in the reply's text."""
    if reply.status != 200:
        return reply
    choice = reply.body["choices"][0]
    [call] = choice["message"].pop("tool_calls")
    choice["message"]["content"] = call["function"]["arguments"]
    choice["finish_reason"] = "stop"
    return reply


def schema_of(body: dict) -> dict[str, Any]:
    """The properties of the schema a request asks for (response format or tool)."""
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or body["tools"][0]["function"]["parameters"]
    return schema["properties"]


def tool_kinds(server: ScriptedServer) -> list[str]:
    """Each request: ``schema`` (json_schema), ``obj:<title>`` (json_object with the schema),
    else the tool's name; ``+lp`` with logprobs."""

    def kind(r: dict) -> str:
        fmt = r.get("response_format") or {}
        if fmt.get("type") == "json_object":
            return "obj:" + fmt["schema"]["title"]
        return ("schema" if fmt else
                r["tools"][0]["function"]["name"] if r.get("tools") else "json")

    return [kind(r) + ("+lp" if r.get("logprobs") else "") for r in server.requests]


def ask(server: ScriptedServer, verifier: Any = None, question: str = QUESTION,
        **settings: Any) -> dict[str, Any]:
    model = chat_model_from_spec(f"openai:served-model@{server.url}")
    graph = build_graph(retriever=StaticRetriever([SPEC]), generator=model,
                        extractor="rules", verifier=verifier or model)
    return graph.invoke({"question": question},
                        {"configurable": {"max_retries": 1, **settings}})


# -- reading the log-odds ------------------------------------------------------------------------

def test_log_odds_read_from_split_tokens_with_leading_spaces():
    top = {" tr": -0.4, "tr": -3.0, " fal": -1.9, " false": -2.5, " ": -5.0, " null": -6.0}
    _, content = content_for(ANSWER, (" tr", "ue"), top)
    expected = (math.log(math.exp(-0.4) + math.exp(-3.0))
                - math.log(math.exp(-1.9) + math.exp(-2.5)))
    assert answerable_log_odds(content) == pytest.approx(expected, abs=1e-4)
    # the same decision written "false" in one token: the position is that token
    _, content = content_for(DECLINE, (" false",), {" false": -0.2, " true": -1.7})
    assert answerable_log_odds(content) == pytest.approx(-1.5, abs=1e-4)


def test_a_token_that_also_writes_the_colon_is_read_against_the_text_before_it():
    content = [entry('{"answerable', -0.01),
               entry('": true', -0.1, {'": true': -0.1, '":': -2.0, '": false': -2.6}),
               entry(', "statements": []}', -0.1)]
    assert answerable_log_odds(content) == pytest.approx(2.5, abs=1e-4)  # '":' is neither


def test_a_side_missing_from_the_list_is_bounded_by_the_smallest_listed():
    _, content = content_for(ANSWER, (" true",), {" true": -0.05, " ": -4.0, "\n": -6.5})
    assert answerable_log_odds(content) == pytest.approx(-0.05 + 6.5, abs=1e-4)
    # " f" starts "false" too: both are the false side; the true side is bounded
    _, content = content_for(DECLINE, (" false",), {" false": -0.01, " f": -5.0})
    assert answerable_log_odds(content) == pytest.approx(
        -5.0 - math.log(math.exp(-0.01) + math.exp(-5.0)), abs=1e-4)


def test_no_answerable_key_or_no_value_is_no_score():
    assert answerable_log_odds([entry('{"statements": []}', -0.1)]) is None
    assert answerable_log_odds([entry('{"answerable":', -0.1)]) is None
    assert answerable_log_odds([]) is None


# -- the threshold decides ----------------------------------------------------------------------

@pytest.mark.parametrize(("takes_schema", "kinds"), [
    (True, ["schema+lp", "obj:CitedAnswer+lp", "obj:CitedAnswer", "obj:JudgedClaims"]),
    (False, ["schema+lp", "obj:CitedAnswer+lp", "CitedAnswer+lp", "CitedAnswer",
             "JudgedClaims"]),
])
def test_threshold_overrules_a_decline_and_the_decided_reask_answers(monkeypatch,
                                                                     takes_schema, kinds):
    threshold_at(monkeypatch, -1.0)

    def generator(body: dict) -> Reply:
        if body.get("logprobs"):
            assert body["top_logprobs"] == 5
            return with_logprobs(DECLINE, (" false",), {" false": -0.45, " true": -0.95})
        schema = schema_of(body)
        assert schema["answerable"]["enum"] == [True] and schema["statements"]["minItems"] == 1
        return completion(tool_calls=[tool_call("CitedAnswer", ANSWER)])

    with ScriptedServer(llama_server(generator, takes_schema=takes_schema)) as server:
        out = ask(server)
    assert out["status"] == "answered", out["findings"]
    assert "10 hours" in out["answer"]
    # the logprobs came back through whichever method the ladder settled on
    assert out["stage_scores"]["generator"] == pytest.approx(-0.5)
    # json_schema refused, the logprobs draft declined, asked once more decided by the
    # method remembered for the server, the judge likewise
    assert tool_kinds(server) == kinds


def test_the_decided_reask_is_reported_with_the_calls_it_took(monkeypatch):
    threshold_at(monkeypatch, -1.0)
    with ScriptedServer(llama_server(
            lambda body: with_logprobs(DECLINE, (" false",), {" false": -0.45, " true": -0.95})
            if body.get("logprobs") else completion(tool_calls=[tool_call("CitedAnswer",
                                                                          ANSWER)]))) as server:
        model = chat_model_from_spec(f"openai:served-model@{server.url}")
        decision = decide_on_server(model, MESSAGES, -1.0)
    assert decision.reply.answerable and decision.calls == 2
    assert isinstance(decision.reply, CitedAnswer)
    [note] = decision.findings
    assert note["severity"] == "info" and "-0.50 reached -1.00" in note["detail"]
    assert "(2 generator calls)" in note["detail"]


@pytest.mark.parametrize(("takes_schema", "kinds"), [
    (True, ["schema+lp", "obj:CitedAnswer+lp"]),
    (False, ["schema+lp", "obj:CitedAnswer+lp", "CitedAnswer+lp"]),
])
def test_threshold_overrules_an_answer(monkeypatch, takes_schema, kinds):
    threshold_at(monkeypatch, 1.0)
    generator = lambda body: with_logprobs(  # noqa: E731
        ANSWER, (" tr", "ue"), {" tr": -0.5, " false": -0.9})
    with ScriptedServer(llama_server(generator, takes_schema=takes_schema)) as server:
        out = ask(server)
    assert out["status"] == "abstained" and out["decided_by"] == "generator"
    [declined] = [f for f in out["findings"] if f["type"] == "generator_declined"]
    assert "log-odds 0.40 did not reach 1.00" in declined["detail"]
    assert out["stage_scores"]["generator"] == pytest.approx(0.4)
    assert tool_kinds(server) == kinds  # no re-ask, no judge


def test_a_decided_served_draft_is_revised_without_deciding_again(monkeypatch):
    threshold_at(monkeypatch, -1.0)
    wrong = {"answerable": True, "statements": [
        {"text": "The X100 battery lasts a full 24 hours.", "citations": ["S1.1"]}]}

    def generator(body: dict) -> Reply:
        if body.get("logprobs"):
            return with_logprobs(wrong, (" true",), {" true": -0.1, " false": -2.4})
        return completion(tool_calls=[tool_call("CitedAnswer", ANSWER)])

    verifier = ScriptedVerifier(lambda text: ("contradicted", "24 vs 10") if "24" in text
                                else ("supported", ""))
    with ScriptedServer(llama_server(generator)) as server:
        out = ask(server, verifier)
    assert out["status"] == "answered" and out["attempts"] == 2
    revision = server.requests[-1]["messages"][-1]["content"]
    assert "answer it again" in revision and "set answerable to false" not in revision


# -- servers without logprobs -------------------------------------------------------------------

@pytest.mark.parametrize("status", [500, 400])
def test_a_server_refusing_logprobs_keeps_its_choice_and_is_remembered(monkeypatch, status):
    threshold_at(monkeypatch, -1.0)

    def generator(body: dict) -> Reply:
        if body.get("logprobs"):
            return error(status, LOGITS_ALL)  # llama-cpp-python: 500 from a ValueError
        return completion(tool_calls=[tool_call("CitedAnswer", DECLINE)])

    with ScriptedServer(llama_server(generator)) as server:
        model = chat_model_from_spec(f"openai:served-model@{server.url}")
        first = decide_on_server(model, MESSAGES, -1.0)
        assert not first.reply.answerable and first.log_odds is None  # the server's choice
        assert LOGITS_ALL in (logprobs_refusal(model) or "")
        [note] = first.findings
        assert note["severity"] == "info" and "server's own greedy choice" in note["detail"]
        assert "threshold -1.00" in note["detail"] and LOGITS_ALL in note["detail"]
        asked = len(server.requests)
        out = ask(server)  # the whole loop on the same server: logprobs are not asked again
    assert not any(r.get("logprobs") for r in server.requests[asked:])
    assert out["status"] == "abstained" and out["decided_by"] == "generator"
    kinds = {f["type"]: f for f in out["findings"]}
    assert "(remembered)" in kinds["generator_decision_greedy"]["detail"]
    assert "did not reach" not in kinds["generator_declined"]["detail"]
    assert "generator" not in out["stage_scores"]


def test_a_server_that_ignores_logprobs_keeps_its_choice_and_is_remembered():
    with ScriptedServer(llama_server(
            lambda body: completion(tool_calls=[tool_call("CitedAnswer", ANSWER)]))) as server:
        out = ask(server)
        model = chat_model_from_spec(f"openai:served-model@{server.url}")
        assert logprobs_refusal(model) == "the server sent no logprobs"
    assert out["status"] == "answered" and "generator" not in out["stage_scores"]
    assert tool_kinds(server) == ["schema+lp", "obj:CitedAnswer+lp", "obj:JudgedClaims"]


def test_a_real_server_error_is_not_taken_for_a_logprobs_refusal():
    from grounded_rag._structured import ModelServerError

    with ScriptedServer(lambda body, n: error(503, "overloaded")) as server:
        model = chat_model_from_spec(f"openai:served-model@{server.url}")
        with pytest.raises(ModelServerError, match="kept failing with HTTP 503"):
            decide_on_server(model, MESSAGES, 0.0)
        assert logprobs_refusal(model) is None
    assert tool_kinds(server) == ["schema+lp", "schema+lp"]  # 1 + the client's retry
