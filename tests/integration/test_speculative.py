"""Prompt-lookup speculative decoding returns exactly the tokens of plain greedy decoding."""

import pytest

pytestmark = [pytest.mark.slow]

SOURCES_EN = (
    "[S1] Aozora A1 spec sheet\n"
    "S1.1 The Aozora A1 battery lasts up to 10 hours of video playback.\n"
    "S1.2 With the power-saving mode on, the battery lasts up to 14 hours.\n"
    "S1.3 A full charge takes 2 hours with the bundled 30 W adapter."
)
SOURCES_JA = (
    "[S1] 就業規則\n"
    "S1.1 在宅勤務手当として、月に5,000円を支給する。\n"
    "S1.2 手当は毎月25日に給与と合わせて支払う。"
)


def _runtime(**kwargs):  # type: ignore[no-untyped-def]
    """The local model's runtime, or a skip naming what is missing."""
    pytest.importorskip("llama_cpp", reason="needs the 'local' extra")
    from grounded_rag.local.assets import ModelAssetError, ensure_model
    from grounded_rag.local.runtime import get_runtime

    try:
        ensure_model(progress=False)
    except ModelAssetError as exc:
        pytest.skip(str(exc))
    return get_runtime(**kwargs)


@pytest.fixture(scope="module")
def rt():
    return _runtime()


def _messages(lang, sources, question):
    from grounded_rag.prompts import generate

    return [{"role": "system", "content": generate.SYSTEM[lang]},
            {"role": "user", "content": generate.USER[lang].format(sources=sources,
                                                                   question=question)}]


def _schema():
    from grounded_rag.schemas import CitedAnswer

    return {"type": "json_object", "schema": CitedAnswer.model_json_schema()}


CASES = [
    ("en-structured", _messages("en", SOURCES_EN, "How long does the battery last?"), True, ()),
    ("ja-structured", _messages("ja", SOURCES_JA, "在宅勤務手当は月にいくらですか？"), True, ()),
    ("en-text-stop", [{"role": "user", "content": "Copy this sentence exactly: " + SOURCES_EN}],
     False, ("14 hours",)),
]


def _run(rt, messages, structured, stop, draft, max_tokens=160):
    from grounded_rag.local.chat import turn_end
    from grounded_rag.local.decoding import complete, grammar_for
    from grounded_rag.local.runtime import render_chat

    tokens = render_chat(rt, messages)
    with rt.lock:
        before = rt.work.snapshot()
        out = complete(rt, tokens, max_tokens=max_tokens,
                       grammar=grammar_for(_schema()) if structured else None,
                       stop=[*stop, turn_end(rt)], draft=draft)
        # The KV cache holds the prompt and returned tokens only, never a rejected guess.
        held = rt.llama.n_tokens
        assert held >= len(tokens) + len(out.tokens) - 1
        assert list(rt.llama.input_ids[:held]) == (tokens + out.tokens)[:held]
    return out, rt.work.snapshot() - before


@pytest.mark.parametrize(("name", "messages", "structured", "stop"), CASES,
                         ids=[c[0] for c in CASES])
def test_speculative_equals_plain_and_llama_cpp(rt, name, messages, structured, stop):
    plain, plain_work = _run(rt, messages, structured, stop, draft=0)
    spec, spec_work = _run(rt, messages, structured, stop, draft=6)
    from grounded_rag.local.runtime import render_chat

    # The same tokens, or a first difference at a near-tie of plain decoding (the AVX-512
    # build splits " [" + '{"' vs ' [{"' of the Japanese answer by 0.13: the same text).
    if not _same_or_near_tie(rt, render_chat(rt, messages), plain.tokens, spec.tokens,
                             grammar=structured):
        assert (spec.text, spec.finish_reason) == (plain.text, plain.finish_reason)
    # One pass per token (one fewer when a stop string ends it: its last token is not fed back).
    assert plain_work.generated_tokens == len(plain.tokens)
    assert len(plain.tokens) - 1 <= plain_work.generation_passes <= len(plain.tokens)
    assert spec_work.drafted > 0 and spec_work.accepted > 0
    assert spec_work.generation_passes < plain_work.generation_passes
    # The path it replaces: llama-cpp-python's own chat completion, greedy.
    request = {"messages": messages, "max_tokens": 160, "temperature": 0.0, "top_k": 1,
               "seed": 42, "stop": list(stop) or None}
    if structured:
        request["response_format"] = _schema()
    with rt.lock:
        rt.llama.n_tokens = 0
        ref = rt.llama.create_chat_completion(**request)
        rt.llama.n_tokens = 0
    choice = ref["choices"][0]
    assert plain.text == choice["message"]["content"]
    assert plain.finish_reason == choice["finish_reason"]
    assert len(plain.tokens) == ref["usage"]["completion_tokens"]


