"""Public API, settings and model resolution."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import grounded_rag
from grounded_rag import Context, graph
from grounded_rag.context import default_model_spec, resolve_context, validate_settings
from grounded_rag.models import MissingExtraError, chat_model_from_spec, require_extra

SNAPSHOT = Path(__file__).parent / "snapshots" / "graph.mmd"


def test_public_api_is_pinned():
    assert grounded_rag.__all__ == sorted(grounded_rag.__all__)
    assert grounded_rag.__all__ == ["Context", "Retriever", "Verifier", "build_builder",
                                    "build_graph", "graph", "sample_corpus_dir"]


def test_graph_is_a_runnable_with_studio_friendly_schemas():
    from langchain_core.runnables import Runnable

    assert isinstance(graph, Runnable)
    schema = graph.get_input_jsonschema()
    assert set(schema["properties"]) == {"question", "messages"}  # either one asks
    assert "required" not in schema
    assert schema["properties"]["question"]["type"] == "string"
    out_props = graph.get_output_jsonschema()["properties"]
    for key in ("status", "answer", "claims", "sources", "attempts", "confidence",
                "grounding_score", "findings", "timings_ms"):
        assert key in out_props
    ctx = graph.get_context_jsonschema()["properties"]
    assert "Regenerations allowed" in ctx["max_retries"]["description"]


def test_mermaid_drawing_matches_snapshot():
    drawing = graph.get_graph().draw_mermaid(with_styles=False)
    assert drawing == SNAPSHOT.read_text(encoding="utf-8")


def test_context_validation_names_the_field():
    with pytest.raises(ValueError, match="max_retries"):
        Context(max_retries=-1)
    with pytest.raises(ValueError, match="unknown setting.*colour"):
        validate_settings({"colour": "red"})
    with pytest.raises(ValueError, match="abstain_threshold"):
        resolve_context(None, {"configurable": {"abstain_threshold": 3}})


def test_context_wins_over_configurable_and_ignores_foreign_keys():
    ctx = resolve_context(Context(top_k=3), {"configurable": {"top_k": 9, "max_retries": 1,
                                                               "thread_id": "t"}})
    assert ctx.top_k == 3 and ctx.max_retries == 1


def test_default_model_is_local_without_keys(monkeypatch):
    assert default_model_spec() == "local"
    monkeypatch.setenv("GOOGLE_API_KEY", "x")
    assert default_model_spec() == "google_genai:gemini-2.5-flash"
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    assert default_model_spec() == "openai:gpt-4.1-mini"


def test_unknown_model_spec_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown model spec 'gpt4'"):
        chat_model_from_spec("gpt4")


def test_missing_extra_names_the_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "langchain_openai" else real(name, *a))
    with pytest.raises(MissingExtraError, match=r"pip install 'grounded-rag\[openai\]'"):
        require_extra("langchain_openai", "openai")


def test_provider_specs_build_offline_with_a_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("GOOGLE_API_KEY", "test")
    openai = chat_model_from_spec("openai:gpt-4.1-mini")
    gemini = chat_model_from_spec("google_genai:gemini-2.5-flash")
    assert type(openai).__name__ == "ChatOpenAI"
    assert type(gemini).__name__ == "ChatGoogleGenerativeAI"
