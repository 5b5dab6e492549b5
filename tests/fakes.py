"""Scripted test doubles: a chat model that replays structured replies, a fixed retriever."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel, PrivateAttr

from grounded_rag.types import Evidence
from grounded_rag.verification.base import ClaimToCheck, ClaimVerdict

MALFORMED = object()
"""Script entry: the reply cannot be parsed (raises OutputParserException)."""


class ScriptedChatModel(BaseChatModel):
    """Replays scripted structured replies per schema name and records every call.

    ``script`` maps a schema name (``CitedAnswer``, ``ExtractedClaims``, ``JudgedClaims``) to a
    list of replies: dicts, schema instances, ``MALFORMED`` or exceptions. The last reply of
    a list repeats once the others are used up, so "always wrong" is one entry.
    """

    script: dict[str, list[Any]] = {}
    _queues: dict[str, deque[Any]] = PrivateAttr(default_factory=dict)
    _calls: list[tuple[str, list[BaseMessage]]] = PrivateAttr(default_factory=list)

    def model_post_init(self, __context: Any) -> None:
        self._queues = {name: deque(replies) for name, replies in self.script.items()}
        self._calls = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[tuple[str, list[BaseMessage]]]:
        """(schema name, messages) of every call, in order."""
        return self._calls

    def calls_for(self, schema: str) -> list[list[BaseMessage]]:
        """Messages of the calls made for one schema."""
        return [messages for name, messages in self._calls if name == schema]

    def _next(self, name: str) -> Any:
        queue = self._queues.get(name)
        if not queue:
            raise AssertionError(f"no scripted reply for {name}")
        return queue.popleft() if len(queue) > 1 else queue[0]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._calls.append(("text", messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(str(self._next("text"))))])

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        name = schema.__name__

        def reply(messages: Any) -> BaseModel:
            msgs = messages.to_messages() if hasattr(messages, "to_messages") else list(messages)
            self._calls.append((name, msgs))
            item = self._next(name)
            if item is MALFORMED:
                raise OutputParserException("scripted malformed reply")
            if isinstance(item, Exception):
                raise item
            return item if isinstance(item, schema) else schema.model_validate(item)

        return RunnableLambda(reply)


class StaticRetriever:
    """Returns the same evidence for every query and records the queries."""

    def __init__(self, evidence: Iterable[Evidence]) -> None:
        self.evidence = list(evidence)
        self.queries: list[tuple[str, int]] = []

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        self.queries.append((query, k))
        return self.evidence[:k]


class ScriptedVerifier:
    """A verifier whose verdicts come from a rule on the claim text; counts its calls."""

    def __init__(self, rule: Callable[[str], tuple[str, str]] | None = None) -> None:
        self.rule = rule or (lambda text: ("supported", ""))
        self.calls: list[list[str]] = []

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        self.calls.append([c["text"] for c in claims])
        out: list[ClaimVerdict] = []
        for claim in claims:
            verdict, reason = self.rule(claim["text"])
            quote = claim["evidence"][0]["text"] if claim["evidence"] else ""
            out.append({"verdict": verdict, "reason": reason, "evidence_quote": quote,  # type: ignore[typeddict-item]
                        "support": 0.95 if verdict == "supported" else 0.1})
        return out


def evidence(source_id: str, text: str, *, relevance: float = 0.9, title: str = "") -> Evidence:
    """Build one evidence record."""
    return {"source_id": source_id, "doc_id": source_id.split("#")[0],
            "title": title or source_id, "url": f"file://{source_id.split('#')[0]}.md",
            "text": text, "score": relevance, "relevance": relevance}


def answer(*statements: tuple[str, ...], answerable: bool = True) -> dict[str, Any]:
    """A scripted CitedAnswer reply from (text, handle, ...) tuples.

    A handle is a sentence (``S1.2``), a passage (``S1``) or a chunk's real id (the passage:
    its sentence closest to the text is cited).
    """
    return {"answerable": answerable,
            "statements": [{"text": text, "citations": list(handles)}
                           for text, *handles in statements]}


def calls_by_schema(model: ScriptedChatModel) -> dict[str, int]:
    """How many calls the model got per schema."""
    counts: dict[str, int] = defaultdict(int)
    for name, _ in model.calls:
        counts[name] += 1
    return dict(counts)
