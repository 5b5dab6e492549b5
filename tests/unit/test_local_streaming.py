"""ChatLocal streams tokens as they are decoded: settled text only (whole characters, never
the start of a stop string), usage on the last chunk, early exit ends the decoding."""

from __future__ import annotations

import asyncio
import threading
import types
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, AIMessageChunk

from grounded_rag.local import chat
from grounded_rag.local.decoding import Completion, _Text


class _Pieces:
    """A fake llama whose token ``i`` is the byte string ``pieces[i]``."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    def detokenize(self, tokens: list[int], prev_tokens: Any = None) -> bytes:
        return b"".join(self.pieces[t] for t in tokens)


def _stream_text(pieces: list[bytes], stop: tuple[str, ...] = (), eog: int | None = None,
                 max_tokens: int = 100) -> tuple[_Text, list[str]]:
    seen: list[str] = []
    out = _Text(_Pieces(pieces), [], stop, max_tokens, lambda t: t == eog, seen.append)
    for t in range(len(pieces)):
        if out.push(t):
            break
    return out, seen


def test_pieces_add_up_to_the_text_and_never_split_a_character():
    ja = "日本語".encode()
    pieces = [b"Hi ", ja[:2], ja[2:4], ja[4:7], ja[7:], b"!"]
    out, seen = _stream_text(pieces, max_tokens=len(pieces))
    assert "".join(seen) == out.text.decode() == "Hi 日本語!"
    assert all(s for s in seen)
    assert seen[:2] == ["Hi ", "日"]  # the second character waits for its last byte


def test_a_stop_string_is_held_back_and_never_streamed():
    pieces = [b"one ", b"two <", b"|im", b"_end|> three"]
    out, seen = _stream_text(pieces, stop=("<|im_end|>",))
    assert out.finish == "stop" and out.text == b"one two "
    assert "".join(seen) == "one two "
    # a false start of the stop string is streamed once it is clear
    out, seen = _stream_text([b"a <", b"b", b"c"], stop=("<|im_end|>",), max_tokens=3)
    assert seen == ["a ", "<b", "c"] and "".join(seen) == out.text.decode()


def test_end_of_turn_flushes_what_was_held():
    out, seen = _stream_text([b"x <|im", b""], stop=("<|im_end|>",), eog=1)
    assert out.finish == "stop" and "".join(seen) == "x <|im" == out.text.decode()


def _fake_runtime(monkeypatch, pieces: list[str], *, started: threading.Event | None = None,
                  gate: threading.Event | None = None, wait: float = 5.0) -> list[str]:
    """ChatLocal over a fake runtime whose `complete` streams ``pieces``."""
    calls: list[str] = []
    rt = types.SimpleNamespace(lock=threading.RLock(), prefix_cache=False, model_name="fake-1b",
                               adapt_threads=lambda: 1)
    monkeypatch.setattr(chat.ChatLocal, "runtime", lambda self: rt)
    monkeypatch.setattr(chat, "render_chat", lambda runtime, messages: [1, 2, 3, 4])
    monkeypatch.setattr(chat, "turn_end", lambda runtime: "<end>")

    def complete(runtime, tokens, *, on_text=None, stop=(), **kwargs):
        calls.append("start")
        emitted = []
        for piece in pieces:
            if on_text is not None:
                on_text(piece)
            emitted.append(piece)
            if started is not None:
                started.set()
            if gate is not None:
                gate.wait(wait)
        calls.append("done")
        return Completion(text="".join(emitted), tokens=list(range(len(emitted))),
                          finish_reason="stop", prompt_tokens=len(tokens))

    monkeypatch.setattr(chat, "complete", complete)
    return calls


def test_stream_yields_each_piece_then_usage_on_the_last_chunk(monkeypatch):
    _fake_runtime(monkeypatch, ["Hel", "lo", " there"])
    chunks = list(chat.ChatLocal().stream("hi"))
    assert [c.content for c in chunks] == ["Hel", "lo", " there", ""]
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert all(c.usage_metadata is None for c in chunks[:-1])
    last = chunks[-1]
    assert last.chunk_position == "last"
    assert last.usage_metadata == {"input_tokens": 4, "output_tokens": 3, "total_tokens": 7}
    assert last.response_metadata["model_name"] == "fake-1b"
    assert last.response_metadata["finish_reason"] == "stop"
    full = chunks[0]
    for c in chunks[1:]:
        full = full + c
    assert full.content == "Hello there" and full.usage_metadata["total_tokens"] == 7


async def test_astream_matches_stream(monkeypatch):
    _fake_runtime(monkeypatch, ["a", "b", "c"])
    chunks = [c async for c in chat.ChatLocal().astream("hi")]
    assert [c.content for c in chunks] == ["a", "b", "c", ""]
    assert chunks[-1].usage_metadata["output_tokens"] == 3


async def test_astream_does_not_block_the_event_loop(monkeypatch):
    gate = threading.Event()
    started = threading.Event()
    _fake_runtime(monkeypatch, ["a", "b"], started=started, gate=gate)
    ticks = 0

    async def tick():
        nonlocal ticks
        while not gate.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(tick())
    stream = chat.ChatLocal().astream("hi")
    first = await stream.__anext__()  # the model waits in the middle of decoding
    await asyncio.sleep(0.05)
    assert first.content == "a" and ticks > 1
    gate.set()
    rest = [c.content async for c in stream]
    await ticker
    assert rest == ["b", ""]


def test_invoke_with_streaming_sends_tokens_to_callbacks(monkeypatch):
    _fake_runtime(monkeypatch, ["x", "y"])

    class Tokens(BaseCallbackHandler):
        def __init__(self) -> None:
            self.tokens: list[str] = []

        def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
            self.tokens.append(token)

    handler = Tokens()
    reply = chat.ChatLocal(streaming=True).invoke("hi", config={"callbacks": [handler]})
    assert isinstance(reply, AIMessage) and reply.content == "xy"
    assert handler.tokens[:2] == ["x", "y"]
    assert reply.usage_metadata["output_tokens"] == 2
    # without streaming the reply is the same, in one piece
    handler.tokens.clear()
    plain = chat.ChatLocal().invoke("hi", config={"callbacks": [handler]})
    assert plain.content == "xy" and handler.tokens == []


def test_stopping_early_ends_the_decoding(monkeypatch):
    # each token takes 20 ms to decode: 1 s for all of them
    calls = _fake_runtime(monkeypatch, [str(i) for i in range(50)], gate=threading.Event(),
                          wait=0.02)
    for chunk in chat.ChatLocal().stream("hi"):
        assert chunk.content == "0"
        break
    assert calls == ["start"]  # the worker stopped at the next token, never finished


def test_an_error_in_decoding_reaches_the_consumer(monkeypatch):
    _fake_runtime(monkeypatch, [])

    def broken(*args, **kwargs):
        raise ValueError("Requested tokens (9000) exceed context window of 8192")

    monkeypatch.setattr(chat, "complete", broken)
    with pytest.raises(ValueError, match="exceed context window"):
        list(chat.ChatLocal().stream("hi"))


def test_stop_strings_of_the_model_and_the_call_both_apply(monkeypatch):
    seen: dict[str, Any] = {}
    _fake_runtime(monkeypatch, ["ok"])
    original = chat.complete

    def spy(*args, **kwargs):
        seen["stop"] = kwargs["stop"]
        return original(*args, **kwargs)

    monkeypatch.setattr(chat, "complete", spy)
    chat.ChatLocal(stop=["END"]).invoke("hi", stop=["STOP"])
    assert seen["stop"] == ["END", "STOP", "<end>"]


def test_a_call_may_name_another_model_file(monkeypatch):
    _fake_runtime(monkeypatch, ["ok"])
    used: list[Any] = []
    original = chat.ChatLocal._complete

    def record(self, *args, **kwargs):
        used.append(self.model)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(chat.ChatLocal, "_complete", record)
    chat.ChatLocal().invoke("hi", model="/models/other.gguf")
    assert used == [None, "/models/other.gguf"]
    assert chat.ChatLocal()._get_ls_params(model="/models/other.gguf")["ls_model_name"] == "other"
