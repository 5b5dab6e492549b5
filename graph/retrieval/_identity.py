"""Which embedder built a store: name, weight-file hash and vector dimension."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EmbedderIdentity:
    """What the store records about the embedder that wrote its vectors."""

    name: str
    """``<class>:<model name>``, e.g. ``E5Embeddings:multilingual-e5-small-q4``."""
    weights_sha256: str = ""
    """sha256 of the weight file ("" when the embedder does not say)."""
    dimension: int | None = None
    """Vector dimension (None until the first vectors are written)."""

    def describe(self) -> str:
        """Human-readable form used in error messages."""
        parts = [self.name]
        if self.weights_sha256:
            parts.append(f"weights sha256 {self.weights_sha256[:12]}…")
        if self.dimension:
            parts.append(f"{self.dimension}-d")
        return ", ".join(parts)

    def same_model(self, other: EmbedderIdentity) -> bool:
        """True when vectors of ``self`` and ``other`` may share a store."""
        if self.name != other.name:
            return False
        if self.weights_sha256 and other.weights_sha256:
            if self.weights_sha256 != other.weights_sha256:
                return False
        if self.dimension and other.dimension and self.dimension != other.dimension:
            return False
        return True
