"""What holds when the budget is spent: the statements whose claims all passed.

After the last revision, an answer with one statement the judge did not accept used to be
thrown away whole, also when its other statements were verified and answered the question
("Columbia University is a private Ivy League research university in Upper Manhattan",
beside a revision's "Capitol Technology University is not ..." that no sentence states).
The verified part is delivered instead, flagged ``partial_answer``, when it still answers
the question by the same deterministic checks as a whole draft: a kept statement unrelated
to the question and to the rest is left out, as it is from a whole draft, and what remains
must raise no ``off_question`` finding (the asked kind of value or yes/no predicate is
there). Otherwise the run abstains as before.

A verified draft whose only fault is that some of its statements restate the question (or a
heading) while the others write the word that fills its gap (「中東は良質の優れた油田が
多いだけでなく」 beside 「今日まで世界最大の石油輸出地域となっている」 for 「中東は良質の優れた
何が多いだけでなく…」) is not revised:
the answering statements are delivered the same way (:func:`answering_part`). A revision
only had those statements to drop, and it may reword the answer on the way (one wrote 石油
for the source's 油田). The same holds for a question that asks a number or a date
("…, Tosca an Italian libretto has how many acts?"): a statement that restates the question
beside one that gives a value the question does not hold ("Tosca an Italian libretto has
three acts") is left out. The revision of such a draft used to write it again word for word,
and the run then abstained.
"""

from __future__ import annotations

from grounded_rag.types import Claim, Evidence
from grounded_rag.verification.gap import gap_fillers
from grounded_rag.verification.on_question import (
    has_kind,
    off_question_findings,
    question_kind,
    unrelated_statements,
)

PASSING = ("supported", "unchecked")
"""Claim verdicts that do not block an answer (``unchecked``: sampled out or deferred)."""


def all_pass(claims: list[Claim]) -> bool:
    """Whether there are claims and every one of them passes (:data:`PASSING`)."""
    return bool(claims) and all(c.get("verdict") in PASSING for c in claims)


def verified_part(statements: list[Claim], claims: list[Claim], question: str,
                  evidence: list[Evidence], language: str) -> list[int] | None:
    """Indices of the statements to deliver, or None when no part of the draft answers.

    A statement is kept when it has claims and all of them pass; None also when every
    statement passes (that is a whole answer, not a part of one).
    """
    if not statements or not claims:
        return None
    having = {c.get("statement", -1) for c in claims}
    failing = {c.get("statement", -1) for c in claims if c.get("verdict") not in PASSING}
    keep = [i for i in range(len(statements)) if i in having and i not in failing]
    if not keep or not failing:
        return None
    unrelated = set(unrelated_statements(question, [statements[i] for i in keep]))
    keep = [k for n, k in enumerate(keep) if n not in unrelated]
    kept = [statements[i] for i in keep]
    findings = off_question_findings(question, kept, evidence, language)
    if any(f["type"] == "off_question" for f in findings):
        return None
    return keep


def answering_part(statements: list[Claim], question: str, evidence: list[Evidence],
                   language: str) -> list[int] | None:
    """Indices of the statements that answer, when the others only restate the question.

    None unless some statements (not all) have an ``off_question`` finding of their own, and
    the rest, less any unrelated statement, raise none and show that they answer: where the
    question is a source sentence with a gap (``gap.gap_fillers``), they hold the word that
    fills it; where an English question asks a number or a date
    (``on_question.question_kind``), one of them gives such a value in words the question
    does not hold. Without that nothing shows that
    the rest answers: bare nouns beside a restated question (「住民票」「選挙人名簿」 for
    「…組織はなにか」) are revised, as before.
    """
    fillers = [word for word, _ in gap_fillers(question, evidence)]
    kind = question_kind(question) if language != "ja" else None  # Japanese: the gap word
    if not fillers and kind is None:
        return None
    findings = off_question_findings(question, statements, evidence, language)
    flagged = {f["claim_index"] for f in findings if f["type"] == "off_question"}
    if not flagged or len(flagged) == len(statements):
        return None
    keep = [i for i in range(len(statements)) if i not in flagged]
    unrelated = set(unrelated_statements(question, [statements[i] for i in keep]))
    keep = [k for n, k in enumerate(keep) if n not in unrelated]
    kept = [statements[i] for i in keep]
    if not any(word in s["text"] for s in kept for word in fillers) and not (
            kind is not None and any(has_kind(_beyond(s["text"], question), kind)
                                     for s in kept)):
        return None
    if any(f["type"] == "off_question"
           for f in off_question_findings(question, kept, evidence, language)):
        return None
    return keep


def _beyond(text: str, question: str) -> str:
    """The words of ``text`` that ``question`` does not hold ("three" of "… has three acts")."""
    asked = {w.lower().strip(".,;:!?\"'") for w in question.split()}
    return " ".join(w for w in text.split() if w.lower().strip(".,;:!?\"'") not in asked)
