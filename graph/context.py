"""Per-call settings: LangGraph runtime context and ``config["configurable"]`` both set them."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_type_hints

from langchain_core.runnables import RunnableConfig
from pydantic import TypeAdapter, ValidationError

from grounded_rag.retrieval.calibration import DEFAULT_ABSTAIN_THRESHOLD


def default_model_spec() -> str:
    """The model used when none is configured: a provider with a key, else the local model."""
    explicit = os.environ.get("GROUNDED_RAG_MODEL")
    if explicit:
        return explicit
    if os.environ.get("OPENAI_API_KEY"):
        return "openai:gpt-4.1-mini"
    if os.environ.get("GOOGLE_API_KEY"):
        return "google_genai:gemini-2.5-flash"
    return "local"


@dataclass(kw_only=True)
class Context:
    """Settings of one run. Every field can also be passed in ``config["configurable"]``."""

    max_retries: int = field(
        default=2,
        metadata={"description": "Regenerations allowed after the first answer before abstaining."},
    )
    top_k: int = field(
        default=6, metadata={"description": "Evidence chunks retrieved and shown to the generator."}
    )
    abstain_threshold: float = field(
        default=DEFAULT_ABSTAIN_THRESHOLD,
        metadata={
            "description": "Abstain before any model call when the best evidence's calibrated "
            "relevance (0-1) is below this."
        },
    )
    answerability_check: Literal["auto", "on", "off"] = field(
        default="auto",
        metadata={
            "description": "Before writing, ask the local model whether the top passages "
            "contain the answer at all, and abstain when none does. 'auto': on when the "
            "generator is the local model (API models decline by themselves), 'on', 'off'."
        },
    )
    answerability_passages: int = field(
        default=3,
        metadata={"description": "Top passages the answerability check reads."},
    )
    language: Literal["auto", "ja", "en"] = field(
        default="auto",
        metadata={"description": "Answer language; 'auto' follows the question's language."},
    )
    generator_model: str = field(
        default="",
        metadata={
            "description": "Model that writes the cited answer, e.g. 'local', "
            "'local:/path/model.gguf', 'openai:gpt-4.1-mini', 'google_genai:gemini-2.5-flash'. "
            "Empty: OpenAI or Gemini when their key is set, else the offline local model."
        },
    )
    extractor_model: str = field(
        default="auto",
        metadata={
            "description": "Claim extractor: 'rules' (deterministic sentence split), a model "
            "spec, or 'auto' (rules with the local model, else the generator model)."
        },
    )
    verifier_model: str = field(
        default="",
        metadata={
            "description": "Model that judges claims (NLI). 'local' uses the next-token Yes/No "
            "scorer; an API model returns batched verdicts. Empty: same as the generator."
        },
    )
    verify_mode: Literal["batch", "parallel"] = field(
        default="batch",
        metadata={
            "description": "'batch': one verifier call judges all claims of an attempt; "
            "'parallel': one call per claim, run concurrently."
        },
    )
    store_dir: str = field(
        default="",
        metadata={
            "description": "Embedded store directory (default $GROUNDED_RAG_STORE or "
            "./.grounded-rag)."
        },
    )
    review_mode: bool = field(
        default=False,
        metadata={
            "description": "Pause for human review (interrupt) when confidence is below "
            "review_threshold."
        },
    )
    review_threshold: float = field(
        default=0.8, metadata={"description": "Confidence below which review mode pauses."}
    )
    quote_match_threshold: float = field(
        default=0.85,
        metadata={
            "description": "Minimum similarity (0-1) for a quote that is not verbatim to count as "
            "found in its source."
        },
    )

    def __post_init__(self) -> None:
        problems = []
        if self.max_retries < 0:
            problems.append("max_retries must be >= 0")
        if self.top_k < 1:
            problems.append("top_k must be >= 1")
        if self.answerability_passages < 1:
            problems.append("answerability_passages must be >= 1")
        for name in ("abstain_threshold", "review_threshold", "quote_match_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                problems.append(f"{name} must be between 0 and 1")
        if problems:
            raise ValueError("; ".join(problems))


SETTING_NAMES: frozenset[str] = frozenset(f.name for f in fields(Context))
"""Names accepted in ``context=`` and in ``config["configurable"]``."""

_DEFAULTS = Context()
_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    name: TypeAdapter(hint) for name, hint in get_type_hints(Context).items()
}


def _coerce(name: str, value: Any) -> Any:
    try:
        return _ADAPTERS[name].validate_python(value)
    except ValidationError as exc:
        raise ValueError(f"invalid setting {name}={value!r}: {exc.errors()[0]['msg']}") from exc


def validate_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Validate a mapping of settings; unknown names or bad values raise ``ValueError``."""
    unknown = sorted(set(values) - SETTING_NAMES)
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
    coerced = {name: _coerce(name, value) for name, value in values.items()}
    Context(**coerced)  # range checks
    return coerced


def resolve_context(context: Any, config: RunnableConfig | None) -> Context:
    """Merge defaults, ``config["configurable"]`` and the runtime context into one ``Context``.

    Configurable keys that are not settings (``thread_id`` ...) are ignored here; a served
    request validates them at the edge. Context fields that differ from the defaults win
    over configurable values, so an explicit ``context=`` always applies.
    """
    merged: dict[str, Any] = {}
    configurable = (config or {}).get("configurable") or {}
    for name in SETTING_NAMES & set(configurable):
        merged[name] = _coerce(name, configurable[name])
    if isinstance(context, Context):
        for f in fields(Context):
            value = getattr(context, f.name)
            if value != getattr(_DEFAULTS, f.name):
                merged[f.name] = value
    elif isinstance(context, dict):
        merged.update(validate_settings(context))
    return dataclasses.replace(_DEFAULTS, **merged)
