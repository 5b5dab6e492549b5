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

E5_FEATURE_COEFFICIENTS: dict[str, float] = {
    "bias": -11.873,
    "w_cosine": 9.504,
    "w_coverage": 7.647,
    "bias_ja": -13.926,
    "w_cosine_ja": 6.969,
    "w_coverage_ja": 10.538,
}
"""Logistic coefficients for multilingual-e5 (same method and data as MiniLM's)."""

DEFAULT_ABSTAIN_THRESHOLD: float = 0.06
"""Best-evidence relevance below which the graph abstains before any model call.

Chosen on NoMIRACL dev (ja + en, 197 queries, pooled corpus per language) as the highest
threshold that still answers >= 90% of the answerable queries over both languages:
ja answers 84% of answerable / abstains on 19% of unanswerable, en 98% / 6%. The signal is
weak on NoMIRACL's hard negatives (ROC AUC of the best relevance 0.59 ja, 0.59 en), so this
gate only removes questions nothing in the store is about (off-topic questions score
~0.000); deciding "related but does not answer" is left to the verifier stage.
"""


def coefficients_for(embeddings: Any) -> dict[str, float]:
    """The fitted coefficients for an embedder: e5's for multilingual ones, else MiniLM's."""
    if embeddings is None:
        return dict(FEATURE_COEFFICIENTS)
    from grounded_rag.retrieval.embeddings import is_multilingual

    return dict(E5_FEATURE_COEFFICIENTS if is_multilingual(embeddings) else FEATURE_COEFFICIENTS)
