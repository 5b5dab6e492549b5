"""``grounded-rag ask`` and ``grounded-rag demo``: run the graph and show a verified answer."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from grounded_rag._console import EXIT_NOT_READY, EXIT_USAGE, CommandError, clean, print_json
from grounded_rag.presets import PRESETS
from grounded_rag.questions import MAX_QUESTION_CHARS, check_question

DEMO_QUESTIONS = (
    "本契約の有効期間はいつからいつまでですか？",
    "How long does the Aozora A1 battery last?",
    "在宅勤務手当は月にいくら支給されますか？",
    "The Aozora A1 battery lasts a full 24 hours, right? How many hours exactly?",
    "What is the capital of Australia?",
)
"""Demo questions: Japanese and English, one that tempts a wrong number, one unanswerable."""

DEMO_STORE = ".grounded-rag-demo"
"""Store the demo ingests the sample corpus into (relative to the working directory)."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``ask`` and ``demo`` subcommands."""
    ask = sub.add_parser(
        "ask", help="answer a question from the store with verified citations",
        description="Answer one question from the store: the answer with [n] markers, each "
        "claim's verdict and the references, or an abstention and why. Questions longer than "
        f"{MAX_QUESTION_CHARS:,} characters are refused.",
    )
    ask.add_argument("question")
    _common(ask)
    ask.add_argument("--server", metavar="URL",
                     help="ask a running `grounded-rag serve` instead of loading the model in "
                     "this process (default $GROUNDED_RAG_SERVER): its model and store stay "
                     "loaded, so a new command answers as fast as a warm process; a server "
                     "with --keys gets $GROUNDED_RAG_API_KEY")
    ask.set_defaults(func=ask_command)

    demo = sub.add_parser(
        "demo", help="ingest the bundled sample corpus and answer sample questions offline",
        description=f"Ingest the bundled sample corpus into {DEMO_STORE}/ (or --store) and "
        "answer the sample questions with live progress.",
    )
    _common(demo, store_default=DEMO_STORE)
    demo.add_argument("--question", action="append", dest="questions",
                      help="ask this instead of the sample questions (repeatable)")
    demo.set_defaults(func=demo_command)


