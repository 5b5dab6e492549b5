"""A tiny scripted OpenAI-compatible HTTP server on loopback, for fault and protocol tests.

``ScriptedServer(handler)`` serves ``POST /v1/chat/completions`` (and ``/v1/embeddings``)
from a thread; ``handler(body, n)`` gets the parsed request body and its 1-based number and
returns a :class:`Reply`. Every request body is kept in ``server.requests``. Use it as a
context manager: the server is started and stopped by the test itself.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the server answers: a status, a JSON (or raw) body, headers, or a stall."""

    status: int = 200
    body: Any = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    stall_s: float = 0.0
    """Wait this long before answering (longer than the client's timeout: a stall)."""


def completion(content: str | None = None, *, tool_calls: list[dict] | None = None,
               model: str = "served-model", finish: str | None = None) -> Reply:
    """A 200 chat completion with ``content`` or ``tool_calls``."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return Reply(body={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": finish or ("tool_calls" if tool_calls else "stop")}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    """One tool call as the OpenAI wire format writes it (arguments as a JSON string)."""
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def error(status: int, message: str, **headers: str) -> Reply:
    """An OpenAI-style error body with ``status``."""
    return Reply(status=status, body={"error": {"message": message, "type": "invalid_request",
                                                "code": None}}, headers=dict(headers))


class ScriptedServer:
    """A loopback OpenAI-compatible server whose replies come from ``handler(body, n)``."""

    def __init__(self, handler: Callable[[dict[str, Any], int], Reply]) -> None:
        self.handler = handler
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append(body)
                    outer.times.append(time.monotonic())
                    n = len(outer.requests)
                reply = outer.handler(body, n)
                if reply.stall_s:
                    outer._stop.wait(reply.stall_s)
                data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    headers = {"Content-Type": "application/json", **reply.headers}
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
