"""What a question must be: one length limit and one error for the CLI, graph and server."""

from __future__ import annotations

from typing import Any, Literal

MAX_QUESTION_CHARS = 2000
"""Longest question accepted anywhere (after stripping surrounding whitespace)."""

QuestionProblem = Literal["type_error", "empty_question", "question_too_long"]


class QuestionError(ValueError):
    """A question that cannot be asked: not text, empty, or longer than the limit."""

    def __init__(self, kind: QuestionProblem, message: str) -> None:
        super().__init__(message)
        self.kind: QuestionProblem = kind
        """What is wrong: ``type_error``, ``empty_question`` or ``question_too_long``."""


def check_length(question: str, limit: int = MAX_QUESTION_CHARS) -> None:
    """Raise :class:`QuestionError` when ``question`` (already stripped) exceeds ``limit``."""
    if len(question) > limit:
        raise QuestionError("question_too_long",
                            f"the question is {len(question)} characters long; the limit is "
                            f"{limit}. Shorten it, or ask about one thing at a time.")


def check_question(value: Any, limit: int = MAX_QUESTION_CHARS) -> str:
    """Return the stripped question, or raise :class:`QuestionError` saying what is wrong."""
    if not isinstance(value, str):
        raise QuestionError("type_error",
                            f"the question must be a string, got {type(value).__name__}")
    question = value.strip()
    if not question:
        raise QuestionError("empty_question", "the question must not be empty")
    check_length(question, limit)
    return question
