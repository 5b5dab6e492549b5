"""An app factory for serving tests: the real app over a graph built with scripted fakes.

Run it the way users run the real server, in its own process::

    GR_TEST_CHECKPOINTER=sqlite:/tmp/x.sqlite \
        python -m uvicorn --factory tests.serving_app:create_test_app --port 8123

The fakes answer by question, so concurrent requests can be told apart:

- "item N" questions -> evidence "Item N weighs N kg." and a matching cited answer;
- a question mentioning 24 hours -> a wrong first draft (24 h) that the verifier
  contradicts, then the right one (a revised claim, a removed claim);
- "capital of Australia" / "unanswerable" -> weak evidence, abstention, no model call;
- a question mentioning "fragile" -> a claim that crashes the verifier (deferred failure);
- a question with "slowly" in it -> the retriever first sleeps ``$GR_TEST_SLOW_DELAY`` seconds
  (default 3), so requests can be caught in flight;
- anything else -> the X100 battery answer.

The verifier sleeps ``$GR_TEST_VERIFY_DELAY`` seconds per call (default 0), so a deferred
verification can be caught while it runs; the generator sleeps ``$GR_TEST_MODEL_DELAY``
(default 0), a model of fixed speed for the load test. The generator goes through
``BaseChatModel._generate`` and reports usage metadata as ``gpt-4.1-mini``, so token and
cost metrics are exercised end to end.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig, RunnableLambda

from grounded_rag import build_graph
from tests.fakes import ScriptedVerifier, evidence

# No answer below copies a whole sentence of it: each claim reaches the (slowed) judge.
SPEC = evidence("x100-spec#sec2", "Battery: The X100 battery lasts up to 10 hours on a single "
                "charge. Charging takes 2 hours with the supplied adapter.",
                title="X100 spec sheet > Battery")
POLICY = evidence("travel-policy#sec3", "Taxi fares are reimbursed only after 22:00 or when "
                  "carrying equipment over 10 kg.", relevance=0.7,
                  title="Travel policy > Taxis")

_ITEM = re.compile(r"\bitem (\d+)\b", re.IGNORECASE)
_QUESTION = re.compile(r"(?:Question|質問): (.*?)\n\n", re.DOTALL)


def _delay() -> None:
    time.sleep(float(os.environ.get("GR_TEST_DELAY", "0")))


class QuestionRetriever:
    """Evidence chosen by the question's wording."""

    def retrieve(self, query: str, k: int) -> list[dict[str, Any]]:
        _delay()
        low = query.lower()
        if "slowly" in low:  # held in flight: $GR_TEST_SLOW_DELAY seconds (default 3)
            time.sleep(float(os.environ.get("GR_TEST_SLOW_DELAY", "3")))
        if "capital of australia" in low or "unanswerable" in low:
            return [evidence("x100-spec#sec2", SPEC["text"], relevance=0.001)]
        match = _ITEM.search(query)
        if match:
            n = match.group(1)
            return [evidence(f"items#sec{n}", f"Item {n} weighs {n} kg, boxed. It is blue.",
                             title=f"Item catalogue > Item {n}")][:k]
        return [SPEC, POLICY][:k]


def _statement(text: str, source: str) -> dict[str, Any]:
    """A statement citing the passage ``source`` (its sentence closest to ``text`` is cited)."""
    return {"text": text, "citations": [source]}


def cited_answer(prompt: str) -> dict[str, Any]:
    """The CitedAnswer a well-behaved (or, for '24', a sloppy) model would write."""
    found = _QUESTION.search(prompt)
    question = found.group(1) if found else prompt
    revising = "previous answer" in prompt or "前回の回答" in prompt
    match = _ITEM.search(question)
    if match:
        n = match.group(1)
        return {"answerable": True, "statements": [
            _statement(f"Item {n} weighs {n} kg.", f"items#sec{n}")]}
    if "fragile" in question.lower():
        return {"answerable": True, "statements": [
            _statement("The fragile X100 battery lasts up to 10 hours.", "x100-spec#sec2")]}
    if "24" in question and not revising:
        return {"answerable": True, "statements": [
            _statement("The X100 battery lasts 24 hours.", "x100-spec#sec2"),
            _statement("Charging takes 2 hours.", "x100-spec#sec2")]}
    statements = [_statement("The X100 battery lasts up to 10 hours on a single charge.",
                             "x100-spec#sec2")]
    if "taxi" in question.lower() or "24" in question:
        statements.append(_statement("Charging takes 2 hours.", "x100-spec#sec2"))
    if "taxi" in question.lower():
        statements.append(_statement("Taxi fares are reimbursed only after 22:00.",
                                     "travel-policy#sec3"))
    return {"answerable": True, "statements": statements}