def _common(parser: argparse.ArgumentParser, store_default: str | None = None) -> None:
    default = store_default or "$GROUNDED_RAG_STORE or ./.grounded-rag"
    parser.add_argument("--store", metavar="DIR", help=f"store directory (default {default})")
    parser.add_argument("--json", action="store_true", help="print the output contract as JSON")
    parser.add_argument("--model", help="generator model spec (default: local, or a provider "
                        "when its key is set)")
    parser.add_argument("--verifier-model", help="verifier model spec (default: the generator)")
    parser.add_argument("--base-url", metavar="URL",
                        help="OpenAI-compatible server (Ollama, vLLM, LM Studio, llama.cpp) for "
                        "the openai:<model> specs without a URL of their own, e.g. "
                        "http://127.0.0.1:11434/v1 (default $OPENAI_BASE_URL)")
    parser.add_argument("--max-retries", type=int, help="regenerations before abstaining")
    parser.add_argument("--top-k", type=int, help="evidence chunks to retrieve")
    parser.add_argument("--preset", choices=list(PRESETS),
                        help="operating preset (default balanced); explicit options win")
    parser.add_argument("--verify-mode", choices=["full", "sampled", "deferred"],
                        help="what is verified before answering (deferred: verified just "
                        "after, since the command line keeps no thread)")
    parser.add_argument("--language", choices=["auto", "ja", "en"],
                        help="language of the answer (default auto: the question's; a "
                        "question in another language abstains unless this is ja or en)")
    parser.add_argument("--quiet", action="store_true", help="no live progress on stderr")


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The graph settings the options ask for, validated (a bad value is a usage error)."""
    settings: dict[str, Any] = {}
    if args.store:
        settings["store_dir"] = args.store
    if args.model:
        settings["generator_model"] = args.model
    if args.verifier_model:
        settings["verifier_model"] = args.verifier_model
    if args.max_retries is not None:
        settings["max_retries"] = args.max_retries
    if args.top_k is not None:
        settings["top_k"] = args.top_k
    if args.preset:
        settings["preset"] = args.preset
    if args.verify_mode:
        settings["verify_mode"] = args.verify_mode
    if getattr(args, "language", None):
        settings["language"] = args.language
    if getattr(args, "base_url", None):
        settings.update(_served_specs(settings, args.base_url))
    from grounded_rag.context import validate_settings

    try:
        return validate_settings(settings)
    except ValueError as exc:
        raise CommandError(str(exc), code=EXIT_USAGE, kind="invalid_setting") from None


def _served_specs(settings: dict[str, Any], base_url: str) -> dict[str, str]:
    """The ``openai:`` model settings pointed at ``base_url`` (``--base-url``)."""
    from grounded_rag.models import with_base_url

    specs = {name: settings[name] for name in ("generator_model", "verifier_model")
             if str(settings.get(name, "")).startswith("openai:")}
    if "generator_model" not in specs:
        raise CommandError("--base-url needs an openai: model, e.g. --model "
                           "openai:<the model's name on that server>", code=EXIT_USAGE,
                           kind="invalid_setting")
    try:
        return {name: with_base_url(spec, base_url) for name, spec in specs.items()}
    except ValueError as exc:
        raise CommandError(str(exc), code=EXIT_USAGE, kind="invalid_setting") from None


def run_question(question: str, settings: dict[str, Any], *, progress: TextIO | None,
                 graph: Any = None) -> dict[str, Any]:
    """Run a graph (default: the package's) on one question, streaming progress lines."""
    from grounded_rag.state import OutputState

    if graph is None:
        from grounded_rag import graph

    config = {"configurable": settings}
    result: dict[str, Any] = {}
    start = time.perf_counter()
    for mode, chunk in graph.stream({"question": question}, config,
                                    stream_mode=["custom", "values"]):
        if mode == "custom" and progress is not None:
            elapsed = time.perf_counter() - start
            print(f"  [{elapsed:6.1f}s] {clean(chunk.get('message', ''))}", file=progress,
                  flush=True)
        elif mode == "values":
            result = chunk
    return {k: result[k] for k in OutputState.__annotations__ if k in result}


def ask_server(url: str, question: str, settings: dict[str, Any], *,
               progress: TextIO | None, client: Any = None) -> dict[str, Any]:
    """One question to a running server's ``POST /ask/stream``; its progress and result.

    A deferred verification's second event replaces the first result, as the page does.
    ``client``: an ``httpx.Client`` to send it with (default: a new one).
    """
    import httpx

    endpoint = url.rstrip("/") + "/ask/stream"
    result: dict[str, Any] = {}
    start = time.perf_counter()
    own = client is None
    http = httpx.Client(timeout=httpx.Timeout(10.0, read=900.0)) if own else client
    key = os.environ.get(API_KEY_ENV, "").strip()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        with http.stream("POST", endpoint, json={"question": question, "settings": settings},
                         headers=headers) as response:
            if response.status_code in (401, 403):
                response.read()
                raise CommandError(f"the server at {url} refused this caller (HTTP "
                                   f"{response.status_code}): {_detail(response)}; set "
                                   f"${API_KEY_ENV} to a key from `grounded-rag keys create`",
                                   code=EXIT_NOT_READY, kind="unauthorized")
            if response.status_code != 200:
                response.read()
                raise CommandError(f"the server at {url} refused the question "
                                   f"(HTTP {response.status_code}): {response.text[:300]}")
            for event, data in _sse_events(response.iter_lines()):
                if event == "progress" and progress is not None:
                    elapsed = time.perf_counter() - start
                    print(f"  [{elapsed:6.1f}s] {clean(str(data.get('message', '')))}",
                          file=progress, flush=True)
                elif event in ("result", "verification"):
                    result = data
                elif event == "error":
                    raise CommandError(f"the server at {url} failed on this question: "
                                       f"{data.get('message', data)}")
    except httpx.TransportError as exc:
        raise CommandError(f"no grounded-rag server answers at {url} ({exc}); start one with "
                           f"`grounded-rag serve`, or drop --server (and ${SERVER_ENV}) to "
                           "answer in this process", code=EXIT_NOT_READY,
                           kind="server_unreachable") from None
    finally:
        if own:
            http.close()
    if not result:
        raise CommandError(f"the server at {url} closed the stream before its result")
    return result


def _detail(response: Any) -> str:
    try:
        return str(response.json().get("detail", response.text))[:300]
    except ValueError:
        return str(response.text)[:300]


def _sse_events(lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """(event, decoded JSON data) pairs of a Server-Sent Events stream."""
    import json

    event = "message"
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    if data:
        yield event, json.loads("\n".join(data))


def render(result: dict[str, Any], out: TextIO) -> None:
    """Print a result for a person: answer, claims with verdicts, revisions, sources.

    Everything that comes from the question or the documents is printed with its control
    characters escaped, so neither can drive the terminal.
    """
    print(f"Q: {clean(result.get('question', ''))}", file=out)
    status = result.get("status")
    print(f"A: {clean(result.get('answer', ''))}", file=out)
    if status == "answered":
        for i, claim in enumerate(result.get("claims", []), 1):
            badge = {"verified": "verified", "revised": "revised"}.get(claim.get("status", ""), "")
            print(f"   claim {i}: {claim['verdict']:<12} ({badge}) {clean(claim['text'])}",
                  file=out)
        for claim in result.get("removed_claims", []):
            print(f"   removed: {claim.get('verdict', '?'):<12} {clean(claim['text'])} "
                  f"- {clean(claim.get('reason', ''))}", file=out)
        for n, src in enumerate(result.get("sources", []), 1):
            print(f"   [{n}] {clean(src['id'])}  {clean(src['title'])}  {clean(src['url'])}",
                  file=out)
    else:
        print("   abstained because:", file=out)
        for f in result.get("findings", [])[:6]:
            print(f"   - {f['type']} ({f['severity']}): {clean(f['detail'][:160])}", file=out)
        for claim in result.get("removed_claims", [])[:4]:
            print(f"   - rejected claim: {clean(claim['text'])} ({claim.get('verdict', '?')})",
                  file=out)
    timings = result.get("timings_ms", {})
    total = sum(timings.values()) / 1000
    stages = ", ".join(f"{k} {v / 1000:.1f}s" for k, v in timings.items())
    print(f"   attempts {result.get('attempts', 0)}, confidence {result.get('confidence', 0):.2f}, "
          f"grounding {result.get('grounding_score', 0):.2f}, {total:.1f}s ({stages})", file=out)


SERVER_ENV = "GROUNDED_RAG_SERVER"
"""Environment variable naming a running server that ``ask`` sends its question to."""

API_KEY_ENV = "GROUNDED_RAG_API_KEY"
"""The API key ``ask --server`` sends (``serve --keys``); kept off the command line."""

_SERVER_OWNS = ("store", "model", "verifier_model", "base_url")
"""Options a server fixes for itself: ``ask --server`` refuses them rather than ignore them."""


def ask_command(args: argparse.Namespace) -> int:
    """Answer one question."""
    question = check_question(args.question)  # before anything heavy is imported
    progress = None if args.quiet or args.json else sys.stderr
    server = getattr(args, "server", None) or os.environ.get(SERVER_ENV, "")
    if server:
        owned = [f"--{o.replace('_', '-')}" for o in _SERVER_OWNS if getattr(args, o, None)]
        if owned:
            raise CommandError(f"{', '.join(owned)}: the server at {server} answers from its "
                               "own store and models; drop the option, or drop --server (and "
                               f"${SERVER_ENV}) to answer in this process", code=EXIT_USAGE,
                               kind="invalid_setting")
        result = ask_server(server, question, _settings(args), progress=progress)
    else:
        result = run_question(question, _settings(args), progress=progress)
    if args.json:
        print_json(result)
    else:
        render(result, sys.stdout)
    return 0


def sample_corpus_dir() -> Path:
    """Directory of the bundled sample corpus."""
    return Path(str(resources.files("grounded_rag") / "samples" / "corpus"))


def demo_command(args: argparse.Namespace) -> int:
    """Ingest the sample corpus and answer the sample questions, live."""
    questions = [check_question(q) for q in args.questions or DEMO_QUESTIONS]
    store = args.store or DEMO_STORE
    settings = {**_settings(args), "store_dir": store}

    from grounded_rag.retrieval import ingest_paths
    from grounded_rag.retrieval.cli import ingest_summary

    print(f"Ingesting the sample corpus into {clean(store)} ...", file=sys.stderr)
    report = ingest_paths([sample_corpus_dir()], store, progress=not args.quiet)
    for line in report.errors:
        print(f"  error: {clean(line)}", file=sys.stderr)
    print(f"  {ingest_summary(report)}", file=sys.stderr)
    results = []
    for question in questions:
        print(f"\n>>> {clean(question)}", file=sys.stderr)
        result = run_question(question, settings, progress=None if args.quiet else sys.stderr)
        results.append(result)
        if not args.json:
            render(result, sys.stdout)
            sys.stdout.flush()
    if args.json:
        print_json(results)
    return 0
