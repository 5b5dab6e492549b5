"""A system prompt's KV cache restored from disk gives the logits of evaluating it (real model)."""

import pytest

from tests.integration.test_speculative import _runtime

pytestmark = [pytest.mark.slow]


def test_a_restored_system_prompt_reads_like_an_evaluated_one(monkeypatch, tmp_path):
    import numpy as np
    from llama_cpp import llama_get_logits_ith

    from grounded_rag.local import prefix_store
    from grounded_rag.local.runtime import render_chat
    from grounded_rag.prompts import generate

    monkeypatch.setattr(prefix_store, "folder", lambda: tmp_path)
    monkeypatch.delenv(prefix_store.SWITCH_ENV, raising=False)
    rt = _runtime()
    messages = [{"role": "system", "content": generate.SYSTEM["ja"]},
                {"role": "user", "content": "在宅勤務手当は月にいくらですか？"}]
    tokens = render_chat(rt, messages)
    length = rt.system_prefix_length(messages, tokens)
    assert length > 100

    def last_row() -> np.ndarray:
        row = llama_get_logits_ith(rt.llama._ctx.ctx, -1)
        return np.ctypeslib.as_array(row, shape=(rt.llama.n_vocab(),)).copy()

    with rt.lock:
        rt._prefixes.clear()
        rt.llama.n_tokens = 0
        rt.llama.eval(tokens[:length])  # from scratch, split where the prefix ends
        rt.llama.eval(tokens[length:])
        scratch = last_row()
        rt.llama.n_tokens = 0
        assert rt.keep_prefix(tokens, length) == 0  # evaluated and saved
        assert len(list(tmp_path.glob("*.kv"))) == 1
        rt._prefixes.clear()  # as in a new process: only the copy on disk is left
        rt.llama.n_tokens = 0
        rt.llama.eval([1000] * 50)  # another prompt takes the context
        assert rt.keep_prefix(tokens, length) == length  # restored, nothing evaluated
        reused, evaluated = rt.eval_prompt(tokens)
        assert (reused, evaluated) == (length, len(tokens) - length)
        restored = last_row()
        rt.llama.n_tokens = 0
        assert rt.keep_prefix(tokens, length) == length
        rt.eval_prompt(tokens)
        again = last_row()
        rt.llama.n_tokens = 0
    # Restoring is exact: the same logits as evaluating the same split afresh.
    assert np.array_equal(restored, again)
    assert np.array_equal(restored, scratch)
