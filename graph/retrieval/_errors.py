"""Errors of the retrieval layer; each message says what happened and what to do next."""

from __future__ import annotations


class RetrievalError(Exception):
    """Base class for every user-facing retrieval or ingestion error."""


class StoreNotFoundError(RetrievalError):
    """The store directory does not exist or holds no grounded-rag index."""


class EmptyStoreError(RetrievalError):
    """The store exists but holds no documents yet."""


class StoreMismatchError(RetrievalError):
    """The store was built with a different embedding model (other dimension or name)."""


class ModelFileError(RetrievalError):
    """The bundled embedding model or tokenizer is missing or fails its hash check."""


class LoadError(RetrievalError):
    """One input file (or line) could not be turned into a document."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class StoreUnavailableError(RetrievalError):
    """A networked store's database or vector server cannot be reached.

    The message names which, and the flag that points at it; the server answers 503 with
    ``Retry-After``.
    """
