"""Limits that protect the service: body size, runs in flight with a bounded queue, per client.

``LimitsMiddleware`` sits in front of the whole app (a plain ASGI middleware, so streamed
responses and client disconnects pass through untouched):

- a request body larger than ``max_body_bytes`` gets a 413 before any route reads it;
- a request that runs the graph (every ``POST``) takes one of ``max_in_flight`` slots for
  as long as its response lasts, a streamed one included. When every slot is taken it
  waits in a queue of at most ``max_queue`` requests for at most ``queue_timeout_s``
  seconds; a full queue or a wait that runs out is answered at once with 503 and
  ``Retry-After``, never with unbounded latency;
- with ``per_client`` set, a client (its IP address, or the value of ``client_header``)
  holding that many requests (in flight or queued) gets a 429 with ``Retry-After``.

Health, metrics, the page and the schemas are never limited, so a saturated server still
answers its load balancer. ``/metrics`` shows the requests in flight and queued (gauges
summed over a server's live workers) and the rejected ones by reason.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge

__all__ = ["ENV_NAMES", "Gate", "Limits", "LimitsMiddleware", "Saturated"]

REJECT_REASONS = ("body_too_large", "queue_full", "queue_timeout", "client_limit")
"""Label values of ``rag_http_rejected_total{reason}``."""


@dataclass(frozen=True)
class Limits:
    """How much one server process accepts at once."""

    max_body_bytes: int = 1_048_576
    """Largest request body accepted (bytes); larger ones get a 413."""
    max_in_flight: int = 32
    """Graph-running requests served at once by one process."""
    max_queue: int = 64
    """Requests waiting for a slot; one more gets a 503 at once."""
    queue_timeout_s: float = 10.0
    """Longest wait for a slot before a 503."""
    per_client: int = 0
    """Requests one client may hold (in flight or queued); 0 = no per-client limit."""
    client_header: str = ""
    """Header naming the client (e.g. ``X-Client-Id`` set by a proxy); empty = client IP."""
    retry_after_s: int = 1
    """``Retry-After`` seconds sent with a 429 or 503."""

    def __post_init__(self) -> None:
        """Refuse values that would disable the protection by accident."""
        positive = ("max_body_bytes", "max_in_flight", "retry_after_s")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("max_queue", "per_client"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be 0 or more, got {getattr(self, name)}")
        if not self.queue_timeout_s > 0:
            raise ValueError(f"queue_timeout_s must be positive, got {self.queue_timeout_s}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """Defaults overridden by ``GROUNDED_RAG_MAX_IN_FLIGHT`` and the other ``ENV_NAMES``."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(ENV_NAMES[f.name])
            if raw is None or raw == "":
                continue
            kind = type(getattr(cls(), f.name))
            try:
                values[f.name] = kind(raw)
            except ValueError:
                raise ValueError(f"{ENV_NAMES[f.name]}={raw!r} is not a valid "
                                 f"{kind.__name__}") from None
        return cls(**values)

    def to_env(self) -> dict[str, str]:
        """The environment variables that :meth:`from_env` reads back into these limits."""
        return {ENV_NAMES[name]: str(value) for name, value in asdict(self).items()}


ENV_NAMES = {f.name: f"GROUNDED_RAG_{f.name.upper()}" for f in fields(Limits)}
"""Environment variable per limit (how ``serve --workers N`` hands them to each worker)."""


