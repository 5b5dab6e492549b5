"""The ``grounded-rag`` command line: each area registers its own subcommands."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from grounded_rag._console import (
    EXIT_BROKEN_PIPE,
    EXIT_CODES_HELP,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    expected_error,
    report_error,
    silence_stdout,
)

# Each module exposes ``register(subparsers)`` and keeps its heavy imports (LangChain,
# LangGraph, Chroma, llama.cpp) inside the command functions: arguments are parsed and
# checked before any of them loads, so ``--help`` and usage errors answer at once.
_COMMAND_MODULES = (
    "grounded_rag.retrieval.cli",
    "grounded_rag.ask_cli",
    "grounded_rag.local.cli",
    "grounded_rag.serving.cli",
    "grounded_rag.evaluation.cli",
    "grounded_rag.training.cli",
)


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every available subcommand."""
    from grounded_rag import __version__

    parser = argparse.ArgumentParser(
        prog="grounded-rag",
        description="Answer questions from your documents with verified citations, or abstain. "
        "Every command prints sentences for people by default and JSON with --json.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"grounded-rag {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # an area not built into this install
            if exc.name and exc.name.startswith("grounded_rag"):
                continue
            raise
        module.register(sub)
    _add_epilog(parser)
    return parser


def _add_epilog(parser: argparse.ArgumentParser) -> None:
    """Show the exit codes at the end of every subcommand's ``--help`` too."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                if child.epilog is None:
                    child.epilog = EXIT_CODES_HELP
                    child.formatter_class = argparse.RawDescriptionHelpFormatter
                _add_epilog(child)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the process exit code."""
    args: argparse.Namespace | None = None
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit:
            sys.stdout.flush()  # --help / --version text: a closed pipe shows up here
            raise
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows up here, not in the interpreter's exit
        return code
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        silence_stdout()
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        error = expected_error(exc)
        if error is None:
            raise
        try:
            report_error(error, as_json=bool(getattr(args, "json", False)))
        except BrokenPipeError:
            silence_stdout()
        return error.code


if __name__ == "__main__":
    raise SystemExit(main())
