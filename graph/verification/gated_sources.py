"""Statements that cite only passages the relevance gate says are not about the question.

The pre-model gate abstains when no retrieved passage reaches its relevance threshold
("nothing in the store is about this"). A question that passes it is still answered from
all of the top passages, and those below the gate are there only because something had to
fill the list. A statement whose every citation points to such a passage was picked up from
text about something else. A held-out cross-language answer about the Kyōhō era said
"The 2010 census reported a population of 66,135 in the city of Kyōhō", citing a passage
on Schenectady, New York (relevance 0.0000 against the English gate 0.004), and "…the
Japanese government, which is represented by the … genus Cibotium", citing one on tree
ferns (0.0001); the judge found both supported.

The pre-model check's same-language gate decides (:func:`retrieval.calibration.gate_thresholds`),
so ``abstain_threshold=0`` turns this off too. Only passages in the question's language are
judged: across languages the embedder's relevance is lower and less certain. A cross-language
dev answer cited its Japanese gold passage at relevance 0.0014, under the cross-language gate
(0.01), while English passages had let the question through.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from grounded_rag.prompts import feedback as texts
from grounded_rag.retrieval.calibration import gate_thresholds, is_same_language
from grounded_rag.types import Finding


def below_gate_statements(statements: Sequence[Any], evidence: Sequence[Any], language: str,
                          threshold: float | None) -> list[int]:
    """Indices of statements whose cited passages all fall below their relevance gate.

    ``language`` is the question's (``ja`` / ``en``); ``threshold`` the user's
    ``abstain_threshold`` (None: the default gates). A statement without citations, or
    citing a passage not among ``evidence``, is not counted.
    """
    same_gate, _ = gate_thresholds(language, threshold)
    if same_gate <= 0:
        return []
    by_id = {str(e.get("source_id", "")): e for e in evidence}

    def below(source_id: str) -> bool:
        e = by_id.get(source_id)
        if e is None or not is_same_language(e, language):
            return False
        return float(e.get("relevance", 1.0)) < same_gate

    out = []
    for i, s in enumerate(statements):
        cited = [str(c.get("source_id", "")) for c in s.get("citations", [])]
        if cited and all(below(sid) for sid in cited):
            out.append(i)
    return out


def source_findings(statements: Sequence[Any], evidence: Sequence[Any], asked: str,
                    threshold: float | None, language: str) -> list[Finding]:
    """``off_question`` findings when every statement cites only passages below the gate.

    (When only some do, the check_citations node drops those and keeps the rest.) ``asked``
    is the question's language for the gates; ``language`` the answer's, for the wording.
    """
    gated = below_gate_statements(statements, evidence, asked, threshold)
    if not statements or len(gated) < len(statements):
        return []
    lang = "ja" if language == "ja" else "en"
    return [{"type": "off_question", "severity": "major", "claim_index": i,
             "detail": texts.OFF_QUESTION[lang].format(
                 text=statements[i]["text"], reason=texts.OFF_QUESTION_REASONS[lang]["source"],
                 kind=texts.OFF_QUESTION_KINDS[lang]["answer"])}
            for i in gated]
