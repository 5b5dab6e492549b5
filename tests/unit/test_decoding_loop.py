"""Greedy decoding that starts repeating itself stops there instead of spending its budget."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from pydantic import BaseModel

from grounded_rag.local.decoding import LOOP_SPAN, _Text, looping


class _Llama:
    def detokenize(self, tokens: list[int], prev_tokens: Any = None) -> bytes:
        return "".join(chr(ord("a") + t % 26) for t in tokens).encode()


def _push_all(tokens: list[int], max_tokens: int = 1000) -> _Text:
    out = _Text(_Llama(), [], (), max_tokens, lambda t: False)
    for t in tokens:
        if out.push(t):
            break
    return out


def test_a_block_written_over_and_over_is_a_loop() -> None:
    block = [3, 1, 4, 1, 5, 9, 2, 6]
    assert not looping(block * 8)  # 64 tokens: the span is not yet repeated a period later
    assert looping(block * 9)
    assert looping([7] * (LOOP_SPAN + 1))
    assert not looping([7] * LOOP_SPAN)
    statement = list(range(50))  # a 50-token statement written three times
    assert not looping(statement * 2)
    assert looping(statement * 3)


def test_varied_text_is_not_a_loop() -> None:
    text = [(i * 7 + i // 5) % 23 for i in range(600)]
    assert not any(looping(text[:n]) for n in range(1, 601))
    # a list whose items share most words is not a loop either
    items = [t for i in range(12) for t in (1, 2, 3, 10 + i, 4, 5)]
    assert not looping(items)


def test_decoding_stops_early_at_a_loop_and_says_so() -> None:
    out = _push_all([9, 8] + [1, 2, 3] * 200, max_tokens=1000)
    assert out.finish == "length" and out.looped
    assert len(out.tokens) < 80  # stopped once the loop was clear, not at the budget
    spent = _push_all([(i * 7 + i // 5) % 23 for i in range(100)], max_tokens=50)
    assert spent.finish == "length" and not spent.looped and len(spent.tokens) == 50


class _Answer(BaseModel):
    text: str


def test_a_looping_structured_reply_is_not_retried_with_a_larger_budget(monkeypatch) -> None:
    from grounded_rag.local import chat as chat_module
    from grounded_rag.local.chat import StructuredOutputError

    model = chat_module.ChatLocal.model_construct(max_tokens=64, structured_retry_factor=2.0)
    calls: list[int] = []

    def invoke(self: Any, value: Any, config: Any = None, **kwargs: Any) -> AIMessage:
        calls.append(kwargs["max_tokens"])
        return AIMessage('{"text": "la la la la', response_metadata={
            "finish_reason": "length", "repetition": True})

    monkeypatch.setattr(chat_module.ChatLocal, "invoke", invoke)
    with pytest.raises(StructuredOutputError, match="repeated itself.*after 1 attempt\\)"):
        model.with_structured_output(_Answer).invoke("q")
    assert calls == [64]

    def invoke_cut(self: Any, value: Any, config: Any = None, **kwargs: Any) -> AIMessage:
        calls.append(kwargs["max_tokens"])
        if kwargs["max_tokens"] == 64:
            return AIMessage('{"text": "a long', response_metadata={"finish_reason": "length"})
        return AIMessage(json.dumps({"text": "a long answer"}),
                         response_metadata={"finish_reason": "stop"})

    calls.clear()
    monkeypatch.setattr(chat_module.ChatLocal, "invoke", invoke_cut)
    assert model.with_structured_output(_Answer).invoke("q").text == "a long answer"
    assert calls == [64, 128]  # a reply cut by the budget is retried with a larger one
