"""Operating presets: the bundles, the override rule, the judge tier, layering and docs."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from grounded_rag import Context, build_graph, graph
from grounded_rag.context import apply_preset, preset_table, resolve_context, validate_settings
from grounded_rag.presets import PRESETS, layer_settings
from tests.fakes import ScriptedChatModel, ScriptedVerifier, StaticRetriever, answer
from tests.fakes import evidence as ev

DOCS = Path(__file__).resolve().parents[2] / "docs" / "presets.md"
SPEC = ev("spec#sec2", "Battery: The X100 battery lasts up to 10 hours on a single charge.")
GOOD = answer(("The X100 battery lasts up to 10 hours.", "spec#sec2"))
WRONG = answer(("The X100 battery lasts 24 hours.", "spec#sec2"))


def test_every_preset_is_valid_and_balanced_is_the_plain_default():
    assert list(PRESETS) == ["high_precision", "balanced", "fast", "cost_optimized"]
    for name, values in PRESETS.items():
        assert validate_settings({**values, "preset": name})
        assert "review_mode" not in values  # a preset never asks for a person
    defaults = Context()
    assert defaults.preset == "balanced"
    assert resolve_context(None, None) == resolve_context(None, {"configurable": {
        "preset": "balanced"}}) == defaults


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_preset_fills_in_every_setting_it_names(name):
    settings = resolve_context(Context(preset=name), None)
    for key, value in PRESETS[name].items():
        assert getattr(settings, key) == value
    assert settings.preset == name


def test_an_explicit_setting_always_overrides_its_preset():
    # Even when the explicit value equals the plain default (max_retries=2 is the default).
    assert resolve_context(Context(preset="fast", max_retries=2), None).max_retries == 2
    assert resolve_context(Context(preset="fast"), None).max_retries == 0
    # Through configurable, through a dict context, and mixed.
    config = {"configurable": {"preset": "cost_optimized", "verify_sample_rate": 0.5}}
    settings = resolve_context(None, config)
    assert settings.verify_sample_rate == 0.5 and settings.verify_mode == "sampled"
    settings = resolve_context({"preset": "fast", "verify_mode": "full"}, None)
    assert settings.verify_mode == "full" and settings.top_k == 4
    settings = resolve_context(Context(top_k=5), {"configurable": {"preset": "fast"}})
    assert settings.top_k == 5 and settings.max_retries == 0
    # The context's preset wins over configurable's, like any other setting.
    settings = resolve_context(Context(preset="high_precision"),
                               {"configurable": {"preset": "fast", "max_retries": 1}})
    assert settings.preset == "high_precision" and settings.max_retries == 1
    assert settings.answerability_check == "on"


def test_presets_reach_the_graph():
    model = ScriptedChatModel(script={"CitedAnswer": [WRONG, GOOD]})
    retriever = StaticRetriever([SPEC])
    g = build_graph(retriever=retriever, generator=model, extractor="rules",
                    verifier=ScriptedVerifier())
    out = g.invoke({"question": "How long?"}, context={"preset": "cost_optimized"})
    assert retriever.queries[-1][1] == 4  # top_k 4
    assert out["status"] == "answered" and out["attempts"] == 2  # one regeneration allowed
    model = ScriptedChatModel(script={"CitedAnswer": [WRONG]})
    g = build_graph(retriever=StaticRetriever([SPEC]), generator=model, extractor="rules",
                    verifier=ScriptedVerifier())
    out = g.invoke({"question": "How long?"}, context={"preset": "high_precision",
                                                      "max_retries": 0})
    assert out["status"] == "abstained" and len(model.calls_for("CitedAnswer")) == 1


def test_the_judge_tier_applies_only_to_provider_generators(monkeypatch):
    assert resolve_context(Context(preset="high_precision"), None).verifier_model == ""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert apply_preset({"preset": "high_precision"}).verifier_model == "openai:gpt-4.1"
    assert apply_preset({"preset": "cost_optimized"}).verifier_model == "openai:gpt-4.1-nano"
    assert apply_preset({"preset": "fast"}).verifier_model == ""
    assert apply_preset({"preset": "balanced"}).verifier_model == ""
    google = {"preset": "high_precision", "generator_model": "google_genai:gemini-2.5-flash"}
    assert apply_preset(google).verifier_model == "google_genai:gemini-2.5-pro"
    explicit = {"preset": "cost_optimized", "verifier_model": "openai:gpt-4.1-mini"}
    assert apply_preset(explicit).verifier_model == "openai:gpt-4.1-mini"
    assert apply_preset({"preset": "high_precision",
                         "generator_model": "local"}).verifier_model == ""


def test_a_requests_preset_beats_the_servers_defaults_but_not_its_own_settings():
    server = {"max_retries": 3, "top_k": 8, "language": "ja"}
    assert layer_settings(server, {}) == server
    assert layer_settings(server, {"top_k": 2}) == {**server, "top_k": 2}
    fast = layer_settings(server, {"preset": "fast"})
    assert fast == {"language": "ja", "preset": "fast"}
    settings = resolve_context(None, {"configurable": fast})
    assert (settings.max_retries, settings.top_k, settings.language) == (0, 4, "ja")
    mixed = layer_settings(server, {"preset": "fast", "max_retries": 1})
    assert resolve_context(None, {"configurable": mixed}).max_retries == 1
    judged = layer_settings({"verifier_model": "openai:gpt-4.1-mini"},
                            {"preset": "cost_optimized"})
    assert "verifier_model" not in judged
    assert layer_settings({"verifier_model": "x"}, {"preset": "fast"}) == {
        "verifier_model": "x", "preset": "fast"}


@pytest.mark.parametrize(("values", "words"), [
    ({"preset": "turbo"},
     "invalid setting preset='turbo': allowed values are high_precision, balanced, fast, "
     "cost_optimized"),
    ({"verify_mode": "later"}, "allowed values are full, sampled, deferred"),
    ({"verify_sample_rate": 2}, "verify_sample_rate must be between 0 and 1"),
])
def test_bad_values_name_the_field_and_what_is_allowed(values, words):
    with pytest.raises(ValueError) as caught:
        validate_settings(values)
    assert words in str(caught.value)
    with pytest.raises(ValueError) as caught:
        Context(**values)
    assert words in str(caught.value)
    with pytest.raises(ValueError, match=next(iter(values))):
        graph.invoke({"question": "q"}, config={"configurable": values})


def test_studio_shows_the_presets_and_the_modes():
    props = graph.get_context_jsonschema()["properties"]
    preset = props["preset"]
    assert preset["enum"] == list(PRESETS) and preset["default"] == "balanced"
    for name in PRESETS:
        assert f"'{name}'" in preset["description"]
    assert "verify_mode=deferred" in preset["description"]
    assert "explicitly overrides" in preset["description"]
    assert props["verify_mode"]["enum"] == ["full", "sampled", "deferred"]
    assert props["verify_execution"]["enum"] == ["batch", "parallel"]
    assert "verify_sample_rate" in props


def test_the_docs_show_the_current_preset_table():
    assert preset_table() in DOCS.read_text(encoding="utf-8")
    documented = {f.name for f in fields(Context)}
    assert {k for v in PRESETS.values() for k in v} <= documented


def test_the_ask_command_takes_a_preset_and_a_mode(capsys):
    from grounded_rag.ask_cli import _settings
    from grounded_rag.cli import build_parser

    args = build_parser().parse_args(["ask", "q", "--preset", "fast", "--max-retries", "1",
                                      "--verify-mode", "sampled"])
    assert _settings(args) == {"preset": "fast", "max_retries": 1, "verify_mode": "sampled"}
    with pytest.raises(SystemExit):
        build_parser().parse_args(["ask", "q", "--preset", "turbo"])
    assert "fast" in capsys.readouterr().err
