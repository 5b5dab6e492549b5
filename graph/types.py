"""Plain, JSON-native record types that flow through the graph state and the output contract.

They are ``TypedDict``s on purpose: the same records are checkpointed (SQLite / Postgres),
streamed by LangServe and shown in LangGraph Studio, and plain JSON survives all three
without custom serializers.
"""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict

VerdictLabel = Literal["supported", "contradicted", "neutral"]
"""Three-way NLI label of one claim against its evidence."""

ClaimVerdictLabel = Literal["supported", "contradicted", "neutral", "unchecked"]
"""A claim's verdict in the output: a ``VerdictLabel``, or ``unchecked`` when the claim was
not verified (``verify_mode`` sampled, or deferred while its verification is pending)."""

ClaimStatus = Literal["verified", "revised", "removed", "unchecked", "pending", "flagged"]
"""A claim's badge: what the loop (or the verification after the answer) made of it."""

VerificationState = Literal["complete", "partial", "pending", "failed", "none"]
"""How far an answer's claims were verified: ``complete`` (all of them, before or after the
answer), ``partial`` (sampled: some are unchecked), ``pending`` (deferred, still running),
``failed`` (deferred, crashed: see ``verification_error``), ``none`` (no claims)."""

Severity = Literal["critical", "major", "minor", "info"]
"""How much a finding matters: ``critical`` blocks an answer on its own."""


class Evidence(TypedDict):
    """One retrieved chunk, addressable by a section-granular id such as ``policy#sec3``."""

    source_id: str
    """Chunk id ``<doc_id>#sec<N>`` (plus ``-p<M>`` when a long section is split)."""
    doc_id: str
    """Id of the document the chunk belongs to."""
    title: str
    """Document title, with the section heading when there is one."""
    url: str
    """Where the document lives (URL or file path); may be empty."""
    text: str
    """The chunk text that quotes must be copied from."""
    score: float
    """Raw fused retrieval score (rank-fusion units; only comparable within one query)."""
    relevance: float
    """Calibrated relevance in [0, 1]; the abstain threshold is compared with this."""
    section: NotRequired[str]
    """Section path, e.g. ``Expenses > Taxis``."""
    start: NotRequired[int]
    """Character offset of the chunk in its document."""
    end: NotRequired[int]
    """End character offset (exclusive) of the chunk in its document."""
    sentence_relevance: NotRequired[list[float]]
    """For a chunk in the other language than the question's: the embedder's similarity of
    each of its sentences (in order) to the question, which the generator's evidence view
    ranks them by (``retrieval.sentence_scores``)."""


class Citation(TypedDict):
    """A claim's pointer into the evidence: a source id and a quoted span."""

    source_id: str
    """The cited chunk id."""
    quote: str
    """The span as the model quoted it."""
    start: int
    """Start offset of the located span in the cited chunk text, -1 when not located."""
    end: int
    """End offset (exclusive) of the located span, -1 when not located."""
    match: NotRequired[float]
    """Similarity of the quote to the located span: 1.0 verbatim, <1 fuzzy, 0 not found."""


class Claim(TypedDict):
    """One atomic, checkable statement of the answer with its verdict."""

    text: str
    """The claim, in the question's language."""
    citations: list[Citation]
    """Citations that back the claim."""
    verdict: NotRequired[ClaimVerdictLabel]
    """NLI verdict against the cited (or retrieved) evidence; ``unchecked`` if not verified."""
    reason: NotRequired[str]
    """Short reason for the verdict."""
    evidence_quote: NotRequired[str]
    """The evidence sentence that decided the verdict."""
    support: NotRequired[float]
    """Probability-like support score in [0, 1] (1 = fully supported)."""
    status: NotRequired[ClaimStatus]
    """What the loop did with this claim (for badges in the UI): ``verified``, ``revised``,
    ``removed``; ``unchecked`` (sampled out), ``pending`` (deferred verification running),
    ``flagged`` (verified after the answer was returned and found contradicted or
    unsupported)."""
    statement: NotRequired[int]
    """Index of the answer statement the claim was extracted from."""


class Finding(TypedDict):
    """A problem found by a deterministic check or by the verifier."""

    type: str
    """Machine-readable kind, e.g. ``phantom_source``, ``quote_not_found``, ``contradicted``."""
    severity: Severity
    """How serious it is; ``critical`` findings always block the answer."""
    claim_index: int
    """Index of the claim it concerns, -1 for the answer as a whole."""
    detail: str
    """Human-readable explanation (fed back to the generator on revision)."""


class Source(TypedDict):
    """An entry of the answer's references list; ``[n]`` markers index into it (1-based)."""

    id: str
    """Chunk id."""
    title: str
    """Title shown to the reader."""
    url: str
    """Link or path to the document."""


class Draft(TypedDict):
    """A generated answer before claim extraction: free text plus cited statements."""

    answerable: bool
    """False when the generator itself says the evidence does not answer the question."""
    statements: list[Claim]
    """Answer statements in order, each with citations."""
