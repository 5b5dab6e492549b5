"""The graph inside larger apps: an agent's tool, a parent graph's subgraph, an LCEL chain.

Scripted models only: the graph's generator is ``ScriptedChatModel`` and the agent's model is
a rule-based tool caller (it calls the tool for any user message and relays what it returns).
"""

from __future__ import annotations

import asyncio
import json
import operator
from typing import Annotated, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from grounded_rag import build_graph
from grounded_rag.compose import (
    PROGRESS_EVENT,
    as_tool,
    format_answer,
    question_rewriter,
    rag_chain,
    subgraph_node,
    tool_text,
)
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

SPEC = ev("spec#sec2", "Battery: The X100 battery lasts up to 10 hours on a single charge. "
          "Charging takes 2 hours.", title="X100 spec sheet > Battery")
SPEC_JA = ev("spec-ja#sec2", "製品X100のバッテリーは最大10時間持続します。充電時間は約2時間です。",
             title="X100 仕様書 > バッテリー")
GOOD = answer(("The X100 battery lasts up to 10 hours.", "S1.1"))
WRONG = answer(("The X100 battery lasts 24 hours.", "S1.1"))
GOOD_JA = answer(("X100のバッテリーは最大10時間持続します。", "S1.1"))


def no_24(text: str) -> tuple[str, str]:
    if "24" in text:
        return "contradicted", "The source says up to 10 hours, not 24."
    return "supported", "Stated in the source."


def rag(script: dict[str, list[Any]], *, evidence=(SPEC,), **kwargs: Any):
    model = ScriptedChatModel(script=script)
    graph = build_graph(retriever=StaticRetriever(evidence), generator=model, extractor="rules",
                        verifier=ScriptedVerifier(no_24), **kwargs)
    return graph, model


class ToolCallingAgentModel(BaseChatModel):
    """A scripted agent model: calls the first bound tool for a user message, then relays.

    After a tool result it answers with the tool's text, or, for ``ABSTAINED``, says it
    could not find the answer (never answers from its own knowledge).
    """

    tool_name: str = ""
    seen: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted-agent"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        names = [getattr(t, "name", None) or t["function"]["name"] for t in tools]
        return self.model_copy(update={"tool_name": names[0]})

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        last = messages[-1]
        if isinstance(last, HumanMessage):
            reply = AIMessage("", tool_calls=[{"name": self.tool_name,
                                               "id": f"call{len(self.seen)}",
                                               "args": {"question": str(last.content)}}])
        elif isinstance(last, ToolMessage):
            text = str(last.content)
            reply = AIMessage("I could not find that in the documents."
                              if text.startswith("ABSTAINED") or "ABSTAINED" in text[:20]
                              else f"According to the documents: {text}")
        else:
            raise AssertionError(f"unexpected last message {last!r}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


# -- (a) the graph as a tool of a tool-calling agent -----------------------------------------

def test_tool_schema_is_the_graph_input():
    graph, _ = rag({"CitedAnswer": [GOOD]})
    tool = as_tool(graph)
    assert tool.name == "grounded_answer"
    assert list(tool.args) == ["question"]
    assert "citations" in tool.description and "do not answer from your own" in tool.description


def test_agent_calls_the_graph_and_gets_the_cited_answer():
    from langchain.agents import create_agent

    graph, generator = rag({"CitedAnswer": [WRONG, GOOD]})
    agent_model = ToolCallingAgentModel(seen=[])
    agent = create_agent(agent_model, tools=[as_tool(graph)])
    out = agent.invoke({"messages": [HumanMessage("How long does the X100 battery last?")]})
    messages = out["messages"]
    call = messages[1].tool_calls[0]
    assert call["name"] == "grounded_answer"
    assert call["args"] == {"question": "How long does the X100 battery last?"}
    tool_msg = messages[2]
    assert isinstance(tool_msg, ToolMessage)
    assert tool_msg.content.startswith("The X100 battery lasts up to 10 hours[1].")
    assert '[1] X100 spec sheet > Battery (spec#sec2): "Battery: The X100 battery lasts up to ' \
        '10 hours on a single charge."' in tool_msg.content
    # The whole output contract rides along as the artifact; the loop revised the 24 away.
    artifact = tool_msg.artifact
    assert artifact["status"] == "answered" and artifact["attempts"] == 2
    assert artifact["claims"][0]["verdict"] == "supported"
    assert [c["text"] for c in artifact["removed_claims"]] == ["The X100 battery lasts 24 hours."]
    assert messages[-1].content.startswith("According to the documents: The X100 battery lasts "
                                           "up to 10 hours[1].")
    assert len(generator.calls_for("CitedAnswer")) == 2


def test_agent_is_told_about_an_abstention_and_does_not_answer():
    from langchain.agents import create_agent

    graph, _ = rag({"CitedAnswer": [WRONG]})  # always contradicted -> abstains
    agent = create_agent(ToolCallingAgentModel(seen=[]), tools=[as_tool(graph)])
    out = agent.invoke({"messages": [HumanMessage("How long does the X100 battery last?")]})
    tool_msg = out["messages"][2]
    assert tool_msg.content.startswith("ABSTAINED: the documents do not answer this question.")
    assert "decided by verification" in tool_msg.content
    assert tool_msg.artifact["status"] == "abstained"
    assert out["messages"][-1].content == "I could not find that in the documents."


def test_tool_in_japanese_and_settings_pass_through():
    graph, generator = rag({"CitedAnswer": [WRONG]}, evidence=(SPEC_JA,))
    tool = as_tool(graph, settings={"max_retries": 0})
    msg = tool.invoke({"type": "tool_call", "id": "c1", "name": "grounded_answer",
                       "args": {"question": "X100のバッテリーは何時間持ちますか？"}})
    assert msg.content.startswith("回答なし（ABSTAINED）")
    assert msg.artifact["attempts"] == 1  # max_retries=0 reached the graph
    assert len(generator.calls_for("CitedAnswer")) == 1
    # The caller's own configurable wins over the tool's fixed settings.
    graph2, generator2 = rag({"CitedAnswer": [WRONG]}, evidence=(SPEC_JA,))
    msg = as_tool(graph2, settings={"max_retries": 0}).invoke(
        {"type": "tool_call", "id": "c2", "name": "grounded_answer",
         "args": {"question": "X100のバッテリーは何時間持ちますか？"}},
        config={"configurable": {"max_retries": 1}})
    assert msg.artifact["attempts"] == 2


def test_tool_async():
    graph, _ = rag({"CitedAnswer": [GOOD]})
    msg = asyncio.run(as_tool(graph).ainvoke(
        {"type": "tool_call", "id": "c1", "name": "grounded_answer",
         "args": {"question": "How long does the X100 battery last?"}}))
    assert msg.artifact["status"] == "answered"


# -- (b) the graph as a subgraph node of a parent StateGraph ----------------------------------

class Parent(TypedDict, total=False):
    user_message: str
    rag: dict[str, Any]
    reply: str
    log: Annotated[list[str], operator.add]


def parent_graph(rag_graph: Any, checkpointer: Any = None) -> Any:
    def intake(state: Parent) -> dict[str, Any]:
        return {"log": ["intake"]}

    def respond(state: Parent) -> dict[str, Any]:
        result = state["rag"]
        return {"reply": format_answer(result, sources=False),
                "log": [f"respond:{result['status']}"]}

    builder = StateGraph(Parent)
    builder.add_node("intake", intake)
    builder.add_node("ask_documents", subgraph_node(rag_graph, question="user_message"))
    builder.add_node("respond", respond)
    builder.add_edge(START, "intake")
    builder.add_edge("intake", "ask_documents")
    builder.add_edge("ask_documents", "respond")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer)


