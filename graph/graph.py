"""Wiring of the self-correcting grounded-RAG graph (no logic lives here)."""

from __future__ import annotations

import threading
from functools import partial
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from grounded_rag import nodes
from grounded_rag._on_loop import on_loop
from grounded_rag.context import Context
from grounded_rag.retrieval.base import Retriever
from grounded_rag.routing import (
    route_after_assess,
    route_after_deferred,
    route_after_finalize,
    route_after_generate,
    route_after_retrieve,
    route_after_review,
    route_after_verify,
)
from grounded_rag.state import InputState, OutputState, State
from grounded_rag.verification.base import AnswerabilityJudge, Verifier

GRAPH_NAME = "grounded-rag"


def build_builder(
    *,
    retriever: Retriever | None = None,
    generator: BaseChatModel | None = None,
    extractor: BaseChatModel | str | None = None,
    verifier: Verifier | BaseChatModel | None = None,
    answerability: AnswerabilityJudge | None = None,
) -> StateGraph[State, Context, InputState, OutputState]:
    """The uncompiled graph (``langgraph dev`` compiles it with its own checkpointer)."""
    parts = nodes.Parts(retriever=retriever, generator=generator, extractor=extractor,
                        verifier=verifier, answerability=answerability)
    builder = StateGraph(State, context_schema=Context, input_schema=InputState,
                         output_schema=OutputState)

    def node(name: str, func: Any, **on_loop_kwargs: Any) -> None:
        builder.add_node(name, on_loop(func, name=name, **on_loop_kwargs))

    def route(source: str, router: Any) -> None:
        builder.add_conditional_edges(source, on_loop(router, trace=True))

    # Nodes that need models or the store get the injected parts bound; the rest are plain.
    # The store, the models and the judges run in worker threads in async runs; the pure
    # checks and the routers run on the event loop (graph/_on_loop.py).
    builder.add_node("retrieve_evidence", partial(nodes.retrieve_evidence, parts=parts))
    node("assess_answerability", partial(nodes.assess_answerability, parts=parts),
         in_thread_if=partial(_judges_answerability, parts))
    builder.add_node("generate_answer", partial(nodes.generate_answer, parts=parts))
    node("check_citations", partial(nodes.check_citations, parts=parts))
    node("extract_claims", partial(nodes.extract_claims, parts=parts),
         in_thread_if=partial(_extracts_with_model, parts))
    builder.add_node("verify_claims", partial(nodes.verify_claims, parts=parts))
    node("prepare_feedback", nodes.prepare_feedback)
    builder.add_node("revise_answer", partial(nodes.revise_answer, parts=parts))
    node("finalize_answer", partial(nodes.finalize_answer, parts=parts))
    builder.add_node("verify_after_answer", partial(nodes.verify_after_answer, parts=parts))
    node("review_answer", nodes.review_answer)
    node("abstain_answer", nodes.abstain_answer)

    builder.add_edge(START, "retrieve_evidence")
    route("retrieve_evidence", route_after_retrieve)
    route("assess_answerability", route_after_assess)
    route("generate_answer", route_after_generate)
    builder.add_edge("check_citations", "extract_claims")
    builder.add_edge("extract_claims", "verify_claims")
    route("verify_claims", route_after_verify)
    builder.add_edge("prepare_feedback", "revise_answer")
    route("revise_answer", route_after_generate)
    route("finalize_answer", route_after_finalize)
    route("verify_after_answer", route_after_deferred)
    route("review_answer", route_after_review)
    builder.add_edge("abstain_answer", END)
    return builder


def _judges_answerability(parts: nodes.Parts, state: State, config: RunnableConfig,
                          runtime: Runtime[Context]) -> bool:
    """Whether this run's answerability check calls a judge (a model): then in a thread."""
    return parts.wants_answerability(parts.settings(runtime, config))


def _extracts_with_model(parts: nodes.Parts, state: State, config: RunnableConfig,
                         runtime: Runtime[Context]) -> bool:
    """Whether this run's claims are split by a model: then in a thread."""
    return parts.extracts_with_model(parts.settings(runtime, config))


def build_graph(
    *,
    retriever: Retriever | None = None,
    generator: BaseChatModel | None = None,
    extractor: BaseChatModel | str | None = None,
    verifier: Verifier | BaseChatModel | None = None,
    answerability: AnswerabilityJudge | None = None,
    checkpointer: Checkpointer = None,
    interrupt_before: list[str] | None = None,
    name: str = GRAPH_NAME,
) -> CompiledStateGraph[State, Context, InputState, OutputState]:
    """Build the workflow with injected parts; anything left out is resolved per run.

    Args:
        retriever: any object with ``retrieve(query, k) -> list[Evidence]``; default: the
            embedded store named by the ``store_dir`` setting.
        generator: chat model that writes the cited answer; default: the ``generator_model``
            setting (local model when no provider key is configured).
        extractor: chat model for claim extraction, or ``"rules"``; default: the
            ``extractor_model`` setting.
        verifier: a ``Verifier`` or a chat model judging claims; default: the
            ``verifier_model`` setting, else the generator.
        answerability: judge of whether the top passages contain the answer at all; default:
            the local probe when the ``answerability_check`` setting asks for it.
        checkpointer: LangGraph checkpointer (needed for review mode's interrupt and resume).
        interrupt_before: node names to pause before (stepping through the loop).
        name: the compiled graph's name.
    """
    builder = build_builder(retriever=retriever, generator=generator, extractor=extractor,
                            verifier=verifier, answerability=answerability)
    return builder.compile(checkpointer=checkpointer, interrupt_before=interrupt_before,
                           name=name)


_default_lock = threading.Lock()


def __getattr__(name: str) -> Any:
    # The default workflow is built on first access, not at import, so that importing the
    # package (and every ``grounded-rag`` command that does not run the graph) stays fast.
    if name not in ("builder", "graph"):
        raise AttributeError(f"module 'grounded_rag.graph' has no attribute {name!r}")
    with _default_lock:
        if "builder" not in globals():
            default_builder = build_builder()
            globals()["graph"] = default_builder.compile(name=GRAPH_NAME)
            globals()["builder"] = default_builder
    return globals()[name]


builder: StateGraph[State, Context, InputState, OutputState]
"""Uncompiled default workflow, for servers that bring their own checkpointer."""

graph: CompiledStateGraph[State, Context, InputState, OutputState]
"""The compiled default workflow: store and models come from each run's settings."""
