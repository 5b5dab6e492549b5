"""``grounded-rag serve``: the HTTP app (LangServe routes, reviews, metrics, the page)."""

from __future__ import annotations

import argparse
import os
import sys

from grounded_rag._console import EXIT_USAGE, CommandError, print_json
from grounded_rag.questions import MAX_QUESTION_CHARS
from grounded_rag.serving.limits import Limits

_LIMIT_DEFAULTS = Limits()


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``serve`` and ``keys`` subcommands."""
    _register_keys(sub)
    serve = sub.add_parser(
        "serve", help="serve the graph over HTTP (LangServe at /rag, reviews, /metrics, page at /)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default "
                       "127.0.0.1; any other needs --keys, or --insecure-no-auth)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1); "
                       "several need a shared checkpointer (postgresql://...) and, for the "
                       "vectors, --chroma-url")
    serve.add_argument("--checkpointer", help="where paused runs (reviews) are kept: "
                       "sqlite:PATH (default: <store>/serving-checkpoints.sqlite; for a "
                       "postgresql:// store, its database), postgresql://USER@HOST:PORT/DB "
                       "for several workers, or memory")
    serve.add_argument("--store", help="store to answer from: a directory, or "
                       "postgresql://USER@HOST:PORT/DB?schema=NAME for several machines "
                       "(default $GROUNDED_RAG_STORE or ./.grounded-rag)")
    serve.add_argument("--chroma-url", metavar="URL", help="Chroma server holding the store's "
                       "vectors, as given to `grounded-rag ingest --chroma-url` (default "
                       "$GROUNDED_RAG_CHROMA_URL, else the store's embedded Chroma)")
    serve.add_argument("--graph", metavar="MODULE:ATTR", default="",
                       help="serve this graph, builder or zero-argument function returning one "
                       "instead of the package's workflow (importable from every worker)")
    serve.add_argument("--prices", help="JSON or TOML price table {model: {input, output}} in "
                       "USD per 1M tokens, overlaid on the built-in one")
    serve.add_argument("--review-mode", action="store_true",
                       help="pause answers below the review threshold for a person by default")
    serve.add_argument("--durability", choices=["exit", "async", "sync"], default="exit",
                       help="when a run's checkpoints are written: once when it ends, paused "
                       "or not (exit, the default: review and deferred verification need no "
                       "more), or after every step (async: in the background; sync: before "
                       "the next step)")
    serve.add_argument("--max-question-chars", type=int, default=MAX_QUESTION_CHARS,
                       help=f"longest question accepted (default and most {MAX_QUESTION_CHARS}, "
                       "the limit of every surface)")
    limits = serve.add_argument_group(
        "limits (per worker process; refused requests get 413, 429 or 503 with Retry-After)")
    limits.add_argument("--max-body-bytes", type=int, default=_LIMIT_DEFAULTS.max_body_bytes,
                        help="largest request body (default %(default)s)")
    limits.add_argument("--max-in-flight", type=int, default=_LIMIT_DEFAULTS.max_in_flight,
                        help="requests running the graph at once (default %(default)s)")
    limits.add_argument("--max-queue", type=int, default=_LIMIT_DEFAULTS.max_queue,
                        help="requests waiting for a slot; more get a 503 (default "
                        "%(default)s)")
    limits.add_argument("--queue-timeout", type=float, default=_LIMIT_DEFAULTS.queue_timeout_s,
                        metavar="SECONDS", help="longest wait for a slot before a 503 (default "
                        "%(default)s)")
    limits.add_argument("--per-client", type=int, default=_LIMIT_DEFAULTS.per_client,
                        metavar="N", help="requests one client may hold at once, more get a "
                        "429 (default 0: no limit)")
    limits.add_argument("--client-header", default=_LIMIT_DEFAULTS.client_header,
                        metavar="NAME", help="header naming the client for --per-client, set "
                        "by your proxy (default: the client's IP address)")
    limits.add_argument("--retry-after", type=int, default=_LIMIT_DEFAULTS.retry_after_s,
                        metavar="SECONDS", help="Retry-After sent with 429 and 503 (default "
                        "%(default)s)")
    serve.add_argument("--keys", metavar="FILE", default=os.environ.get("GROUNDED_RAG_KEYS"),
                       help="API key file (`grounded-rag keys create`): every request but "
                       "/healthz, /metrics and the page needs a live key, /reviews a reviewer's "
                       "(default $GROUNDED_RAG_KEYS; none: no keys are asked for)")
    serve.add_argument("--insecure-no-auth", action="store_true",
                       help="bind beyond loopback without --keys: anyone who reaches the port "
                       "reads answers and decides reviews")
    serve.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                       help="skip the throwaway question per language each worker answers at "
                       "start with the local model (then the first user's answer also loads "
                       "the model and the retrieval stack)")
    serve.add_argument("--log-level", default="info",
                       choices=["critical", "error", "warning", "info", "debug"])
    serve.add_argument("--json", action="store_true",
                       help="print the addresses as JSON on stdout before starting")
    serve.set_defaults(func=serve_command)


def serve_options(args: argparse.Namespace) -> object:
    """The :class:`ServeOptions` the arguments ask for (a usage error when invalid)."""
    from grounded_rag.serving.factory import ServeOptions

    if args.workers < 1:
        raise CommandError("--workers must be at least 1", code=EXIT_USAGE, kind="invalid_option")
    if args.workers > 1 and args.checkpointer == "memory":
        raise CommandError("--checkpointer memory keeps reviews inside one process: with "
                           "several workers use postgresql://USER@HOST:PORT/DB",
                           code=EXIT_USAGE, kind="invalid_option")
    try:
        limits = Limits(max_body_bytes=args.max_body_bytes, max_in_flight=args.max_in_flight,
                        max_queue=args.max_queue, queue_timeout_s=args.queue_timeout,
                        per_client=args.per_client, client_header=args.client_header,
                        retry_after_s=args.retry_after)
    except ValueError as exc:
        raise CommandError(str(exc), code=EXIT_USAGE, kind="invalid_option") from None
    return ServeOptions(graph=args.graph, checkpointer=args.checkpointer, store=args.store,
                        chroma_url=args.chroma_url, prices=args.prices,
                        max_question_chars=args.max_question_chars,
                        review_mode=args.review_mode, limits=limits,
                        durability=args.durability, warm_up=args.warm_up, keys=args.keys)


def check_exposure(host: str, keys: str | None, *, insecure: bool) -> None:
    """Refuse to serve beyond loopback without keys, and a key file with no live key."""
    from grounded_rag.serving.auth import KeyStore, KeyStoreError, is_loopback

    if keys:
        try:
            live = KeyStore(keys).has_keys()
        except KeyStoreError as exc:
            raise CommandError(str(exc), code=EXIT_USAGE, kind="invalid_option") from None
        if not live:
            raise CommandError(f"{keys} holds no live API key, so nobody could ask: create "
                               "one with `grounded-rag keys create NAME --role admin --keys "
                               f"{keys}`", code=EXIT_USAGE, kind="invalid_option")
    elif not is_loopback(host) and not insecure:
        raise CommandError(f"--host {host} serves other machines, and without --keys anyone "
                           "who reaches the port reads every answer and decides reviews: give "
                           "--keys FILE (`grounded-rag keys create`), or --insecure-no-auth "
                           "behind a proxy that authenticates", code=EXIT_USAGE,
                           kind="invalid_option")


def log_config(level: str) -> dict[str, object]:
    """Uvicorn's logging configuration, plus the package's loggers on its console handler.

    They say which checkpointer is in use, the warm-up, recovered verifications, failed runs.
    """
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["grounded_rag"] = {"handlers": ["default"], "level": level.upper(),
                                         "propagate": False}
    return config


def serve_command(args: argparse.Namespace) -> int:
    """Build the app and run it under uvicorn (N worker processes) until interrupted."""
    from grounded_rag.models import require_extra

    for module in ("langserve", "fastapi", "uvicorn", "sse_starlette", "prometheus_client"):
        require_extra(module, "serve")  # a missing extra: exit 3, naming the install command
    # The server is offline by default: no telemetry from the embedded parts.
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

    import uvicorn

    from grounded_rag.serving.factory import APP_FACTORY, ServeOptions, build_app
    from grounded_rag.serving.metrics import (
        MULTIPROCESS_ENV,
        clean_multiprocess_dir,
        remove_multiprocess_dir,
    )

    options = serve_options(args)
    assert isinstance(options, ServeOptions)
    check_exposure(args.host, options.keys, insecure=args.insecure_no_auth)
    # Metrics of several workers add up in one directory per server: the one named by
    # $PROMETHEUS_MULTIPROC_DIR (emptied now, before anything writes there), else a new one.
    given_dir = os.environ.get(MULTIPROCESS_ENV)
    if given_dir:
        clean_multiprocess_dir(given_dir)
    try:
        app = build_app(options)  # with several workers: checks the options before forking
    except (ValueError, OSError) as exc:
        raise CommandError(str(exc), code=EXIT_USAGE, kind="invalid_option") from None
    url = f"http://{args.host}:{args.port}/"
    if args.json:
        print_json({"url": url, "api_docs": url + "docs", "langserve": url + "rag",
                    "metrics": url + "metrics", "workers": args.workers})
        sys.stdout.flush()
    print(f"grounded-rag serving on {url} with {args.workers} worker(s) (API docs /docs, "
          "LangServe /rag, metrics /metrics)", file=sys.stderr)
    if args.workers == 1:
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level,
                    log_config=log_config(args.log_level))
        return 0
    # Every worker builds its own app from the same options, handed over in the environment.
    os.environ.update(options.to_env())
    metrics_dir, made_here = (given_dir, False) if given_dir else clean_multiprocess_dir()
    os.environ[MULTIPROCESS_ENV] = metrics_dir  # read by each worker when it starts
    try:
        uvicorn.run(APP_FACTORY, factory=True, workers=args.workers, host=args.host,
                    port=args.port, log_level=args.log_level,
                    log_config=log_config(args.log_level))
    finally:
        if made_here:
            remove_multiprocess_dir(metrics_dir)
    return 0


def _register_keys(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    keys = sub.add_parser("keys", help="API keys for `serve --keys`: create, list, revoke",
                          description="API keys with a role (asker, reviewer, admin). Only "
                          "each key's SHA-256 is stored; a running server sees changes at once.")
    keys.add_argument("action", choices=["create", "list", "revoke"])
    keys.add_argument("name", nargs="?", help="whose key (create, revoke)")
    keys.add_argument("--role", default="asker", choices=["asker", "reviewer", "admin"],
                      help="what the key may do (create; default asker: ask and read its "
                      "answers; reviewer: also decide reviews; admin: everything)")
    keys.add_argument("--keys", metavar="FILE", default=os.environ.get("GROUNDED_RAG_KEYS"),
                      help="the key file (default $GROUNDED_RAG_KEYS)")
    keys.add_argument("--json", action="store_true", help="print JSON")
    keys.set_defaults(func=keys_command)


def keys_command(args: argparse.Namespace) -> int:
    """Create, list or revoke API keys."""
    from grounded_rag.serving.auth import KeyStore, KeyStoreError

    if not args.keys:
        raise CommandError("name the key file: --keys FILE or $GROUNDED_RAG_KEYS",
                           code=EXIT_USAGE, kind="invalid_option")
    if args.action != "list" and not args.name:
        raise CommandError(f"keys {args.action} needs a NAME", code=EXIT_USAGE,
                           kind="invalid_option")
    store = KeyStore(args.keys)
    try:
        if args.action == "create":
            key = store.create(args.name, args.role)
            result: object = {"name": args.name.strip(), "role": args.role, "key": key}
            text = (f"{args.role} key for {args.name.strip()!r} (shown once, store it now):\n"
                    f"{key}")
        elif args.action == "revoke":
            count = store.revoke(args.name)
            if not count:
                raise CommandError(f"no live key named {args.name!r} in {args.keys}",
                                   kind="not_found")
            result, text = {"name": args.name, "revoked": count}, f"revoked {args.name!r}"
        else:
            listed = store.list()
            result = {"keys": listed}
            text = "\n".join(f"{k['name']:<24} {k['role']:<9} created {k['created_at']}"
                              f"{'  revoked ' + k['revoked_at'] if k.get('revoked_at') else ''}"
                              for k in listed) or f"no keys in {args.keys}"
    except KeyStoreError as exc:
        raise CommandError(str(exc), code=EXIT_USAGE, kind="invalid_option") from None
    if args.json:
        print_json(result)
    else:
        print(text)
    return 0