def test_subgraph_maps_state_in_and_out_and_streams_progress():
    graph, _ = rag({"CitedAnswer": [WRONG, GOOD]})
    parent = parent_graph(graph)
    events = []
    final: dict[str, Any] = {}
    for namespace, mode, chunk in parent.stream(
            {"user_message": "How long does the X100 battery last?"},
            stream_mode=["custom", "values"], subgraphs=True):
        if mode == "custom":
            events.append((namespace, chunk))
        elif not namespace:
            final = chunk
    assert final["reply"] == "The X100 battery lasts up to 10 hours[1]."
    assert final["rag"]["status"] == "answered" and final["rag"]["attempts"] == 2
    assert final["log"] == ["intake", "respond:answered"]
    assert "evidence" not in final["rag"]  # only the output contract comes out
    stages = [chunk["stage"] for _, chunk in events]
    assert stages[:2] == ["retrieving", "generating"] and "revising" in stages
    # The events come from the subgraph's namespace, under the parent's node.
    assert all(ns and ns[0].startswith("ask_documents:") for ns, _ in events)


def test_subgraph_review_interrupt_pauses_the_parent_and_resumes_on_one_checkpointer():
    graph, _ = rag({"CitedAnswer": [GOOD]})
    saver = InMemorySaver()
    parent = parent_graph(graph, checkpointer=saver)
    cfg = {"configurable": {"thread_id": "p1", "review_mode": True, "review_threshold": 0.99}}
    first = parent.invoke({"user_message": "How long does the X100 battery last?"}, cfg)
    assert "__interrupt__" in first
    payload = first["__interrupt__"][0].value
    assert payload["answer"] == "The X100 battery lasts up to 10 hours[1]."
    assert payload["actions"] == ["approve", "edit", "reject"]
    snapshot = parent.get_state(cfg, subgraphs=True)
    assert snapshot.next == ("ask_documents",)
    sub = snapshot.tasks[0].state
    assert sub.next == ("review_answer",)  # the subgraph's own state, in the parent's saver
    namespaces = {c.config["configurable"].get("checkpoint_ns", "")
                  for c in saver.list(None)}
    assert "" in namespaces and any(ns.startswith("ask_documents:") for ns in namespaces)
    out = parent.invoke(Command(resume={"action": "approve"}), cfg)
    assert out["rag"]["status"] == "answered" and "human_approved" in out["rag"]["flags"]
    assert out["log"] == ["intake", "respond:answered"]


