"""``grounded-rag ask`` and ``grounded-rag demo``: run the graph and show a verified answer."""

from __future__ import annotations

import argparse
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from grounded_rag._console import EXIT_USAGE, CommandError, clean, print_json
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


def ask_command(args: argparse.Namespace) -> int:
    """Answer one question."""
    question = check_question(args.question)  # before anything heavy is imported
    result = run_question(question, _settings(args),
                          progress=None if args.quiet or args.json else sys.stderr)
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
