"""The parts a node works with: injected components, else resolved per run from the settings."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from grounded_rag.context import Context, default_model_spec, resolve_context
from grounded_rag.local import LOCAL_LLM_TYPE
from grounded_rag.models import (
    is_local_spec,
    resolve_answerability,
    resolve_chat_model,
    resolve_verifier,
)
from grounded_rag.retrieval.base import Retriever
from grounded_rag.verification.base import AnswerabilityJudge, Verifier

_retrievers: dict[str, Retriever] = {}
_retrievers_lock = threading.Lock()


def open_store(store_dir: str) -> Retriever:
    """The embedded store at ``store_dir``, opened once per process and shared."""
    from grounded_rag.retrieval import open_retriever

    key = store_dir or ""
    with _retrievers_lock:
        if key not in _retrievers:
            _retrievers[key] = open_retriever(store_dir or None)
        return _retrievers[key]


@dataclass(kw_only=True, eq=False)
class Parts:
    """The components injected into ``build_graph``; anything left out comes from the settings.

    One compiled graph serves every model and store: a run's ``Context`` (or
    ``config["configurable"]``) names them, and these methods resolve the names.
    """

    retriever: Retriever | None = None
    generator: BaseChatModel | None = None
    extractor: BaseChatModel | str | None = None
    verifier: Verifier | BaseChatModel | None = None
    answerability: AnswerabilityJudge | None = None

    @staticmethod
    def settings(runtime: Runtime[Context] | None, config: RunnableConfig | None) -> Context:
        """The effective settings of this run."""
        return resolve_context(runtime.context if runtime else None, config)

    def store(self, settings: Context) -> Retriever:
        """The injected retriever, else the embedded store the settings name."""
        return self.retriever or open_store(settings.store_dir)

    def generator_spec(self, settings: Context) -> str:
        """The generator's model spec (``local``, ``openai:...``)."""
        return settings.generator_model or default_model_spec()

    def chat_model(self, settings: Context) -> BaseChatModel:
        """The generator as a chat model."""
        return resolve_chat_model(self.generator, self.generator_spec(settings))

    def judge(self, settings: Context) -> Verifier:
        """The claim verifier: injected, the ``verifier_model`` setting, else the generator."""
        if self.verifier is not None:
            return resolve_verifier(self.verifier, "")
        if settings.verifier_model:
            return resolve_verifier(settings.verifier_model, "")
        if self.generator is not None:
            return resolve_verifier(self.generator, "")
        return resolve_verifier(None, self.generator_spec(settings))

    def generator_is_local(self, settings: Context) -> bool:
        """Whether the generator is the embedded local model."""
        if self.generator is not None:
            return getattr(self.generator, "_llm_type", "") == LOCAL_LLM_TYPE
        return is_local_spec(self.generator_spec(settings))

    def wants_answerability(self, settings: Context) -> bool:
        """Whether the settings ask for an answerability judge (nothing is resolved)."""
        mode = settings.answerability_check
        if mode == "off":
            return False
        if self.answerability is not None:
            return True
        return mode != "auto" or self.generator_is_local(settings)

    def answerability_judge(self, settings: Context) -> AnswerabilityJudge | None:
        """The answerability judge the ``answerability_check`` setting asks for, or None."""
        if not self.wants_answerability(settings):
            return None
        if self.answerability is not None:
            return self.answerability
        return resolve_answerability(self.generator_spec(settings))

    def _extractor_choice(self, settings: Context) -> Any:
        """The extractor asked for: a model, a spec, ``rules``, or None for ``auto``."""
        choice = self.extractor if self.extractor is not None else settings.extractor_model
        return None if isinstance(choice, str) and choice in ("auto", "") else choice

    def extracts_with_model(self, settings: Context) -> bool:
        """Whether claims are split by a model, not the sentence rules (nothing is resolved)."""
        choice = self._extractor_choice(settings)
        if choice is None:  # auto: the rules with the offline local model
            return self.generator is not None or not is_local_spec(self.generator_spec(settings))
        return not (isinstance(choice, str) and choice == "rules")

    def claim_extractor(self, settings: Context) -> BaseChatModel | None:
        """The model that splits statements into claims, or None for the sentence rules."""
        if not self.extracts_with_model(settings):
            return None
        choice = self._extractor_choice(settings)
        return self.chat_model(settings) if choice is None else resolve_chat_model(choice)
