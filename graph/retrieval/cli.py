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
        description=(
            "Index documents. Unchanged files are skipped, changed ones replaced. Ctrl-C "
            "saves finished documents; running the same command again resumes. "
            "--reembed re-embeds the stored chunks with another embedder (no PATH needed)."
        ),
    )
    ingest.add_argument("paths", nargs="*", metavar="PATH", help="files or directories")
    _store_args(ingest)
    ingest.add_argument(
        "--prune", action="store_true", help="remove documents no longer in PATH..."
    )
    ingest.add_argument(
        "--reembed",
        action="store_true",
        help="rebuild every vector with --embedder from the stored chunks (documents are "
        "not re-read; queries keep using the old vectors until the new ones are complete)",
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
        "--embedder",
        choices=["e5", "minilm"],
        default=None,
        help="built-in embedder: e5 (multilingual, default on Linux x86_64) or minilm "
        "(English-only, faster); default: the one the store was built with "
        "($GROUNDED_RAG_EMBEDDER)",
    )
    parser.add_argument(
        "--chroma-url",
        metavar="URL",
        default=None,
        help="Chroma server URL for the vectors (default: embedded Chroma in the store)",
    )


def _run_reembed(args: argparse.Namespace) -> int:
    from grounded_rag.retrieval._errors import RetrievalError
    from grounded_rag.retrieval.ingest import reembed_store

    if args.paths or args.prune:
        print("error: --reembed takes no PATH and no --prune; run it on its own", file=sys.stderr)
        return 2
    try:
        report = reembed_store(
            args.store,
            embedder=args.embedder,
            chroma_url=args.chroma_url,
            progress=not args.no_progress,
        )
    except RetrievalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    elif report.interrupted:
        print(
            f"interrupted: {report.previous} still serves; run the same command again to "
            f"resume ({report.chunks_embedded + report.chunks_reused} chunks done so far)"
        )
    else:
        print(
            f"re-embedded {report.chunks_embedded} chunks ({report.chunks_reused} reused from "
            f"an interrupted run) in {report.store}; now serving {report.embedder} "
            f"(was {report.previous})"
        )
    return 130 if report.interrupted else 0


def _run_ingest(args: argparse.Namespace) -> int:
    from grounded_rag.retrieval._errors import RetrievalError
    from grounded_rag.retrieval.ingest import ingest_paths

    if args.reembed:
        return _run_reembed(args)
    if not args.paths:
        print("error: give at least one PATH to ingest (or --reembed)", file=sys.stderr)
        return 2
    try:
        report = ingest_paths(
            args.paths,
            args.store,
            prune=args.prune,
            progress=not args.no_progress,
            embedder=args.embedder,
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
    elif report.interrupted:
        todo = len(report.added) + len(report.updated)
        print(
            f"interrupted: {len(report.committed)} of {todo} new or changed documents saved "
            f"({report.chunks_written} chunks embedded); run the same command again to resume"
        )
    else:
        print(
            f"{len(report.added)} added, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.removed)} removed, "
            f"{len(report.errors)} failed; {report.chunks_written} chunks written to {report.store}"
            + (
                f" ({report.chunks_reused} reused from an interrupted run)"
                if report.chunks_reused
                else ""
            )
        )
    if report.interrupted:
        return 130
    return 0 if report.ok else 1


def _run_retrieve(args: argparse.Namespace) -> int:
    from grounded_rag.retrieval._errors import RetrievalError
    from grounded_rag.retrieval._open import open_retriever

    try:
        retriever = open_retriever(
            args.store, chroma_url=args.chroma_url, mode=args.mode, embedder=args.embedder
        )
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
