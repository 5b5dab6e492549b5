"""ChatLocal: a LangChain chat model over the shared llama.cpp runtime (provider ``local``)."""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LangSmithParams, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from grounded_rag.local import LOCAL_LLM_TYPE
from grounded_rag.local.decoding import Choice, Completion, complete, default_draft, grammar_for
from grounded_rag.local.prompt_state import StateThreshold, prepare_tap
from grounded_rag.local.runtime import DEFAULT_SEED, LocalRuntime, get_runtime, render_chat


class StructuredOutputError(ValueError):
    """The local model did not produce valid JSON for the schema, even after a retry."""

    def __init__(self, message: str, *, raw: str = "", finish_reason: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw
        """The last raw model output."""
        self.finish_reason = finish_reason
        """The last finish reason (``length`` means the budget ran out)."""


def _score_answerable() -> dict[str, float | StateThreshold | None]:
    return {"answerable": None}


class ChatLocal(BaseChatModel):
    """Offline chat model: Qwen2.5-Coder-1.5B-Instruct (or any GGUF) through llama.cpp.

    Greedy, seeded decoding; the model's own chat template; one model instance per file per
    process, shared and lock-guarded. ``with_structured_output`` constrains decoding with a
    grammar built from the JSON schema.

    Example:
        >>> llm = ChatLocal()  # doctest: +SKIP
        >>> llm.invoke("Say hi").content  # doctest: +SKIP
    """

    model: str | None = Field(default=None)
    """GGUF path or ``local:/path.gguf``; None / ``"local"`` for the bundled default."""
    model_path: str | None = Field(default=None)
    """Alias of ``model`` (a GGUF path); wins when both are set."""
    max_tokens: int = 512
    """Generation budget per call."""
    stop: list[str] | None = None
    """Stop strings for every call (a call's own ``stop`` adds to them)."""
    streaming: bool = False
    """``invoke`` streams: callbacks get each token as it is decoded (``stream`` always
    does)."""
    structured_retry_factor: float = 2.0
    """On a truncated or invalid structured answer, retry once with this times the budget."""
    n_ctx: int | None = None
    """Context window (default 8192)."""
    n_threads: int | None = None
    """Threads (default ``$GROUNDED_RAG_THREADS``, else chosen from the free cores by
    ``grounded_rag.local.runtime.threads_for``)."""
    seed: int = DEFAULT_SEED
    """Seed (decoding is greedy; the seed pins any remaining sampler state)."""
    draft_tokens: int = Field(default_factory=default_draft)
    """Longest prompt-lookup draft checked per forward pass: 0 decodes one token per pass;
    -1 (the default, ``$GROUNDED_RAG_DRAFT_TOKENS=auto``) drafts where this machine's
    measured pass costs say it pays (``grounded_rag.local.draft_policy``). Greedy output is
    the same either way except at near-ties that batching rounds the other way
    (``grounded_rag.local.decoding``)."""
    decide: dict[str, float | StateThreshold | None] = Field(default_factory=_score_answerable)
    """Boolean fields of a structured output read as scores: the log-odds of ``true`` over
    ``false`` where the output states the field is recorded in the reply's
    ``response_metadata["choices"]``; a number decides the field at that log-odds (lower:
    ``true`` more easily), ``None`` keeps the greedy choice. A :class:`StateThreshold` is
    decided from the prompt's own hidden state (``grounded_rag.local.prompt_state``; its
    head score is recorded as ``choices["prompt_state"]``); without a head for the model it
    keeps the greedy choice. Fields the schema lacks are ignored."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @property
    def _llm_type(self) -> str:
        return LOCAL_LLM_TYPE

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model_path or self.model or "local", "max_tokens": self.max_tokens}

    @property
    def model_name(self) -> str:
        """The model's name (the GGUF file's stem; the bundled one's published name)."""
        return _model_name(self.model_path or self.model)

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        """Standard tracing params: provider ``local``, the model's name, greedy decoding."""
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "local"  # the provider prefix of `local:/path.gguf`
        model = kwargs.get("model")  # a call's own model (see _complete)
        params["ls_model_name"] = self.model_name if model is None else _model_name(model)
        params["ls_temperature"] = 0.0  # greedy: the same output as temperature 0
        params["ls_max_tokens"] = int(kwargs.get("max_tokens", self.max_tokens))
        stops = [*(self.stop or []), *(stop or [])]
        if stops:
            params["ls_stop"] = stops
        else:
            params.pop("ls_stop", None)
        return params

    def runtime(self) -> LocalRuntime:
        """Return (loading on first use) the shared runtime for this model file."""
        spec = self.model_path or self.model
        return get_runtime(spec, n_ctx=self.n_ctx, n_threads=self.n_threads)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        rt, result, read = self._complete(messages, stop, kwargs)
        message = AIMessage(content=result.text, usage_metadata=_usage(result),
                            response_metadata=_response_metadata(rt, result, read))
        return ChatResult(
            generations=[
                ChatGeneration(message=message,
                               generation_info={"finish_reason": result.finish_reason})
            ],
            llm_output={"model_name": rt.model_name, "token_usage": _token_usage(result)},
        )

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """Yield the reply as it is decoded; the last chunk carries usage and metadata.

        Decoding runs on a worker thread (it holds the model's lock, never waiting on the
        consumer); a consumer that stops early ends it at the next token.
        """
        pieces: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        stop_event = threading.Event()
        worker = self._start_worker(messages, stop, kwargs, pieces.put, stop_event)
        try:
            while True:
                kind, value = pieces.get()
                if kind == "error":
                    raise value
                yield value
                if kind == "last":
                    return
        finally:
            stop_event.set()
            worker.join()

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """Async :meth:`_stream`: the event loop is never blocked while the model decodes."""
        loop = asyncio.get_running_loop()
        pieces: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        stop_event = threading.Event()

        def put(item: tuple[str, Any]) -> None:
            loop.call_soon_threadsafe(pieces.put_nowait, item)

        worker = self._start_worker(messages, stop, kwargs, put, stop_event)
        try:
            while True:
                kind, value = await pieces.get()
                if kind == "error":
                    raise value
                yield value
                if kind == "last":
                    return
        finally:
            stop_event.set()
            await asyncio.to_thread(worker.join)

    def _start_worker(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        kwargs: dict[str, Any],
        put: Callable[[tuple[str, Any]], None],
        stop_event: threading.Event,
    ) -> threading.Thread:
        """Decode on a thread, passing ``("chunk" | "last" | "error", value)`` to ``put``."""

        def on_text(piece: str) -> None:
            if stop_event.is_set():
                raise _StreamClosed
            if piece:
                put(("chunk", ChatGenerationChunk(message=AIMessageChunk(content=piece))))

        def work() -> None:
            try:
                rt, result, read = self._complete(messages, stop, kwargs, on_text=on_text)
            except _StreamClosed:
                return
            except BaseException as exc:  # handed to the consumer, raised there
                put(("error", exc))
                return
            last = AIMessageChunk(
                content="",
                usage_metadata=_usage(result),
                response_metadata=_response_metadata(rt, result, read),
                chunk_position="last",
            )
            put(("last", ChatGenerationChunk(
                message=last, generation_info={"finish_reason": result.finish_reason})))

        context = contextvars.copy_context()
        worker = threading.Thread(target=context.run, args=(work,), name="ChatLocal.stream",
                                  daemon=True)
        worker.start()
        return worker

    def _complete(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        kwargs: dict[str, Any],
        *,
        on_text: Callable[[str], None] | None = None,
    ) -> tuple[LocalRuntime, Completion, dict[str, float]]:
        """One greedy completion of the chat: the runtime, the result, prompt-state reads.

        A call's ``model`` (a GGUF path or ``local:`` spec) runs that model instead.
        """
        override = kwargs.get("model")
        if override is not None:
            rest = {k: v for k, v in kwargs.items() if k != "model"}
            if str(override) == str(self.model_path or self.model):
                return self._complete(messages, stop, rest, on_text=on_text)
            other = self.model_copy(update={"model": str(override), "model_path": None})
            return other._complete(messages, stop, rest, on_text=on_text)
        rt = self.runtime()
        chat = [_to_dict(m) for m in messages]
        grammar = grammar_for(kwargs.get("response_format"))
        choices = _choices_for(kwargs.get("response_format"), self.decide)
        with rt.lock:
            rt.adapt_threads()
            tokens = render_chat(rt, chat)
            if any(isinstance(c.threshold, StateThreshold) for c in choices):
                # Installing the tap replaces the context (its KV cache goes): do it before
                # the system prompt is restored, not after.
                prepare_tap(rt, self.model_path or self.model)
            if rt.prefix_cache:
                # The system prompt is fixed: its KV cache survives the scorer's calls.
                rt.keep_prefix(tokens, rt.system_prefix_length(chat, tokens))
            choices, read = self._resolve_state(rt, tokens, choices)
            result = complete(
                rt, tokens,
                max_tokens=int(kwargs.get("max_tokens", self.max_tokens)),
                grammar=grammar,
                stop=[*(self.stop or []), *(stop or []), turn_end(rt)],
                draft=self.draft_tokens,
                choices=choices,
                on_text=on_text,
            )
        return rt, result, read

    def _resolve_state(self, rt: LocalRuntime, tokens: list[int], choices: list[Choice]
                       ) -> tuple[list[Choice], dict[str, float]]:
        """Decide the thresholds that depend on the prompt state (hold ``rt.lock``).

        The prompt is evaluated here with the tap armed (the completion then re-uses it);
        returns the choices with plain thresholds and the head score read, if any.
        """
        from grounded_rag.local.prompt_state import resolve

        read: dict[str, float] = {}
        out = []
        for choice in choices:
            if isinstance(choice.threshold, StateThreshold):
                score, threshold = resolve(rt, tokens, choice.threshold,
                                           self.model_path or self.model)
                if score is not None:
                    read["prompt_state"] = score
                choice = replace(choice, threshold=threshold)
            out.append(choice)
        return out, read

    def with_structured_output(  # type: ignore[override]
        self,
        schema: type[BaseModel] | dict[str, Any] | type,
        *,
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, Any]:
        """Return a runnable producing ``schema`` instances via grammar-constrained decoding.

        Args:
            schema: A Pydantic model class, v2 or v1 (output is an instance), or a JSON
                schema dict or ``TypedDict`` class (output is a dict, checked for the
                schema's required keys).
            include_raw: Return ``{"raw", "parsed", "parsing_error"}`` instead of raising.
            **kwargs: ``max_tokens`` overrides the first-attempt budget. ``method``
                (``json_schema``, ``json_mode``, ``function_calling``) and ``strict`` are
                accepted for compatibility: every method decodes under the schema's grammar,
                so the output always follows the schema.

        Raises:
            StructuredOutputError: when the output is cut off (``finish_reason ==
                "length"``) or invalid twice (only when ``include_raw`` is False).
        """
        json_schema, validate = _schema_and_validator(schema)
        budget = int(kwargs.get("max_tokens", self.max_tokens))
        name = json_schema.get("title", "output")

        def run(value: LanguageModelInput, config: RunnableConfig | None = None) -> Any:
            error: StructuredOutputError | None = None
            raw: BaseMessage | None = None
            budgets = (budget, int(budget * self.structured_retry_factor))
            tried = 0
            for tokens in budgets:
                if raw is not None and raw.response_metadata.get("repetition"):
                    break  # greedy decoding would write the same loop into a larger budget
                tried += 1
                raw = self.invoke(
                    value,
                    config,
                    response_format={"type": "json_object", "schema": json_schema},
                    max_tokens=tokens,
                    ls_structured_output_format={
                        "kwargs": {"method": kwargs.get("method", "json_schema")},
                        "schema": schema,
                    },
                )
                try:
                    parsed = _parse(raw, validate, name, tokens)
                except StructuredOutputError as exc:
                    error = exc
                    continue
                return (
                    {"raw": raw, "parsed": parsed, "parsing_error": None} if include_raw else parsed
                )
            assert error is not None
            error.args = (f"{error.args[0]} (after {tried} attempt{'s' * (tried > 1)})",)
            if include_raw:
                return {"raw": raw, "parsed": None, "parsing_error": error}
            raise error

        return RunnableLambda(run, name=f"ChatLocal.structured[{name}]")


def _model_name(spec: str | os.PathLike[str] | None) -> str:
    """The name a model spec's runtime reports (``LocalRuntime.model_name``), unloaded."""
    from grounded_rag.local.assets import DEFAULT_MODEL_NAME, parse_model_spec

    custom = parse_model_spec(spec)
    return DEFAULT_MODEL_NAME if custom is None else custom.stem


class _StreamClosed(Exception):
    """The consumer of a stream stopped reading: the decoding ends at the next token."""


def _token_usage(result: Completion) -> dict[str, int]:
    return {"prompt_tokens": result.prompt_tokens, "completion_tokens": len(result.tokens),
            "total_tokens": result.prompt_tokens + len(result.tokens)}


def _usage(result: Completion) -> UsageMetadata:
    usage = _token_usage(result)
    return UsageMetadata(input_tokens=usage["prompt_tokens"],
                         output_tokens=usage["completion_tokens"],
                         total_tokens=usage["total_tokens"])


def _response_metadata(rt: LocalRuntime, result: Completion, read: dict[str, float]
                       ) -> dict[str, Any]:
    return {
        "finish_reason": result.finish_reason,
        **({"repetition": True} if result.looped else {}),
        "model_name": rt.model_name,
        "model_provider": "local",
        "decoding": {"passes": result.passes, "drafted": result.drafted,
                     "accepted": result.accepted},
        **({"choices": {**result.choices, **read}} if result.choices or read else {}),
    }


def _choices_for(response_format: dict[str, Any] | None,
                 decide: dict[str, float | StateThreshold | None]) -> list[Choice]:
    """The :class:`Choice` points of ``decide`` that the structured output's schema has.

    Only top-level boolean fields are read, in the schema's order (the order the grammar
    writes them). When the next field is an array (``answerable`` then ``statements``), a
    value decided ``true`` must give that array an item.
    """
    if not response_format or not decide:
        return []
    props = (response_format.get("schema") or {}).get("properties") or {}
    names = list(props)
    out = []
    for i, name in enumerate(names):
        spec = props[name]
        if name not in decide or not isinstance(spec, dict) or spec.get("type") != "boolean":
            continue
        after = names[i + 1] if i + 1 < len(names) else None
        nonempty = (json.dumps(after) + ":[" if after is not None
                    and (props[after] or {}).get("type") == "array" else None)
        out.append(Choice(key=name, marker=json.dumps(name) + ":", threshold=decide[name],
                          nonempty=nonempty))
    return out


def _parse(raw: BaseMessage, validate: Any, name: str, budget: int) -> Any:
    text = raw.content if isinstance(raw.content, str) else json.dumps(raw.content)
    finish = raw.response_metadata.get("finish_reason")
    if finish == "length":
        cause = ("repeated itself" if raw.response_metadata.get("repetition")
                 else f"ran out of its {budget}-token budget")
        raise StructuredOutputError(
            f"The local model {cause} while writing {name}",
            raw=text,
            finish_reason=finish,
        )
    try:
        return validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError, ValueError) as exc:
        raise StructuredOutputError(
            f"The local model's {name} output is not valid: {exc}", raw=text, finish_reason=finish
        ) from exc


