"""Recorded HTTP exchanges ("cassettes") for provider clients: replay with no key, or record.

Format (``tests/data/recordings/<name>.json``, UTF-8, one JSON object)::

    {
      "format": "grounded-rag-recording/1",
      "provider": "google_genai",
      "source": "recorded" | "hand-made",   # hand-made: written from the documented shape
      "interactions": [
        {"request": {"method": "POST", "path": "/v1/models/gemini-2.5-flash:generateContent",
                     "body": {...}},          # the JSON the client sent (no credentials)
         "response": {"status": 200, "body": {...}}}
      ]
    }

Replaying (:func:`replay_transport`) answers the i-th request with the i-th response after
checking its method and path, and keeps every request body in ``transport.sent`` for the test
to inspect; nothing leaves the process and no key is needed. Recording
(:func:`recording_transport`) wraps a real transport, and writes the exchanges in this format
with the host and every header dropped (keys travel in headers), ``"source": "recorded"``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

RECORDINGS = Path(__file__).resolve().parent / "data" / "recordings"
FORMAT = "grounded-rag-recording/1"


def load(name: str) -> dict[str, Any]:
    """The cassette ``name`` (without ``.json``), checked for its format."""
    data = json.loads((RECORDINGS / f"{name}.json").read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise ValueError(f"{name}: not a {FORMAT} recording")
    return data


class ReplayTransport(httpx.MockTransport):
    """An httpx transport that replays a cassette in order and records what was sent."""

    def __init__(self, name: str) -> None:
        self.cassette = load(name)
        self.sent: list[dict[str, Any]] = []
        super().__init__(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        interactions = self.cassette["interactions"]
        if len(self.sent) >= len(interactions):
            raise AssertionError(f"request {len(self.sent) + 1} was not recorded: "
                                 f"{request.method} {request.url.path}")
        expected = interactions[len(self.sent)]
        self.sent.append(json.loads(request.content or b"{}"))
        if (request.method, request.url.path) != (expected["request"]["method"],
                                                  expected["request"]["path"]):
            raise AssertionError(f"request {len(self.sent)}: {request.method} "
                                 f"{request.url.path}, recorded "
                                 f"{expected['request']['method']} {expected['request']['path']}")
        reply = expected["response"]
        return httpx.Response(reply["status"], json=reply["body"])


def replay_transport(name: str) -> ReplayTransport:
    """A transport replaying ``tests/data/recordings/<name>.json``."""
    return ReplayTransport(name)


class RecordingTransport(httpx.BaseTransport):
    """Forwards to ``inner`` and keeps each exchange; :meth:`save` writes the cassette."""

    def __init__(self, inner: httpx.BaseTransport, provider: str) -> None:
        self.inner = inner
        self.provider = provider
        self.interactions: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        response.read()
        self.interactions.append({
            "request": {"method": request.method, "path": request.url.path,
                        "body": json.loads(request.content or b"{}")},
            "response": {"status": response.status_code, "body": response.json()},
        })
        return httpx.Response(response.status_code, content=response.content,
                              headers={"content-type": "application/json"})

    def save(self, name: str, directory: Path = RECORDINGS) -> Path:
        """Write the exchanges as ``<directory>/<name>.json``."""
        path = directory / f"{name}.json"
        path.write_text(json.dumps({"format": FORMAT, "provider": self.provider,
                                    "source": "recorded", "interactions": self.interactions},
                                   ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        return path


def recording_transport(provider: str,
                        inner: httpx.BaseTransport | None = None) -> RecordingTransport:
    """A transport that records real exchanges (``inner``: default, the network)."""
    return RecordingTransport(inner or httpx.HTTPTransport(), provider)
