"""Model resolution: provider strings or injected objects, per role, imported lazily."""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any

from langchain_core.language_models import BaseChatModel

from grounded_rag.context import default_model_spec
from grounded_rag.verification.base import AnswerabilityJudge, Verifier

_PROVIDERS = {
    "openai": ("langchain_openai", "openai"),
    "google_genai": ("langchain_google_genai", "google"),
}
_cache: dict[str, BaseChatModel] = {}
_lock = threading.RLock()  # re-entered: resolve_verifier builds a chat model under it


class MissingExtraError(ImportError):
    """An optional part is not installed; the message names the install command."""


def require_extra(module: str, extra: str) -> None:
    """Raise ``MissingExtraError`` naming ``pip install 'grounded-rag[extra]'`` if missing."""
    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(
            f"This needs the '{extra}' extra ({module} is not installed). "
            f"Install it with: pip install 'grounded-rag[{extra}]'"
        )


def is_local_spec(spec: str) -> bool:
    """True for ``local`` and ``local:/path/model.gguf``."""
    return spec == "local" or spec.startswith("local:")


def local_model_path(spec: str) -> str | None:
    """The GGUF path of a ``local:`` spec, or None for the bundled default model."""
    return spec.split(":", 1)[1] or None if spec.startswith("local:") else None


def chat_model_from_spec(spec: str) -> BaseChatModel:
    """Build (once per process) the chat model a provider string names.

    ``local`` / ``local:/path.gguf`` -> the offline llama.cpp model; ``openai:<model>`` and
    ``google_genai:<model>`` -> the provider's LangChain chat model; ``openai:<model>@<url>``
    -> that model on an OpenAI-compatible server (see :func:`split_base_url`).
    """
    spec = spec or default_model_spec()
    key = spec + _env_signature(spec)
    with _lock:
        if key in _cache:
            return _cache[key]
        model = _build(spec)
        _cache[key] = model
        return model


def _env_signature(spec: str) -> str:
    """What besides the spec shapes an ``openai:`` model (so a changed variable takes effect)."""
    if not spec.startswith("openai:"):
        return ""
    return "|" + "|".join(os.environ.get(name, "") for name in (BASE_URL_ENV, TIMEOUT_ENV,
                                                               RETRIES_ENV, MAX_TOKENS_ENV))


def _build(spec: str) -> BaseChatModel:
    if is_local_spec(spec):
        require_extra("llama_cpp", "local")
        from grounded_rag.local import ChatLocal

        return ChatLocal(model_path=local_model_path(spec))
    provider, _, name = spec.partition(":")
    if provider not in _PROVIDERS or not name:
        specs = ["local", "local:/path/model.gguf", *(f"{p}:<model>" for p in _PROVIDERS),
                 "openai:<model>@<base url>"]
        known = ", ".join(specs)
        raise ValueError(f"unknown model spec {spec!r}; use one of: {known}")
    if split_base_url(spec)[1] and provider != "openai":
        raise ValueError(f"model spec {spec!r}: a base URL (@http...) is for openai: models "
                         "(any OpenAI-compatible server) only")
    module, extra = _PROVIDERS[provider]
    require_extra(module, extra)
    if provider == "openai":
        return _openai_chat_model(spec)
    from langchain.chat_models import init_chat_model

    return init_chat_model(name, model_provider=provider, temperature=0)


# -- OpenAI and OpenAI-compatible servers ------------------------------------------------------

