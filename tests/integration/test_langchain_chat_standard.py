"""LangChain's standard integration suite for ChatLocal on the real offline model, streaming.

Slow: every test runs the bundled Qwen2.5-Coder-1.5B-Instruct through llama.cpp.
"""

import pytest
from langchain_tests.integration_tests import ChatModelIntegrationTests

from grounded_rag.local.chat import ChatLocal

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def _model():
    pytest.importorskip("llama_cpp", reason="needs the 'local' extra")
    from grounded_rag.local.assets import ModelAssetError, ensure_model

    try:
        ensure_model(progress=False)
    except ModelAssetError as exc:
        pytest.skip(str(exc))


class TestChatLocalStandard(ChatModelIntegrationTests):
    @property
    def chat_model_class(self) -> type[ChatLocal]:
        return ChatLocal

    @property
    def chat_model_params(self) -> dict:
        # invoke streams too: every reply comes through _stream, token by token
        return {"streaming": True}

    @property
    def has_tool_calling(self) -> bool:
        # No bind_tools: the bundled 1.5B model was never fitted or checked on tool calls,
        # and the product needs none (structured output is grammar-constrained instead).
        return False

    @property
    def supports_model_override(self) -> bool:
        # A call's `model` (a GGUF path) is honoured, but only one model ships offline, so
        # there is no second one to switch to.
        return False

    @property
    def supports_json_mode(self) -> bool:
        # method="json_mode" decodes under the schema's grammar like every method.
        return True


def test_tokens_arrive_while_the_model_decodes():
    import time

    llm = ChatLocal(max_tokens=48, draft_tokens=0)
    prompt = "Count from 1 to 20, separated by commas."
    started = time.perf_counter()
    arrivals, chunks = [], []
    for chunk in llm.stream(prompt):
        arrivals.append(time.perf_counter() - started)
        chunks.append(chunk)
    text = "".join(str(c.content) for c in chunks)
    assert len([c for c in chunks if c.content]) > 5  # token by token, not one block
    assert arrivals[0] < 0.6 * arrivals[-1]
    last = chunks[-1]
    assert last.chunk_position == "last" and last.usage_metadata["output_tokens"] > 5
    assert "1, 2, 3" in text
    # the same greedy reply as without streaming
    assert llm.invoke(prompt).content == text
