"""``grounded-rag ask`` and ``grounded-rag demo``: run the graph and show a verified answer."""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from grounded_rag.presets import PRESETS

DEMO_QUESTIONS = (
    "本契約の有効期間はいつからいつまでですか？",
    "How long does the Aozora A1 battery last?",
    "在宅勤務手当は月にいくら支給されますか？",
    "The Aozora A1 battery lasts a full 24 hours, right? How many hours exactly?",
    "What is the capital of Australia?",
)
"""Demo questions: Japanese and English, one that tempts a wrong number, one unanswerable."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``ask`` and ``demo`` subcommands."""
    ask = sub.add_parser("ask", help="answer a question from the store with verified citations")
    ask.add_argument("question")
    _common(ask)
    ask.set_defaults(func=ask_command)

    demo = sub.add_parser(
        "demo", help="ingest the bundled sample corpus and answer sample questions offline"
    )
    _common(demo)
    demo.add_argument("--question", action="append", dest="questions",
                      help="ask this instead of the sample questions (repeatable)")
    demo.set_defaults(func=demo_command)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", help="store directory (default $GROUNDED_RAG_STORE or "
                        "./.grounded-rag)")
    parser.add_argument("--json", action="store_true", help="print the output contract as JSON")
    parser.add_argument("--model", help="generator model spec (default: local, or a provider "
                        "when its key is set)")
    parser.add_argument("--verifier-model", help="verifier model spec (default: the generator)")
    parser.add_argument("--max-retries", type=int, help="regenerations before abstaining")
    parser.add_argument("--top-k", type=int, help="evidence chunks to retrieve")
    parser.add_argument("--preset", choices=list(PRESETS),
                        help="operating preset (default balanced); explicit options win")
    parser.add_argument("--verify-mode", choices=["full", "sampled", "deferred"],
                        help="what is verified before answering (deferred: verified just "
                        "after, since the command line keeps no thread)")
    parser.add_argument("--quiet", action="store_true", help="no live progress on stderr")


def _settings(args: argparse.Namespace) -> dict[str, Any]:
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
    return settings


def run_question(question: str, settings: dict[str, Any], *, progress: TextIO | None) -> dict:
    """Run the default graph on one question, streaming progress lines to ``progress``."""
    from grounded_rag import graph

    config = {"configurable": settings}
    result: dict[str, Any] = {}
    start = time.perf_counter()
    for mode, chunk in graph.stream({"question": question}, config,
                                    stream_mode=["custom", "values"]):
        if mode == "custom" and progress is not None:
            elapsed = time.perf_counter() - start
            print(f"  [{elapsed:6.1f}s] {chunk['message']}", file=progress, flush=True)
        elif mode == "values":
            result = chunk
    keys = ("question", "status", "answer", "claims", "removed_claims", "sources", "attempts",
            "confidence", "grounding_score", "findings", "flags", "timings_ms", "language")
    return {k: result[k] for k in keys if k in result}


def render(result: dict[str, Any], out: TextIO) -> None:
    """Print a result for a person: answer, claims with verdicts, revisions, sources."""
    print(f"Q: {result.get('question', '')}", file=out)
    status = result.get("status")
    print(f"A: {result.get('answer', '')}", file=out)
    if status == "answered":
        for i, claim in enumerate(result.get("claims", []), 1):
            badge = {"verified": "verified", "revised": "revised"}.get(claim.get("status", ""), "")
            print(f"   claim {i}: {claim['verdict']:<12} ({badge}) {claim['text']}", file=out)
        for claim in result.get("removed_claims", []):
            print(f"   removed: {claim.get('verdict', '?'):<12} {claim['text']} "
                  f"- {claim.get('reason', '')}", file=out)
        for n, src in enumerate(result.get("sources", []), 1):
            print(f"   [{n}] {src['id']}  {src['title']}  {src['url']}", file=out)
    else:
        print("   abstained because:", file=out)
        for f in result.get("findings", [])[:6]:
            print(f"   - {f['type']} ({f['severity']}): {f['detail'][:160]}", file=out)
        for claim in result.get("removed_claims", [])[:4]:
            print(f"   - rejected claim: {claim['text']} ({claim.get('verdict', '?')})", file=out)
    timings = result.get("timings_ms", {})
    total = sum(timings.values()) / 1000
    stages = ", ".join(f"{k} {v / 1000:.1f}s" for k, v in timings.items())
    print(f"   attempts {result.get('attempts', 0)}, confidence {result.get('confidence', 0):.2f}, "
          f"grounding {result.get('grounding_score', 0):.2f}, {total:.1f}s ({stages})", file=out)


def ask_command(args: argparse.Namespace) -> int:
    """Answer one question."""
    from grounded_rag.retrieval import RetrievalError

    if not args.question.strip():
        print("error: the question is empty", file=sys.stderr)
        return 2
    try:
        result = run_question(args.question, _settings(args),
                              progress=None if args.quiet or args.json else sys.stderr)
    except (RetrievalError, ImportError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
        print()
    else:
        render(result, sys.stdout)
    return 0


def sample_corpus_dir() -> Path:
    """Directory of the bundled sample corpus."""
    return Path(str(resources.files("grounded_rag") / "samples" / "corpus"))


def demo_command(args: argparse.Namespace) -> int:
    """Ingest the sample corpus and answer the sample questions, live."""
    from grounded_rag.retrieval import ingest_paths

    store = args.store or str(Path(".grounded-rag-demo").resolve())
    print(f"Ingesting the sample corpus into {store} ...", file=sys.stderr)
    report = ingest_paths([sample_corpus_dir()], store, progress=not args.quiet)
    print(f"  {report}", file=sys.stderr)
    settings = {**_settings(args), "store_dir": store}
    results = []
    for question in args.questions or DEMO_QUESTIONS:
        print(f"\n>>> {question}", file=sys.stderr)
        result = run_question(question, settings, progress=None if args.quiet else sys.stderr)
        results.append(result)
        if not args.json:
            render(result, sys.stdout)
            sys.stdout.flush()
    if args.json:
        json.dump(results, sys.stdout, ensure_ascii=False, indent=2)
        print()
    return 0
