"""Trained judge heads: small numpy classifiers over the local model's hidden states.

A head file pair ``<name>.npz`` (weights) + ``<name>.json`` (what it was trained for and how
it decides) ships inside the package, next to this module (``heads/``). A head is only
valid for the model file and the prompts it was trained with: loading one whose model hash
or prompt fingerprint differs from the running code raises ``HeadMismatchError`` naming
the file and the fix.

Each classifier is a logistic regression or a one-hidden-layer MLP on standardised inputs:
the hidden states of a few layers at the prompt's last position, the P(Yes) logit margin and
a handful of model-free features (``grounded_rag.local.features``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HEADS_DIR = Path(__file__).with_name("heads")
"""Where the shipped head files live."""

HEAD_FORMAT = 1
"""Version of the head file layout."""

RETRAIN_HINT = (
    "Re-train it with `grounded-rag train-judge` (see docs/judge.md), or use the plain "
    "Yes/No scorer: LocalVerifier(judge='logit') / LocalAnswerabilityJudge(judge='logit')."
)


class HeadError(RuntimeError):
    """A head file is missing or unreadable."""


class HeadMismatchError(HeadError):
    """A head was trained for another model file or other prompts than the running ones."""


@dataclass
class Classifier:
    """One binary classifier: logistic regression (no hidden layer) or a small MLP."""

    w1: np.ndarray | None
    """Hidden layer weights ``(d, h)``; None for logistic regression."""
    b1: np.ndarray | None
    """Hidden layer bias ``(h,)``."""
    w2: np.ndarray
    """Output weights ``(h,)`` (or ``(d,)`` without a hidden layer)."""
    b2: float
    """Output bias."""

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Raw scores for standardised inputs ``x`` of shape ``(n, d)``."""
        h = x if self.w1 is None else np.tanh(x @ self.w1 + self.b1)
        return h @ self.w2 + self.b2

    def proba(self, x: np.ndarray) -> np.ndarray:
        """P(positive) for standardised inputs."""
        return 1.0 / (1.0 + np.exp(-np.clip(self.logits(x), -40, 40)))

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        """Weights as named arrays (float16 to keep the file small)."""
        out = {f"{prefix}.w2": self.w2.astype(np.float16), f"{prefix}.b2": np.array([self.b2])}
        if self.w1 is not None and self.b1 is not None:
            out[f"{prefix}.w1"] = self.w1.astype(np.float16)
            out[f"{prefix}.b1"] = self.b1.astype(np.float32)
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], prefix: str) -> Classifier:
        """Rebuild from ``arrays`` (as written by ``arrays``)."""
        w1 = arrays.get(f"{prefix}.w1")
        b1 = arrays.get(f"{prefix}.b1")
        return cls(
            w1=None if w1 is None else np.asarray(w1, dtype=np.float32),
            b1=None if b1 is None else np.asarray(b1, dtype=np.float32),
            w2=np.asarray(arrays[f"{prefix}.w2"], dtype=np.float32),
            b2=float(np.asarray(arrays[f"{prefix}.b2"]).reshape(-1)[0]),
        )


@dataclass
class JudgeHead:
    """A trained head: input recipe, standardisation, classifiers and decision thresholds."""

    task: str
    """``claim`` (classifiers ``support`` and ``contradiction``) or ``answerable``
    (classifier ``answerable``)."""
    layers: tuple[int, ...]
    """Hidden-state layers read, in input order (-1: final normed state)."""
    extras: tuple[str, ...]
    """Model-free features read, in input order."""
    use_margin: bool
    """Whether the P(Yes) logit margin is an input."""
    mean: np.ndarray
    """Input means (standardisation)."""
    std: np.ndarray
    """Input standard deviations (standardisation)."""
    classifiers: dict[str, Classifier]
    """Named binary classifiers."""
    thresholds: dict[str, float]
    """Decision threshold per classifier (chosen on cross-validation folds)."""
    meta: dict[str, Any]
    """Provenance: model hash, prompt fingerprint, training data, folds, report summary."""

    def inputs(
        self,
        hidden: np.ndarray,
        hidden_layers: Sequence[int],
        margin: float,
        extras: Mapping[str, float],
    ) -> np.ndarray:
        """One raw input vector from a reading's hidden states, margin and extras."""
        index = {layer: i for i, layer in enumerate(hidden_layers)}
        missing = [layer for layer in self.layers if layer not in index]
        if missing:
            raise HeadError(f"the reading has no hidden state for layers {missing}")
        parts = [np.asarray(hidden[index[layer]], dtype=np.float32) for layer in self.layers]
        scalars = [float(extras.get(name, 0.0)) for name in self.extras]
        if self.use_margin:
            scalars.append(float(margin))
        parts.append(np.asarray(scalars, dtype=np.float32))
        return np.concatenate(parts)

    def proba(self, name: str, rows: np.ndarray) -> np.ndarray:
        """P(positive) of classifier ``name`` for raw input rows ``(n, d)``."""
        x = (np.atleast_2d(rows) - self.mean) / self.std
        return self.classifiers[name].proba(x)

    def save(self, path: Path) -> None:
        """Write ``path`` (.npz) and its .json beside it."""
        arrays: dict[str, np.ndarray] = {"mean": self.mean.astype(np.float32),
                                         "std": self.std.astype(np.float32)}
        for name, clf in self.classifiers.items():
            arrays.update(clf.arrays(name))
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path.with_suffix(".npz"), **arrays)  # type: ignore[arg-type]
        spec = {
            "format": HEAD_FORMAT, "task": self.task, "layers": list(self.layers),
            "extras": list(self.extras), "use_margin": self.use_margin,
            "classifiers": sorted(self.classifiers), "thresholds": self.thresholds,
            **self.meta,
        }
        path.with_suffix(".json").write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n",
                                             encoding="utf-8")