class Saturated(Exception):  # noqa: N818 - a state, not a bug
    """No slot could be had: ``reason`` is ``queue_full`` or ``queue_timeout``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Gate:
    """``max_in_flight`` slots handed over in arrival order, with a bounded, timed queue."""

    def __init__(self, max_in_flight: int, max_queue: int, queue_timeout_s: float) -> None:
        self.max_in_flight = max_in_flight
        self.max_queue = max_queue
        self.queue_timeout_s = queue_timeout_s
        self.in_flight = 0
        self.admitted = 0
        """Requests that got a slot since this process started (``/healthz`` shows it)."""
        self.listeners: list[Callable[[Gate], None]] = []
        """Called after every change of ``in_flight`` or ``queued`` (the metrics' gauges)."""
        self._waiters: deque[asyncio.Future[None]] = deque()

    @classmethod
    def for_limits(cls, limits: Limits) -> Gate:
        """The gate ``limits`` describe."""
        return cls(limits.max_in_flight, limits.max_queue, limits.queue_timeout_s)

    @property
    def queued(self) -> int:
        """Requests waiting for a slot."""
        return len(self._waiters)

    async def acquire(self) -> None:
        """Take a slot, waiting in the queue if needed; :class:`Saturated` when none comes."""
        if self.in_flight < self.max_in_flight and not self._waiters:
            self.in_flight += 1
            self.admitted += 1
            self._changed()
            return
        if len(self._waiters) >= self.max_queue:
            raise Saturated("queue_full")
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._changed()
        try:
            async with asyncio.timeout(self.queue_timeout_s):
                await waiter
        except TimeoutError:
            if waiter.done() and not waiter.cancelled():
                self.admitted += 1
                return  # the slot was handed over just as the wait ran out: keep it
            self._discard(waiter)
            raise Saturated("queue_timeout") from None
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed over, but the request is gone: pass it on
            else:
                self._discard(waiter)
            raise
        self.admitted += 1

    def release(self) -> None:
        """Give a slot back: to the longest waiter, else to the pool."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot moves on; in_flight stays the same
                self._changed()
                return
        self.in_flight -= 1
        self._changed()

    def _discard(self, waiter: asyncio.Future[None]) -> None:
        try:
            self._waiters.remove(waiter)
        except ValueError:
            pass
        if not waiter.done():
            waiter.cancel()
        self._changed()

    def _changed(self) -> None:
        for listener in self.listeners:
            listener(self)


class _LimitMetrics:
    """In-flight, queued and rejected requests, in the app's metrics registry.

    The gauges are set on every change (not read at scrape time), so that with several
    workers each one's value is in the shared metrics directory and a scrape of any worker
    sums them (``livesum``: the workers alive now).
    """

    def __init__(self, registry: CollectorRegistry, gate: Gate) -> None:
        self.registry = registry
        self.in_flight = Gauge("rag_http_in_flight", "Graph-running requests being served now "
                               "(all live workers).", multiprocess_mode="livesum",
                               registry=registry)
        self.queued = Gauge("rag_http_queued", "Requests waiting for a slot (all live "
                            "workers).", multiprocess_mode="livesum", registry=registry)
        gate.listeners.append(self._update)
        self._update(gate)
        self.rejected = Counter("rag_http_rejected_total",
                                "Requests refused to protect the service, by reason.",
                                ["reason"], registry=registry)
        for reason in REJECT_REASONS:
            self.rejected.labels(reason=reason)

    def _update(self, gate: Gate) -> None:
        self.in_flight.set(gate.in_flight)
        self.queued.set(gate.queued)


class LimitsMiddleware:
    """ASGI middleware applying :class:`Limits` (see the module docstring)."""

    def __init__(self, app: Any, limits: Limits, registry: CollectorRegistry | None = None,
                 gate: Gate | None = None) -> None:
        self.app = app
        self.limits = limits
        self.gate = gate or Gate.for_limits(limits)
        self.metrics = _LimitMetrics(registry or CollectorRegistry(), self.gate)
        self._per_client: dict[str, int] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Check the body size, then the per-client count, then take a slot."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or
                                   int(length) > self.limits.max_body_bytes):
            await self._reject(send, 413, "body_too_large", "the request body is larger than "
                               f"{self.limits.max_body_bytes} bytes")
            return
        if length is None and "chunked" in headers.get("transfer-encoding", ""):
            body = await self._read_bounded(receive)
            if body is None:
                await self._reject(send, 413, "body_too_large", "the request body is larger "
                                   f"than {self.limits.max_body_bytes} bytes")
                return
            receive = _replay(body, receive)
        if not _runs_the_graph(scope):
            await self.app(scope, receive, send)
            return
        client = self._client(scope, headers)
        if self.limits.per_client and self._per_client.get(client, 0) >= self.limits.per_client:
            await self._reject(send, 429, "client_limit", "too many requests from this client "
                               f"at once (at most {self.limits.per_client}); retry later")
            return
        self._per_client[client] = self._per_client.get(client, 0) + 1
        try:
            try:
                await self.gate.acquire()
            except Saturated as exc:
                await self._reject(send, 503, exc.reason, "the server is at capacity "
                                   f"({self.limits.max_in_flight} requests in flight, "
                                   f"{self.gate.queued} waiting); retry later")
                return
            try:
                await self.app(scope, receive, send)
            finally:
                self.gate.release()
        finally:
            left = self._per_client[client] - 1
            if left:
                self._per_client[client] = left
            else:
                del self._per_client[client]

    def _client(self, scope: dict[str, Any], headers: Mapping[str, str]) -> str:
        if self.limits.client_header:
            named = headers.get(self.limits.client_header.lower())
            if named:
                return "header:" + named
        client = scope.get("client")
        return "ip:" + (client[0] if client else "unknown")

    async def _read_bounded(self, receive: Any) -> list[dict[str, Any]] | None:
        """The body messages of a chunked request, or None once it passes the limit."""
        messages: list[dict[str, Any]] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages
            size += len(message.get("body", b""))
            if size > self.limits.max_body_bytes:
                return None
            if not message.get("more_body", False):
                return messages

    async def _reject(self, send: Any, status: int, reason: str, detail: str) -> None:
        self.metrics.rejected.labels(reason=reason).inc()
        body = json.dumps({"detail": detail, "type": reason}).encode()
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode())]
        if status != 413:
            headers.append((b"retry-after", str(self.limits.retry_after_s).encode()))
        else:
            headers.append((b"connection", b"close"))  # the unread body is not drained
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _headers(scope: dict[str, Any]) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1")
            for k, v in scope.get("headers") or []}


def _runs_the_graph(scope: dict[str, Any]) -> bool:
    """Every POST runs the graph (a question, a batch, a review decision).

    ``GET /answers/{id}?wait=`` only waits (up to minutes) for a verification already
    running: holding a slot for that would starve the requests that do work.
    """
    return bool(scope.get("method") == "POST")


def _replay(messages: list[dict[str, Any]], receive: Any) -> Any:
    pending = deque(messages)

    async def replay() -> dict[str, Any]:
        if pending:
            return pending.popleft()
        return await receive()

    return replay
