"""The ``grounded-rag`` command line: each area registers its own subcommands."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each module exposes ``register(subparsers)`` and keeps its heavy imports inside the
# command functions, so ``grounded-rag --help`` stays instant.
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
    parser = argparse.ArgumentParser(
        prog="grounded-rag",
        description="Answer questions from your documents with verified citations, or abstain.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # an area not built into this install
            if exc.name and exc.name.startswith("grounded_rag"):
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
