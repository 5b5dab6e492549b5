"""Per-call settings: LangGraph runtime context and ``config["configurable"]`` both set them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args, get_origin, get_type_hints

from langchain_core.runnables import RunnableConfig
from pydantic import TypeAdapter, ValidationError

from grounded_rag.presets import (
    DEFAULT_PRESET,
    JUDGE_TIERS,
    PRESETS,
    PROVIDER_JUDGES,
    PresetName,
    judge_for,
    preset_description,
    preset_values,
)
from grounded_rag.retrieval.calibration import DEFAULT_ABSTAIN_THRESHOLD

EVIDENCE_TOKENS = 400
"""Default ``evidence_tokens``. The demo questions' six chunks take 560-730 tokens in full;
at 400 the sentences that answer them are still shown (with their neighbours), and the
prompt is about a third shorter. Its cost in answer quality on the JSQuAD / JaQuAD answer
task is not measured yet: 0 restores the whole chunks."""


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
    evidence_tokens: int = field(
        default=EVIDENCE_TOKENS,
        metadata={
            "description": "Budget (estimated tokens) of the evidence shown to the generator "
            "as numbered sentences: when the retrieved chunks are longer, the sentences that "
            "best match the question are shown, each with its neighbours while the budget "
            "allows. 0 shows every chunk whole."
        },
    )
    abstain_threshold: float | None = field(
        default=DEFAULT_ABSTAIN_THRESHOLD,
        metadata={
            "description": "Abstain before any model call when the best evidence's calibrated "
            "relevance (0-1) is below this: only when nothing in the store is about the "
            "question. Unset: per language, fitted on small corpora (ja 0.0009, en 0.004, "
            "evidence in the other language 0.01); 0.26 is the stricter large-pool gate."
        },
    )
    keep_verified: bool = field(
        default=True,
        metadata={
            "description": "When the revisions are spent, deliver the statements whose claims "
            "all hold (flag partial_answer) if they still answer the question, instead of "
            "abstaining; False abstains whenever a claim fails."
        },
    )
    predicate_check: bool = field(
        default=True,
        metadata={
            "description": "Abstain before any model call when a yes/no question's predicate "
            "(\"carried in a cabin\", 「支給されますか」) is named by no retrieved passage in "
            "the question's language: the sources speak of the subject only."
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
        metadata={"description": "Answer language; 'auto' follows the question's language "
                  "(a question in neither Japanese nor English then abstains before any "
                  "model call: the checks read only those two)."},
    )
    generator_model: str = field(
        default="",
        metadata={
            "description": "Model that writes the cited answer, e.g. 'local', "
            "'local:/path/model.gguf', 'openai:gpt-4.1-mini', 'google_genai:gemini-2.5-flash', "
            "or a model on an OpenAI-compatible server: 'openai:<model>@http://host:port/v1'. "
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
    verify_mode: Literal["full", "sampled", "deferred"] = field(
        default="full",
        metadata={
            "description": "What is verified before the answer is returned. 'full': every "
            "claim. 'sampled': claims with a number, date, amount, unit, negation or name, plus "
            "a seeded random share (verify_sample_rate) of the rest; the others are marked "
            "'unchecked'. 'deferred': the answer is returned once its citations pass the "
            "deterministic checks, with verification 'pending'; the claims are verified "
            "afterwards on the same thread (needs a checkpointer; without one they are "
            "verified before returning). Legacy values 'batch' / 'parallel' mean 'full' with "
            "that verify_execution."
        },
    )
    verify_execution: Literal["batch", "parallel"] = field(
        default="batch",
        metadata={
            "description": "How claims are judged: 'batch': one verifier call judges all "
            "claims of an attempt; 'parallel': one call per claim, run concurrently (pays off "
            "only with remote API judges)."
        },
    )
    verify_sample_rate: float = field(
        default=0.3,
        metadata={
            "description": "verify_mode 'sampled': share (0-1) of the claims without a risk "
            "marker that are verified anyway, chosen by a seeded hash of the claim text."
        },
    )
    store_dir: str = field(
        default="",
        metadata={
            "description": "Embedded store directory (default $GROUNDED_RAG_STORE or "
            "./.grounded-rag), or a networked store postgresql://USER@HOST:PORT/DB?schema=NAME "
            "(vectors on the Chroma server of $GROUNDED_RAG_CHROMA_URL or the one it was "
            "built with)."
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

    preset: PresetName = field(
        default=DEFAULT_PRESET,
        metadata={"description": preset_description()},
    )

    def __new__(cls, *args: Any, **kwargs: Any) -> Context:
        """Remember which settings the caller passed: only those override the preset."""
        obj = super().__new__(cls)
        obj._explicit = frozenset(kwargs)
        return obj

    def __post_init__(self) -> None:
        explicit: frozenset[str] | None = getattr(self, "_explicit", None)
        if self.verify_mode in LEGACY_VERIFY_MODES:
            # 'batch' / 'parallel' used to be verify_mode's values: full verification, run so.
            if explicit is None or "verify_execution" not in explicit:
                self.verify_execution = self.verify_mode  # type: ignore[assignment]
            self.verify_mode = "full"
            if explicit is not None:
                self._explicit = explicit | {"verify_execution"}
        problems = [message for name in _CHOICES
                    if (message := _choice_problem(name, getattr(self, name)))]
        if self.max_retries < 0:
            problems.append("max_retries must be >= 0")
        if self.top_k < 1:
            problems.append("top_k must be >= 1")
        if self.evidence_tokens < 0:
            problems.append("evidence_tokens must be >= 0")
        if self.answerability_passages < 1:
            problems.append("answerability_passages must be >= 1")
        for name in ("abstain_threshold", "review_threshold", "quote_match_threshold",
                     "verify_sample_rate"):
            value = getattr(self, name)
            if value is None and name == "abstain_threshold":
                continue
            if not 0.0 <= value <= 1.0:
                problems.append(f"{name} must be between 0 and 1, got {value!r}")
        if problems:
            raise ValueError("; ".join(problems))

    def explicit_settings(self) -> dict[str, Any]:
        """The settings this object was built with (those that override a preset).

        An object built without going through ``Context(...)`` (e.g. by a validator) does not
        know; its values that differ from the defaults count as explicit then.
        """
        explicit: frozenset[str] | None = getattr(self, "_explicit", None)
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if (f.name in explicit if explicit is not None
                else getattr(self, f.name) != getattr(_DEFAULTS, f.name))
        }


LEGACY_VERIFY_MODES = ("batch", "parallel")
"""Former ``verify_mode`` values, now ``verify_execution``'s; still accepted."""

