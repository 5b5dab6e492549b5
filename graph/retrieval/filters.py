"""Metadata filters on retrieval: search only the chunks whose metadata matches.

A filter restricts the candidates *before* ranking: BM25 and the vector side each keep
searching deeper until they have their full share of matching chunks (or none are left),
so a filtered query returns ``k`` chunks whenever the store holds ``k`` that match, ranked
as if the store held only those (term statistics still come from the whole store).

What a chunk can be filtered on is what the store records for it (:func:`chunk_metadata`):
``source_id``, ``doc_id``, ``title``, ``section``, ``url``, ``start``, ``end`` and
``language`` (``ja`` for a Japanese chunk, else ``en``: the retriever's own split).
Markdown front matter is read at ingest but not stored, so it cannot be filtered on.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grounded_rag.retrieval.chunking import Chunk
from grounded_rag.retrieval.text_analysis import is_japanese_text

FILTERABLE = ("source_id", "doc_id", "title", "section", "url", "start", "end", "language")
"""Metadata keys a filter may name: what the store records for every chunk."""
LANGUAGES = ("ja", "en")
"""Values of the ``language`` key (``en`` stands for every chunk that is not Japanese)."""
FILTER_ARGS = ("doc_id", "path_prefix", "language", "filter")
"""Keyword arguments :func:`make_filter` understands (besides ``k`` in ``search_kwargs``)."""
OPERATORS = ("$eq", "$ne", "$in", "$nin", "$prefix")
"""Operators of a ``filter`` condition ``{"key": {"$op": value}}``."""
_START_DEPTH = 4
"""A filtered side first searches this many times deeper than the results it needs."""


def chunk_language(text: str) -> str:
    """``ja`` for a Japanese chunk, else ``en`` (the split the retriever ranks by)."""
    return "ja" if is_japanese_text(text) else "en"


def chunk_metadata(chunk: Chunk) -> dict[str, Any]:
    """What the store records for a chunk, as filterable metadata (see :data:`FILTERABLE`)."""
    return {
        "source_id": chunk.id,
        "doc_id": chunk.doc_id,
        "title": chunk.title,
        "section": chunk.section,
        "url": chunk.url,
        "start": chunk.start,
        "end": chunk.end,
        "language": chunk_language(chunk.text),
    }


def _values(value: Any, what: str) -> tuple[Any, ...]:
    if isinstance(value, str | int | float):
        return (value,)
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        out = tuple(value)
        if out and all(isinstance(v, str | int | float) for v in out):
            return out
    raise ValueError(f"{what} takes a value or a non-empty list of values, got {value!r}")


@dataclass(frozen=True)
class Condition:
    """One test of one metadata key."""

    key: str
    op: str
    values: tuple[Any, ...]

    def test(self, meta: Mapping[str, Any]) -> bool:
        """Whether ``meta`` passes (a missing key passes no test)."""
        if self.key not in meta:
            return False
        have = meta[self.key]
        if self.op == "$prefix":
            return any(str(have).startswith(str(v)) for v in self.values)
        found = any(have == v for v in self.values)
        return found if self.op in ("$eq", "$in") else not found


def _conditions(key: str, spec: Any) -> list[Condition]:
    if key not in FILTERABLE:
        raise ValueError(
            f"cannot filter on {key!r}: the store records {', '.join(FILTERABLE)} for each "
            "chunk (front matter and other document metadata are not stored)"
        )
    if isinstance(spec, Mapping):
        if not spec:
            raise ValueError(f"filter on {key!r} is an empty condition")
        out = []
        for op, value in spec.items():
            if op not in OPERATORS:
                raise ValueError(f"unknown operator {op!r} for {key!r}; use {', '.join(OPERATORS)}")
            out.append(Condition(key, op, _typed(key, _values(value, f"{key!r} {op}"))))
        return out
    return [Condition(key, "$in", _typed(key, _values(spec, f"filter on {key!r}")))]


def _typed(key: str, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """Offsets compare as integers (``"120"`` from a command line means 120)."""
    if key not in ("start", "end"):
        return values
    try:
        return tuple(int(v) for v in values)
    except ValueError:
        raise ValueError(f"{key!r} is a character offset: give integers, got {values!r}") from None


@dataclass(frozen=True)
class ChunkFilter:
    """All of its conditions must hold for a chunk to be searched."""

    conditions: tuple[Condition, ...]
    path_prefixes: tuple[str, ...] = ()
    """Kept when ``doc_id`` or ``url`` starts with one of them."""

    def matches(self, meta: Mapping[str, Any]) -> bool:
        """Whether a chunk with metadata ``meta`` passes."""
        if self.path_prefixes and not any(
            str(meta.get(field, "")).startswith(p)
            for p in self.path_prefixes
            for field in ("doc_id", "url")
        ):
            return False
        return all(c.test(meta) for c in self.conditions)

    def matches_chunk(self, chunk: Chunk) -> bool:
        """Whether ``chunk`` passes."""
        return self.matches(chunk_metadata(chunk))


def make_filter(
    *,
    doc_id: str | Sequence[str] | None = None,
    path_prefix: str | Sequence[str] | None = None,
    language: str | Sequence[str] | None = None,
    filter: Mapping[str, Any] | None = None,
) -> ChunkFilter | None:
    """Build a filter; None when nothing is filtered. Raises ``ValueError`` on a bad spec.

    Args:
        doc_id: Keep these documents only (one id or a list).
        path_prefix: Keep documents whose id (the file's path relative to the ingested
            directory, without extension) or url starts with this (or one of these), e.g.
            ``"policies/"``.
        language: ``"ja"`` or ``"en"`` (or both): keep chunks in that language.
        filter: ``{key: value}`` (equal), ``{key: [v1, v2]}`` (one of them) or
            ``{key: {"$eq" | "$ne" | "$in" | "$nin" | "$prefix": value}}`` for any key of
            :data:`FILTERABLE`; all conditions must hold.
    """
    conditions: list[Condition] = []
    if doc_id is not None:
        conditions.append(Condition("doc_id", "$in", _values(doc_id, "doc_id")))
    if language is not None:
        langs = _values(language, "language")
        bad = [v for v in langs if v not in LANGUAGES]
        if bad:
            raise ValueError(f"language must be 'ja' or 'en', got {bad[0]!r}")
        conditions.append(Condition("language", "$in", langs))
    if filter is not None:
        if not isinstance(filter, Mapping):
            raise ValueError(f"filter must be a mapping of metadata key to value, got {filter!r}")
        for key, spec in filter.items():
            conditions += _conditions(str(key), spec)
    prefixes: tuple[str, ...] = ()
    if path_prefix is not None:
        prefixes = tuple(
            str(p).replace("\\", "/").removeprefix("./")
            for p in _values(path_prefix, "path_prefix")
        )
    if not conditions and not prefixes:
        return None
    return ChunkFilter(tuple(conditions), prefixes)


def split_search_kwargs(kwargs: Mapping[str, Any]) -> tuple[int | None, ChunkFilter | None]:
    """``(k, filter)`` from LangChain-style ``search_kwargs``; unknown keys are an error."""
    unknown = sorted(set(kwargs) - {"k", *FILTER_ARGS})
    if unknown:
        raise ValueError(
            f"unknown search argument(s) {', '.join(map(repr, unknown))}; use k, "
            + ", ".join(FILTER_ARGS)
        )
    k = kwargs.get("k")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return k, make_filter(**{name: kwargs[name] for name in FILTER_ARGS if name in kwargs})


class _FilteredIndex:
    """A BM25 index whose search returns matching chunks only (statistics unchanged)."""

    def __init__(self, index: Any, view: FilteredBackend) -> None:
        self._index = index
        self._view = view

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def search(self, tokens: list[str], n: int) -> list[tuple[str, float]]:
        """Top ``n`` matching (key, score) pairs with a positive score, best first."""
        return self._view.deepen(lambda depth: self._index.search(tokens, depth), n)


class FilteredBackend:
    """A search backend that only sees the chunks a :class:`ChunkFilter` keeps.

    Made per query (it caches the chunks it fetched to test them); everything else (the
    store's generation, its embedder) is the wrapped backend's.
    """

    def __init__(self, backend: Any, chunk_filter: ChunkFilter) -> None:
        self._backend = backend
        self._filter = chunk_filter
        self._rows: dict[str, tuple[Chunk, list[str]]] = {}
        self._lock = threading.Lock()
        self._total: int | None = None
        """Chunks in the generation the query runs on (known once the index is loaded)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def bm25_index(self) -> Any:
        """The wrapped index, searching matching chunks only."""
        index = self._backend.bm25_index()
        if index is None:
            return None
        self._total = int(index.n_docs)
        return _FilteredIndex(index, self)

    def vector_search(self, vector: Sequence[float], n: int) -> list[tuple[str, float]]:
        """Top ``n`` matching (key, cosine) pairs, best first."""
        # A vector search may come back short while more chunks exist (vectors of replaced
        # chunks take places in its answer): only a search as deep as the store is the end.
        return self.deepen(lambda depth: self._backend.vector_search(vector, depth), n,
                           short_is_end=self._total is None)

    def fetch(self, keys: Sequence[str]) -> dict[str, tuple[Chunk, list[str]]]:
        """Chunks and tokens for the given keys (from this query's cache where fetched)."""
        self._load(keys)
        return {k: self._rows[k] for k in keys if k in self._rows}

    def _load(self, keys: Sequence[str]) -> None:
        with self._lock:
            missing = [k for k in dict.fromkeys(keys) if k not in self._rows]
        if missing:
            rows = self._backend.fetch(missing)
            with self._lock:
                self._rows.update(rows)

    def _keeps(self, key: str) -> bool:
        row = self._rows.get(key)
        # A chunk that can no longer be fetched was replaced by a newer generation: pass it
        # on, so the retriever notices (it runs the query again on the new generation).
        return row is None or self._filter.matches_chunk(row[0])

    def deepen(self, search: Any, n: int, *, short_is_end: bool = True
               ) -> list[tuple[str, float]]:
        """The first ``n`` matching results of ``search(depth)``, searching ever deeper.

        Stops when ``n`` match, when the search went as deep as the store has chunks, or
        (``short_is_end``: BM25 returns only chunks that score) when it returned fewer
        results than asked for.
        """
        if n <= 0:
            return []
        depth = n * _START_DEPTH
        while True:
            found = search(depth)
            self._load([key for key, _ in found])
            kept = [(key, score) for key, score in found if self._keeps(key)]
            done = (self._total is not None and depth >= self._total) or (
                short_is_end and len(found) < depth
            )
            if len(kept) >= n or done:
                return kept[:n]
            depth *= _START_DEPTH
