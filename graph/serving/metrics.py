"""Prometheus metrics for served queries: latency per stage, hallucinations caught, cost.

It stays one module over 400 lines because each metric is declared once and recorded from
the same result record, in one process or summed over workers; the multiprocess plumbing
and the metric set change together.

The metric names follow seed 002 (``rag_query_latency_seconds{stage}``,
``rag_hallucination_total``, ``rag_query_cost_usd{model}``) and add what the
self-correcting loop knows: verdicts, regenerations, abstentions, human reviews and
token usage per model. Every metric lives in the ``RagMetrics`` instance's own registry, so
several apps (or tests) in one process never collide in the global registry.

Several worker processes (``grounded-rag serve --workers N``) add up through
prometheus-client's multiprocess mode: with ``$PROMETHEUS_MULTIPROC_DIR`` set when the
process starts, every value lives in memory-mapped files in that directory (one per process
and kind), and ``/metrics`` of any worker reads them all: counters and histograms summed over
every process that served (a dead worker's counts stay), gauges over the live ones
(``livesum``). A worker removes its live gauges when it stops; one that was killed has them
removed by the next scrape (its process id is gone). Without the variable (one process, tests,
the library) the registry is this process's own, as before.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

log = logging.getLogger(__name__)

__all__ = [
    "CONTENT_TYPE_LATEST",
    "DEFAULT_PRICES",
    "MULTIPROCESS_ENV",
    "ModelPrice",
    "PriceTable",
    "QueryObserver",
    "RagMetrics",
    "clean_multiprocess_dir",
    "multiprocess_dir",
    "remove_multiprocess_dir",
    "render_multiprocess",
    "sweep_dead_processes",
]

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
"""prometheus-client's variable: the directory a server's processes share their metrics in."""

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
"""Seed 002's buckets, extended to the tens of seconds a local model takes."""

LATE_VERIFICATION = "deferred_resume"
"""Run metadata key of a run that finishes a deferred verification (counted apart)."""

COST_BUCKETS = (0.00001, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0)

_HALLUCINATION_KINDS = {"contradicted": "contradicted", "neutral": "unsupported"}
_ABSTAIN_REASONS = ("empty_question", "weak_evidence", "predicate_absent", "no_answer_in_sources",
                    "rejected_by_reviewer", "phantom_source",
                    "malformed_output", "contradicted", "unsupported")


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    """Price of one million prompt tokens."""
    output: float
    """Price of one million completion tokens."""


DEFAULT_PRICES: dict[str, ModelPrice] = {
    # Published list prices (USD per 1M tokens) when this table was written; edit freely.
    "gpt-4.1-mini": ModelPrice(input=0.40, output=1.60),
    "gpt-4.1": ModelPrice(input=2.00, output=8.00),
    "gpt-4.1-nano": ModelPrice(input=0.10, output=0.40),
    "gemini-2.5-flash": ModelPrice(input=0.30, output=2.50),
    "gemini-2.5-flash-lite": ModelPrice(input=0.10, output=0.40),
    "gemini-2.5-pro": ModelPrice(input=1.25, output=10.00),
    "local": ModelPrice(input=0.0, output=0.0),
}


