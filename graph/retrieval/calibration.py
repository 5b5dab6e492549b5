"""Relevance calibration and the default abstain threshold (placeholder until calibrated)."""

DEFAULT_ABSTAIN_THRESHOLD: float = 0.3
"""Best-evidence relevance below which the graph abstains before any model call."""

FEATURE_COEFFICIENTS: dict[str, float] = {
    "bias": -4.0,
    "w_cosine": 6.0,
    "w_coverage": 3.0,
    "bias_ja": -3.0,
    "w_cosine_ja": 0.0,
    "w_coverage_ja": 4.0,
}
"""Logistic coefficients of the default relevance scorer (placeholder until fitted)."""
