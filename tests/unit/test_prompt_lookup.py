"""Prompt-lookup drafts and the speculative loop's bookkeeping, on a fake model."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from grounded_rag.local.lookup import propose
from grounded_rag.local.work import Work, WorkCounter


def test_longest_suffix_wins_over_a_later_shorter_one():
    # Suffix [7, 8, 9] occurs at 0 (followed by 1, 2); [8, 9] alone also occurs at 5 (-> 3).
    history = [7, 8, 9, 1, 2, 8, 9, 3, 7, 8, 9]
    assert propose(history, 2) == [1, 2]


def test_latest_occurrence_of_equal_length_is_used():
    history = [1, 2, 5, 1, 2, 6, 0, 1, 2]
    assert propose(history, 1) == [6]


def test_draft_is_capped_and_never_runs_past_the_history():
    history = [4, 5, 6, 7, 4, 5]
    assert propose(history, 10) == [6, 7, 4, 5]
    assert propose(history, 3) == [6, 7, 4]
    assert propose(history, 0) == []


def test_no_draft_without_a_recurring_suffix_of_min_length():
    assert propose([1, 2, 3, 4], 4) == []
    assert propose([1, 2, 9, 2], 4) == []  # only a 1-token suffix recurs
    assert propose([1, 2, 9, 2], 4, min_ngram=1) == [9, 2]
    assert propose([], 4) == [] and propose([3], 4) == []


def test_earlier_replies_are_searched_after_the_text():
    # The answer's frame is not in the prompt; an earlier reply holds it.
    assert propose([5, 6, 7], 4, elsewhere=[[8, 6, 7, 1, 2]]) == [1, 2]
    # The text itself wins at the same suffix length ...
    assert propose([6, 7, 3, 6, 7], 2, elsewhere=[[6, 7, 9, 9]]) == [3, 6]
    # ... a longer suffix wins wherever it is, and the latest reply is read first.
    assert propose([1, 6, 7, 3, 5, 6, 7], 2, elsewhere=[[5, 6, 7, 4], [5, 6, 7, 9]]) == [4]
    # A reply is searched only for suffixes it can continue.
    assert propose([5, 6, 7], 4, elsewhere=[[6, 7]]) == []


def test_recent_outputs_keep_the_last_replies_after_the_prompt_end():
    from grounded_rag.local.lookup import RecentOutputs

    recent = RecentOutputs(size=2)
    recent.add([1, 2, 3, 4, 5, 6], [7, 8])
    recent.add([1], [9])
    recent.add([1, 2], [])  # nothing written: nothing kept
    assert recent.latest_first() == [[1, 9], [3, 4, 5, 6, 7, 8]]  # the prompt's last 4
    recent.add([3], [4])
    assert recent.latest_first() == [[3, 4], [1, 9]]


def test_work_difference_and_ratios():
    counter = WorkCounter()
    before = counter.snapshot()
    counter.add(generated_tokens=10, generation_passes=6, drafted=8, accepted=4)
    work = counter.snapshot() - before
    assert work.passes_per_token == pytest.approx(0.6)
    assert work.acceptance == pytest.approx(0.5)
    assert np.isnan(Work().passes_per_token) and np.isnan(Work().acceptance)


# A fake llama.cpp: the "model" continues the repeating pattern 1..PERIOD, except that it
# answers 0 after the token 5 when that token sits at an odd position; token 99 ends the turn.
PERIOD = 7
EOG = 99


def _next(seq: list[int]) -> int:
    last = seq[-1]
    if last == 5 and len(seq) % 2:
        return 0
    if len(seq) >= 40:
        return EOG
    return last % PERIOD + 1


class _Ctx:
    def __init__(self, llama: _Llama) -> None:
        self.llama = llama
        self.ctx = "ctx"
        self.rows: list[int] = []

    def decode(self, batch) -> None:
        llama = self.llama
        n_past = batch.n_past
        assert llama.kv_len == n_past, "decoding on top of stale KV entries"
        llama.kv[n_past:n_past + len(batch.tokens)] = batch.tokens
        llama.kv_len = n_past + len(batch.tokens)
        self.rows = [_next(llama.kv[:n_past + i + 1]) for i in range(len(batch.tokens))]
        llama.decodes += 1

    def kv_cache_seq_rm(self, seq, start, end) -> None:
        self.llama.kv_len = min(self.llama.kv_len, start)
        del self.llama.kv[start:]


class _Batch:
    def __init__(self, n_tokens, embd, n_seq_max) -> None:
        self.capacity = n_tokens

    def set_batch(self, batch, n_past, logits_all) -> None:
        assert len(batch) <= self.capacity
        self.tokens, self.n_past = list(batch), n_past


class _Sampler:
    def __init__(self) -> None:
        self.ctx = None

    def add_grammar(self, model, grammar) -> None:
        pass

    def add_greedy(self) -> None:
        pass

    def sample(self, ctx: _Ctx, idx: int) -> int:
        return ctx.rows[idx]

    def close(self) -> None:
        pass


class _Llama:
    n_batch = 512

    def __init__(self) -> None:
        self.kv: list[int] = []
        self.kv_len = 0
        self.n_tokens = 0
        self.input_ids = np.zeros(256, dtype=np.intc)
        self.decodes = 0
        self._ctx = _Ctx(self)
        self._model = types.SimpleNamespace(vocab="vocab")
        self._requires_eval = False
        self._batch = _Batch(512, 0, 1)

    def eval(self, tokens) -> None:
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        self._batch.set_batch(tokens, self.n_tokens, False)
        self._ctx.decode(self._batch)
        self.input_ids[self.n_tokens:self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)

    def detokenize(self, tokens, prev_tokens=None) -> bytes:
        return "".join(chr(ord("a") + t) for t in tokens).encode()


@pytest.fixture
def fake(monkeypatch):
    internals = types.SimpleNamespace(LlamaSampler=_Sampler, LlamaBatch=_Batch)
    module = types.SimpleNamespace(_internals=internals,
                                   llama_vocab_is_eog=lambda vocab, t: t == EOG)
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    monkeypatch.setitem(sys.modules, "llama_cpp._internals", internals)
    llama = _Llama()
    return types.SimpleNamespace(llama=llama, work=WorkCounter(), n_ctx=256)


def _complete(rt, prompt, **kwargs):
    from grounded_rag.local.decoding import complete

    rt.llama.n_tokens = 0
    rt.llama._ctx.kv_cache_seq_rm(-1, 0, -1)
    before = rt.work.snapshot()
    out = complete(rt, prompt, **kwargs)
    # The KV cache holds only the prompt and returned tokens, never a rejected guess.
    assert rt.llama.kv == (prompt + out.tokens)[:rt.llama.kv_len]
    assert rt.llama.kv_len == rt.llama.n_tokens >= len(prompt) + len(out.tokens) - 1
    return out, rt.work.snapshot() - before


PROMPT = [1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4]


@pytest.mark.parametrize("draft", [1, 3, 6])
@pytest.mark.parametrize(("max_tokens", "stop"), [(200, ()), (9, ()), (200, ("cdef",)), (1, ())])
def test_speculation_returns_the_plain_tokens(fake, draft, max_tokens, stop):
    plain, plain_work = _complete(fake, PROMPT, max_tokens=max_tokens, stop=stop, draft=0)
    spec, work = _complete(fake, PROMPT, max_tokens=max_tokens, stop=stop, draft=draft)
    assert (spec.tokens, spec.text, spec.finish_reason) == (
        plain.tokens, plain.text, plain.finish_reason)
    assert plain_work.drafted == 0 and plain_work.generation_passes >= len(plain.tokens) - 1
    if len(plain.tokens) > 4:
        assert work.accepted > 0
        assert work.generation_passes < plain_work.generation_passes
    assert work.generated_tokens == len(spec.tokens) and work.model_calls == 1
    assert work.prompt_tokens == len(PROMPT)


def test_budget_and_stop_cut_the_output(fake):
    out, _ = _complete(fake, PROMPT, max_tokens=9, draft=6)
    assert out.finish_reason == "length" and len(out.tokens) == 9
    out, _ = _complete(fake, PROMPT, max_tokens=200, stop=("cd",), draft=6)
    # Tokens 5 6 7 1 2 3 read "fghbcd": the text ends before the stop string, the tokens at it.
    assert out.finish_reason == "stop" and out.text == "fghb"
    assert out.tokens == [5, 6, 7, 1, 2, 3]


def test_drafts_stop_at_the_context_end(fake):
    fake.n_ctx = 24
    plain, _ = _complete(fake, PROMPT, max_tokens=None, draft=0)
    spec, _ = _complete(fake, PROMPT, max_tokens=None, draft=6)
    assert spec.tokens == plain.tokens and len(PROMPT) + len(spec.tokens) == fake.n_ctx
    assert fake.llama.kv_len <= fake.n_ctx


def test_auto_drafts_follow_the_measured_policy(fake):
    from grounded_rag.local.draft_policy import AUTO, DraftPolicy

    plain, _ = _complete(fake, PROMPT, max_tokens=200, draft=0)
    fake.drafts = DraftPolicy()
    # Nothing measured yet: the first completion drafts, and both kinds of pass are timed.
    spec, work = _complete(fake, PROMPT, max_tokens=200, draft=AUTO)
    assert spec.tokens == plain.tokens and work.drafted > 0
    assert fake.drafts.single_ms is not None and fake.drafts.drafted_ms is not None
    # Told that drafted passes cost more per token kept, it decodes one token per pass.
    fake.drafts._single.add(1.0, 1)
    for _ in range(200):
        fake.drafts._drafted.add(50.0, 1)
    again, work = _complete(fake, PROMPT, max_tokens=200, draft=AUTO)
    assert again.tokens == plain.tokens and work.drafted == 0


def test_a_second_reply_drafts_its_frame_from_the_first(fake):
    from grounded_rag.local.lookup import RecentOutputs

    prompt = [9, 10, 12]  # no token of the reply recurs in this prompt
    plain, _ = _complete(fake, prompt, max_tokens=12, draft=0)
    first, first_work = _complete(fake, prompt, max_tokens=12, draft=4)
    fake.replies = RecentOutputs()
    _complete(fake, prompt, max_tokens=12, draft=4)
    again, work = _complete(fake, prompt, max_tokens=12, draft=4)
    assert first.tokens == again.tokens == plain.tokens
    assert work.generation_passes < first_work.generation_passes
    assert work.accepted > first_work.accepted
