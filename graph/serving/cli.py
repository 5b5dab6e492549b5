"""``grounded-rag serve``: the HTTP app (LangServe routes, reviews, metrics, the page)."""

from __future__ import annotations

import argparse
import os
import sys

from grounded_rag._console import EXIT_USAGE, CommandError, print_json
from grounded_rag.questions import MAX_QUESTION_CHARS


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``serve`` subcommand."""
    serve = sub.add_parser(
        "serve", help="serve the graph over HTTP (LangServe at /rag, reviews, /metrics, page at /)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default "
                       "127.0.0.1; use 0.0.0.0 only behind a proxy you trust)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--checkpointer", help="where paused runs (reviews) are kept: "
                       "sqlite:PATH (default: <store>/serving-checkpoints.sqlite), "
                       "postgresql://USER@HOST:PORT/DB for several workers, or memory")
    serve.add_argument("--store", help="store directory to answer from (default "
                       "$GROUNDED_RAG_STORE or ./.grounded-rag)")
    serve.add_argument("--prices", help="JSON or TOML price table {model: {input, output}} in "
                       "USD per 1M tokens, overlaid on the built-in one")
    serve.add_argument("--review-mode", action="store_true",
                       help="pause answers below the review threshold for a person by default")
    serve.add_argument("--max-question-chars", type=int, default=MAX_QUESTION_CHARS,
                       help=f"longest question accepted (default and most {MAX_QUESTION_CHARS}, "
                       "the limit of every surface)")
    serve.add_argument("--log-level", default="info",
                       choices=["critical", "error", "warning", "info", "debug"])
    serve.add_argument("--json", action="store_true",
                       help="print the addresses as JSON on stdout before starting")
    serve.set_defaults(func=serve_command)


def serve_command(args: argparse.Namespace) -> int:
    """Build the app and run it under uvicorn until interrupted."""
    from grounded_rag.models import require_extra

    for module in ("langserve", "fastapi", "uvicorn", "sse_starlette", "prometheus_client"):
        require_extra(module, "serve")  # a missing extra: exit 3, naming the install command
    # The server is offline by default: no telemetry from the embedded parts.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

    import uvicorn

    from grounded_rag.serving.app import create_app

    try:
        app = create_app(checkpointer=args.checkpointer, store_dir=args.store,
                         prices=args.prices, max_question_chars=args.max_question_chars,
                         settings={"review_mode": True} if args.review_mode else None)
    except (ValueError, OSError) as exc:
        raise CommandError(str(exc), code=EXIT_USAGE, kind="invalid_option") from None
    url = f"http://{args.host}:{args.port}/"
    if args.json:
        print_json({"url": url, "api_docs": url + "docs", "langserve": url + "rag",
                    "metrics": url + "metrics"})
        sys.stdout.flush()
    print(f"grounded-rag serving on {url} (API docs /docs, LangServe /rag, metrics /metrics)",
          file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
