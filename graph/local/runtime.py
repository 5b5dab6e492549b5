"""One shared, lock-guarded llama.cpp model per model file per process."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grounded_rag.local.assets import (
    DEFAULT_MODEL_NAME,
    INSTALL_HINT,
    ModelAssetError,
    ensure_model,
    parse_model_spec,
)

if TYPE_CHECKING:
    from llama_cpp import Llama

DEFAULT_N_CTX = 8192
"""Context window: room for ~6 evidence chunks plus the prompt and the answer."""

DEFAULT_SEED = 42
"""Fixed seed; decoding is greedy anyway, the seed only pins any sampler state."""


def cpu_cores() -> int:
    """Return the number of CPU cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def require_llama_cpp() -> Any:
    """Import llama_cpp or raise an error naming the install command."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise ModelAssetError(
            "The local model needs llama-cpp-python, which is not installed. "
            f"Install it with: {INSTALL_HINT}"
        ) from exc
    return llama_cpp


@dataclass
class LocalRuntime:
    """A loaded model plus the lock every caller must hold while using it."""

    path: Path
    """The GGUF file."""
    llama: Llama
    """The llama.cpp model and context (not thread-safe: hold ``lock``)."""
    model_name: str
    """Name reported in response metadata."""
    n_threads: int
    """Threads used for prompt processing and generation."""
    load_seconds: float
    """How long loading took."""
    lock: threading.RLock = field(default_factory=threading.RLock)
    """Serialises all use of ``llama`` (contexts are not thread-safe)."""

    @property
    def n_ctx(self) -> int:
        """Context window in tokens."""
        return int(self.llama.n_ctx())

    def tokenize(self, text: str, *, add_bos: bool = False, special: bool = True) -> list[int]:
        """Tokenize text (special tokens such as ``<|im_start|>`` are parsed)."""
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=add_bos, special=special))

    def eval_prompt(self, tokens: Sequence[int]) -> tuple[int, int]:
        """Evaluate ``tokens``, reusing the longest cached prefix; return (reused, evaluated).

        Afterwards the next-token logits of the last token can be read with
        :meth:`last_logits`. Caller must hold ``lock``.
        """
        llama = self.llama
        tokens = list(tokens)
        if not tokens:
            raise ValueError("empty prompt")
        if len(tokens) >= self.n_ctx:
            raise ValueError(f"prompt of {len(tokens)} tokens exceeds the context ({self.n_ctx})")
        cached = llama.n_tokens
        prefix = 0
        ids = llama.input_ids
        limit = min(cached, len(tokens))
        while prefix < limit and ids[prefix] == tokens[prefix]:
            prefix += 1
        # The last token is always re-evaluated so that fresh logits exist for it.
        prefix = min(prefix, len(tokens) - 1)
        llama.n_tokens = prefix
        llama.eval(tokens[prefix:])
        return prefix, len(tokens) - prefix

    def last_logits(self, token_ids: Sequence[int]) -> list[float]:
        """Return the last evaluated position's logits for ``token_ids`` (hold ``lock``)."""
        llama_cpp = require_llama_cpp()
        row = llama_cpp.llama_get_logits_ith(self.llama._ctx.ctx, -1)
        return [float(row[t]) for t in token_ids]


_RUNTIMES: dict[tuple[str, int], LocalRuntime] = {}
_RUNTIMES_LOCK = threading.Lock()


def get_runtime(
    model: str | os.PathLike[str] | None = None,
    *,
    n_ctx: int | None = None,
    n_threads: int | None = None,
    progress: bool = True,
) -> LocalRuntime:
    """Return the process-wide runtime for ``model``, loading it on first use.

    Args:
        model: GGUF path, ``local:/path.gguf`` spec, or None / ``"local"`` for the default.
        n_ctx: Context window (default ``$GROUNDED_RAG_N_CTX`` or 8192).
        n_threads: Threads (default ``$GROUNDED_RAG_THREADS`` or the CPU cores available).
        progress: Show a progress bar if the default model must be assembled first.
    """
    llama_cpp = require_llama_cpp()
    path = ensure_model(model, progress=progress)
    ctx = n_ctx or int(os.environ.get("GROUNDED_RAG_N_CTX", DEFAULT_N_CTX))
    key = (str(path), ctx)
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get(key)
        if runtime is not None:
            return runtime
        # Generation collapses when another process competes for the cores (measured: 1
        # thread beat 2 by 2x on 2 shared cores), so the thread count can be overridden.
        threads = n_threads or int(os.environ.get("GROUNDED_RAG_THREADS", 0)) or cpu_cores()
        start = time.perf_counter()
        llama = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=ctx,
            n_batch=512,
            n_threads=threads,
            n_threads_batch=threads,
            seed=DEFAULT_SEED,
            logits_all=False,
            verbose=False,
        )
        custom = parse_model_spec(model)
        name = path.stem if custom is not None else DEFAULT_MODEL_NAME
        runtime = LocalRuntime(
            path=path,
            llama=llama,
            model_name=name,
            n_threads=threads,
            load_seconds=time.perf_counter() - start,
        )
        _RUNTIMES[key] = runtime
        return runtime


def render_chat(runtime: LocalRuntime, messages: list[dict[str, str]]) -> list[int]:
    """Render messages with the model's own chat template and tokenize the prompt.

    The result ends with the assistant turn opened, as for generation.
    """
    from llama_cpp import llama_chat_format

    llama = runtime.llama
    template = llama.metadata.get("tokenizer.chat_template")
    if template:
        eos_id, bos_id = llama.token_eos(), llama.token_bos()
        formatter = llama_chat_format.Jinja2ChatFormatter(
            template=template,
            eos_token=llama._model.token_get_text(eos_id) if eos_id != -1 else "",
            bos_token=llama._model.token_get_text(bos_id) if bos_id != -1 else "",
        )
        result = formatter(messages=messages)  # type: ignore[arg-type]
        return runtime.tokenize(result.prompt, add_bos=not result.added_special)
    # No template in the file: ChatML is what most instruction-tuned GGUFs expect.
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return runtime.tokenize(text + "<|im_start|>assistant\n", add_bos=False)
