"""The graph inside a larger application: as an agent's tool, a parent graph's node, an LCEL step.

Three helpers, each a thin adapter over the compiled graph (any ``build_graph(...)`` result, or
the package's default ``grounded_rag.graph``):

* :func:`as_tool`: a LangChain tool for a tool-calling agent (``langchain.agents.create_agent``
  or LangGraph's prebuilt agent). The agent's model reads the cited answer, or an explicit
  ``ABSTAINED`` line telling it the documents do not answer; the full output contract is the
  tool message's ``artifact``.
* :func:`subgraph_node`: a node for a parent ``StateGraph``. It maps the parent's state in (the
  question) and out (the output contract under one key). Called inside the parent's node, the
  graph runs as a LangGraph subgraph: its progress events reach the parent's ``custom`` stream,
  the review interrupt pauses the parent, and the parent's checkpointer is the only one.
* :func:`rag_chain`: ``question rewriting -> the graph -> formatting`` as one LCEL Runnable
  (``invoke``, ``batch``, ``astream_events``); :func:`question_rewriter` is the first step.

Settings travel as ``config["configurable"]`` through all three (the same names as
``Context``), so a parent application chooses models and stores per call as usual; each
helper also takes fixed ``settings``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import merge_configs
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from grounded_rag.prompts import compose as prompts

__all__ = ["AskInput", "as_tool", "format_answer", "question_rewriter", "rag_chain",
           "subgraph_node", "tool_text"]


class AskInput(BaseModel):
    """The tool's arguments: the graph's input schema (``InputState``) as a Pydantic model."""

    question: str = Field(description="The user's question, in Japanese or English, "
                          "self-contained (no 'it' or 'that' without its referent).")


def _graph(graph: Any) -> Any:
    if graph is None:
        from grounded_rag import graph as default_graph

        return default_graph
    return graph


def _with_settings(config: RunnableConfig | None,
                   settings: Mapping[str, Any] | None) -> RunnableConfig:
    """``config`` with fixed ``settings`` added under ``configurable`` (the call's own win)."""
    if not settings:
        return config or {}
    base: RunnableConfig = {"configurable": dict(settings)}
    return merge_configs(base, config or {})


def _reason(result: Mapping[str, Any]) -> str:
    """One line on why the graph abstained: its decisive stage and first blocking finding."""
    findings = result.get("findings") or []
    blocking = [f for f in findings if f.get("severity") == "critical"] or findings
    detail = blocking[0].get("detail", "") if blocking else ""
    stage = result.get("decided_by") or "unknown"
    return f"decided by {stage}" + (f": {detail}" if detail else "")


def format_answer(result: Mapping[str, Any], *, sources: bool = True) -> str:
    """A graph result as text for a person: the answer with ``[n]`` markers and its sources.

    An abstention is its abstention message ("The sources do not say." /
    「資料からは確認できません。」); the references list follows an answer, each with the
    quote that backs it (the first located quote of a claim citing it).
    """
    answer = str(result.get("answer", ""))
    if result.get("status") != "answered" or not sources or not result.get("sources"):
        return answer
    language = result.get("language") or "en"
    quotes: dict[str, str] = {}
    for claim in result.get("claims") or []:
        for cite in claim.get("citations") or []:
            quotes.setdefault(cite.get("source_id", ""), cite.get("quote", ""))
    lines = [answer, "", prompts.SOURCES.get(language, prompts.SOURCES["en"])]
    for n, src in enumerate(result["sources"], 1):
        quote = quotes.get(src["id"], "")
        lines.append(f"[{n}] {src['title']} ({src['id']})" + (f": \"{quote}\"" if quote else ""))
    return "\n".join(lines)


def tool_text(result: Mapping[str, Any]) -> str:
    """What a tool-calling agent reads: the cited answer with sources, or ``ABSTAINED: ...``.

    The abstention line is explicit so that the agent's model does not answer from its own
    knowledge instead; the reason names the deciding stage and the first blocking finding.
    """
    if result.get("status") == "answered":
        return format_answer(result)
    language = result.get("language") or "en"
    template = prompts.ABSTAINED.get(language, prompts.ABSTAINED["en"])
    return template.format(reason=_reason(result))


def as_tool(
    graph: Any = None,
    *,
    name: str = "grounded_answer",
    description: str = prompts.TOOL_DESCRIPTION,
    settings: Mapping[str, Any] | None = None,
) -> BaseTool:
    """The graph as a LangChain tool (``content_and_artifact``) for a tool-calling agent.

    Args:
        graph: the compiled graph (default: the package's ``grounded_rag.graph``).
        name: the tool's name, as the agent's model sees it.
        description: what the agent's model reads to decide when to call it.
        settings: fixed settings for every call (``store_dir``, ``generator_model``, ...);
            the agent's own ``config["configurable"]`` is passed through and wins.

    The tool message's content is :func:`tool_text` (the cited answer, or ``ABSTAINED:``
    with the reason); its ``artifact`` is the whole output contract (claims, verdicts,
    findings, confidence). The agent's config (callbacks, checkpoint namespace) reaches the
    graph, so a streamed agent run streams the graph's progress events too.
    """
    compiled = _graph(graph)

    def run(question: str, config: RunnableConfig) -> tuple[str, dict[str, Any]]:
        result = compiled.invoke({"question": question}, _with_settings(config, settings))
        return tool_text(result), dict(result)

    async def arun(question: str, config: RunnableConfig) -> tuple[str, dict[str, Any]]:
        result = await compiled.ainvoke({"question": question},
                                        _with_settings(config, settings))
        return tool_text(result), dict(result)

    return StructuredTool.from_function(
        func=run, coroutine=arun, name=name, description=description, args_schema=AskInput,
        response_format="content_and_artifact",
    )


def subgraph_node(
    graph: Any = None,
    *,
    question: str | Callable[[Mapping[str, Any]], str] = "question",
    output: str | Callable[[dict[str, Any]], dict[str, Any]] = "rag",
    settings: Mapping[str, Any] | None = None,
) -> Runnable[Any, dict[str, Any]]:
    """A parent-graph node that runs the graph as a subgraph, with state mapped in and out.

    Args:
        graph: the compiled graph, built *without* a checkpointer (default: the package's);
            the parent's checkpointer then keeps the subgraph's state too, in its own
            checkpoint namespace, so the review interrupt pauses the parent and
            ``Command(resume=...)`` on the parent's thread resumes it.
        question: the parent state's key holding the question, or a function of the parent
            state returning it.
        output: the parent state's key that receives the output contract, or a function of
            the output contract returning the parent's update.
        settings: fixed settings for every call (the parent's ``configurable`` wins).

    Stream the parent with ``stream_mode="custom"`` (and ``subgraphs=True`` to see which
    namespace each event comes from) to get the graph's progress events.
    """
    compiled = _graph(graph)
    pick = question if callable(question) else (lambda state: state[question])
    put = output if callable(output) else (lambda result: {output: result})

    def node(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        result = compiled.invoke({"question": pick(state)}, _with_settings(config, settings))
        return put(dict(result))

    async def anode(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        result = await compiled.ainvoke({"question": pick(state)},
                                        _with_settings(config, settings))
        return put(dict(result))

    return RunnableLambda(node, afunc=anode, name="grounded_rag")


def question_rewriter(model: BaseChatModel) -> Runnable[Any, str]:
    """``{"input": message}`` (or a plain string) -> one self-contained question (a string).

    The chat model is told to keep the user's language and every name, number and date.
    """
    prompt = ChatPromptTemplate.from_messages([("system", prompts.REWRITE_SYSTEM),
                                               ("human", "{input}")])
    to_input = RunnableLambda(lambda value: value if isinstance(value, Mapping)
                              else {"input": str(value)}, name="to_input")
    return (to_input | prompt | model | StrOutputParser()).with_config(
        run_name="rewrite_question")


def rag_chain(
    graph: Any = None,
    *,
    rewrite: Runnable[Any, str] | None = None,
    formatter: Callable[[Mapping[str, Any]], Any] = format_answer,
    settings: Mapping[str, Any] | None = None,
) -> Runnable[Any, Any]:
    """``rewrite | {"question": ...} | graph | formatter`` as one LCEL Runnable.

    Args:
        graph: the compiled graph (default: the package's).
        rewrite: a Runnable from the user's message to a question (e.g.
            :func:`question_rewriter`); without it the input string is the question.
        formatter: turns the output contract into the chain's output (default
            :func:`format_answer`; ``dict`` keeps the whole contract).
        settings: fixed settings for every call (the caller's ``configurable`` wins).

    ``batch`` runs questions concurrently (``max_concurrency`` in the config bounds it);
    ``astream_events(version="v2")`` shows the rewrite's tokens, every graph node, and the
    graph's progress events as ``on_custom_event`` named ``grounded_rag.progress``.
    """
    compiled = _graph(graph)
    first: Runnable[Any, Any] = rewrite if rewrite is not None else RunnableLambda(str)
    to_state: Runnable[Any, dict[str, str]] = RunnableLambda(
        lambda q: {"question": str(q).strip()}, name="to_question")
    return (first | to_state | _progress_events(compiled, settings)
            | RunnableLambda(formatter, name="format_answer")).with_config(
        run_name="grounded_rag_chain")


PROGRESS_EVENT = "grounded_rag.progress"
"""Name of the custom events :func:`rag_chain` dispatches for the graph's progress."""


def _progress_events(compiled: Any, settings: Mapping[str, Any] | None
                     ) -> Runnable[dict[str, Any], dict[str, Any]]:
    """The graph as a chain step that re-dispatches its progress as LangChain custom events.

    LangGraph's ``custom`` stream is not part of ``astream_events``; dispatching each
    progress record as a custom event makes it visible there (``on_custom_event``).
    """
    from langchain_core.callbacks import adispatch_custom_event, dispatch_custom_event

    def run(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for mode, chunk in compiled.stream(state, _with_settings(config, settings),
                                           stream_mode=["custom", "values"]):
            if mode == "custom":
                dispatch_custom_event(PROGRESS_EVENT, chunk, config=config)
            else:
                result = chunk
        return _output(result)

    async def arun(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        result: dict[str, Any] = {}
        async for mode, chunk in compiled.astream(state, _with_settings(config, settings),
                                                  stream_mode=["custom", "values"]):
            if mode == "custom":
                await adispatch_custom_event(PROGRESS_EVENT, chunk, config=config)
            else:
                result = chunk
        return _output(result)

    return RunnableLambda(run, afunc=arun, name="grounded_rag")


def _output(values: dict[str, Any]) -> dict[str, Any]:
    """The output contract out of the last ``values`` chunk."""
    from grounded_rag.state import OutputState

    return {k: v for k, v in values.items() if k in OutputState.__annotations__}
