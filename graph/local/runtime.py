"""One shared, lock-guarded llama.cpp model per model file per process."""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grounded_rag.local import prefix_store
from grounded_rag.local.assets import (
    DEFAULT_MODEL_NAME,
    INSTALL_HINT,
    ModelAssetError,
    ensure_model,
    parse_model_spec,
)
from grounded_rag.local.draft_policy import DraftPolicy
from grounded_rag.local.lookup import RecentOutputs
from grounded_rag.local.threads import (  # noqa: F401  (re-exported: the thread policy's home)
    THREADS_ENV,
    cpu_cores,
    explicit_threads,
    threads_for,
)
from grounded_rag.local.work import WorkCounter

if TYPE_CHECKING:
    from llama_cpp import Llama

DEFAULT_N_CTX = 8192
"""Context window: room for ~6 evidence chunks plus the prompt and the answer."""

DEFAULT_SEED = 42
"""Fixed seed; decoding is greedy anyway, the seed only pins any sampler state."""


MAX_PREFIXES = 4
"""System-prompt KV caches kept per model (generator, answerability check, verifier, ...)."""

MIN_PREFIX_TOKENS = 32
"""Shorter system prompts are not worth saving."""

RECHECK_SECONDS = 2.0
"""How often (at most) the thread count is re-chosen from the measured load, between calls."""


def _cpu_ids() -> set[int] | None:
    try:
        return set(os.sched_getaffinity(0))
    except AttributeError:
        return None


