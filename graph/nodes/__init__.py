"""The graph's nodes: one module per node (or tight pair), each a plain function of the state.

Nodes that need models or the store take ``parts`` (a ``Parts``: what ``build_graph`` was
given, else what the run's settings name); ``graph.py`` binds it and wires the nodes.
"""

from grounded_rag.nodes._parts import Parts
from grounded_rag.nodes.abstain import abstain_answer
from grounded_rag.nodes.answerability import assess_answerability
from grounded_rag.nodes.citations import check_citations
from grounded_rag.nodes.claims import extract_claims
from grounded_rag.nodes.feedback import prepare_feedback
from grounded_rag.nodes.finalize import finalize_answer
from grounded_rag.nodes.retrieve import retrieve_evidence
from grounded_rag.nodes.review import review_answer
from grounded_rag.nodes.verify import verify_after_answer, verify_claims
from grounded_rag.nodes.write import generate_answer, revise_answer

__all__ = [
    "Parts",
    "abstain_answer",
    "assess_answerability",
    "check_citations",
    "extract_claims",
    "finalize_answer",
    "generate_answer",
    "prepare_feedback",
    "retrieve_evidence",
    "revise_answer",
    "review_answer",
    "verify_after_answer",
    "verify_claims",
]