class FakeProviderModel(BaseChatModel):
    """Writes JSON through ``_generate`` with usage metadata, like a provider model."""

    model_name: str = "gpt-4.1-mini"

    @property
    def _llm_type(self) -> str:
        return "fake-provider"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        time.sleep(float(os.environ.get("GR_TEST_MODEL_DELAY", "0")))
        prompt = str(messages[-1].content)
        content = json.dumps(cited_answer(prompt))
        message = AIMessage(
            content,
            usage_metadata={"input_tokens": len(prompt) // 4, "output_tokens": len(content) // 4,
                            "total_tokens": (len(prompt) + len(content)) // 4},
            response_metadata={"model_name": self.model_name},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        def reply(messages: Any, config: RunnableConfig) -> Any:
            msgs = messages.to_messages() if hasattr(messages, "to_messages") else messages
            message = self.invoke(msgs, config)
            return schema.model_validate_json(message.content)

        return RunnableLambda(reply)


def no_24(text: str) -> tuple[str, str]:
    """Contradict 24-hour battery claims, support the rest."""
    if "24" in text:
        return "contradicted", "The source says the battery lasts up to 10 hours, not 24."
    return "supported", "Stated in the source."


class ServingVerifier(ScriptedVerifier):
    """The scripted judge, slowed by ``$GR_TEST_VERIFY_DELAY``; a 'fragile' claim crashes it."""

    def verify(self, claims: list[Any], *, language: str) -> list[Any]:
        """Note the call in ``$GR_TEST_VERIFY_LOG``, sleep, crash on 'fragile', else judge."""
        log = os.environ.get("GR_TEST_VERIFY_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(f"{os.getpid()} {claims[0]['text'] if claims else ''}\n")
        time.sleep(float(os.environ.get("GR_TEST_VERIFY_DELAY", "0")))
        if any("fragile" in c["text"] for c in claims):
            raise RuntimeError("the judge is unavailable")
        return super().verify(claims, language=language)


def build_test_graph(**kwargs: Any) -> Any:
    """The workflow with the question-aware fakes."""
    return build_graph(retriever=QuestionRetriever(), generator=FakeProviderModel(),
                       extractor="rules", verifier=ServingVerifier(no_24), **kwargs)


def create_test_app() -> Any:
    """The real serving app over the fake graph (checkpointer from $GR_TEST_CHECKPOINTER,
    limits from ``$GROUNDED_RAG_MAX_IN_FLIGHT`` and the other limit variables, API keys from
    ``$GR_TEST_KEYS``)."""
    from grounded_rag.serving.app import create_app
    from grounded_rag.serving.limits import Limits

    return create_app(build_test_graph(),
                      checkpointer=os.environ.get("GR_TEST_CHECKPOINTER") or "memory",
                      max_question_chars=int(os.environ.get("GR_TEST_MAX_CHARS", "2000")),
                      limits=Limits.from_env(), keys=os.environ.get("GR_TEST_KEYS") or None)


_SHOWN_SENTENCE = re.compile(r"^S(\d+)\.(\d+) (.+)$", re.MULTILINE)


class CiteTopPassages(FakeProviderModel):
    """Writes one statement per passage shown (``S1``..``S3``): its longest sentence, cited by
    its handle (a statement the verifier's coverage check lets through, whatever it cites)."""

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        longest: dict[str, tuple[str, str]] = {}  # passage -> (sentence number, text)
        for p, i, text in _SHOWN_SENTENCE.findall(str(messages[-1].content)):
            if len(text) > len(longest.get(p, ("", ""))[1]):  # a sentence, not its heading
                longest[p] = (i, text)
        statements = [_statement(longest[str(n)][1], f"S{n}.{longest[str(n)][0]}")
                      for n in (1, 2, 3)]
        content = json.dumps({"answerable": True, "statements": statements})
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content))])


def build_store_graph(**kwargs: Any) -> Any:
    """The workflow over the served store (``--store``, ``--chroma-url``) with scripted models:
    what it retrieves is real, what it writes cites the top three passages."""
    return build_graph(generator=CiteTopPassages(), extractor="rules",
                       verifier=ScriptedVerifier(), **kwargs)
