"""Operating presets: named bundles of settings (precision vs cost vs speed), and how they layer.

A preset only fills in settings the caller did not set: an explicit setting always wins over
its preset's value. ``balanced`` is the default and equals the plain defaults, so choosing
no preset changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

PresetName = Literal["high_precision", "balanced", "fast", "cost_optimized"]
"""The preset names, in the order the table shows them."""

DEFAULT_PRESET: PresetName = "balanced"
"""The preset a run gets when it names none."""

JudgeTier = Literal["stronger", "same", "cheaper"]
"""Which judge a preset asks for when a provider model writes the answers."""

PRESETS: dict[str, dict[str, Any]] = {
    "high_precision": {
        "verify_mode": "full",
        "max_retries": 2,
        "top_k": 6,
        "answerability_check": "on",
        "quote_match_threshold": 0.95,
        "extractor_model": "auto",
        "review_threshold": 0.9,
        "keep_verified": False,
    },
    "balanced": {},
    "fast": {
        "verify_mode": "deferred",
        "max_retries": 0,
        "top_k": 4,
        "answerability_check": "off",
        "extractor_model": "rules",
    },
    "cost_optimized": {
        "verify_mode": "sampled",
        "verify_sample_rate": 0.3,
        "max_retries": 1,
        "top_k": 4,
        "answerability_check": "auto",
        "extractor_model": "rules",
    },
}
"""Each preset's settings; anything a preset leaves out keeps the plain default.

``review_mode`` is never switched on by a preset (it needs a person and a checkpointer);
a preset's ``review_threshold`` applies once review mode is turned on explicitly.
"""

JUDGE_TIERS: dict[str, JudgeTier] = {
    "high_precision": "stronger",
    "balanced": "same",
    "fast": "same",
    "cost_optimized": "cheaper",
}
"""The judge each preset asks for when the generator is a provider model."""

PROVIDER_JUDGES: dict[str, dict[str, str]] = {
    "openai": {"stronger": "openai:gpt-4.1", "cheaper": "openai:gpt-4.1-nano"},
    "google_genai": {"stronger": "google_genai:gemini-2.5-pro",
                     "cheaper": "google_genai:gemini-2.5-flash-lite"},
}
"""Judge models per provider and tier. The offline local model has one judge for all."""

PRESET_SUMMARIES: dict[str, str] = {
    "high_precision": "fewest wrong claims: stricter gates and quotes, every claim verified, "
                      "a stronger judge with an API generator",
    "balanced": "the defaults: every claim verified before the answer is returned",
    "fast": "shortest time to the answer: no answerability check, no regeneration, "
            "verification after the answer",
    "cost_optimized": "fewest model calls: risky claims plus a 30% sample verified, one "
                      "regeneration, a cheaper judge with an API generator",
}
"""One line per preset, for Studio's description and the docs."""


def preset_values(name: str) -> dict[str, Any]:
    """The settings a preset sets (a copy); ``ValueError`` naming the allowed presets."""
    if name not in PRESETS:
        raise ValueError(f"invalid setting preset={name!r}: allowed values are "
                         f"{', '.join(PRESETS)}")
    return dict(PRESETS[name])


def judge_for(preset: str, generator_spec: str) -> str:
    """The verifier model a preset asks for, or "" (same as the generator).

    Only a provider generator (``openai:...``, ``google_genai:...``) has a stronger or
    cheaper sibling to switch to; the local model and injected models keep their judge.
    """
    tier = JUDGE_TIERS.get(preset, "same")
    provider = generator_spec.partition(":")[0]
    if tier == "same" or provider not in PROVIDER_JUDGES:
        return ""
    return PROVIDER_JUDGES[provider][tier]


def layer_settings(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Settings ``override`` laid over ``base`` (e.g. a request over the server's defaults).

    When ``override`` names a preset, the base's values for the settings that preset covers
    give way to it: the more specific layer's preset beats the broader layer's explicit
    values, while the override's own explicit values still beat its preset.
    """
    merged = dict(base)
    name = override.get("preset")
    if isinstance(name, str) and name in PRESETS:
        for key in (*PRESETS[name], "verifier_model"):
            if key == "verifier_model" and JUDGE_TIERS.get(name, "same") == "same":
                continue
            merged.pop(key, None)
    merged.update(override)
    return merged


def preset_description() -> str:
    """The presets as one paragraph (Studio shows it as the ``preset`` field's help)."""
    parts = []
    for name, summary in PRESET_SUMMARIES.items():
        values = ", ".join(f"{k}={v}" for k, v in PRESETS[name].items()) or "the defaults"
        parts.append(f"'{name}': {summary} ({values})")
    return ("Named bundle of settings; any setting given explicitly overrides its preset. "
            + "; ".join(parts) + ". Presets never turn review_mode on.")

