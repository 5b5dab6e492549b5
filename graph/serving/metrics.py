"""Prometheus metrics for served queries: latency per stage, hallucinations caught, cost.

The metric names follow seed 002 (``rag_query_latency_seconds{stage}``,
``rag_hallucination_total``, ``rag_query_cost_usd{model}``) and add what the
self-correcting loop knows: verdicts, regenerations, abstentions, human reviews and
token usage per model. Every metric lives in the ``RagMetrics`` instance's own registry, so
several apps (or tests) in one process never collide in the global registry. The price
table lives in ``_prices.py``, the multiprocess directory in ``_multiprocess.py`` and the
per-run callback handler in ``_observer.py``; their public names are imported from here.

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

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from grounded_rag.serving._multiprocess import (
    MULTIPROCESS_ENV,
    clean_multiprocess_dir,
    multiprocess_dir,
    remove_multiprocess_dir,
    render_multiprocess,
    sweep_dead_processes,
)
from grounded_rag.serving._observer import LATE_VERIFICATION, QueryObserver
from grounded_rag.serving._prices import DEFAULT_PRICES, ModelPrice, PriceTable

log = logging.getLogger(__name__)

__all__ = [
    "CONTENT_TYPE_LATEST",
    "DEFAULT_PRICES",
    "LATE_VERIFICATION",
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

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
"""Seed 002's buckets, extended to the tens of seconds a local model takes."""

COST_BUCKETS = (0.00001, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0)

_HALLUCINATION_KINDS = {"contradicted": "contradicted", "neutral": "unsupported"}
_ABSTAIN_REASONS = ("empty_question", "weak_evidence", "predicate_absent", "no_answer_in_sources",
                    "rejected_by_reviewer", "phantom_source",
                    "malformed_output", "contradicted", "unsupported")


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
