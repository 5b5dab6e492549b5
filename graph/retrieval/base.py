"""The retriever seam: anything that turns a question into ranked, section-granular evidence."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from grounded_rag.types import Evidence


@runtime_checkable
class Retriever(Protocol):
    """Ranked evidence for a query.

    Implementations must return at most ``k`` items, best first, each with a calibrated
    ``relevance`` in [0, 1] (the graph abstains before any model call when the best one is
    below the abstain threshold).
    """

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        """Return up to ``k`` evidence chunks for ``query``, best first."""
        ...
