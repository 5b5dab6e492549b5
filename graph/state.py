"""Graph state: what the user sends in, what flows between nodes, and what comes out."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from grounded_rag.types import Claim, Draft, Evidence, Finding, Source, VerificationState


class InputState(TypedDict, total=False):
    """What a caller sends: a ``question``, or chat ``messages`` whose last is the user's."""

    question: str
    """The user's question, in Japanese or English."""
    messages: Annotated[list[AnyMessage], add_messages]
    """Chat input (Studio's chat, agent UIs, ``MessagesState`` parents): when the last message
    is a human one, its text is the question, and the answer is appended as an AI message."""


class OutputState(TypedDict, total=False):
    """The output contract shared by the Python API, the CLI's ``--json`` and the server."""

    question: str
    """The question that was asked."""
    messages: Annotated[list[AnyMessage], add_messages]
    """Chat input runs only: the conversation with the answer appended as an ``AIMessage``
    (its ``response_metadata["grounded_rag"]`` holds status, sources and confidence)."""
    status: Literal["answered", "abstained"]
    """Whether the graph answered or abstained."""
    answer: str
    """Answer text with ``[n]`` markers into ``sources`` (or the abstention message)."""
    claims: list[Claim]
    """Claims the answer makes, each with verdict, reason and located citations."""
    removed_claims: list[Claim]
    """Claims of earlier drafts that the loop dropped (for audit and UI badges)."""
    sources: list[Source]
    """References; ``[n]`` in the answer is ``sources[n-1]``."""
    attempts: int
    """Generations made (1 + regenerations)."""
    confidence: float
    """0-1: weakest claim's support x citation quality x retrieval relevance."""
    grounding_score: float
    """0-1: share of the answer's claim text backed by a supported claim with a located quote."""
    findings: list[Finding]
    """Problems found by checks and the verifier (for abstentions: what led there)."""
    flags: list[str]
    """Verification flags for the reader, e.g. ``low_relevance``, ``revised``, ``quote_drift``."""
    timings_ms: dict[str, float]
    """Milliseconds per stage, summed over the loop's attempts."""
    language: str
    """Language of the answer (``ja`` or ``en``)."""
    verification: VerificationState
    """How far the claims were verified (``verify_mode``): complete, partial, pending, failed."""
    checked_claims: int
    """How many of ``claims`` the verifier judged (the rest are ``unchecked``)."""
    verification_error: str
    """Why a deferred verification failed ("" otherwise)."""
    warnings: list[str]
    """Claims a deferred verification found contradicted or unsupported, in the answer's
    language (the answer had already been returned)."""
    decided_by: str
    """The stage that decided the outcome: ``verification`` for an answer (its claims held);
    for an abstention ``retrieval`` (nothing relevant enough, before any model call),
    ``answerability``, ``generator`` (it declined, or its replies were unusable),
    ``citations``, ``verification``, ``off_question`` or ``reviewer``."""
    stage_scores: dict[str, float]
    """What each stage scored before the answer was written: ``relevance`` (best evidence
    over its gate), ``answerability`` (the head's best passage, when it ran) and
    ``generator`` (the local generator's log-odds of ``answerable``), which
    ``grounded_rag.verification.decision`` combines into the decision to write."""


class State(InputState, OutputState, total=False):  # type: ignore[misc]
    """Full working state of one run."""

    chat: bool
    """Whether this run's question came as the last of ``messages`` (the reply goes there)."""
    evidence: list[Evidence]
    """Retrieved chunks, best first."""
    draft: Draft | None
    """The latest generated (or human-edited) answer before claim extraction."""
    history: list[dict[str, Any]]
    """One record per attempt: statements, claims, verdicts and findings."""
    feedback: str
    """Findings rendered for the revision prompt."""
    review: dict[str, Any]
    """Review status: ``required`` and, once decided, the reviewer's ``action`` and ``note``,
    and where the server knows them, who decided (``by``, the key's name) and when (``at``)."""
    citation_findings: list[Finding]
    """Citation-check findings of the current draft, indexed by statement."""
    max_retries: int
    """Regeneration budget of this run (copied from the settings for the pure routers)."""
    keep_verified: bool
    """Deliver the verified part of the last draft (copied from the settings, as above)."""
