"""Ingest's loading step: walk the input paths and yield documents, noting skips and errors."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from grounded_rag.retrieval._ingest_report import IngestReport
from grounded_rag.retrieval.chunking import Document
from grounded_rag.retrieval.loaders import SUPPORTED_SUFFIXES, file_url, iter_inputs, load_file


def _load_inputs(
    paths: list[str | os.PathLike[str]], report: IngestReport, failed_sources: set[str],
    base_url: str | None = None,
) -> Iterator[Document]:
    """Load files one at a time (documents are chunked as they arrive, not all held first)."""
    for file, doc_id, explicit, root in _inputs(paths):
        if not explicit and file.suffix.lower() not in SUPPORTED_SUFFIXES:
            report.skipped.append(f"{file}: unsupported type, skipped")
            continue
        rel = file.name if explicit else file.relative_to(root).as_posix()
        result = load_file(file, doc_id, url=file_url(rel, base_url))
        if result.documents and result.documents[0].encoding != "utf-8":
            report.encodings[str(file)] = result.documents[0].encoding
        for err in result.errors:
            report.errors.append(str(err))
        if result.errors:
            failed_sources.add(result.source)
        yield from result.documents


def _inputs(paths: list[Any]) -> Iterable[tuple[Any, str | None, bool, Any]]:
    """:func:`iter_inputs` per given path, with that path (the root of relative urls)."""
    for raw in paths:
        for file, doc_id, explicit in iter_inputs([raw]):
            yield file, doc_id, explicit, raw