BASE_URL_ENV = "OPENAI_BASE_URL"
"""The OpenAI SDK's own variable: a server for every ``openai:`` model without its own URL."""
SERVER_KEY_ENV = "GROUNDED_RAG_API_KEY"
"""The key sent to a server named in a spec (``openai:<model>@<url>``) or by ``--base-url``.

``OPENAI_API_KEY`` is never sent to such a URL; unset, a placeholder is sent (local servers
such as Ollama, LM Studio, llama.cpp's or vLLM without ``--api-key`` ignore it)."""
TIMEOUT_ENV = "GROUNDED_RAG_MODEL_TIMEOUT"
"""Seconds one request to an ``openai:`` model may take (default ``DEFAULT_TIMEOUT_S``)."""
RETRIES_ENV = "GROUNDED_RAG_MODEL_RETRIES"
"""Retries of one request after a timeout, a 429 (honouring ``Retry-After``), a 5xx or a lost
connection (default ``DEFAULT_RETRIES``); then the run fails with a ``ModelServerError``."""
DEFAULT_TIMEOUT_S = 120.0
"""Long enough for a small model on a CPU server to write a cited answer."""
DEFAULT_RETRIES = 2
MAX_TOKENS_ENV = "GROUNDED_RAG_MAX_TOKENS"
"""Longest reply of a model on your own server (default ``DEFAULT_MAX_TOKENS``; 0: no
bound). Without it a small model that loops inside a JSON string writes until the context
is full, and the request times out."""
DEFAULT_MAX_TOKENS = 1024
_NO_KEY = "not-needed"


def split_base_url(spec: str) -> tuple[str, str | None]:
    """``openai:<model>@<url>`` -> (``openai:<model>``, url); other specs -> (spec, None).

    The URL is the OpenAI-compatible API root, e.g. ``http://127.0.0.1:11434/v1`` (Ollama),
    ``http://127.0.0.1:8000/v1`` (vLLM, llama.cpp's server), ``http://127.0.0.1:1234/v1``
    (LM Studio). Model names may contain ``:`` (``openai:qwen2.5:1.5b@http://...``).
    """
    for scheme in ("@http://", "@https://"):
        head, sep, tail = spec.partition(scheme)
        if sep and head and tail:
            return head, scheme[1:] + tail
    return spec, None


def with_base_url(spec: str, base_url: str | None) -> str:
    """``spec`` served from ``base_url``: ``openai:`` specs without a URL of their own get it.

    Any other spec (``local``, ``google_genai:...``, ``rules``, ``auto``, "") is returned as is.
    """
    if not base_url or not spec.startswith("openai:") or split_base_url(spec)[1]:
        return spec
    if not base_url.startswith(("http://", "https://")):
        raise ValueError(f"base URL {base_url!r} must start with http:// or https://")
    return f"{spec}@{base_url.rstrip('/')}"


