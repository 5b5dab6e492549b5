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
    "bias_x": -44.958,
    "w_cosine_x": 53.357,
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
Cross-language (``_x``, cosine only): the cosine-only fit on the pooled ja + en
candidates, shifted by the 0.067 that e5 loses when question and passage are in different
languages (300 JSICK dev pairs: same-language mean cosine 0.887, cross-language 0.821).
"""


DEFAULT_ABSTAIN_THRESHOLD: float = 0.06
"""Best-evidence relevance below which the graph abstains before any model call.

Chosen on NoMIRACL dev (ja + en, 197 queries, pooled corpus per language) as the highest
threshold that still answers >= 90% of the answerable queries over both languages:
ja answers 84% of answerable / abstains on 19% of unanswerable, en 98% / 6%. The signal is
weak on NoMIRACL's hard negatives (ROC AUC of the best relevance 0.59 ja, 0.59 en), so this
gate only removes questions nothing in the store is about (off-topic questions score
~0.000); deciding "related but does not answer" is left to the verifier stage.
"""


def coefficients_for(embeddings: Any) -> dict[str, Any]:
    """The fitted coefficients for an embedder: e5's for multilingual ones, else MiniLM's."""
    if embeddings is None:
        return dict(FEATURE_COEFFICIENTS)
    from grounded_rag.retrieval.embeddings import is_multilingual

    return dict(E5_FEATURE_COEFFICIENTS if is_multilingual(embeddings) else FEATURE_COEFFICIENTS)
