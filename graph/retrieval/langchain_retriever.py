"""The store as a LangChain retriever: ``Document``s for any chain (LCEL, agents, tools).

The other direction (a LangChain retriever or vector store feeding the graph) is
:class:`grounded_rag.retrieval.adapters.LangChainRetriever`.

Example::

    from grounded_rag.retrieval import as_retriever

    retriever = as_retriever(".grounded-rag", k=4, path_prefix="policies/", language="en")
    docs = retriever.invoke("Can I fly business class?")
    docs[0].metadata["source_id"], docs[0].metadata["relevance"]
"""

from __future__ import annotations

import os
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict, Field, field_validator, model_validator

from grounded_rag.retrieval.filters import chunk_language, split_search_kwargs
from grounded_rag.types import Evidence

DEFAULT_K = 5
"""Results per query by default (as ``grounded-rag retrieve``)."""


def evidence_to_document(ev: Evidence) -> Document:
    """A retrieved chunk as a LangChain ``Document`` (id = the chunk's section-granular id).

    ``metadata``: ``source_id``, ``doc_id``, ``title``, ``section``, ``url``, ``start``,
    ``end``, ``language`` (``ja`` / ``en``), ``relevance`` (calibrated, in [0, 1]: the
    graph's abstain threshold compares with it) and ``score`` (the raw fused score, only
    comparable within one query).
    """
    meta: dict[str, Any] = {
        "source_id": ev["source_id"],
        "doc_id": ev["doc_id"],
        "title": ev["title"],
        "section": ev.get("section", ""),
        "url": ev["url"],
    }
    if "start" in ev:
        meta["start"] = ev["start"]
    if "end" in ev:
        meta["end"] = ev["end"]
    meta["language"] = chunk_language(ev["text"])
    meta["relevance"] = ev["relevance"]
    meta["score"] = ev["score"]
    return Document(page_content=ev["text"], metadata=meta, id=ev["source_id"])


class GroundedRetriever(BaseRetriever):
    """A grounded-rag store (embedded directory or networked Postgres + Chroma) as a retriever.

    The same ranking as ``grounded-rag retrieve``: hybrid BM25 + vector search fused by RRF,
    each ``Document`` carrying the calibrated ``relevance`` of its chunk. Filters restrict
    the search itself (``k`` results whenever ``k`` chunks match), per retriever in
    ``search_kwargs`` or per call as keyword arguments of ``invoke`` (they replace the
    retriever's own of the same name; ``None`` drops it).

    Build one with :func:`as_retriever`, ``HybridRetriever.as_retriever(...)`` or directly::

        GroundedRetriever(store=".grounded-rag", k=3, search_kwargs={"doc_id": "handbook"})
    """

    store: str | None = None
    """Store directory or ``postgresql://...?schema=NAME`` URL (default
    ``$GROUNDED_RAG_STORE``, else ``./.grounded-rag``). Ignored when ``retriever`` is given."""
    chroma_url: str | None = None
    """Chroma server of a networked store's vectors (default ``$GROUNDED_RAG_CHROMA_URL``)."""
    embedder: str | None = None
    """Embedder spec (``e5``, ``minilm``, ``openai:MODEL[@URL]``); default: the store's own."""
    mode: Literal["hybrid", "bm25", "vector"] = "hybrid"
    """Which rankings to use (``bm25`` loads no embedding model)."""
    k: int = Field(default=DEFAULT_K, gt=0)
    """Documents per query (``search_kwargs["k"]`` or ``invoke(..., k=N)`` override it)."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """``k`` and filters: ``doc_id``, ``path_prefix``, ``language``, ``filter`` (see
    :func:`grounded_rag.retrieval.filters.make_filter`)."""
    retriever: Any = Field(default=None, exclude=True)
    """The ``HybridRetriever`` searched: the one given, else ``store`` opened (copies of
    this retriever, e.g. by ``configurable_fields``, share it instead of opening again)."""

    # A misspelt field (``filter=`` instead of ``search_kwargs={"filter": ...}``) is an error.
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    @field_validator("store", mode="before")
    @classmethod
    def _path_as_text(cls, value: Any) -> Any:
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    @model_validator(mode="after")
    def _check_and_open(self) -> GroundedRetriever:
        split_search_kwargs(self.search_kwargs)  # a bad filter fails here, not at query time
        if self.retriever is None:
            from grounded_rag.retrieval._open import open_retriever

            # Opened now, so a missing or mismatched store is reported where it was named.
            self.retriever = open_retriever(
                self.store, chroma_url=self.chroma_url, embedder=self.embedder, mode=self.mode
            )
        return self

    def _search(self, query: str, kwargs: dict[str, Any]) -> list[Document]:
        merged = {**self.search_kwargs, **kwargs}
        k, chunk_filter = split_search_kwargs(merged)
        k = k if k is not None else self.k
        if chunk_filter is None:
            hits = self.retriever.retrieve(query, k)  # any Retriever works unfiltered
        else:
            hits = self.retriever.retrieve(query, k, chunk_filter=chunk_filter)
        return [evidence_to_document(ev) for ev in hits[:k]]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return self._search(query, kwargs)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        # The search is CPU-bound (BM25, one embedding, SQLite reads): run it off the loop.
        return await run_in_executor(None, self._search, query, kwargs)

    def _get_ls_params(self, **kwargs: Any) -> LangSmithRetrieverParams:
        params = super()._get_ls_params(**kwargs)
        params["ls_retriever_name"] = "grounded_rag"
        return params


def as_retriever(
    store_dir: str | os.PathLike[str] | None = None,
    *,
    k: int = DEFAULT_K,
    chroma_url: str | None = None,
    embedder: str | None = None,
    mode: Literal["hybrid", "bm25", "vector"] = "hybrid",
    **search_kwargs: Any,
) -> GroundedRetriever:
    """Open the store at ``store_dir`` as a LangChain retriever.

    Args:
        store_dir: Store directory or ``postgresql://`` URL (as ``--store``).
        k: Documents per query.
        chroma_url: Chroma server of a networked store (as ``--chroma-url``).
        embedder: Embedder spec (as ``--embedder``); default: the store's own.
        mode: ``hybrid``, ``bm25`` or ``vector`` (as ``--mode``).
        **search_kwargs: Filters: ``doc_id``, ``path_prefix``, ``language``, ``filter``.

    Raises:
        StoreNotFoundError, EmptyStoreError, StoreMismatchError: as ``open_retriever``.
        ValueError: an unknown search argument or a malformed filter.
    """
    return GroundedRetriever(
        store=None if store_dir is None else os.fspath(store_dir),
        chroma_url=chroma_url,
        embedder=embedder,
        mode=mode,
        k=k,
        search_kwargs=search_kwargs,
    )


__all__ = ["GroundedRetriever", "as_retriever", "evidence_to_document"]
