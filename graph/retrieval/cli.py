"""``grounded-rag ingest`` and ``grounded-rag retrieve``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from grounded_rag._console import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    clean,
    print_json,
)

if TYPE_CHECKING:
    from grounded_rag.retrieval.ingest import IngestReport


def register(subparsers: Any) -> None:
    """Add the retrieval subcommands to the top-level parser."""
    ingest = subparsers.add_parser(
        "ingest",
        help="index files or directories (.md .txt .html .pdf .jsonl) into a store",
        description="Index documents. Unchanged files are skipped, changed ones replaced. "
        "Text that is not UTF-8 is read in the encoding detected for it (reported); a file "
        "whose encoding cannot be told is refused. References show each file's path relative "
        "to the directory given (or --base-url + that path), never the server's file system. "
        "Ctrl-C saves finished documents; running the same command again resumes. --reembed "
        "re-embeds the stored chunks with another embedder (no PATH needed).",
    )
    ingest.add_argument("paths", nargs="*", metavar="PATH", help="files or directories")
    _store_args(ingest)
    ingest.add_argument(
        "--prune", action="store_true", help="remove documents no longer in PATH..."
    )
    ingest.add_argument(
        "--base-url", metavar="URL", default=None,
        help="where readers can open the files, e.g. https://docs.example.com/handbook/ "
        "(each reference links to URL + the file's relative path)",
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
    retrieve.add_argument(
        "--doc", action="append", metavar="DOC_ID", default=None,
        help="search only this document (repeat for several)",
    )
    retrieve.add_argument(
        "--path-prefix", action="append", metavar="PREFIX", default=None,
        help="search only documents whose id (path relative to the ingested directory, "
        "without extension) or url starts with PREFIX, e.g. policies/ (repeatable)",
    )
    retrieve.add_argument(
        "--language", choices=["ja", "en"], default=None,
        help="search only Japanese (ja) or other (en) chunks",
    )
    retrieve.add_argument(
        "--where", action="append", metavar="KEY=VALUE", default=None,
        help="search only chunks whose KEY (source_id, doc_id, title, section, url, start, "
        "end, language) equals VALUE; repeating a KEY allows any of its values",
    )
    _store_args(retrieve)
    retrieve.set_defaults(func=_run_retrieve)


def _store_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store",
        metavar="DIR|URL",
        default=None,
        help="store directory (default: $GROUNDED_RAG_STORE or ./.grounded-rag), or a "
        "networked store postgresql://USER@HOST:PORT/DB?schema=NAME (catalogue and BM25 in "
        "Postgres; vectors on the Chroma server of --chroma-url)",
    )
    parser.add_argument(
        "--embedder",
        type=_embedder_spec,
        metavar="SPEC",
        default=None,
        help="e5 (multilingual, default on Linux x86_64), minilm (English-only, faster), "
        "auto (the platform's default), or openai:MODEL[#input_type|#e5][@URL]: a model on an "
        "OpenAI-compatible embeddings server at URL (http:// or https://, e.g. "
        "http://127.0.0.1:8080/v1; else $GROUNDED_RAG_EMBEDDER_BASE_URL or $OPENAI_BASE_URL). "
        "The same specs as $GROUNDED_RAG_EMBEDDER; default: the one the store was built with "
        "(a server's URL is not recorded: later commands without --embedder find it in "
        "$GROUNDED_RAG_EMBEDDER_BASE_URL)",
    )
    parser.add_argument(
        "--chroma-url",
        metavar="URL",
        default=None,
        help="Chroma server URL for the vectors (default: $GROUNDED_RAG_CHROMA_URL, else "
        "embedded Chroma in the store)",
    )


def _embedder_spec(value: str) -> str:
    """``--embedder`` checked by the rule of ``$GROUNDED_RAG_EMBEDDER`` (a usage error if not).

    Only the spelling is checked; the embeddings module loads here because that rule lives
    there, and a valid spec loads it right after anyway.
    """
    from grounded_rag.retrieval.embeddings import check_embedder_spec

    try:
        return check_embedder_spec(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def ingest_summary(report: IngestReport) -> str:
    """One sentence on what an ingest run did, for people."""
    if report.interrupted:
        todo = len(report.added) + len(report.updated)
        return (
            f"interrupted: {len(report.committed)} of {todo} new or changed documents saved "
            f"({report.chunks_written} chunks embedded); run the same command again to resume"
        )
    reused = (f" ({report.chunks_reused} reused from an interrupted run)"
              if report.chunks_reused else "")
    return (
        f"{len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.unchanged)} unchanged, {len(report.removed)} removed, "
        f"{len(report.errors)} failed; {report.chunks_written} chunks written to "
        f"{clean(report.store)}{reused}"
    )


def _run_reembed(args: argparse.Namespace) -> int:
    from grounded_rag.retrieval.ingest import reembed_store

    if args.paths or args.prune:
        raise CommandError("--reembed takes no PATH and no --prune; run it on its own",
                           code=EXIT_USAGE, kind="usage")
    report = reembed_store(
        args.store,
        embedder=args.embedder,
        chroma_url=args.chroma_url,
        progress=not args.no_progress,
    )
    if args.json:
        print_json(report.to_dict())
    elif report.interrupted:
        print(
            f"interrupted: {report.previous} still serves; run the same command again to "
            f"resume ({report.chunks_embedded + report.chunks_reused} chunks done so far)"
        )
    else:
        print(
            f"re-embedded {report.chunks_embedded} chunks ({report.chunks_reused} reused from "
            f"an interrupted run) in {clean(report.store)}; now serving {report.embedder} "
            f"(was {report.previous})"
        )
    return EXIT_INTERRUPTED if report.interrupted else EXIT_OK


def _run_ingest(args: argparse.Namespace) -> int:
    from grounded_rag.retrieval.ingest import ingest_paths

    if args.reembed:
        return _run_reembed(args)
    if not args.paths:
        raise CommandError("give at least one PATH to ingest (or --reembed)",
                           code=EXIT_USAGE, kind="usage")
    report = ingest_paths(
        args.paths,
        args.store,
        prune=args.prune,
        progress=not args.no_progress,
        embedder=args.embedder,
        chroma_url=args.chroma_url,
        base_url=args.base_url,
    )
    for line in report.errors:
        print(f"error: {clean(line)}", file=sys.stderr)
    for line in report.skipped:
        print(f"note: {clean(line)}", file=sys.stderr)
    for source, encoding in report.encodings.items():
        print(f"note: {clean(source)}: not UTF-8, read as {encoding}", file=sys.stderr)
    if args.json:
        print_json(report.to_dict())
    else:
        print(ingest_summary(report))
    if report.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK if report.ok else EXIT_FAILED


def _run_retrieve(args: argparse.Namespace) -> int:
    from grounded_rag.questions import check_question

    query = check_question(args.query)
    from grounded_rag.retrieval._open import open_retriever

    chunk_filter = _chunk_filter(args)
    retriever = open_retriever(
        args.store, chroma_url=args.chroma_url, mode=args.mode, embedder=args.embedder
    )
    hits = retriever.retrieve(query, k=args.k, chunk_filter=chunk_filter)
    if args.json:
        print_json(hits)
        return EXIT_OK
    if not hits:
        print("no results")
    for rank, ev in enumerate(hits, start=1):
        print(
            f"{rank}. [{clean(ev['source_id'])}] {clean(ev['title'])}  "
            f"relevance={ev['relevance']:.2f} score={ev['score']:.4f}"
        )
        if ev["url"]:
            print(f"   {clean(ev['url'])}")
        text = " ".join(ev["text"].split())
        print(f"   {clean(text[:300])}{'…' if len(text) > 300 else ''}")
    return EXIT_OK


def _chunk_filter(args: argparse.Namespace) -> Any:
    """The filter of ``retrieve``'s --doc / --path-prefix / --language / --where (or None)."""
    from grounded_rag.retrieval.filters import make_filter

    where: dict[str, list[str]] = {}
    for item in args.where or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"--where takes KEY=VALUE, got {item!r}", code=EXIT_USAGE,
                               kind="usage")
        where.setdefault(key.strip(), []).append(value)
    try:
        return make_filter(doc_id=args.doc, path_prefix=args.path_prefix,
                           language=args.language, filter=where or None)
    except ValueError as exc:
        raise CommandError(str(exc), code=EXIT_USAGE, kind="usage") from exc
