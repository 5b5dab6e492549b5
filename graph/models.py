"""Model resolution: provider strings or injected objects, per role, imported lazily."""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any

from langchain_core.language_models import BaseChatModel

from grounded_rag.context import default_model_spec
from grounded_rag.verification.answerability import AnswerabilityJudge
from grounded_rag.verification.base import Verifier

_PROVIDERS = {
    "openai": ("langchain_openai", "openai"),
    "google_genai": ("langchain_google_genai", "google"),
}
_cache: dict[str, BaseChatModel] = {}
_lock = threading.Lock()


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
    ``google_genai:<model>`` -> the provider's LangChain chat model.
    """
    spec = spec or default_model_spec()
    with _lock:
        if spec in _cache:
            return _cache[spec]
        model = _build(spec)
        _cache[spec] = model
        return model


def _build(spec: str) -> BaseChatModel:
    if is_local_spec(spec):
        require_extra("llama_cpp", "local")
        from grounded_rag.local import ChatLocal

        return ChatLocal(model_path=local_model_path(spec))
    provider, _, name = spec.partition(":")
    if provider not in _PROVIDERS or not name:
        specs = ["local", "local:/path/model.gguf", *(f"{p}:<model>" for p in _PROVIDERS)]
        known = ", ".join(specs)
        raise ValueError(f"unknown model spec {spec!r}; use one of: {known}")
    module, extra = _PROVIDERS[provider]
    require_extra(module, extra)
    from langchain.chat_models import init_chat_model

    return init_chat_model(name, model_provider=provider, temperature=0)


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
    from grounded_rag.verification.cascade import CascadeVerifier
    from grounded_rag.verification.judge import ChatJudgeVerifier

    if isinstance(verifier, CascadeVerifier):
        return verifier
    if isinstance(verifier, BaseChatModel):
        return CascadeVerifier(ChatJudgeVerifier(verifier))
    if verifier is not None and not isinstance(verifier, str):
        return CascadeVerifier(verifier)
    spec = verifier or generator_spec or default_model_spec()
    mode = local_judge_mode() if is_local_spec(spec) else ""
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