class PriceTable:
    """Model name -> price; matches provider prefixes and dated variants to the base name.

    ``openai:gpt-4.1-mini``, ``models/gemini-2.5-flash`` and ``gpt-4.1-mini-2025-04-14`` all
    find their base entry (the longest matching name wins, so ``gpt-4.1-mini`` is not billed
    as ``gpt-4.1``). Anything under a ``local`` name costs nothing.
    """

    def __init__(self, prices: Mapping[str, ModelPrice | Mapping[str, float]] | None = None):
        table = dict(DEFAULT_PRICES)
        for name, price in (prices or {}).items():
            table[name] = price if isinstance(price, ModelPrice) else _parse_price(name, price)
        self._prices = table

    @classmethod
    def load(cls, source: str | Path | Mapping[str, Any] | None) -> PriceTable:
        """Defaults overlaid with a dict or a JSON/TOML file ``{model: {input, output}}``.

        A TOML file may put the entries under a ``[prices]`` table or at the top level.
        """
        if source is None:
            return cls()
        if isinstance(source, Mapping):
            return cls(source)
        path = Path(source)
        text = path.read_text(encoding="utf-8")
        try:
            data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"price table {path} is not valid {path.suffix[1:]}: {exc}") from exc
        if isinstance(data, dict) and isinstance(data.get("prices"), dict):
            data = data["prices"]
        if not isinstance(data, dict):
            raise ValueError(f"price table {path} must map model names to {{input, output}}")
        return cls(data)

    def lookup(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or None when the table does not know it."""
        name = _base_name(model)
        if name in self._prices:
            return self._prices[name]
        if name == "local" or name.startswith(("local:", "local-", "qwen")):
            return self._prices.get("local", ModelPrice(0.0, 0.0))
        candidates = [known for known in self._prices if name.startswith(known)]
        return self._prices[max(candidates, key=len)] if candidates else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """USD for that usage, or None for an unknown model."""
        price = self.lookup(model)
        if price is None:
            return None
        return (input_tokens * price.input + output_tokens * price.output) / 1_000_000

    def as_dict(self) -> dict[str, dict[str, float]]:
        """The table as plain data (for ``/metrics/prices`` style endpoints and logs)."""
        return {name: {"input": p.input, "output": p.output} for name, p in self._prices.items()}


def _parse_price(name: str, price: Mapping[str, float]) -> ModelPrice:
    try:
        return ModelPrice(input=float(price["input"]), output=float(price["output"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(
            f"price for {name!r} needs numeric 'input' and 'output' (USD per 1M tokens)"
        ) from exc


def _base_name(model: str) -> str:
    name = model.strip().lower()
    if ":" in name and not name.startswith("local:"):
        name = name.split(":", 1)[1]
    return name.removeprefix("models/")


def multiprocess_dir() -> str | None:
    """The directory this process shares its metrics through, or None (a process of its own).

    prometheus-client picks its value store when it is first imported: only a process that
    had ``$PROMETHEUS_MULTIPROC_DIR`` set by then writes its values to that directory.
    """
    from prometheus_client import values

    path = os.environ.get(MULTIPROCESS_ENV) or os.environ.get(MULTIPROCESS_ENV.lower())
    if not path or values.ValueClass is values.MutexValue:
        return None
    return path


def _pid_of(path: str) -> int | None:
    """The process id in a metrics file name (``gauge_livesum_123.db`` -> 123)."""
    stem = os.path.basename(path).removesuffix(".db")
    try:
        return int(stem.rsplit("_", 1)[1])
    except (IndexError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def sweep_dead_processes(path: str) -> list[int]:
    """Remove the live gauges of processes that are gone (a killed worker); their ids."""
    from prometheus_client import multiprocess

    dead = sorted({pid for f in glob.glob(os.path.join(path, "gauge_live*_*.db"))
                   if (pid := _pid_of(f)) is not None and not _alive(pid)})
    for pid in dead:
        multiprocess.mark_process_dead(pid, path)
    return dead


def render_multiprocess(path: str) -> bytes:
    """The exposition of every process's values in ``path`` (dead workers' gauges swept)."""
    from prometheus_client.multiprocess import MultiProcessCollector

    sweep_dead_processes(path)
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=path)
    return generate_latest(registry)


def clean_multiprocess_dir(path: str | None = None) -> tuple[str, bool]:
    """An empty metrics directory for one server, before any of its processes writes there.

    ``path`` (else a new temporary directory) is created if needed and emptied of metric
    files (``*.db``) a previous server left. Returns the directory and whether it was made
    here (then the caller removes it when the server stops).
    """
    if path is None:
        return tempfile.mkdtemp(prefix="grounded-rag-metrics-"), True
    os.makedirs(path, exist_ok=True)
    for f in glob.glob(os.path.join(path, "*.db")):
        os.remove(f)
    return path, False


def remove_multiprocess_dir(path: str) -> None:
    """Remove a metrics directory made by :func:`clean_multiprocess_dir`."""
    shutil.rmtree(path, ignore_errors=True)


class RagMetrics:
    """All serving metrics, registered in a private ``CollectorRegistry``.

    In multiprocess mode (see the module docstring) :meth:`render` reads every process's
    values from the shared directory instead of this registry.
    """

    def __init__(self, prices: PriceTable | str | Path | Mapping[str, Any] | None = None,
                 registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.multiprocess_dir = multiprocess_dir()
        """The shared directory when this process is one of several workers, else None."""
        self.prices = prices if isinstance(prices, PriceTable) else PriceTable.load(prices)
        self._unpriced_warned: set[str] = set()
        r = self.registry
        self.latency = Histogram(
            "rag_query_latency_seconds", "RAG query latency by stage (summed over attempts); "
            "stage='total' is the server's wall time for the run.",
            ["stage"], buckets=LATENCY_BUCKETS, registry=r)
        self.queries = Counter("rag_queries_total", "Finished queries by outcome.", ["status"],
                               registry=r)
        self.hallucinations = Counter(
            "rag_hallucination_total",
            "Claims the verification loop caught and kept out of the answer.", ["kind"],
            registry=r)
        self.verdicts = Counter("rag_claim_verdicts_total",
                                "NLI verdicts on claims (final and removed).", ["verdict"],
                                registry=r)
        self.regenerations = Counter("rag_regenerations_total",
                                     "Answer regenerations (revisions) made by the loop.",
                                     registry=r)
        self.abstentions = Counter("rag_abstentions_total", "Abstentions by leading reason.",
                                   ["reason"], registry=r)
        self.reviews = Counter("rag_reviews_total", "Human reviews by event.", ["event"],
                               registry=r)
        self.errors = Counter("rag_query_errors_total", "Runs that ended in an exception.",
                              ["error"], registry=r)
        self.confidence = Histogram("rag_answer_confidence", "Confidence of answered queries.",
                                    buckets=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
                                    registry=r)
        self.tokens = Counter("rag_tokens_total", "Model tokens by model and direction.",
                              ["model", "direction"], registry=r)
        self.cost = Counter("rag_cost_usd_total", "Model spend in USD (from the price table).",
                            ["model"], registry=r)
        self.query_cost = Histogram("rag_query_cost_usd", "Model spend per query in USD.",
                                    ["model"], buckets=COST_BUCKETS, registry=r)
        self.deferred = Counter(
            "rag_deferred_verifications_total",
            "Verifications finished after the answer was returned (verify_mode=deferred), by "
            "outcome: verified (every claim supported), warning (a claim flagged), failed.",
            ["outcome"], registry=r)
        self.workers = Gauge("rag_workers", "Worker processes serving (summed over the live "
                             "workers of the server).", multiprocess_mode="livesum", registry=r)
        # Zero-valued series show up in /metrics before the first query.
        for event in ("requested", "approved", "rejected", "edited"):
            self.reviews.labels(event=event)
        for kind in ("contradicted", "unsupported"):
            self.hallucinations.labels(kind=kind)

    def render(self) -> bytes:
        """The Prometheus text exposition: this registry, or every worker's values."""
        if self.multiprocess_dir is None:
            return generate_latest(self.registry)
        return render_multiprocess(self.multiprocess_dir)

    def worker_started(self) -> None:
        """Count this process among the server's workers (the app's start-up)."""
        self.workers.set(1)

    def worker_stopped(self) -> None:
        """This worker stops: its live gauges leave the shared directory, its counts stay."""
        self.workers.set(0)
        if self.multiprocess_dir is not None:
            from prometheus_client import multiprocess

            multiprocess.mark_process_dead(os.getpid(), self.multiprocess_dir)

    def observe_result(self, result: Mapping[str, Any], *, wall_s: float | None = None) -> None:
        """Record one finished query from its output contract."""
        status = result.get("status")
        if status not in ("answered", "abstained"):
            return
        self.queries.labels(status=status).inc()
        for stage, ms in (result.get("timings_ms") or {}).items():
            self.latency.labels(stage=stage).observe(max(0.0, float(ms)) / 1000)
        if wall_s is not None:
            self.latency.labels(stage="total").observe(wall_s)
        if result.get("verification") != "pending":  # pending verdicts are counted later
            for claim in result.get("claims") or []:
                self.verdicts.labels(verdict=claim.get("verdict", "neutral")).inc()
        for claim in result.get("removed_claims") or []:
            verdict = claim.get("verdict", "neutral")
            self.verdicts.labels(verdict=verdict).inc()
            if verdict in _HALLUCINATION_KINDS:
                self.hallucinations.labels(kind=_HALLUCINATION_KINDS[verdict]).inc()
        regenerations = max(0, int(result.get("attempts") or 0) - 1)
        if regenerations:
            self.regenerations.inc(regenerations)
        if status == "abstained":
            self.abstentions.labels(reason=_abstain_reason(result)).inc()
        else:
            self.confidence.observe(float(result.get("confidence") or 0.0))

    def observe_late_verification(self, result: Mapping[str, Any]) -> None:
        """Record a deferred verification that finished (its query was counted already)."""
        if result.get("verification") == "failed":
            self.deferred.labels(outcome="failed").inc()
            return
        for claim in result.get("claims") or []:
            self.verdicts.labels(verdict=claim.get("verdict", "neutral")).inc()
        outcome = "warning" if result.get("warnings") else "verified"
        self.deferred.labels(outcome=outcome).inc()

    def observe_usage(self, model: str, input_tokens: int, output_tokens: int) -> float:
        """Record one model call's tokens; returns its cost in USD (0 for unknown models)."""
        self.tokens.labels(model=model, direction="input").inc(input_tokens)
        self.tokens.labels(model=model, direction="output").inc(output_tokens)
        cost = self.prices.cost(model, input_tokens, output_tokens)
        if cost is None:
            if model not in self._unpriced_warned:
                self._unpriced_warned.add(model)
                log.warning("no price for model %r: add it to the price table to count its "
                            "cost", model)
            return 0.0
        self.cost.labels(model=model).inc(cost)
        return cost

    def observer(self) -> QueryObserver:
        """A fresh callback handler for one run (attach it to the run's config)."""
        return QueryObserver(self)


def _abstain_reason(result: Mapping[str, Any]) -> str:
    kinds = [f.get("type") for f in result.get("findings") or []]
    for reason in _ABSTAIN_REASONS:
        if reason in kinds:
            return reason
    return "not_answerable" if not kinds else "other"


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

