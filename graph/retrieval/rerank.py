"""Relevance scoring and optional reranking of fused candidates.

Every candidate leaves the retriever with a calibrated ``relevance`` in [0, 1] (the graph's
abstain threshold compares against it). The default :class:`FeatureScorer` needs no extra
model: a logistic function of the query-chunk cosine and the IDF-weighted share of query
terms found in the chunk, fitted by ``benchmarks/fit_relevance.py``. A cross-encoder can
replace it when the user has ``sentence-transformers`` and a model installed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from grounded_rag.retrieval.chunking import Chunk


@dataclass
class Candidate:
    """A fused candidate with the signals the scorers use."""

    key: str
    """Store key of the chunk."""
    chunk: Chunk
    """The chunk itself."""
    tokens: list[str]
    """BM25 tokens of the chunk's index text."""
    fused: float
    """Reciprocal-rank-fusion score."""
    bm25: float | None = None
    """Raw BM25 score when the lexical side found it."""
    cosine: float | None = None
    """Query-chunk cosine (an upper bound when the vector side did not rank it)."""
    coverage: float = 0.0
    """IDF-weighted share of query terms present in the chunk, in [0, 1]."""
    extra: dict[str, float] = field(default_factory=dict)
    """Room for scorer-specific signals."""


@runtime_checkable
class Reranker(Protocol):
    """Scores candidates for a query with a relevance in [0, 1]."""

    reorders: bool
    """True when results should be sorted by this score rather than by fused rank."""

    def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        """Relevance in [0, 1] for each candidate, in input order."""
        ...


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -60 else 0.0


@dataclass
class FeatureScorer:
    """Logistic relevance from cosine and query-term coverage (no extra model).

    Coefficients are fitted per embedder (cosine scales differ: MiniLM gives unrelated
    Japanese text ~0.5, e5 puts everything between ~0.7 and ~0.95) and per query
    language. A chunk in the other language than the question shares no terms with it,
    so such cross-language candidates are scored from the cosine alone when ``bias_x``
    and ``w_cosine_x`` are set.
    """

    bias: float
    """Intercept for non-Japanese queries."""
    w_cosine: float
    """Cosine weight for non-Japanese queries."""
    w_coverage: float
    """Coverage weight for non-Japanese queries."""
    bias_ja: float
    """Intercept for Japanese queries."""
    w_cosine_ja: float
    """Cosine weight for Japanese queries."""
    w_coverage_ja: float
    """Coverage weight for Japanese queries."""
    bias_x: float | None = None
    """Intercept for a chunk in the other language than the question (cosine only)."""
    w_cosine_x: float | None = None
    """Cosine weight for a cross-language chunk."""
    reorders: bool = False
    """Sort every query's results by this score (default: keep the fused order)."""
    reorder_languages: tuple[str, ...] = ()
    """Query languages (``"ja"``, ``"en"``) whose results are sorted by this score: where
    the embedder's cosine made the calibrated score a better ranking than the fused order
    on dev data (e5, Japanese); MiniLM keeps the fused order."""

    def reorders_for(self, query: str) -> bool:
        """True when results for ``query`` should be sorted by this score."""
        if self.reorders:
            return True
        from grounded_rag.retrieval.text_analysis import has_japanese

        return ("ja" if has_japanese(query) else "en") in self.reorder_languages

    def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        """Calibrated relevance for each candidate."""
        from grounded_rag.retrieval.text_analysis import has_japanese, is_japanese_text

        ja = has_japanese(query)
        b, wc, wv = (
            (self.bias_ja, self.w_cosine_ja, self.w_coverage_ja)
            if ja
            else (self.bias, self.w_cosine, self.w_coverage)
        )
        cross = self.bias_x is not None and self.w_cosine_x is not None
        out = []
        for c in candidates:
            cos = c.cosine if c.cosine is not None else 0.0
            if cross and is_japanese_text(c.chunk.text) != ja:
                out.append(_sigmoid(self.bias_x + self.w_cosine_x * cos))  # type: ignore[operator]
            else:
                out.append(_sigmoid(b + wc * cos + wv * c.coverage))
        return out


def default_scorer(embeddings: Any = None) -> FeatureScorer:
    """The calibrated scorer for an embedder (coefficients live in ``calibration.py``)."""
    from grounded_rag.retrieval.calibration import coefficients_for

    coefficients = coefficients_for(embeddings)
    languages = tuple(coefficients.pop("reorder_languages", ()))
    return FeatureScorer(**coefficients, reorder_languages=languages)


class CrossEncoderReranker:
    """Rerank with a sentence-transformers cross-encoder (optional; not installed by default).

    Relevance is the sigmoid of the model's logit. Pass a local model path when offline.
    """

    reorders = True

    def __init__(self, model_name_or_path: str, *, max_length: int = 512) -> None:
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:  # pragma: no cover - depends on the user's install
            raise ImportError(
                "CrossEncoderReranker needs sentence-transformers: "
                "pip install sentence-transformers (and a local cross-encoder model)"
            ) from exc
        self._model = CrossEncoder(model_name_or_path, max_length=max_length)

    def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        """Sigmoid of the cross-encoder logits."""
        if not candidates:
            return []
        logits = self._model.predict([(query, c.chunk.text) for c in candidates])
        return [_sigmoid(float(x)) for x in logits]
