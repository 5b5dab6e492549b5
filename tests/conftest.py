"""Shared fixtures: a hermetic environment so unit tests can never reach a provider."""

from __future__ import annotations

import pytest

_STRIP = (
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "GOOGLE_API_KEY", "GEMINI_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS", "LANGCHAIN_API_KEY", "LANGSMITH_API_KEY",
    "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_ENDPOINT", "LANGSMITH_ENDPOINT",
    "GROUNDED_RAG_MODEL", "GROUNDED_RAG_STORE",
)


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strip provider keys and tracing switches; keep third-party telemetry off."""
    for name in _STRIP:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    monkeypatch.setenv("LANGGRAPH_CLI_NO_ANALYTICS", "1")
    monkeypatch.setenv("LANGGRAPH_NO_VERSION_CHECK", "true")
