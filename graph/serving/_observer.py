"""The callback handler of one served run: token usage per model call, the result at the end."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult

if TYPE_CHECKING:
    from grounded_rag.serving.metrics import RagMetrics

LATE_VERIFICATION = "deferred_resume"
"""Run metadata key of a run that finishes a deferred verification (counted apart)."""


def _usage_of(response: LLMResult) -> list[tuple[str | None, int, int]]:
    """(model name, input tokens, output tokens) per generation that reported usage."""
    usages: list[tuple[str | None, int, int]] = []
    for generations in response.generations:
        for gen in generations:
            if not isinstance(gen, ChatGeneration) or not isinstance(gen.message, AIMessage):
                continue
            usage = gen.message.usage_metadata
            if not usage:
                continue
            meta = gen.message.response_metadata or {}
            name = meta.get("model_name") or meta.get("model")
            usages.append((name, int(usage.get("input_tokens", 0)),
                           int(usage.get("output_tokens", 0))))
    if not usages and response.llm_output:
        # Older integrations report usage in llm_output["token_usage"].
        legacy: dict[str, Any] = response.llm_output.get("token_usage") or {}
        if legacy:
            usages.append((response.llm_output.get("model_name"),
                           int(legacy.get("prompt_tokens", 0)),
                           int(legacy.get("completion_tokens", 0))))
    return usages


class QueryObserver(BaseCallbackHandler):
    """Callback handler for one served run: usage per model call, the result at the end.

    Attach a fresh one per run. It reads everything from LangChain callbacks, so it sees
    the same run whether it came through LangServe, the progress stream or a review resume.
    """

    raise_error = False
    run_inline = True

    def __init__(self, metrics: RagMetrics) -> None:
        self.metrics = metrics
        self._lock = threading.Lock()
        self._root: UUID | None = None
        self._root_is_resume = False
        self._root_is_late_verification = False
        self._started = 0.0
        self._review_nodes: set[UUID] = set()
        self._model_of: dict[UUID, str] = {}
        self._cost_by_model: dict[str, float] = {}
        self.result: dict[str, Any] | None = None
        """The root run's output once it ended (for callers that want it)."""

    # -- chain events ----------------------------------------------------------------------

    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        """Remember the root run and the review node's runs."""
        with self._lock:
            if parent_run_id is None and self._root is None:
                self._root = run_id
                self._started = time.perf_counter()
                self._root_is_resume = type(inputs).__name__ == "Command"
                metadata = kwargs.get("metadata") or {}
                self._root_is_late_verification = bool(metadata.get(LATE_VERIFICATION))
            elif kwargs.get("name") == "review_answer":
                self._review_nodes.add(run_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kwargs: Any) -> None:
        """Count a reviewer's decision; record the query when the root run ends."""
        if run_id in self._review_nodes and isinstance(outputs, dict):
            action = (outputs.get("review") or {}).get("action")
            event = {"approve": "approved", "reject": "rejected", "edit": "edited"}.get(
                str(action))
            if event:
                self.metrics.reviews.labels(event=event).inc()
            return
        if run_id != self._root or not isinstance(outputs, dict):
            return
        self.result = dict(outputs)
        if self._root_is_late_verification:
            self.metrics.observe_late_verification(outputs)
            return
        if "needs_review" in (outputs.get("flags") or []):
            # Paused for a person: the query is counted when the review resumes it.
            self.metrics.reviews.labels(event="requested").inc()
            return
        wall = None if self._root_is_resume else time.perf_counter() - self._started
        self.metrics.observe_result(outputs, wall_s=wall)
        for model, cost in self._cost_by_model.items():
            self.metrics.query_cost.labels(model=model).observe(cost)

    def on_chain_error(self, error: BaseException, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        """Count runs that crashed (an interrupt is not a crash)."""
        if run_id == self._root and type(error).__name__ not in ("GraphInterrupt",
                                                                  "CancelledError"):
            self.metrics.errors.labels(error=type(error).__name__).inc()

    # -- model events ----------------------------------------------------------------------

    def on_chat_model_start(self, serialized: dict[str, Any] | None, messages: Any, *,
                            run_id: UUID, **kwargs: Any) -> None:
        """Remember which model a call goes to (providers do not always echo it back)."""
        params = kwargs.get("invocation_params") or {}
        name = (params.get("model_name") or params.get("model")
                or (kwargs.get("metadata") or {}).get("ls_model_name")
                or params.get("_type") or "unknown")
        self._model_of[run_id] = str(name)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        """Add the call's token usage and cost to its model's counters."""
        fallback = self._model_of.pop(run_id, "unknown")
        for name, input_tokens, output_tokens in _usage_of(response):
            model = name or fallback
            cost = self.metrics.observe_usage(model, input_tokens, output_tokens)
            with self._lock:
                self._cost_by_model[model] = self._cost_by_model.get(model, 0.0) + cost
