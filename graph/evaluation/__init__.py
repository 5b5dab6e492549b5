"""Evaluation harness: verification quality, answer quality and cost on third-party dev sets.

Typical use::

    from grounded_rag.evaluation import run_eval

    report = run_eval("jnli", task="verify", limit=40, model="local")
    print(report["metrics"]["accuracy_3way"])

Data is read from ``../shared/eval`` next to the repository (``GROUNDED_RAG_EVAL_DIR``
overrides) and never copied into it. Importing this package is cheap: the graph, models,
tqdm and matplotlib load on first use.
"""

from __future__ import annotations

from grounded_rag.evaluation._datasets import (
    SHORT_NAMES,
    Dataset,
    DatasetError,
    EvalItem,
    default_eval_dir,
    detect_format,
    load_dataset,
    sample_items,
)
from grounded_rag.evaluation._metrics import (
    auroc,
    binary_metrics,
    percentile,
    three_way_metrics,
)
from grounded_rag.evaluation._runner import run_eval
from grounded_rag.evaluation._verify import batching_check

__all__ = [
    "SHORT_NAMES",
    "Dataset",
    "DatasetError",
    "EvalItem",
    "auroc",
    "batching_check",
    "binary_metrics",
    "default_eval_dir",
    "detect_format",
    "load_dataset",
    "percentile",
    "run_eval",
    "sample_items",
    "three_way_metrics",
]
