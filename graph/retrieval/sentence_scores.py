"""Which sentences of a passage in the other language speak to the question: the embedder says.

The generator sees a budgeted view of the evidence: the sentences that hold most of the
question's content words, with their neighbours (``verification.citations.select_sentences``).
An English question shares no words with a Japanese passage, and the reverse, so there the
word overlap is 0 for every sentence and the view used to keep each passage's first
sentences, in retrieval order. On the small-corpus dev cross-language questions the gold
answer was in the retrieved passages for 71 of 71 and in the generator's view for 57.

The multilingual embedder that ranked the passages reads both languages. :func:`annotate`
scores each sentence of the passages written in the other language against the question
(cosine similarity) and keeps the scores on the evidence (``sentence_relevance``), where the
view reads them as the overlap it cannot compute. Nothing is embedded when every passage is
in the question's language or one of them clears its gate, when the whole evidence fits the
budget anyway (the view then shows everything), or when the embedder is English-only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from grounded_rag.types import Evidence

MAX_SENTENCES = 96
"""At most this many sentences are embedded per question (the best-retrieved passages'
first); about 1 s for 50 short Japanese sentences on 2 cores."""


def annotate(question: str, evidence: Sequence[Evidence], embeddings: Any, language: str,
             budget_tokens: int, threshold: float | None = None) -> list[Evidence]:
    """``evidence`` with ``sentence_relevance`` on each passage in the other language.

    ``language`` is the question's (``ja`` / ``en``); ``threshold`` the abstain threshold
    (None: the default gates). Returns the evidence unchanged when there is nothing to
    choose (see the module text), and when a passage in the question's language clears its
    gate: the answer is then most likely there, and the view stays as word overlap makes
    it. (Scored all the same, a mixed store's Japanese sentences took the view from the
    English sentence that answered "How long does the Aurora LX-3 take to recharge?".) A
    failing embedder leaves the evidence unchanged too.
    """
    from grounded_rag.retrieval.calibration import (
        best_by_language,
        gate_thresholds,
        is_same_language,
    )
    from grounded_rag.retrieval.embeddings import is_multilingual
    from grounded_rag.verification.citations import cuts
    from grounded_rag.verification.evidence import split_sentences

    items = list(evidence)
    if (embeddings is None or not is_multilingual(embeddings) or not question.strip()
            or not cuts(items, budget_tokens)):
        return items
    others = [p for p, e in enumerate(items) if not is_same_language(e, language)]
    same_best, _ = best_by_language(items, language)
    if not others or same_best >= gate_thresholds(language, threshold)[0]:
        return items
    texts: dict[int, list[str]] = {}
    room = MAX_SENTENCES
    for p in others:
        if room <= 0:
            break
        sentences = [s.text for s in split_sentences(items[p]["text"], chunk=p)][:room]
        texts[p] = sentences
        room -= len(sentences)
    flat = [t for p in texts for t in texts[p]]
    if not flat:
        return items
    try:
        query = list(embeddings.embed_query(question))
        vectors = embeddings.embed_documents(flat)
    except Exception:  # noqa: BLE001 - a served embedder may fail: word overlap still works
        return items
    scores = iter(_cosine(query, v) for v in vectors)
    out = list(items)
    for p, sentences in texts.items():
        out[p] = {**items[p], "sentence_relevance": [round(next(scores), 4) for _ in sentences]}
    return out


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
