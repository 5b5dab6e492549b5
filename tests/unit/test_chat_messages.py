"""Chat input: ``messages`` in, the question read from the last human message, the reply out."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from grounded_rag import build_graph
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

SPEC = ev("spec#sec2", "Battery: The X100 battery lasts up to 10 hours on a single charge.",
          title="X100 spec sheet > Battery")
GOOD = answer(("The X100 battery lasts up to 10 hours.", "spec#sec2"))
NONE = answer(answerable=False)


def make(script, **kwargs):
    model = ScriptedChatModel(script=script)
    retriever = StaticRetriever([SPEC])
    graph = build_graph(retriever=retriever, generator=model, extractor="rules",
                        verifier=ScriptedVerifier(lambda t: ("supported", "Stated.")), **kwargs)
    return graph, retriever


def test_the_last_human_message_is_the_question_and_the_answer_is_appended():
    graph, retriever = make({"CitedAnswer": [GOOD]})
    out = graph.invoke({"messages": [HumanMessage("Hi"), AIMessage("Hello, ask away."),
                                     HumanMessage("How long does the X100 battery last?")]})
    assert retriever.queries == [("How long does the X100 battery last?", 6)]
    assert out["question"] == "How long does the X100 battery last?"
    assert out["status"] == "answered"
    assert [m.type for m in out["messages"]] == ["human", "ai", "human", "ai"]
    reply = out["messages"][-1]
    assert reply.content == out["answer"] == "The X100 battery lasts up to 10 hours[1]."
    meta = reply.response_metadata["grounded_rag"]
    assert meta["status"] == "answered" and meta["sources"][0]["id"] == "spec#sec2"
    assert meta["confidence"] == out["confidence"] > 0


def test_a_plain_question_gets_no_messages_and_content_blocks_are_read_as_text():
    graph, _ = make({"CitedAnswer": [GOOD, GOOD]})
    out = graph.invoke({"question": "How long does the X100 battery last?"})
    assert not out.get("messages")  # no chat, no reply
    blocks = HumanMessage(content=[{"type": "text", "text": "How long does the X100 "},
                                   {"type": "text", "text": "battery last?"}])
    out = graph.invoke({"messages": [blocks]})
    assert out["question"] == "How long does the X100 battery last?"


def test_an_abstention_is_the_reply_and_a_thread_holds_the_conversation():
    graph, retriever = make({"CitedAnswer": [GOOD, NONE]}, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "chat-1"}}
    graph.invoke({"messages": [HumanMessage("How long does the X100 battery last?")]}, cfg)
    out = graph.invoke({"messages": [HumanMessage("Is the X100 waterproof?")]}, cfg)
    assert retriever.queries[-1][0] == "Is the X100 waterproof?"
    assert out["status"] == "abstained"
    assert [m.type for m in out["messages"]] == ["human", "ai", "human", "ai"]
    assert out["messages"][-1].content == out["answer"]
    assert out["messages"][-1].response_metadata["grounded_rag"]["status"] == "abstained"
    # a plain question on the same thread is read as sent, not the chat's last human turn
    graph.invoke({"question": "How long does the X100 battery last?"}, cfg)
    assert retriever.queries[-1][0] == "How long does the X100 battery last?"


def test_the_graph_is_a_node_of_a_messages_state_parent():
    graph, _ = make({"CitedAnswer": [GOOD]})
    parent = StateGraph(MessagesState)
    parent.add_node("rag", graph)
    parent.add_edge(START, "rag")
    parent.add_edge("rag", END)
    out = parent.compile().invoke({"messages": [HumanMessage("How long does the X100 battery "
                                                             "last?")]})
    assert [m.type for m in out["messages"]] == ["human", "ai"]
    assert out["messages"][-1].content == "The X100 battery lasts up to 10 hours[1]."
