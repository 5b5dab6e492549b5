"""Greedy completion on the generator's context, with optional prompt-lookup speculation.

:func:`complete` produces what ``Llama.create_chat_completion`` produces for the same
prompt with ``temperature=0`` (greedy, the same grammar, end-of-turn, stop strings, token
budget and text rules), token for token, while counting its work in ``runtime.work``.

With ``draft > 0`` it speculates: after each token it drafts a continuation by prompt lookup
(:func:`grounded_rag.local.lookup.propose`: in the prompt and the answer so far, then in the
generator's last replies, ``runtime.replies``), evaluates the token and the draft in one batched
forward pass, and keeps the longest prefix of the draft that equals the greedy choice at each
position (the grammar sampler sees exactly the kept tokens), plus the model's own next token.
Drafted tokens beyond the first mismatch, the end of the answer, a stop string or the budget
are removed from the KV cache and never returned. The output is the same as without a draft
and only the number of forward passes changes, up to floating-point rounding: llama.cpp's
CPU kernels give logits that differ by up to ~0.5 between one batched pass and single-token
passes over the same tokens, so a greedy choice between two tokens closer than that can go
either way (splitting the prompt at a cached prefix flips the same near-ties).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from grounded_rag.local.choices import Choice, _Choices
from grounded_rag.local.draft_policy import AUTO, DraftPolicy
from grounded_rag.local.grammar import GreedyGrammar
from grounded_rag.local.lookup import RecentOutputs, propose
from grounded_rag.local.runtime import require_llama_cpp

if TYPE_CHECKING:
    from grounded_rag.local.runtime import LocalRuntime

DRAFT_ENV = "GROUNDED_RAG_DRAFT_TOKENS"
"""Environment variable with the longest prompt-lookup draft: ``auto`` (the default), or a
number (0 turns speculation off)."""

DEFAULT_DRAFT = AUTO
"""The runtime's :class:`~grounded_rag.local.draft_policy.DraftPolicy` decides from measured
pass costs: drafts pay where a batched pass is much cheaper per token than single-token
passes (llama.cpp's AVX-512 kernels), and lose where it is not (generic kernels on 2 cores).
Batched and single-token passes round differently, which can flip a greedy near-tie (as a
cached prompt prefix can)."""


def default_draft() -> int:
    """The draft length ``$GROUNDED_RAG_DRAFT_TOKENS`` asks for.

    An int >= 0 as given; ``auto``, unset or unreadable: :data:`DEFAULT_DRAFT` (``-1``,
    measured).
    """
    raw = os.environ.get(DRAFT_ENV, "").strip().lower()
    if raw in ("", "auto"):
        return DEFAULT_DRAFT
    try:
        return max(0, int(raw))
    except ValueError:
        return DEFAULT_DRAFT


@dataclass
class Completion:
    """One greedy completion."""

    text: str
    tokens: list[int]
    """Completion tokens (the end-of-turn token not included)."""
    finish_reason: str
    """``stop`` (end of turn or a stop string) or ``length`` (budget spent)."""
    prompt_tokens: int
    passes: int = 0
    """Forward passes after the prompt's own."""
    drafted: int = 0
    accepted: int = 0
    choices: dict[str, float] = field(default_factory=dict)
    """Log-odds of ``true`` over ``false`` at each :class:`Choice` the output reached."""
    looped: bool = False
    """Stopped early (``finish_reason`` ``length``) because the output repeats itself."""


_GRAMMARS: dict[str, Any] = {}


def grammar_for(response_format: dict[str, Any] | None) -> Any:
    """The llama.cpp grammar ``create_chat_completion`` builds for ``response_format``."""
    if not response_format or response_format.get("type") != "json_object":
        return None
    key = json.dumps(response_format.get("schema"), sort_keys=True)
    grammar = _GRAMMARS.get(key)
    if grammar is None:
        from llama_cpp import llama_chat_format

        grammar = llama_chat_format._grammar_for_response_format(response_format)  # type: ignore[arg-type]
        if len(_GRAMMARS) > 32:
            _GRAMMARS.clear()
        _GRAMMARS[key] = grammar
    return grammar


LOOP_SPAN = 64
"""Tokens that must repeat the ones a period earlier before decoding stops as looping."""

LOOP_PERIOD = 64
"""The longest repeated block looked for (a statement written over and over)."""


def looping(tokens: Sequence[int]) -> bool:
    """True when the last tokens repeat with a period of at most :data:`LOOP_PERIOD`.

    The last ``max(LOOP_SPAN, 2 * period)`` tokens equal those one period earlier: a block
    of up to 32 tokens written three times over, a longer one three times, one token 65
    times. Greedy decoding that got there does not leave (the same context gives the same
    next token), so the rest of the budget would only repeat it.
    """
    n = len(tokens)
    for period in range(1, LOOP_PERIOD + 1):
        span = max(LOOP_SPAN, 2 * period)
        if n < span + period:
            break
        if tokens[n - span:] == tokens[n - span - period:n - period]:
            return True
    return False


def _whole(text: bytes) -> int:
    """Length of the longest prefix of UTF-8 ``text`` that ends on a whole character."""
    n = len(text)
    i = n - 1
    while i > max(n - 4, 0) and text[i] & 0xC0 == 0x80:  # continuation bytes
        i -= 1
    if i < 0:
        return 0
    lead = text[i]
    need = 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return n if n - i >= need else i


class _Text:
    """``Llama._create_completion``'s text rules: stop strings and split UTF-8 characters."""

    def __init__(self, llama: Any, prompt: list[int], stop: Sequence[str], max_tokens: int,
                 eog: Any, on_text: Callable[[str], None] | None = None) -> None:
        self.llama, self.prompt, self.max_tokens, self.eog = llama, prompt, max_tokens, eog
        self.stop = [s.encode("utf-8") for s in stop if s]
        self.tokens: list[int] = []
        self.text = b""
        self.finish: str | None = None
        self.looped = False
        self._multibyte = 0
        self.current = b""
        """The text so far (the last pushed token's detokenized output)."""
        self.on_text = on_text
        """Called with each new piece of the text that can no longer change (streaming)."""
        self._sent = b""

    def _held(self, text: bytes) -> int:
        """Bytes at the end of ``text`` that may be the start of a stop string."""
        held = 0
        for stop in self.stop:
            for j in range(min(len(stop) - 1, len(text)), held, -1):
                if text.endswith(stop[:j]):
                    held = j
                    break
        return held

    def _emit(self, text: bytes, *, final: bool) -> None:
        """Pass the new settled part of ``text`` to ``on_text`` (all of it when ``final``)."""
        if self.on_text is None:
            return
        upto = len(text) if final else _whole(text[:len(text) - self._held(text)])
        if upto > len(self._sent) and text.startswith(self._sent):
            piece, self._sent = text[len(self._sent):upto], text[:upto]
            self.on_text(piece.decode("utf-8", errors="ignore"))

    def push(self, token: int) -> bool:
        """Take the next sampled token; True when the completion is finished."""
        done = self._push(token)
        if done:
            self._emit(self.text, final=True)
        else:
            self._emit(self.current, final=False)
        return done

    def _push(self, token: int) -> bool:
        if self.eog(token):
            self.text = self.llama.detokenize(self.tokens, prev_tokens=self.prompt)
            self.finish = "stop"
            return True
        self.tokens.append(token)
        text = self.llama.detokenize(self.tokens, prev_tokens=self.prompt)
        self.current = text
        for k, char in enumerate(text[-3:]):
            k = 3 - k
            for num, pattern in ((2, 192), (3, 224), (4, 240)):
                if num > k and pattern & char == pattern:
                    self._multibyte = num - k
        if self._multibyte > 0:  # the budget is checked only on whole characters, as there
            self._multibyte -= 1
            return False
        hits = [s for s in self.stop if s in text]
        if hits:
            self.text = text[: text.index(hits[0])]
            self.finish = "stop"
            return True
        if len(self.tokens) >= self.max_tokens or looping(self.tokens):
            self.looped = len(self.tokens) < self.max_tokens
            self.text = text
            self.finish = "length"
            return True
        return False


def complete(
    runtime: LocalRuntime,
    prompt: Sequence[int],
    *,
    max_tokens: int | None,
    grammar: Any = None,
    stop: Sequence[str] = (),
    draft: int = 0,
    choices: Sequence[Choice] = (),
    on_text: Callable[[str], None] | None = None,
) -> Completion:
    """Greedy completion of ``prompt`` (tokens) on the generator's context; hold the lock.

    Args:
        runtime: The shared model (its generator context is used).
        prompt: The rendered chat prompt's tokens.
        max_tokens: Budget (None or <= 0: up to the end of the context).
        grammar: A ``LlamaGrammar`` constraining the output (see :func:`grammar_for`).
        stop: Stop strings (the text is cut before the first one found).
        draft: Longest prompt-lookup draft per pass; 0 decodes one token per pass; a
            negative value (:data:`DEFAULT_DRAFT`) lets ``runtime.drafts`` (a
            :class:`DraftPolicy`) choose from the pass costs it has measured.
        choices: Booleans of the output to score (and, with a threshold, decide). Until
            the last one is scored, one token per pass (the scores are those the
            thresholds were fitted on); after it, a guard on the array it opens reads the
            logits of each position, drafted or not.
        on_text: Streaming: called (under the lock) with each piece of the output once it
            is settled: whole characters, never the start of a stop string; the pieces add
            up to the returned text. An exception it raises ends the completion.
    """
    llama_cpp = require_llama_cpp()
    from llama_cpp import _internals

    llama = runtime.llama
    prompt = list(prompt)
    n_ctx = runtime.n_ctx
    if len(prompt) >= n_ctx:
        raise ValueError(f"Requested tokens ({len(prompt)}) exceed context window of {n_ctx}")
    if max_tokens is None or max_tokens <= 0 or max_tokens + len(prompt) >= n_ctx:
        max_tokens = n_ctx - len(prompt)
    vocab = llama._model.vocab
    out = _Text(llama, prompt, stop, max_tokens,
                lambda t: bool(llama_cpp.llama_vocab_is_eog(vocab, t)), on_text)
    work = runtime.work
    policy: DraftPolicy | None = getattr(runtime, "drafts", None)
    if draft < 0:
        draft = policy.choose() if policy is not None else 0

    # The prompt: reuse the longest cached prefix, always re-evaluating the last token.
    held = 0
    limit = min(llama.n_tokens, len(prompt) - 1)
    ids = llama.input_ids
    while held < limit and ids[held] == prompt[held]:
        held += 1
    llama.n_tokens = held
    work.eval(llama, prompt[held:])
    work.add(model_calls=1, reused_tokens=held)

    sampler: Any
    if grammar is not None:
        sampler = GreedyGrammar(llama, grammar)
    else:
        sampler = _internals.LlamaSampler()
        sampler.add_greedy()
    result = Completion(text="", tokens=[], finish_reason="length", prompt_tokens=len(prompt))
    replies: RecentOutputs | None = getattr(runtime, "replies", None)
    try:
        _decode(runtime, sampler, out, result, list(prompt), max_tokens, draft,
                _Choices(llama, choices) if choices else None, policy,
                replies.latest_first() if replies is not None else [])
    except Exception:
        llama.n_tokens = 0  # the KV cache may hold anything now: start afresh next time
        raise
    finally:
        sampler.close()
    if replies is not None:
        replies.add(prompt, out.tokens)
    result.text = out.text.decode("utf-8", errors="ignore")
    result.tokens = out.tokens
    result.finish_reason = out.finish or "length"
    result.looped = out.looped
    work.add(generated_tokens=len(out.tokens), generation_passes=result.passes,
             drafted=result.drafted, accepted=result.accepted)
    return result


def _decode(runtime: LocalRuntime, sampler: Any, out: _Text, result: Completion,
            history: list[int], max_tokens: int, draft: int,
            choices: _Choices | None = None, policy: DraftPolicy | None = None,
            earlier: Sequence[Sequence[int]] = ()) -> None:
    """The decoding loop of :func:`complete` (the prompt is evaluated already).

    ``policy`` is told the wall time of every pass (single or drafted) and what it kept;
    ``earlier`` holds the generator's earlier replies, latest first, for drafts.
    """
    from llama_cpp import _internals

    llama, work, n_ctx = runtime.llama, runtime.work, runtime.n_ctx
    ctx = llama._ctx
    batch = _internals.LlamaBatch(n_tokens=draft + 1, embd=0, n_seq_max=1) if draft > 0 else None
    cap = draft

    def sample(index: int = -1) -> int:
        if choices is not None and choices.pending:
            choices.at(ctx, out.current, result.choices, index)
        return int(sampler.sample(ctx, index))

    token = sample()
    done = out.push(token)
    while not done:
        n_past = llama.n_tokens
        room = n_ctx - n_past - 1  # positions left after this token's
        if room < 0:
            raise ValueError(f"the completion ran out of the context window ({n_ctx})")
        # Draft only what could still be returned: the budget and the context bound it.
        wanted = min(cap, room, max_tokens - len(out.tokens) - 1)
        if choices is not None and choices.ahead:
            wanted = 0  # up to a choice's score, single passes: its calibration's own setting
        guess = (propose(history + [token], wanted, elsewhere=earlier)
                 if batch is not None and wanted > 0 else [])
        if not guess:
            started = time.perf_counter()
            work.eval(llama, [token], prompt=False)
            if policy is not None:
                policy.single(time.perf_counter() - started)
            result.passes += 1
            history.append(token)
            token = sample()
            done = out.push(token)
            continue
        step = [token, *guess]
        assert batch is not None  # a guess is only proposed when there is a batch
        batch.set_batch(batch=step, n_past=n_past, logits_all=True)
        started = time.perf_counter()
        ctx.decode(batch)
        elapsed = time.perf_counter() - started
        llama.input_ids[n_past:n_past + len(step)] = step
        work.add(forward_passes=1)
        result.passes += 1
        result.drafted += len(guess)
        history.append(token)
        kept = 0
        for i in range(len(step)):
            token = sample(i)
            done = out.push(token)
            if done or i == len(guess) or token != guess[i]:
                break
            kept += 1
            history.append(token)
        result.accepted += kept
        if policy is not None:
            policy.drafted(elapsed, kept + 1)
        # Positions past the last kept draft token hold rejected guesses: drop them.
        llama.n_tokens = n_past + 1 + kept
        ctx.kv_cache_seq_rm(-1, llama.n_tokens, -1)
        llama._requires_eval = True
        cap = draft if kept == len(guess) else max(1, kept + 1)
