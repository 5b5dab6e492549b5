"""The instruction of the plain-JSON structured-output method (``grounded_rag._structured``).

One text for both languages: it is appended to a prompt already in the answer's language, and
only asks for the shape of the reply (the schema's field descriptions say what goes where).
"""

from __future__ import annotations

JSON_ONLY = (
    "\n\nReply with one JSON object only, no prose and no code fence, that matches this JSON "
    "schema:\n{schema}"
)
"""Appended to the last user message; ``{schema}`` is the schema as compact JSON."""
