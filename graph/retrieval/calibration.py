"""Relevance calibration constants: the default scorer's coefficients and abstain threshold.

Both come from ``benchmarks/calibrate_abstain.py`` (see its docstring for the method);
rerun it after changing the embeddings, the tokenizer or the chunker. Coefficients are per
embedder because cosine scales differ between models.
"""

from __future__ import annotations

from typing import Any

FEATURE_COEFFICIENTS: dict[str, float] = {
    "bias": -11.873,
    "w_cosine": 9.504,
    "w_coverage": 7.647,
    "bias_ja": -13.926,
    "w_cosine_ja": 6.969,
    "w_coverage_ja": 10.538,
}
"""Logistic coefficients of the default relevance scorer.

Fitted on the top-20 hybrid candidates of 400 SciFact claims (English) and 400 JSQuAD
questions (Japanese), label = gold passage; reliability on the fit data: predicted vs actual
0.29/0.33, 0.50/0.42, 0.70/0.67, 0.89/0.86 (en) and 0.29/0.36, 0.53/0.53, 0.70/0.66,
0.86/0.92 (ja) in the 0.2-wide bins from 0.2 up. These are MiniLM's.
"""

E5_FEATURE_COEFFICIENTS: dict[str, Any] = {
    "bias": -53.563,
    "w_cosine": 56.745,
    "w_coverage": 12.796,
    "bias_ja": -28.817,
    "w_cosine_ja": 20.433,
    "w_coverage_ja": 12.682,
    "bias_x": -35.993,
    "w_cosine_x": 42.167,
    "reorder_languages": ("ja",),
}
"""Logistic coefficients for multilingual-e5 (``calibrate_abstain.py --embedder e5``).

Japanese: top-20 hybrid candidates of 400 JSQuAD dev questions (every 4th from 2001,
disjoint from every reported set), reliability predicted/actual 0.29/0.24, 0.48/0.60,
0.73/0.79, 0.90/0.90 in the 0.2-wide bins from 0.2 up. Sorting Japanese results by this
score beats the fused order (JSQuAD questions 1000-1999, 2-fold cross-validated recall@5
0.977 vs 0.968), hence ``reorder_languages``.
English: 400 HaluEval-QA dev questions over 1,000 of its knowledge passages (SciFact's
e5 vectors were not at hand), reliability 0.28/0.29, 0.49/0.48, 0.70/0.64, 0.99/0.99: an
easy pool (the gold passage restates the question), so English scores run high on harder
collections; refit with ``--en-fit scifact`` once SciFact is embedded.
Cross-language (``_x``, cosine only: a chunk in the other language shares no terms with
the question): the top-20 candidates of 50 English translations of JSQuAD dev questions
over the Japanese pool (``benchmarks/xlang_en_ja.dev.jsonl``, disjoint from the reported
set; gold in the top 20 for 45), mean predicted 0.045 = actual 0.045.
"""


DEFAULT_ABSTAIN_THRESHOLD: float = 0.26
"""Best-evidence relevance below which the graph abstains before any model call.

Chosen for the default embedder (multilingual-e5) on NoMIRACL dev (ja + en, 197 queries,
pooled corpus per language) as the highest threshold that still answers >= 90% of the
answerable queries over both languages: ja answers 84% of answerable / abstains on 33% of
unanswerable, en 100% / 0%. English relevance is over-confident (its coefficients come
from an easy pool), so the pooled rule lets Japanese carry the cut. ROC AUC of the best
relevance 0.661 ja, 0.610 en (NoMIRACL negatives are topically close by construction), so
this gate only removes questions nothing in the store is about; "related but does not
answer" is left to the verifier stage. MiniLM's curve gave 0.06 (ja 84% / 19%, en 98% /
6%); rerun ``benchmarks/calibrate_abstain.py`` after changing the embeddings.
"""


CROSS_LANGUAGE_ABSTAIN_THRESHOLD: float = 0.03
"""The default gate for evidence in the other language than the question.

A chunk in the other language shares no terms with the question, so its relevance comes
from the cross-language coefficients above (cosine only, fitted where 1 candidate in 20
is gold) and stays far below :data:`DEFAULT_ABSTAIN_THRESHOLD`: with that one gate for
both kinds of evidence, 84% of the English questions over Japanese passages of
``xlang_en_ja.jsonl`` abstained before any model call. Chosen by
``benchmarks/calibrate_abstain.py --cross`` like the main threshold: the highest one that
still answers >= 90% of the answerable questions of ``xlang_en_ja.dev.jsonl`` (best
relevance in the top 6 over the 2,304 JSQuAD passages). On the held-out
``xlang_en_ja.jsonl`` it answers 90% (was 16%), and it abstains on 66% of NoMIRACL's
English questions over the same Japanese pool, which has nothing on them (ROC AUC of the
best cross-language relevance, answerable vs those, 0.907). A user's
``abstain_threshold`` scales it (:func:`cross_language_threshold`).
"""


def cross_language_threshold(threshold: float) -> float:
    """The gate for other-language evidence that corresponds to ``threshold``.

    Scaled with the main threshold, so ``abstain_threshold=0`` never abstains and a stricter
    threshold is stricter for both kinds of evidence.
    """
    return threshold * CROSS_LANGUAGE_ABSTAIN_THRESHOLD / DEFAULT_ABSTAIN_THRESHOLD


def clears_gate(evidence: Any, language: str, threshold: float) -> tuple[bool, float, float]:
    """Whether any evidence reaches its gate: ``(passes, best relevance, cross threshold)``.

    Evidence in the question's language is compared with ``threshold``, evidence in the
    other language (Japanese text for an English question, or the reverse) with
    :func:`cross_language_threshold`. No evidence passes only a threshold of 0.
    """
    from grounded_rag.retrieval.text_analysis import is_japanese_text

    cross_threshold = cross_language_threshold(threshold)
    same = cross = 0.0
    for e in evidence:
        if is_japanese_text(str(e.get("text", ""))) == (language == "ja"):
            same = max(same, float(e["relevance"]))
        else:
            cross = max(cross, float(e["relevance"]))
    passes = same >= threshold or (cross >= cross_threshold and cross > 0)
    return passes or threshold <= 0, max(same, cross), cross_threshold


def coefficients_for(embeddings: Any) -> dict[str, Any]:
    """The fitted coefficients for an embedder: e5's for multilingual ones, else MiniLM's."""
    if embeddings is None:
        return dict(FEATURE_COEFFICIENTS)
    from grounded_rag.retrieval.embeddings import is_multilingual

    return dict(E5_FEATURE_COEFFICIENTS if is_multilingual(embeddings) else FEATURE_COEFFICIENTS)
