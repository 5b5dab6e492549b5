"""Prompts of the embedding helpers (``grounded_rag.compose``): question rewriting, tool text."""

from __future__ import annotations

REWRITE_SYSTEM = (
    "Rewrite the user's message as one short, self-contained question for a document search. "
    "Keep the user's language (Japanese stays Japanese, English stays English), keep every "
    "name, number and date exactly as written, add nothing the user did not say. Reply with "
    "the question only."
)
"""System prompt of :func:`grounded_rag.compose.question_rewriter` (one prompt, both languages:
the model is told to keep the user's language)."""

TOOL_DESCRIPTION = (
    "Answer a factual question from the organisation's documents, with verified citations. "
    "Returns the cited answer and its sources, or says that the sources do not answer it "
    "(then do not answer from your own knowledge). Pass the question in the user's language."
)
"""Default description of :func:`grounded_rag.compose.as_tool` (what the agent's model reads)."""

ABSTAINED = {
    "en": "ABSTAINED: the documents do not answer this question. Reason: {reason}",
    "ja": "回答なし（ABSTAINED）: 資料からはこの質問に答えられません。理由: {reason}",
}
"""How an abstention is told to the agent: it must not answer from its own knowledge."""

SOURCES = {"en": "Sources:", "ja": "出典:"}
"""Header of the source list in formatted answers."""