def load_head(
    path: str | Path,
    *,
    model_sha256: str | None = None,
    prompt_fingerprint: str | None = None,
) -> JudgeHead:
    """Load a head, refusing one trained for another model file or other prompts.

    Args:
        path: the ``.npz`` (or ``.json``) file, or a bare name inside ``HEADS_DIR``.
        model_sha256: sha256 of the running model file; checked when given.
        prompt_fingerprint: the running code's ``prompt_fingerprint(task)``; checked when given.

    Raises:
        HeadError: the file is missing or unreadable.
        HeadMismatchError: the model hash or prompt fingerprint differs.
    """
    base = Path(path)
    if base.suffix not in {".npz", ".json"}:
        base = (HEADS_DIR / base) if not base.parent.parts else base
    npz, spec_path = base.with_suffix(".npz"), base.with_suffix(".json")
    for p in (npz, spec_path):
        if not p.exists():
            raise HeadError(f"judge head file {p} is missing. {RETRAIN_HINT}")
    try:
        spec = json.loads(spec_path.read_text(encoding="utf-8"))
        with np.load(npz) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError) as exc:
        raise HeadError(f"judge head {npz} cannot be read ({exc}). {RETRAIN_HINT}") from exc
    if spec.get("format") != HEAD_FORMAT:
        raise HeadError(f"judge head {spec_path} has format {spec.get('format')!r}, this code "
                        f"reads format {HEAD_FORMAT}. {RETRAIN_HINT}")
    if model_sha256 is not None and spec.get("model_sha256") != model_sha256:
        raise HeadMismatchError(
            f"judge head {spec_path} was trained for the model with sha256 "
            f"{spec.get('model_sha256')}, but the running model's is {model_sha256}. "
            f"{RETRAIN_HINT}")
    if prompt_fingerprint is not None and spec.get("prompt_fingerprint") != prompt_fingerprint:
        raise HeadMismatchError(
            f"judge head {spec_path} was trained with prompt fingerprint "
            f"{spec.get('prompt_fingerprint')}, but the running prompts give "
            f"{prompt_fingerprint} (the judge prompts, evidence budgets or features changed). "
            f"{RETRAIN_HINT}")
    classifiers = {name: Classifier.from_arrays(arrays, name) for name in spec["classifiers"]}
    known = {"format", "task", "layers", "extras", "use_margin", "classifiers", "thresholds"}
    return JudgeHead(
        task=spec["task"], layers=tuple(spec["layers"]), extras=tuple(spec["extras"]),
        use_margin=bool(spec["use_margin"]), mean=np.asarray(arrays["mean"], dtype=np.float32),
        std=np.asarray(arrays["std"], dtype=np.float32), classifiers=classifiers,
        thresholds={k: float(v) for k, v in spec["thresholds"].items()},
        meta={k: v for k, v in spec.items() if k not in known},
    )


def installed_heads_digest() -> str:
    """Short hash of the shipped head files ("none" when there are none).

    Evaluation caches key on it, so results computed with other heads are never reused.
    """
    import hashlib

    digest = hashlib.sha256()
    files = sorted(HEADS_DIR.glob("*.npz")) + sorted(HEADS_DIR.glob("*.json"))
    for p in files:
        digest.update(p.name.encode())
        digest.update(p.read_bytes())
    return digest.hexdigest()[:10] if files else "none"
