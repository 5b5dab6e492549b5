"""``grounded-rag ingest`` and ``grounded-rag retrieve``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add the retrieval subcommands to the top-level parser."""
    ingest = subparsers.add_parser(
        "ingest",
        help="index files or directories (.md .txt .html .pdf .jsonl) into a store",
        description="Index documents. Unchanged files are skipped, changed ones replaced.",
    )
    ingest.add_argument("paths", nargs="+", metavar="PATH", help="files or directories")
    _store_args(ingest)
    ingest.add_argument(
        "--prune", action="store_true", help="remove documents no longer in PATH..."
    )
    ingest.add_argument("--no-progress", action="store_true", help="no progress bar")
    ingest.add_argument("--json", action="store_true", help="print the report as JSON")
    ingest.set_defaults(func=_run_ingest)

    retrieve = subparsers.add_parser(
        "retrieve",
        help="show the ranked chunks a question retrieves",
        description="Print ranked chunks (id, title, url, score, relevance, text).",
    )
    retrieve.add_argument("query", metavar="QUERY")
    retrieve.add_argument("--k", type=int, default=5, help="number of results (default 5)")
    retrieve.add_argument("--mode", choices=["hybrid", "bm25", "vector"], default="hybrid")
    retrieve.add_argument("--json", action="store_true", help="print JSON")
    _store_args(retrieve)
    retrieve.set_defaults(func=_run_retrieve)


def _store_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="DIR",
        default=None,
        help="store directory (default: $GROUNDED_RAG_STORE or ./.grounded-rag)",
    )
    parser.add_argument(
        "--chroma-url",
        metavar="URL",
        default=None,
        help="Chroma server URL for the vectors (default: embedded Chroma in the store)",
    )


def _run_ingest(args: argparse.Namespace) -> int:
    from grounded_rag.retrieval._errors import RetrievalError
    from grounded_rag.retrieval.ingest import ingest_paths

    try:
        report = ingest_paths(
            args.paths,
            args.store,
            prune=args.prune,
            progress=not args.no_progress,
            chroma_url=args.chroma_url,
        )
    except RetrievalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for line in report.errors:
        print(f"error: {line}", file=sys.stderr)
    for line in report.skipped:
        print(f"note: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(
            f"{len(report.added)} added, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.removed)} removed, "
            f"{len(report.errors)} failed; {report.chunks_written} chunks written to {report.store}"
        )
    return 0 if report.ok else 1


def _run_retrieve(args: argparse.Namespace) -> int:
    from grounded_rag.retrieval._errors import RetrievalError
    from grounded_rag.retrieval._open import open_retriever

    try:
        retriever = open_retriever(args.store, chroma_url=args.chroma_url, mode=args.mode)
        hits = retriever.retrieve(args.query, k=args.k)
    except RetrievalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(hits, ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print("no results")
    for rank, ev in enumerate(hits, start=1):
        print(
            f"{rank}. [{ev['source_id']}] {ev['title']}  "
            f"relevance={ev['relevance']:.2f} score={ev['score']:.4f}"
        )
        if ev["url"]:
            print(f"   {ev['url']}")
        text = " ".join(ev["text"].split())
        print(f"   {text[:300]}{'…' if len(text) > 300 else ''}")
    return 0