SETTING_NAMES: frozenset[str] = frozenset(f.name for f in fields(Context))
"""Names accepted in ``context=`` and in ``config["configurable"]``."""

_HINTS = get_type_hints(Context)
_CHOICES: dict[str, tuple[Any, ...]] = {
    name: get_args(hint) for name, hint in _HINTS.items() if get_origin(hint) is Literal
}
_ADAPTERS: dict[str, TypeAdapter[Any]] = {name: TypeAdapter(hint) for name, hint in _HINTS.items()}


def _choice_problem(name: str, value: Any) -> str:
    allowed = _CHOICES[name]
    if value in allowed or (name == "verify_mode" and value in LEGACY_VERIFY_MODES):
        return ""
    return (f"invalid setting {name}={value!r}: allowed values are "
            f"{', '.join(str(a) for a in allowed)}")


_DEFAULTS = Context()


def _coerce(name: str, value: Any) -> Any:
    if name in _CHOICES:
        problem = _choice_problem(name, value)
        if problem:
            raise ValueError(problem)
        return value
    try:
        return _ADAPTERS[name].validate_python(value)
    except ValidationError as exc:
        raise ValueError(f"invalid setting {name}={value!r}: {exc.errors()[0]['msg']}") from exc


def _unalias(values: dict[str, Any]) -> dict[str, Any]:
    """Rewrite a legacy ``verify_mode`` ('batch' / 'parallel') as full + that execution."""
    if values.get("verify_mode") in LEGACY_VERIFY_MODES:
        values = dict(values)
        values.setdefault("verify_execution", values["verify_mode"])
        values["verify_mode"] = "full"
    return values


