"""Cross-validated training of the claim and answerability heads from cached features.

The pieces live in three modules, re-exported here: the feature table and head
configuration (``_train_table``), the claim head (``_train_claim``) and the answerability
head (``_train_answerable``).
"""

from __future__ import annotations

import time
from typing import Any

from grounded_rag.training._train_answerable import _answerable_fit as _answerable_fit
from grounded_rag.training._train_answerable import (
    answerable_predictions as answerable_predictions,
)
from grounded_rag.training._train_answerable import answerable_report as answerable_report
from grounded_rag.training._train_answerable import (
    choose_answerable_thresholds as choose_answerable_thresholds,
)
from grounded_rag.training._train_answerable import fit_answerable_head as fit_answerable_head
from grounded_rag.training._train_answerable import query_scores as query_scores
from grounded_rag.training._train_claim import THREE_WAY as THREE_WAY
from grounded_rag.training._train_claim import _claim_targets as _claim_targets
from grounded_rag.training._train_claim import _fit_claim as _fit_claim
from grounded_rag.training._train_claim import _length_matched_rows as _length_matched_rows
from grounded_rag.training._train_claim import choose_claim_thresholds as choose_claim_thresholds
from grounded_rag.training._train_claim import claim_predictions as claim_predictions
from grounded_rag.training._train_claim import claim_report as claim_report
from grounded_rag.training._train_claim import decide_claims as decide_claims
from grounded_rag.training._train_claim import fit_claim_head as fit_claim_head
from grounded_rag.training._train_claim import support_scores as support_scores
from grounded_rag.training._train_table import LENGTH_EXTRAS as LENGTH_EXTRAS
from grounded_rag.training._train_table import LENGTH_MATCHED_SETS as LENGTH_MATCHED_SETS
from grounded_rag.training._train_table import HeadConfig as HeadConfig
from grounded_rag.training._train_table import Table as Table
from grounded_rag.training._train_table import length_bin as length_bin
from grounded_rag.training._train_table import load_table as load_table
from grounded_rag.training._train_table import strata_of as strata_of


def timed(label: str) -> Any:
    """Tiny context manager printing how long a step took (training is interactive)."""
    class _T:
        def __enter__(self) -> None:
            self.t = time.perf_counter()

        def __exit__(self, *exc: object) -> None:
            print(f"{label}: {time.perf_counter() - self.t:.1f}s", flush=True)

    return _T()