def test_subgraph_review_reject_reaches_the_parent_as_an_abstention():
    graph, _ = rag({"CitedAnswer": [GOOD]})
    parent = parent_graph(graph, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "p2", "review_mode": True, "review_threshold": 0.99}}
    parent.invoke({"user_message": "How long does the X100 battery last?"}, cfg)
    out = parent.invoke(Command(resume={"action": "reject", "note": "outdated"}), cfg)
    assert out["rag"]["status"] == "abstained" and out["rag"]["decided_by"] == "reviewer"
    assert out["reply"] == "The sources do not say."


def test_subgraph_node_mapping_functions():
    graph, _ = rag({"CitedAnswer": [GOOD]})
    node = subgraph_node(graph, question=lambda s: s["q"]["text"],
                         output=lambda r: {"answer": r["answer"], "ok": r["status"] == "answered"})
    assert node.invoke({"q": {"text": "How long?"}}) == {
        "answer": "The X100 battery lasts up to 10 hours[1].", "ok": True}


# -- (c) an LCEL chain: question rewriting -> the graph -> formatting ----------------------------

def test_chain_rewrites_asks_and_formats_with_batch():
    graph, generator = rag({"CitedAnswer": [GOOD]})
    rewriter_model = ScriptedChatModel(script={"text": ["How long does the X100 battery last?"]})
    chain = rag_chain(graph, rewrite=question_rewriter(rewriter_model))
    outs = chain.batch(["and the x100, how long does its battery go?", "x100 battery life?"])
    assert len(outs) == 2
    for text in outs:
        assert text.startswith("The X100 battery lasts up to 10 hours[1].\n\nSources:\n[1] ")
    # The rewriter got the user's message with the rewriting instructions.
    system, human = rewriter_model.calls[0][1]
    assert "self-contained question" in system.content
    assert human.content in {"and the x100, how long does its battery go?", "x100 battery life?"}
    # The graph got the rewritten question.
    prompts = [m[-1].content for m in generator.calls_for("CitedAnswer")]
    assert all("How long does the X100 battery last?" in p for p in prompts)


def test_chain_astream_events_shows_the_steps_and_progress():
    graph, _ = rag({"CitedAnswer": [WRONG, GOOD]})
    rewriter_model = ScriptedChatModel(script={"text": ["How long does the X100 battery last?"]})
    chain = rag_chain(graph, rewrite=question_rewriter(rewriter_model), formatter=dict)

    async def collect() -> list[dict[str, Any]]:
        return [e async for e in chain.astream_events("x100 battery?", version="v2")]

    events = asyncio.run(collect())
    kinds = [(e["event"], e["name"]) for e in events]
    assert ("on_chain_start", "grounded_rag_chain") in kinds
    assert ("on_chat_model_end", "ScriptedChatModel") in kinds  # the rewriter
    assert ("on_chain_end", "generate_answer") in kinds  # graph nodes appear as chain events
    progress = [e["data"] for e in events
                if e["event"] == "on_custom_event" and e["name"] == PROGRESS_EVENT]
    stages = [p["stage"] for p in progress]
    assert stages[:2] == ["retrieving", "generating"]
    assert any(p["message"] == "revising, attempt 2 of 3" for p in progress)
    end = [e for e in events if e["event"] == "on_chain_end" and e["name"] == "grounded_rag_chain"]
    result = end[-1]["data"]["output"]
    assert result["status"] == "answered" and result["attempts"] == 2
    json.dumps(result)  # the output contract is plain JSON


def test_chain_without_rewriter_abstains_in_japanese():
    graph, _ = rag({"CitedAnswer": [WRONG]}, evidence=(SPEC_JA,))
    chain = rag_chain(graph, settings={"max_retries": 0})
    assert chain.invoke("X100のバッテリーは何時間持ちますか？") == "資料からは確認できません。"
    # Answered in Japanese, the references header is Japanese too.
    graph_ja, _ = rag({"CitedAnswer": [GOOD_JA]}, evidence=(SPEC_JA,))
    text = rag_chain(graph_ja).invoke("X100のバッテリーは何時間持ちますか？")
    assert text.startswith("X100のバッテリーは最大10時間持続します[1]。\n\n出典:\n[1] X100 仕様書")


def test_tool_text_names_the_deciding_stage():
    text = tool_text({"status": "abstained", "language": "en", "decided_by": "retrieval",
                      "findings": [{"type": "low_relevance", "severity": "critical",
                                    "claim_index": -1, "detail": "Nothing relevant."}]})
    assert text == ("ABSTAINED: the documents do not answer this question. Reason: decided by "
                    "retrieval: Nothing relevant.")