def validate_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Validate a mapping of settings; unknown names or bad values raise ``ValueError``."""
    unknown = sorted(set(values) - SETTING_NAMES)
    if unknown:
        raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
    coerced = {name: _coerce(name, value) for name, value in values.items()}
    Context(**coerced)  # range checks
    return coerced


def apply_preset(explicit: dict[str, Any]) -> Context:
    """The effective settings: defaults, then the preset's values, then ``explicit``.

    The preset's judge tier picks ``verifier_model`` only when that is not set explicitly
    and the generator is a provider model.
    """
    explicit = _unalias(explicit)
    preset = explicit.get("preset", DEFAULT_PRESET)
    values = {**preset_values(preset), **explicit}
    if "verifier_model" not in explicit:
        generator = values.get("generator_model") or default_model_spec()
        judge = judge_for(preset, generator)
        if judge and _served_elsewhere(generator):
            judge = ""  # a model on the user's own server: its judge is that model, not OpenAI's
        if judge:
            values["verifier_model"] = judge
    return Context(**values)


def _served_elsewhere(spec: str) -> bool:
    """An ``openai:`` spec aimed at another server (``@<url>`` or ``$OPENAI_BASE_URL``)."""
    return spec.startswith("openai:") and (
        "@http://" in spec or "@https://" in spec or bool(os.environ.get("OPENAI_BASE_URL")))


def resolve_context(context: Any, config: RunnableConfig | None) -> Context:
    """Merge defaults, the preset, ``config["configurable"]`` and the runtime context.

    Configurable keys that are not settings (``thread_id`` ...) are ignored here; a served
    request validates them at the edge. Settings passed in ``context=`` win over
    configurable values, and both win over the preset's values (see ``apply_preset``).
    """
    explicit: dict[str, Any] = {}
    configurable = (config or {}).get("configurable") or {}
    for name in SETTING_NAMES & set(configurable):
        explicit[name] = _coerce(name, configurable[name])
    explicit = _unalias(explicit)
    if isinstance(context, Context):
        explicit.update(context.explicit_settings())
    elif isinstance(context, dict):
        explicit.update(_unalias(validate_settings(context)))
    return apply_preset(explicit)


def preset_table() -> str:
    """The presets side by side as a Markdown table (docs/presets.md shows this table)."""
    defaults = _DEFAULTS
    names = list(PRESETS)
    keys = list(dict.fromkeys(k for values in PRESETS.values() for k in values))
    keys.sort(key=lambda k: [f.name for f in fields(Context)].index(k))
    lines = ["| setting | " + " | ".join(f"`{n}`" for n in names) + " |",
             "|---|" + "---|" * len(names)]
    for key in keys:
        cells = []
        for name in names:
            value = PRESETS[name].get(key, getattr(defaults, key))
            if key == "verify_sample_rate" and PRESETS[name].get("verify_mode",
                                                                 defaults.verify_mode) != "sampled":
                cells.append("-")
                continue
            cells.append(f"{value:g}" if isinstance(value, float) else str(value))
        lines.append(f"| `{key}` | " + " | ".join(cells) + " |")
    def judge(tier: str) -> str:
        if tier == "same":
            return "same as the generator"
        models = " / ".join(tiers[tier].partition(":")[2] for tiers in PROVIDER_JUDGES.values())
        return f"{tier}: {models}"

    lines.append("| judge (`verifier_model`), provider generators only | "
                 + " | ".join(judge(JUDGE_TIERS[n]) for n in names) + " |")
    lines.append("| `review_mode` | " + " | ".join("off" for _ in names) + " |")
    return "\n".join(lines)
