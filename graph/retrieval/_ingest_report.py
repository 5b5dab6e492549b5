"""What an ingest or a re-embed run did, as returned to callers and printed by the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class IngestReport:
    """What an ingest run did."""

    store: str
    """The store directory."""
    added: list[str] = field(default_factory=list)
    """Ids of new documents."""
    updated: list[str] = field(default_factory=list)
    """Ids of documents whose content changed and were replaced."""
    unchanged: list[str] = field(default_factory=list)
    """Ids of documents skipped because their content hash did not change."""
    removed: list[str] = field(default_factory=list)
    """Ids removed by ``prune``."""
    skipped: list[str] = field(default_factory=list)
    """Files skipped while walking directories (unsupported type)."""
    errors: list[str] = field(default_factory=list)
    """One message per failed file or line."""
    encodings: dict[str, str] = field(default_factory=dict)
    """Files that were not UTF-8, with the encoding detected and used to read them."""
    chunks_written: int = 0
    """Chunks embedded and written in this run."""
    chunks_reused: int = 0
    """Chunks whose vectors an interrupted earlier run had already written."""
    committed: list[str] = field(default_factory=list)
    """Ids of documents committed (visible to queries) by this run."""
    interrupted: bool = False
    """True when Ctrl-C stopped the run; finished documents were committed, run it again."""

    @property
    def ok(self) -> bool:
        """True when no input failed and the run was not interrupted."""
        return not self.errors and not self.interrupted

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "store": self.store,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "skipped": self.skipped,
            "errors": self.errors,
            "encodings": self.encodings,
            "chunks_written": self.chunks_written,
            "chunks_reused": self.chunks_reused,
            "interrupted": self.interrupted,
            "ok": self.ok,
        }


@dataclass
class ReembedReport:
    """What a re-embed run did."""

    store: str
    """The store directory."""
    embedder: str
    """The embedder now serving (``name, weights sha256, dimension``)."""
    previous: str
    """The embedder that served before."""
    chunks_embedded: int = 0
    """Chunks embedded by this run."""
    chunks_reused: int = 0
    """Chunks an interrupted earlier re-embed had already done."""
    interrupted: bool = False
    """True when Ctrl-C stopped it before the switch (the old vectors still serve)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return dict(self.__dict__)