def _busy_seconds(cpus: set[int] | None) -> float | None:
    """Busy CPU seconds so far over ``cpus`` (all when None), from /proc/stat; None if unknown."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    busy = 0
    seen = False
    for line in lines:
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        if cpus is not None and int(name[3:]) not in cpus:
            continue
        values = [int(v) for v in rest.split()]
        idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
        busy += sum(values[:8]) - idle  # user..steal; guest time is inside user already
        seen = True
    return busy / tick if seen else None


class LoadMeter:
    """How many of this process's cores other processes keep busy.

    Measured from /proc/stat on the cores this process may use, minus this process's own CPU
    time, over the interval since the previous reading (so the model's own threads do not
    count); a fresh reading waits ``sample`` seconds first. Without /proc/stat it falls back
    to ``os.getloadavg()`` (1-minute average, which includes this process).
    """

    def __init__(self, sample: float = 0.2) -> None:
        self.sample = sample
        self._cpus = _cpu_ids()
        self._last: tuple[float, float, float] | None = None

    def _reading(self) -> tuple[float, float, float] | None:
        busy = _busy_seconds(self._cpus)
        if busy is None:
            return None
        times = os.times()
        return time.monotonic(), busy, times.user + times.system

    def others(self) -> float:
        """Cores' worth of CPU that other processes used lately."""
        now = self._reading()
        if now is None:
            try:
                return os.getloadavg()[0]
            except OSError:
                return 0.0
        if self._last is None or now[0] - self._last[0] < self.sample / 2:
            time.sleep(self.sample)
            self._last, now = now, self._reading() or now
        last, self._last = self._last, now
        wall = max(1e-6, now[0] - last[0])
        return max(0.0, ((now[1] - last[1]) - (now[2] - last[2])) / wall)


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
    """Threads used for prompt processing and generation (now)."""
    load_seconds: float
    """How long loading took."""
    lock: threading.RLock = field(default_factory=threading.RLock)
    """Serialises all use of ``llama`` (contexts are not thread-safe)."""
    fixed_threads: bool = True
    """True when the thread count was given (``n_threads=`` or ``$GROUNDED_RAG_THREADS``);
    otherwise :meth:`adapt_threads` re-chooses it from the load before model calls."""
    meter: LoadMeter | None = None
    """Measures the load other processes put on this process's cores."""
    _checked_at: float = field(default=0.0, repr=False)
    prefix_cache: bool = True
    """Keep the KV cache of fixed system prompts across calls (:meth:`keep_prefix`)."""
    prefix_disk: bool = True
    """Also keep them on disk for the next process (:mod:`grounded_rag.local.prefix_store`)."""
    _prefixes: OrderedDict[tuple[int, ...], bytes] = field(default_factory=OrderedDict,
                                                           repr=False)
    _system_tokens: OrderedDict[str, list[int]] = field(default_factory=OrderedDict,
                                                        repr=False)
    work: WorkCounter = field(default_factory=WorkCounter)
    """Tokens, forward passes and calls done on this model so far (all contexts)."""
    drafts: DraftPolicy = field(default_factory=DraftPolicy)
    """Measured costs of single and drafted decoding passes: whether drafts pay here."""
    replies: RecentOutputs = field(default_factory=RecentOutputs, repr=False)
    """The generator's last replies: prompt-lookup drafts look there after the text itself."""
    state_tap: Any = field(default=None, repr=False)
    """The generator context's prompt-state tap, once installed
    (:func:`grounded_rag.local.prompt_state.tap_for`)."""

    def adapt_threads(self) -> int:
        """Re-choose the thread count with :func:`threads_for` (hold ``lock``); return it.

        At most every ``RECHECK_SECONDS``; a no-op when the count is fixed. The new count
        takes effect on the next decode (``llama_set_n_threads``, no reload).
        """
        if self.fixed_threads or self.meter is None:
            return self.n_threads
        now = time.monotonic()
        if now - self._checked_at < RECHECK_SECONDS:
            return self.n_threads
        self._checked_at = now
        threads = threads_for(cpu_cores(), self.meter.others())
        if threads != self.n_threads:
            llama_cpp = require_llama_cpp()
            llama_cpp.llama_set_n_threads(self.llama._ctx.ctx, threads, threads)
            self.n_threads = threads
        return threads

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
        self.adapt_threads()
        cached = llama.n_tokens
        prefix = 0
        ids = llama.input_ids
        limit = min(cached, len(tokens))
        while prefix < limit and ids[prefix] == tokens[prefix]:
            prefix += 1
        # The last token is always re-evaluated so that fresh logits exist for it.
        prefix = min(prefix, len(tokens) - 1)
        llama.n_tokens = prefix
        self.work.eval(llama, tokens[prefix:])
        self.work.add(model_calls=1, reused_tokens=prefix)
        return prefix, len(tokens) - prefix

    def keep_prefix(self, tokens: Sequence[int], length: int) -> int:
        """Make the context start with ``tokens[:length]`` (a fixed system prompt) cheaply.

        When the context already starts with it, nothing happens. Otherwise the prefix's KV
        cache is restored from a saved copy (``llama_state_seq_set_data``, milliseconds), or
        evaluated once and saved (a few MB for a system prompt; the last ``MAX_PREFIXES``
        are kept; with ``prefix_disk`` a copy on disk serves the next process). The next
        :meth:`eval_prompt` or chat completion then reuses it as a cached prefix. Returns
        the number of tokens restored from a saved copy. Hold ``lock``.
        """
        llama = self.llama
        if not self.prefix_cache or length < MIN_PREFIX_TOKENS or length >= len(tokens):
            return 0
        prefix = tuple(tokens[:length])
        held = _common_prefix(llama.input_ids[: llama.n_tokens], prefix)
        if held >= length:
            return 0
        llama_cpp = require_llama_cpp()
        ctx = llama._ctx.ctx
        saved = self._prefixes.get(prefix)
        on_disk = saved is None and self.prefix_disk
        if on_disk:
            saved = prefix_store.load(self, prefix)
        if saved is not None:
            memory = llama_cpp.llama_get_memory(ctx)
            llama_cpp.llama_memory_clear(memory, True)
            buffer = (ctypes.c_uint8 * len(saved)).from_buffer_copy(saved)
            if llama_cpp.llama_state_seq_set_data(ctx, buffer, len(saved), 0):
                llama.input_ids[:length] = prefix
                llama.n_tokens = length
                llama._requires_eval = True
                self._remember(prefix, saved)
                return length
            if on_disk:
                prefix_store.forget(self, prefix)
            llama.n_tokens = held = 0  # could not restore: evaluate it afresh
        self.adapt_threads()
        llama.n_tokens = held
        self.work.eval(llama, prefix[held:])
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0)
        if written:
            data = bytes(buffer[:written])
            self._remember(prefix, data)
            if self.prefix_disk:
                prefix_store.save(self, prefix, data)
        return 0

    def _remember(self, prefix: tuple[int, ...], data: bytes) -> None:
        self._prefixes[prefix] = data
        self._prefixes.move_to_end(prefix)
        while len(self._prefixes) > MAX_PREFIXES:
            self._prefixes.popitem(last=False)

    def system_prefix_length(self, messages: list[dict[str, str]], tokens: Sequence[int]) -> int:
        """Tokens of ``tokens`` (the rendered ``messages``) that belong to the system turn.

        0 when the first message is not a system message.
        """
        if not messages or messages[0].get("role") != "system":
            return 0
        key = messages[0]["content"]
        system = self._system_tokens.get(key)
        if system is None:
            system = render_chat(self, messages[:1])
            self._system_tokens[key] = system
            while len(self._system_tokens) > 4 * MAX_PREFIXES:
                self._system_tokens.popitem(last=False)
        return _common_prefix(system, tokens)

    def last_logits(self, token_ids: Sequence[int]) -> list[float]:
        """Return the last evaluated position's logits for ``token_ids`` (hold ``lock``)."""
        llama_cpp = require_llama_cpp()
        row = llama_cpp.llama_get_logits_ith(self.llama._ctx.ctx, -1)
        return [float(row[t]) for t in token_ids]


def _common_prefix(a: Sequence[int] | Any, b: Sequence[int] | Any) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


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
        n_threads: Threads (default ``$GROUNDED_RAG_THREADS``; without either, the count
            follows :func:`threads_for` from the cores that are free, at load time and again
            before model calls).
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
        # thread beat 2 by 2x on 2 shared cores): count only the free ones (threads_for).
        fixed = n_threads or explicit_threads()
        meter = None if fixed else LoadMeter()
        threads = fixed or threads_for(cpu_cores(), meter.others() if meter else 0.0)
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
            fixed_threads=bool(fixed),
            meter=meter,
            _checked_at=time.monotonic(),
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
