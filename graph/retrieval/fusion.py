"""Reciprocal rank fusion: combine rankings whose raw scores live on different scales."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)

RRF_K = 60
"""The usual RRF damping constant (Cormack et al., 2009)."""


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[K]], *, k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[tuple[K, float]]:
    """Fuse ranked id lists: ``score(d) = sum_i w_i / (k + rank_i(d))`` with 1-based ranks.

    Only ranks matter, never raw scores (BM25 and cosine are not comparable). Ties keep
    the order of first appearance, so the result is deterministic.
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking is required")
    scores: dict[K, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[K] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:  # a duplicate in one list must not count twice
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


VECTOR_WEIGHTS: dict[str, dict[str, float]] = {
    "english-only": {"ja": 0.0, "en": 1.0},
    "multilingual": {"ja": 0.0, "en": 1.0, "cross": 1.0, "cross_lexical": 0.75},
}
"""RRF weight of the vector side per query language, by kind of embedder (BM25 weighs 1).

English-only embedders (MiniLM): on JSQuAD (1000 questions, recall@5) BM25 alone 0.961,
vector 0.256, fused with vector weight 1.0 / 0.5 / 0.25 / 0.1 / 0.0 = 0.859 / 0.877 /
0.883 / 0.944 / 0.961, so Japanese queries ignore the vector side (it only fills in when
BM25 finds fewer than k chunks, and still feeds the relevance score).

Multilingual embedders (e5), each chosen as the best recall@5 on a dev fold that the
reported numbers do not use (``benchmarks/retrieval_bench.py weights``):

* ``ja`` (same-language Japanese): JSQuAD dev questions 1000-1999, 985 questions: weight
  0 / 0.25 / 0.5 / 1 / 2 = 0.968 / 0.964 / 0.964 / 0.960 / 0.957. On these extractive
  questions e5 adds nothing to Sudachi BM25 at rank 5, so same-language Japanese chunks
  from the vector side only fill in; e5's cosine still feeds the relevance score.
* ``cross`` / ``cross_lexical``: the vector and the BM25 rankings of the chunks in the
  other language than the question are fused as rankings of their own. ``cross`` = 1 (the
  best chunk in each language gets the same chance; not fitted: the only cross-language
  dev data is a monolingual pool, where it cannot be told from BM25's weight).
  ``cross_lexical``: 50 English translations of other JSQuAD questions over the Japanese
  pool (``benchmarks/xlang_en_ja.dev.jsonl``), weight 0-0.75 / 1 / 1.5 = 0.78 / 0.70 /
  0.56 (lexical matches across languages are only shared Latin names and numbers).
* ``en``: plain RRF (1.0); see ``benchmarks/RETRIEVAL.md`` for the SciFact fold.
"""


def vector_weights(embeddings: Any) -> dict[str, float]:
    """Vector-side weights for an embedder: per query language, and ``cross`` if any."""
    if embeddings is None:
        return VECTOR_WEIGHTS["english-only"]
    from grounded_rag.retrieval.embeddings import is_multilingual

    return VECTOR_WEIGHTS["multilingual" if is_multilingual(embeddings) else "english-only"]