def test_budget_cuts_a_draft(rt):
    messages = CASES[2][1]
    plain, _ = _run(rt, messages, False, (), draft=0, max_tokens=9)
    spec, work = _run(rt, messages, False, (), draft=6, max_tokens=9)
    assert len(spec.tokens) == 9 and spec.finish_reason == "length"
    assert spec.tokens == plain.tokens and spec.text == plain.text
    assert work.drafted > 0


NOISE = 0.5
"""Logit differences llama.cpp's CPU kernels show between evaluating the same tokens one per
pass and in one batch (measured up to ~0.46 on this model): greedy choices whose top-2 margin
is below this are not fixed by the model, they flip with the batch split (the prompt split by a
cached prefix flips them too)."""


def _same_or_near_tie(rt, prompt, plain, spec, grammar=False):
    """Identical tokens (returns False), or a first difference where plain decoding itself
    had a near-tie (returns True). Under a grammar the two tied tokens are the top two that
    the grammar allows, which need not be the top two of all."""
    import numpy as np
    from llama_cpp import llama_get_logits_ith

    first = next((i for i, (a, b) in enumerate(zip(plain, spec, strict=False)) if a != b), None)
    if first is None:
        assert len(plain) == len(spec)
        return False
    with rt.lock:
        rt.llama.n_tokens = 0
        rt.llama.eval(prompt)
        for token in plain[:first]:
            rt.llama.eval([token])
        row = np.ctypeslib.as_array(llama_get_logits_ith(rt.llama._ctx.ctx, -1),
                                    shape=(rt.llama.n_vocab(),)).copy()
        rt.llama.n_tokens = 0
    a, b = plain[first], spec[first]
    assert abs(float(row[a]) - float(row[b])) < NOISE
    if not grammar:
        top2 = np.argsort(row)[::-1][:2]
        assert {a, b} == {int(t) for t in top2}
    return True


def test_context_end_cuts_a_draft():
    """A copy task that runs into the end of a small context: drafts stop at its edge."""
    small = _runtime(n_ctx=256)
    from grounded_rag.local.runtime import render_chat

    messages = [{"role": "user", "content": "Copy this text exactly: " + SOURCES_EN * 2}]
    prompt = render_chat(small, messages)
    assert 160 < len(prompt) < 240
    plain, _ = _run(small, messages, False, (), draft=0, max_tokens=0)
    spec, work = _run(small, messages, False, (), draft=6, max_tokens=0)
    assert len(prompt) + len(spec.tokens) <= small.n_ctx
    assert work.accepted > 0
    # This prompt has a near-tie ("\n" vs "\n\n") that batching flips, as a cached prefix does.
    _same_or_near_tie(small, prompt, plain.tokens, spec.tokens)


def test_one_token_grammar_check_equals_llama_cpp_when_the_model_wants_other_text(
        rt, monkeypatch):
    """Asked to copy prose but held to a JSON schema, the model's unconstrained favourite is
    refused at many steps: those choices go through the whole vocabulary, and the output is
    still exactly llama.cpp's own grammar-constrained greedy completion."""
    from grounded_rag.local import decoding

    full = []
    original = decoding.GreedyGrammar.close

    def close(self):  # type: ignore[no-untyped-def]
        full.append(self.full_checks)
        original(self)

    monkeypatch.setattr(decoding.GreedyGrammar, "close", close)
    messages = CASES[2][1]
    out, _ = _run(rt, messages, True, (), draft=0, max_tokens=60)
    assert full and full[0] > 0  # the fallback was taken
    assert full[0] < len(out.tokens)  # and not at every step
    with rt.lock:
        rt.llama.n_tokens = 0
        ref = rt.llama.create_chat_completion(
            messages=messages, max_tokens=60, temperature=0.0, top_k=1, seed=42,
            response_format=_schema())
        rt.llama.n_tokens = 0
    assert out.text == ref["choices"][0]["message"]["content"]
    assert out.finish_reason == ref["choices"][0]["finish_reason"]
