"""Offline local model: llama.cpp chat model, support scorer and verifier (lazy imports)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from grounded_rag.local.answerability import LocalAnswerabilityJudge
    from grounded_rag.local.chat import ChatLocal, StructuredOutputError
    from grounded_rag.local.verifier import LocalVerifier

DEFAULT_MODEL_SPEC = "local"
"""Provider spec of the bundled offline model."""

LOCAL_LLM_TYPE = "grounded-rag-local"
"""``ChatLocal._llm_type``: how the graph recognises an injected local chat model."""

__all__ = [
    "ChatLocal",
    "DEFAULT_MODEL_SPEC",
    "LOCAL_LLM_TYPE",
    "LocalAnswerabilityJudge",
    "LocalVerifier",
    "StructuredOutputError",
    "ensure_model",
]

_LAZY = {
    "ChatLocal": "grounded_rag.local.chat",
    "StructuredOutputError": "grounded_rag.local.chat",
    "LocalVerifier": "grounded_rag.local.verifier",
    "LocalAnswerabilityJudge": "grounded_rag.local.answerability",
}


def ensure_model(path: str | None = None, *, progress: bool = True) -> Path:
    """Return a verified model path, assembling the default model on first use."""
    from grounded_rag.local.assets import ensure_model as _ensure

    return _ensure(path, progress=progress)


def __getattr__(name: str) -> Any:
    # langchain_core and llama_cpp load only when a model class is actually used.
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'grounded_rag.local' has no attribute {name!r}")
