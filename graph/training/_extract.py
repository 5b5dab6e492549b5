"""Feature extraction for the judge heads: one scorer pass per example, cached on disk.

The cache is a folder per feature fingerprint (model file hash, prompt texts, evidence
budgets, captured layers). Each set gets ``<set>.jsonl`` (one line of metadata per example:
labels, the texts read, P(Yes), the model-free features, where its hidden states are) and
``<set>.<n>.npy`` shards of float16 hidden states, written every ``shard`` examples. A run
that stops (Ctrl-C, a crash) loses at most one shard and resumes where it stopped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from grounded_rag.local.features import claim_input, lang_of, passage_input
from grounded_rag.training._examples import ANSWERABLE, CLAIM, JudgeExample
from grounded_rag.verification.cascade import prepare_claim


def default_cache_root() -> Path:
    """``$GROUNDED_RAG_FEATURE_CACHE`` or ``~/.cache/grounded-rag/judge-features``."""
    env = os.environ.get("GROUNDED_RAG_FEATURE_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "grounded-rag" / (
        "judge-features")


@dataclass
class FeatureSet:
    """The cached features of one set."""

    meta: list[dict[str, Any]]
    """Per-example metadata, in extraction order."""
    hidden: np.ndarray
    """Hidden states ``(n, layers, n_embd)`` float16; rows of decided examples are zero."""
    layers: tuple[int, ...]
    """The layers of axis 1."""


def _meta_path(folder: Path, name: str) -> Path:
    return folder / f"{name}.jsonl"


def load_features(folder: Path, name: str) -> FeatureSet:
    """Read one set's cache (every finished shard)."""
    path = _meta_path(folder, name)
    if not path.exists():
        raise FileNotFoundError(f"no features for {name!r} in {folder}: run the extraction first")
    meta = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    info = json.loads((folder / "features.json").read_text(encoding="utf-8"))
    layers = tuple(info["layers"])
    shards: dict[str, np.ndarray] = {}
    hidden = np.zeros((len(meta), len(layers), info["n_embd"]), dtype=np.float16)
    for i, m in enumerate(meta):
        shard = m.get("shard")
        if shard is None:
            continue
        if shard not in shards:
            shards[shard] = np.load(folder / shard, mmap_mode="r")
        hidden[i] = shards[shard][m["row"]]
    return FeatureSet(meta=meta, hidden=hidden, layers=layers)


def _label_fields(ex: JudgeExample) -> dict[str, Any]:
    return {
        "id": ex.id, "set": ex.set, "task": ex.task, "language": ex.language,
        "label3": ex.label3, "positive": ex.positive, "bag": ex.bag,
        "bag_positive": ex.bag_positive, "keys": ex.keys, "held_out": ex.held_out,
    }


def _chunks(items: Sequence[JudgeExample], size: int) -> Iterator[list[JudgeExample]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def extract(
    name: str,
    examples: Sequence[JudgeExample],
    folder: Path,
    *,
    scorer: Any,
    shard: int = 48,
    progress: bool = True,
    before_chunk: Callable[[], None] | None = None,
) -> int:
    """Extract features for ``examples`` not yet in the cache; return how many were added.

    ``scorer`` is a ``SupportScorer`` (anything with ``read_many`` and ``read_questions``).
    ``before_chunk`` runs before each shard (e.g. to adapt the thread count to the load).
    """
    from tqdm.auto import tqdm

    folder.mkdir(parents=True, exist_ok=True)
    path = _meta_path(folder, name)
    done: set[str] = set()
    n_shards = 0
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line:
                row = json.loads(line)
                done.add(row["id"])
                if row.get("shard"):
                    n_shards = max(n_shards, int(row["shard"].rsplit(".", 2)[-2]) + 1)
    todo = [ex for ex in examples if ex.id not in done]
    # Examples that share evidence run back to back so its KV-cache prefix is reused.
    todo.sort(key=lambda ex: (ex.language, _evidence_key(ex)))
    added = 0
    bar = tqdm(total=len(examples), initial=len(examples) - len(todo), desc=name,
               unit="ex", disable=not progress)
    try:
        for chunk in _chunks(todo, shard):
            if before_chunk is not None:
                before_chunk()
            rows, hidden = _extract_chunk(chunk, scorer)
            shard_name = None
            if hidden:
                shard_name = f"{name}.{n_shards:05d}.npy"
                np.save(folder / shard_name, np.stack(hidden).astype(np.float16))
                n_shards += 1
            with path.open("a", encoding="utf-8") as fh:
                for row in rows:
                    if row.get("row") is not None:
                        row["shard"] = shard_name
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            added += len(rows)
            bar.update(len(rows))
    finally:
        bar.close()
    return added


def _evidence_key(ex: JudgeExample) -> str:
    if ex.claim is not None:
        return "\n".join(e["text"] for e in ex.claim["evidence"])
    return ex.passage["text"] if ex.passage else ""


def _extract_chunk(
    chunk: list[JudgeExample], scorer: Any
) -> tuple[list[dict[str, Any]], list[np.ndarray]]:
    rows: list[dict[str, Any]] = []
    hidden: list[np.ndarray] = []
    for ex in chunk:
        row = _label_fields(ex)
        lang = lang_of(ex.language)
        if ex.task == CLAIM:
            assert ex.claim is not None
            prepared = prepare_claim(ex.claim, lang)
            if prepared.verdict is not None or prepared.narrowed is None:
                verdict = prepared.verdict["verdict"] if prepared.verdict else "neutral"
                row.update(decided=verdict, row=None)
                rows.append(row)
                continue
            inp = claim_input(prepared.narrowed, lang)
            if not inp.selected.text:
                row.update(decided="neutral", row=None)
                rows.append(row)
                continue
            [reading] = scorer.read_many([(inp.selected.text, inp.statement)], language=lang)
            row.update(statement=inp.statement, evidence=inp.selected.text, extras=inp.extras)
        elif ex.task == ANSWERABLE:
            assert ex.passage is not None
            pin = passage_input(ex.question, ex.passage, lang)
            [reading] = scorer.read_questions([(pin.system, pin.user)])
            row.update(question=ex.question, evidence=pin.passage, extras=pin.extras)
        else:
            raise ValueError(f"unknown task {ex.task!r}")
        row.update(decided=None, p_yes=round(reading.p_yes, 6), margin=round(reading.margin, 5),
                   tokens=reading.tokens, truncated=reading.truncated, row=len(hidden))
        hidden.append(reading.hidden)
        rows.append(row)
    return rows, hidden


def write_info(folder: Path, info: dict[str, Any]) -> None:
    """Record what the cache was built from (checked on every later run)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "features.json"
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old != info:
            raise ValueError(f"{path} was built differently: {old} != {info}")
        return
    path.write_text(json.dumps(info, indent=2), encoding="utf-8")