def _schema_and_validator(schema: Any) -> tuple[dict[str, Any], Any]:
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema(), schema.model_validate
    from pydantic import v1 as pydantic_v1

    if isinstance(schema, type) and issubclass(schema, pydantic_v1.BaseModel):
        return schema.schema(), schema.parse_obj
    if not isinstance(schema, dict) and _is_typeddict(schema):
        from langchain_core.utils.function_calling import convert_to_json_schema

        schema = convert_to_json_schema(schema)
    if isinstance(schema, dict):
        required = list(schema.get("required", []))

        def validate(obj: Any) -> dict[str, Any]:
            if not isinstance(obj, dict):
                raise ValueError("expected a JSON object")
            missing = [k for k in required if k not in obj]
            if missing:
                raise ValueError(f"missing required keys: {missing}")
            return obj

        return schema, validate
    raise TypeError("schema must be a Pydantic model class, a TypedDict or a JSON schema dict")


def _is_typeddict(schema: Any) -> bool:
    from typing_extensions import is_typeddict

    return bool(is_typeddict(schema))


def _to_dict(message: BaseMessage) -> dict[str, str]:
    content = message.content
    if not isinstance(content, str):
        content = "".join(
            part if isinstance(part, str) else str(part.get("text", "")) for part in content
        )
    if isinstance(message, SystemMessage):
        role = "system"
    elif isinstance(message, HumanMessage):
        role = "user"
    elif isinstance(message, AIMessage):
        role = "assistant"
    elif isinstance(message, ToolMessage):
        role = "tool"
    else:
        role = "user"
    return {"role": role, "content": content}


def turn_end(runtime: LocalRuntime) -> str:
    """The stop string llama.cpp's chat handler adds: the end-of-turn token's text."""
    llama = runtime.llama
    if not llama.metadata.get("tokenizer.chat_template"):
        return "<|im_end|>"  # render_chat's ChatML fallback
    eos = llama.token_eos()
    return llama._model.token_get_text(eos) if eos != -1 else ""


def local_chat_model(spec: str | os.PathLike[str] | None = None, **kwargs: Any) -> ChatLocal:
    """Build a ChatLocal for a provider spec (``local`` or ``local:/path/model.gguf``)."""
    text = None if spec is None else os.fspath(spec)
    return ChatLocal(model=text, **kwargs)


__all__: Sequence[str] = ["ChatLocal", "StructuredOutputError", "local_chat_model"]
