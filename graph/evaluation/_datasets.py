"""Readers for the third-party evaluation sets, auto-detected from each file's fields.

The data is never copied into the repository: it is read from ``../shared/eval`` next to
the repository (``GROUNDED_RAG_EVAL_DIR`` overrides), or from any path a caller gives.
"""

from __future__ import annotations

import json
import os
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VERIFY = "verify"
ANSWER = "answer"


class DatasetError(ValueError):
    """A file that is missing, empty, or in no format the harness knows."""


def default_eval_dir() -> Path:
    """``$GROUNDED_RAG_EVAL_DIR``, else ``../shared/eval`` relative to the repository root."""
    env = os.environ.get("GROUNDED_RAG_EVAL_DIR")
    if env:
        return Path(env)
    # graph/evaluation/_datasets.py -> the repository root is two folders up.
    beside_repo = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
    if beside_repo.exists():
        return beside_repo
    return Path.cwd().parent / "shared" / "eval"  # a non-editable install run from the repo


SHORT_NAMES: dict[str, str] = {
    "halueval_qa": "halueval_qa/pairs.dev.jsonl",
    "halueval_summarization": "halueval_summarization_sample/pairs.dev.jsonl",
    "jhars": "jhars_ja/responses_relaxed.dev.jsonl",
    "jnli": "jnli_ja/jnli.dev.jsonl",
    "janli": "janli_ja/janli.dev.jsonl",
    "jsick": "jsick_ja/jsick_test.dev.jsonl",
    "scifact": "scifact/claims.dev.jsonl",
    "expertqa": "expertqa_attribution/claims.dev.jsonl",
    "nomiracl": "nomiracl_ja_en/nomiracl.dev.jsonl",
    "jsquad": "jsquad_ja/questions.dev.jsonl",
    "jaquad": "jaquad_ja/questions.dev.jsonl",
}
"""Dataset names accepted instead of a path, resolved inside the eval directory."""


@dataclass
class EvalItem:
    """One unit of evaluation: a response to verify, or a question to answer."""

    id: str
    """Stable id within the dataset (the cache key)."""
    subset: str
    """Slice the metrics are also reported for (language, evidence present, ...)."""
    language: str
    """``ja`` or ``en``."""
    claims: list[str] = field(default_factory=list)
    """Verify task: the response split into claims (same language as the response)."""
    sources: list[dict[str, str]] = field(default_factory=list)
    """Verify task: evidence documents ``{id, title, text, url}``."""
    gold_hallucinated: bool | None = None
    """Verify task: the response (or claim) is not fully supported by the sources."""
    gold_label3: str | None = None
    """Verify task: supported / contradicted / neutral, where the set is three-way."""
    gold_claims: list[bool | None] | None = None
    """Verify task: per-claim hallucination labels (None = excluded, e.g. disputed)."""
    claim_question: str = ""
    """Verify task: the question the claims answer, when they are answers rather than
    self-contained statements (HaluEval-QA); judges read question and answer together."""
    question: str = ""
    """Answer task: the question asked."""
    answers: list[str] = field(default_factory=list)
    """Answer task: gold answer strings, when the set has them."""
    gold_doc_ids: list[str] = field(default_factory=list)
    """Answer task: documents that hold the answer (for source recall)."""
    answerable: bool | None = None
    """Answer task: False when the corpus holds no answer (the graph must abstain)."""
    corpus: list[dict[str, str]] | None = None
    """Answer task: a corpus of this item's own (NoMIRACL's 10 passages)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Anything else reports use (e.g. NoMIRACL's published baseline outputs)."""

    @property
    def stratum(self) -> tuple[str, str]:
        """What sampling keeps balanced: the subset and the gold class."""
        if self.gold_label3 is not None:
            return self.subset, self.gold_label3
        if self.gold_hallucinated is not None:
            return self.subset, str(self.gold_hallucinated)
        return self.subset, str(self.answerable)


@dataclass
class Dataset:
    """A loaded evaluation set."""

    name: str
    """Short name, e.g. ``jnli`` (used in report and cache file names)."""
    format: str
    """Detected format."""
    path: Path
    """The file read."""
    items: list[EvalItem]
    """All items, in file order."""
    tasks: tuple[str, ...]
    """Tasks this set supports; the first is the default."""
    corpus: list[dict[str, str]] | None = None
    """Answer task: the shared corpus (SQuAD-style passages, SciFact abstracts)."""
    notes: list[str] = field(default_factory=list)
    """What the reader did that a reader of the report should know."""

    @property
    def default_task(self) -> str:
        """The task run when none is given."""
        return self.tasks[0]


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Rows of a JSONL file, skipping blank lines."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def resolve_path(name_or_path: str | os.PathLike[str]) -> Path:
    """A dataset file from a path, a folder holding one, or a short name (``jnli``)."""
    raw = str(name_or_path)
    path = Path(raw).expanduser()
    if not path.exists() and raw in SHORT_NAMES:
        path = default_eval_dir() / SHORT_NAMES[raw]
    if path.is_dir():
        candidates = sorted(
            p for p in path.glob("*.jsonl")
            if p.name not in {"corpus.jsonl", "passages.jsonl"} and ".orig." not in p.name
        )
        if len(candidates) != 1:
            raise DatasetError(f"{path} holds {len(candidates)} candidate files; name one")
        path = candidates[0]
    if not path.exists():
        raise DatasetError(
            f"evaluation data not found: {path}. The dev sets live in ../shared/eval next to "
            "the repository; set GROUNDED_RAG_EVAL_DIR to their folder or pass a file path. "
            f"Short names: {', '.join(SHORT_NAMES)}."
        )
    return path