def _float_env(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        return float(raw) if raw else default
    except ValueError:
        raise ValueError(f"{name} must be a number, not {raw!r}") from None


def _openai_chat_model(spec: str) -> BaseChatModel:
    """``openai:<model>[@<url>]`` as a ``ChatOpenAI`` with a bounded timeout and retries.

    The URL comes from the spec, else ``$OPENAI_BASE_URL``; without either it is OpenAI's own
    API. Key: ``$GROUNDED_RAG_API_KEY`` for a URL in the spec; ``$OPENAI_API_KEY`` (else
    ``$GROUNDED_RAG_API_KEY``) with ``$OPENAI_BASE_URL`` or OpenAI itself.
    """
    from langchain_openai import ChatOpenAI

    bare, spec_url = split_base_url(spec)
    name = bare.partition(":")[2]
    if not name or "@" in name:
        raise ValueError(f"model spec {spec!r}: expected openai:<model> or "
                         "openai:<model>@http(s)://host:port/v1")
    env_url = os.environ.get(BASE_URL_ENV, "").strip() or None
    base_url = spec_url or env_url
    key: str | None
    if spec_url:
        key = os.environ.get(SERVER_KEY_ENV) or _NO_KEY
    elif env_url:
        key = os.environ.get("OPENAI_API_KEY") or os.environ.get(SERVER_KEY_ENV) or _NO_KEY
    else:
        key = os.environ.get("OPENAI_API_KEY") or None
    kwargs: dict[str, Any] = {
        "model": name, "temperature": 0,
        "timeout": _float_env(TIMEOUT_ENV, DEFAULT_TIMEOUT_S),
        "max_retries": int(_float_env(RETRIES_ENV, DEFAULT_RETRIES)),
    }
    if base_url:
        kwargs["base_url"] = base_url
        limit = int(_float_env(MAX_TOKENS_ENV, DEFAULT_MAX_TOKENS))
        if limit > 0:
            kwargs["max_tokens"] = limit
    if key:
        kwargs["api_key"] = key
    return ChatOpenAI(**kwargs)


def resolve_chat_model(model: str | BaseChatModel | None, fallback: str = "") -> BaseChatModel:
    """An injected chat model as is, else the one its spec (or ``fallback``) names."""
    if isinstance(model, BaseChatModel):
        return model
    return chat_model_from_spec(model or fallback or default_model_spec())


_verifiers: dict[tuple[str, str], Verifier] = {}


def resolve_verifier(
    verifier: Verifier | BaseChatModel | str | None, generator_spec: str
) -> Verifier:
    """The claim judge: a ``Verifier``, a chat model (batched verdicts), or a spec string.

    ``local`` specs get the next-token Yes/No scorer (a 1.5B model's generated verdicts are at
    chance); API models get batched structured verdicts. Either way deterministic cues run
    first (``CascadeVerifier``).
    """
    from grounded_rag.verification.cascade import CascadeVerifier, ChatJudgeVerifier

    if isinstance(verifier, CascadeVerifier):
        return verifier
    if isinstance(verifier, BaseChatModel):
        return CascadeVerifier(ChatJudgeVerifier(verifier))
    if verifier is not None and not isinstance(verifier, str):
        return CascadeVerifier(verifier)
    spec = verifier or generator_spec or default_model_spec()
    mode = local_judge_mode() if is_local_spec(spec) else _env_signature(spec)
    with _lock:
        if (spec, mode) not in _verifiers:
            if is_local_spec(spec):
                require_extra("llama_cpp", "local")
                from grounded_rag.local import LocalVerifier

                inner: Any = LocalVerifier(model_path=local_model_path(spec),
                                           judge=mode or None)  # type: ignore[arg-type]
            else:
                inner = ChatJudgeVerifier(chat_model_from_spec(spec))
            _verifiers[(spec, mode)] = CascadeVerifier(inner)
        return _verifiers[(spec, mode)]


def local_judge_mode() -> str:
    """``$GROUNDED_RAG_JUDGE`` for the local judges.

    ``head`` (trained heads), ``logit`` (plain P(Yes)), ``auto`` (per language, see
    ``grounded_rag.local.verifier.AUTO_JUDGES``; for the answerability probe it means its
    default), or "" for the default: ``auto`` with the bundled model, the plain scorer with
    another GGUF.
    """
    mode = os.environ.get("GROUNDED_RAG_JUDGE", "").strip().lower()
    if mode not in ("", "head", "logit", "auto"):
        raise ValueError(f"GROUNDED_RAG_JUDGE must be 'head', 'logit' or 'auto', not {mode!r}")
    return mode


_judges: dict[tuple[str, str], Any] = {}


def resolve_answerability(spec: str) -> AnswerabilityJudge:
    """The local answerability probe, shared and loaded once.

    A ``local`` spec names its model; any other spec gets the default local model (an API
    generator gets the probe only when the check is forced on).
    """
    key = spec if is_local_spec(spec) else "local"
    mode = local_judge_mode()
    with _lock:
        if (key, mode) not in _judges:
            require_extra("llama_cpp", "local")
            from grounded_rag.local.answerability import LocalAnswerabilityJudge

            _judges[(key, mode)] = LocalAnswerabilityJudge(
                model_path=local_model_path(key),
                judge=None if mode in ("", "auto") else mode)  # type: ignore[arg-type]
        judge: AnswerabilityJudge = _judges[(key, mode)]
        return judge

