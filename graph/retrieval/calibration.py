"""Relevance calibration constants: the default scorer's coefficients and abstain threshold.

Both come from ``benchmarks/fit_relevance.py`` (see its docstring for the method);
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
"""Logistic coefficients for multilingual-e5 (``fit_relevance.py --embedder e5``).

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


LARGE_POOL_ABSTAIN_THRESHOLD: float = 0.26
"""The gate of earlier builds (``abstain_threshold=0.26``), fitted on large pools.

Chosen for multilingual-e5 on NoMIRACL dev (ja + en, 197 queries, pooled corpus per
language) as the highest threshold that still answered >= 90% of the answerable queries.
On a user's few documents it refused 28-32% of answerable Japanese questions (the
small-corpus evaluation, ``grounded-rag eval small-corpus --mode gate``): relevance is the
chance that a chunk is *the* answering one among a large pool's candidates, and stays low on
a small store even for the section that answers.
"""

DEFAULT_GATES: dict[str, float] = {"ja": 0.0009, "en": 0.004, "cross": 0.01}
"""The default pre-model gate, per question language and for evidence in the other language.

The gate only says "nothing in the store is about this"; whether the evidence answers is
left to the answerability check, the generator and the verifier. Fitted on the
small-corpus evaluation's dev collections (``grounded-rag eval small-corpus --mode gate``:
JSQuAD/JaQuAD titles, HaluEval groups, English questions over Japanese titles, 3-29
sections each) as the highest thresholds that keep >= 98% of the answerable dev questions
of each kind. Dev: answerable kept ja 0.981, en 0.986 (cross-language 1.000); other-title
and off-topic questions let through ja 0.017, en 0.077. Held-out collections (never
fitted on): kept ja 0.995, en 0.986; let through ja 0.021, en 0.060 (0.26 kept ja 0.677).
Relevances this low are ordinary for the section that answers on a small store (see
:data:`LARGE_POOL_ABSTAIN_THRESHOLD`). Since words for the answer's form (正式名称, 別称,
アルファベット N 文字で) no longer count towards coverage, the same gates keep dev ja 0.997 and
let through 0.021; held-out unchanged.
"""

DEFAULT_ABSTAIN_THRESHOLD: float | None = None
"""The ``abstain_threshold`` setting's default: ``None`` = :data:`DEFAULT_GATES`."""

CROSS_LANGUAGE_ABSTAIN_THRESHOLD: float = 0.03
"""The other-language gate that goes with a threshold of 0.26 (a user's number scales it).

A chunk in the other language shares no terms with the question, so its relevance comes
from the cross-language coefficients above (cosine only) and stays far below same-language
values. Chosen by ``benchmarks/fit_relevance.py --cross`` as the highest one that still
answered >= 90% of ``xlang_en_ja.dev.jsonl`` with 0.26 for same-language evidence; a user's
``abstain_threshold`` keeps that ratio (:func:`cross_language_threshold`).
"""


def cross_language_threshold(threshold: float) -> float:
    """The gate for other-language evidence that goes with a user's ``threshold``.

    Scaled with it, so ``abstain_threshold=0`` never abstains and a stricter threshold is
    stricter for both kinds of evidence (0.26 gives the earlier builds' 0.03).
    """
    return threshold * CROSS_LANGUAGE_ABSTAIN_THRESHOLD / LARGE_POOL_ABSTAIN_THRESHOLD


def gate_thresholds(language: str, threshold: float | None) -> tuple[float, float]:
    """``(same-language, other-language)`` gates for a question in ``language``.

    ``threshold=None`` is the default (:data:`DEFAULT_GATES`); a number is the same-language
    gate for every language, with the other-language gate scaled from it.
    """
    if threshold is None:
        lang = "ja" if language == "ja" else "en"
        return DEFAULT_GATES[lang], DEFAULT_GATES["cross"]
    return threshold, cross_language_threshold(threshold)


def is_same_language(evidence: Any, language: str) -> bool:
    """Whether a chunk is in the question's language (Japanese text for a ``ja`` question)."""
    from grounded_rag.retrieval.text_analysis import is_japanese_text

    return is_japanese_text(str(evidence.get("text", ""))) == (language == "ja")


def best_by_language(evidence: Any, language: str) -> tuple[float, float]:
    """Best relevance among chunks in the question's language, and among the others."""
    same = cross = 0.0
    for e in evidence:
        if is_same_language(e, language):
            same = max(same, float(e["relevance"]))
        else:
            cross = max(cross, float(e["relevance"]))
    return same, cross


def clears_gate(
    evidence: Any, language: str, threshold: float | None
) -> tuple[bool, float, float, float]:
    """Whether any evidence reaches its gate: ``(passes, best, same gate, other gate)``.

    Evidence in the question's language is compared with the same-language gate, evidence
    in the other language (Japanese text for an English question, or the reverse) with the
    other-language one (:func:`gate_thresholds`). No evidence passes only a threshold of 0.
    """
    same_gate, cross_gate = gate_thresholds(language, threshold)
    same, cross = best_by_language(evidence, language)
    passes = same >= same_gate or (cross >= cross_gate and cross > 0)
    return passes or same_gate <= 0, max(same, cross), same_gate, cross_gate


def coefficients_for(embeddings: Any) -> dict[str, Any]:
    """The fitted coefficients for an embedder: e5's for multilingual ones, else MiniLM's."""
    if embeddings is None:
        return dict(FEATURE_COEFFICIENTS)
    from grounded_rag.retrieval.embeddings import is_multilingual

    return dict(E5_FEATURE_COEFFICIENTS if is_multilingual(embeddings) else FEATURE_COEFFICIENTS)