def detect_format(row: dict[str, Any]) -> str:
    """Name the format of a row from its fields."""
    keys = set(row)
    rules: list[tuple[str, set[str]]] = [
        ("halueval_qa", {"knowledge", "question", "answer", "label"}),
        ("halueval_summarization", {"document", "summary", "label"}),
        ("jhars", {"reference_text", "response", "sentences"}),
        ("nomiracl", {"question", "passages", "answerable"}),
        ("scifact", {"claim", "evidence", "cited_doc_ids"}),
        ("expertqa", {"claim", "evidence", "support"}),
        ("janli", {"sentence_A_Ja", "sentence_B_Ja", "entailment_label_Ja"}),
        ("jsick", {"premise", "hypothesis", "label"}),
        ("jnli", {"sentence1", "sentence2", "label"}),
        ("squad_ja", {"question", "answers", "gold_pid"}),
    ]
    for name, needed in rules:
        if needed <= keys:
            return name
    if {"pid", "text"} <= keys or {"doc_id", "abstract"} <= keys:
        raise DatasetError(
            "this is a corpus file; pass the questions/claims file next to it instead"
        )
    raise DatasetError(f"unknown evaluation format (fields: {', '.join(sorted(keys))})")


def load_dataset(name_or_path: str | os.PathLike[str]) -> Dataset:
    """Read a dataset file (format auto-detected) into evaluation items."""
    path = resolve_path(name_or_path)
    rows = list(read_jsonl(path))
    if not rows:
        raise DatasetError(f"{path} is empty")
    fmt = detect_format(rows[0])
    dataset = _READERS[fmt](path, rows)
    _dedupe_ids(dataset.items)
    return dataset


def sample_items(
    items: list[EvalItem], limit: int | None, *, strategy: str = "stratified", seed: int = 0
) -> list[EvalItem]:
    """A deterministic subset of ``limit`` items.

    ``head``: the first ``limit``. ``stratified``: keeps each (subset, gold class) share, at
    least one item per stratum. ``balanced``: the same number per stratum. Sampling within a
    stratum is a seeded shuffle, so reruns with the same limit pick the same items (and the
    cache reuses them).
    """
    if limit is None or limit >= len(items):
        return list(items)
    if limit <= 0:
        return []
    if strategy == "head":
        return items[:limit]
    if strategy not in {"stratified", "balanced"}:
        raise ValueError(f"unknown sampling strategy {strategy!r}")
    groups: dict[tuple[str, str], list[EvalItem]] = defaultdict(list)
    for item in items:
        groups[item.stratum].append(item)
    rng = random.Random(seed)
    for key in sorted(groups):
        rng.shuffle(groups[key])
    keys = sorted(groups)
    if strategy == "balanced":
        quota = dict.fromkeys(keys, 0)
        remaining = limit
        while remaining:
            progressed = False
            for key in keys:
                if remaining and quota[key] < len(groups[key]):
                    quota[key] += 1
                    remaining -= 1
                    progressed = True
            if not progressed:
                break
    else:
        total = len(items)
        quota = {k: max(1, round(limit * len(groups[k]) / total)) for k in keys}
        # Trim or pad the largest strata so the quotas add up to the limit exactly.
        while sum(quota.values()) > limit:
            shrink = max((k for k in keys if quota[k] > 1), key=lambda k: quota[k], default=None)
            if shrink is None:
                break
            quota[shrink] -= 1
        while sum(quota.values()) < limit:
            grow = max((k for k in keys if quota[k] < len(groups[k])),
                       key=lambda k: len(groups[k]) - quota[k], default=None)
            if grow is None:
                break
            quota[grow] += 1
    chosen = {id(item) for key in keys for item in groups[key][: quota[key]]}
    return [item for item in items if id(item) in chosen][:limit]


def _dedupe_ids(items: list[EvalItem]) -> None:
    seen: dict[str, int] = {}
    for item in items:
        count = seen.get(item.id, 0)
        seen[item.id] = count + 1
        if count:
            item.id = f"{item.id}#{count}"


# The readers import the types above; they are bound last to keep one import direction.
from grounded_rag.evaluation._readers import _READERS, classify_baseline  # noqa: E402,F401
