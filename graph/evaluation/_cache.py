"""Per-item result cache: one JSONL file per dataset + task + model, one line per done item.

Each result is appended and flushed as soon as the item finishes, so a run that is stopped
loses at most the item in flight, and a rerun skips every item already on file. A torn last
line (the process killed mid-write) is ignored on reading.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any


def slug(text: str) -> str:
    """A file-name-safe form of a model spec or dataset name."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")
    if len(cleaned) > 60:  # long local paths: keep the end, make it unique with a hash
        digest = hashlib.sha1(text.encode()).hexdigest()[:8]
        cleaned = f"{cleaned[-50:]}_{digest}"
    return cleaned or "default"


class ResultCache:
    """Cached per-item results of one (dataset, task, model, variant) combination."""

    def __init__(self, directory: Path, *, dataset: str, task: str, model: str,
                 variant: str = "", enabled: bool = True) -> None:
        self.dataset, self.task, self.model, self.variant = dataset, task, model, variant
        suffix = f"-{hashlib.sha1(variant.encode()).hexdigest()[:8]}" if variant else ""
        self.path = directory / f"{slug(dataset)}-{task}-{slug(model)}{suffix}.jsonl"
        self.enabled = enabled
        self._done: dict[str, dict[str, Any]] = {}
        if enabled and self.path.exists():
            self._load()

    def key(self, item_id: str) -> str:
        """The cache key of an item: dataset, task, model, variant and item id."""
        return "\x1f".join((self.dataset, self.task, self.model, self.variant, item_id))

    def _load(self) -> None:
        with self.path.open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line torn by an interrupted write
                if isinstance(record, dict) and "key" in record and "result" in record:
                    self._done[record["key"]] = record["result"]

    def get(self, item_id: str) -> dict[str, Any] | None:
        """The cached result of an item, if it was done before (and resuming is on)."""
        return self._done.get(self.key(item_id)) if self.enabled else None

    def put(self, item_id: str, result: dict[str, Any]) -> None:
        """Append one finished item's result and flush it to disk."""
        key = self.key(item_id)
        self._done[key] = result
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.enabled and not getattr(self, "_truncated", False):
            # --no-resume: start this combination's file afresh, then append as usual.
            self.path.write_text("", encoding="utf-8")
            self._truncated = True
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"key": key, "result": result}, ensure_ascii=False) + "\n")
            handle.flush()

    def __len__(self) -> int:
        return len(self._done)
