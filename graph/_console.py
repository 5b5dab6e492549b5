"""Terminal output of the ``grounded-rag`` commands: escaped text, JSON, errors, exit codes."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, TextIO

EXIT_OK = 0
"""The command did what was asked."""
EXIT_FAILED = 1
"""The command ran, but something failed (a file not ingested, a set skipped, a bad model)."""
EXIT_USAGE = 2
"""Bad arguments: an unknown option, an empty or too long question, an invalid setting."""
EXIT_NOT_READY = 3
"""Something must be set up first: a store to ingest, a model to fetch, an extra to install."""
EXIT_INTERRUPTED = 130
"""Stopped with Ctrl-C (what was already stored is kept)."""
EXIT_BROKEN_PIPE = 141
"""The reader of the output went away (``| head``): the usual code of a closed pipe."""

EXIT_CODES_HELP = f"""\
exit codes:
  {EXIT_OK:<4} done
  {EXIT_FAILED:<4} ran, but something failed (a file not ingested, an evaluation set skipped)
  {EXIT_USAGE:<4} usage: bad arguments, an empty or too long question, an invalid setting
  {EXIT_NOT_READY:<4} not ready: no store (run `grounded-rag ingest`), model missing or corrupt
       (run `grounded-rag model fetch`), or an optional extra not installed
  {EXIT_INTERRUPTED:<4} interrupted (Ctrl-C); what was already stored is kept
  {EXIT_BROKEN_PIPE:<4} the output was closed early (e.g. piped into `head`)

With --json, an error is also printed on stdout as {{"error": {{"kind", "message", "exit_code"}}}}.
"""

# C0/C1 control characters (tab and newline excepted) and the bidirectional overrides: a
# question or a document can carry terminal escape sequences or reorder what a reader sees.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(value: object) -> str:
    r"""Text safe to print on a terminal: control characters shown escaped (``\x1b``)."""
    text = str(value)
    return _UNSAFE.sub(lambda m: _escape(m.group()), text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def print_json(data: Any, out: TextIO | None = None) -> None:
    """Print ``data`` as indented UTF-8 JSON."""
    out = out or sys.stdout
    json.dump(data, out, ensure_ascii=False, indent=2, default=str)
    out.write("\n")


class CommandError(Exception):
    """An expected failure: printed as one ``error:`` line, never as a traceback."""

    def __init__(self, message: str, *, code: int = EXIT_FAILED, kind: str = "failed") -> None:
        super().__init__(message)
        self.code = code
        """Process exit code."""
        self.kind = kind
        """Short machine-readable name of the condition."""


# Expected failures raised by the library, by (module, class): looked up in sys.modules only,
# so recognising an error never imports the heavy module that defines it.
_EXPECTED: tuple[tuple[str, str, int, str], ...] = (
    ("grounded_rag.questions", "QuestionError", EXIT_USAGE, ""),
    ("grounded_rag.retrieval._errors", "StoreNotFoundError", EXIT_NOT_READY, "store_not_found"),
    ("grounded_rag.retrieval._errors", "EmptyStoreError", EXIT_NOT_READY, "empty_store"),
    ("grounded_rag.retrieval._errors", "StoreMismatchError", EXIT_NOT_READY, "store_mismatch"),
    ("grounded_rag.retrieval._errors", "ModelFileError", EXIT_NOT_READY, "embedder_files"),
    ("grounded_rag.retrieval._errors", "RetrievalError", EXIT_FAILED, "retrieval_error"),
    ("grounded_rag.models", "MissingExtraError", EXIT_NOT_READY, "missing_extra"),
    ("grounded_rag.local.assets", "ModelIntegrityError", EXIT_NOT_READY, "model_integrity"),
    ("grounded_rag.local.assets", "ModelAssetError", EXIT_NOT_READY, "model_unavailable"),
)


def expected_error(exc: BaseException) -> CommandError | None:
    """The :class:`CommandError` for an expected library failure, ``None`` for anything else."""
    if isinstance(exc, CommandError):
        return exc
    for module_name, class_name, code, kind in _EXPECTED:
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None) if module else None
        if isinstance(cls, type) and isinstance(exc, cls):
            return CommandError(str(exc), code=code, kind=kind or getattr(exc, "kind", "error"))
    return None


def report_error(error: CommandError, *, as_json: bool = False) -> None:
    """Print an expected failure: one ``error:`` line on stderr (and JSON on stdout)."""
    print(f"error: {clean(error)}", file=sys.stderr)
    if as_json:
        print_json({"error": {"kind": error.kind, "message": str(error),
                              "exit_code": error.code}})


def silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the exit flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (tests)
        pass
