"""Loop mode of the small-corpus evaluation: the whole graph per question, and which stage refused.

Each question runs through the graph over its own collection (the answer task's per-item
runner, so the result records are the same), and every refusal of an answerable question
is attributed to the stage that made it, read from the final findings.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

from grounded_rag.evaluation import _metrics as m
from grounded_rag.evaluation._small_corpus import Collection, SmallCorpusItem, report_rows

REFUSAL_STAGES = (
    "weak_evidence", "predicate_absent", "no_answer_in_sources", "generator_declined",
    "empty_answer", "off_question",
    "citation_check", "claims_failed_verification", "rejected_by_reviewer", "other",
)
"""Stages an abstention is attributed to, in the order the graph runs them."""

_CITATION_FINDINGS = {"phantom_source", "malformed_output", "quote_not_found",
                      "quote_in_other_source", "quote_drift"}


def refusal_stage(result: dict[str, Any]) -> str | None:
    """The stage that refused a question (None when it was answered).

    The pre-model gate and the answerability check leave their finding and no attempt; after
    an attempt, a declined draft is the generator's; otherwise the last attempt failed a
    check: off-question, citations, or (the usual case) claims the verifier did not support.
    """
    if result.get("status") == "answered":
        return None
    findings = set(result.get("findings") or [])
    attempts = int(result.get("attempts") or 0)
    if "weak_evidence" in findings:
        return "weak_evidence"
    if "predicate_absent" in findings:
        return "predicate_absent"
    if attempts == 0:
        return "no_answer_in_sources" if "no_answer_in_sources" in findings else "other"
    if "rejected_by_reviewer" in findings:
        return "rejected_by_reviewer"
    if result.get("abstain_reason") == "generator_declined":
        return "empty_answer" if "empty_answer" in findings else "generator_declined"
    if "off_question" in findings:
        return "off_question"
    if findings & _CITATION_FINDINGS and not result.get("verdicts"):
        return "citation_check"
    return "claims_failed_verification"


def loop_record(item: SmallCorpusItem, result: dict[str, Any]) -> dict[str, Any]:
    """The answer task's result for one question, with its small-corpus labels and stage."""
    findings = set(result.get("findings") or [])
    answered = result.get("status") == "answered"
    return {
        **result, "collection": item.collection, "split": item.split,
        "language": item.language, "type": item.group, "qtype": item.qtype,
        "answerable": item.answerable, "question": item.question,
        "expected": item.answers[:3],
        "refusal_stage": refusal_stage(result),
        "off_question_delivered": answered and "off_question" in findings,
    }


def loop_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (language, type): answered with the expected fact, abstained, refusal stages."""
    rows = []
    for (lang, kind), group in report_rows(records).items():
        answerable = group[0]["answerable"]
        answered = [r for r in group if r["status"] == "answered"]
        with_fact = [r for r in group if r.get("expected")]
        rows.append({
            "language": lang, "type": kind, "answerable": answerable, "n": len(group),
            "answered": m.rate(len(answered), len(group)),
            "answered_with_expected_fact": (
                m.rate(sum(1 for r in with_fact if r["answer_match"]), len(with_fact))
                if answerable else None),
            "abstained": m.rate(len(group) - len(answered), len(group)),
            "off_question_delivered": m.rate(
                sum(1 for r in answered if r["off_question_delivered"]), len(group)),
            "refused_by": dict(Counter(r["refusal_stage"] for r in group
                                       if r["refusal_stage"] is not None)),
            "fact_drafted_lost": (sum(1 for r in with_fact if fact_drafted_lost(r))
                                  if answerable else None),
        })
    return rows


def fact_drafted_lost(record: dict[str, Any]) -> bool:
    """An answerable question whose final answer lacks the expected fact, though a draft held it.

    Such a miss is the checks' or the revisions' (a draft refused, or rewritten without the
    fact), not the generator's: the other misses never had the fact in any draft.
    """
    return not record.get("answer_match") and any(
        d.get("answer_match") for d in record.get("drafts") or [])


def loop_report(records: list[dict[str, Any]], *, errors: list[dict[str, str]] | None = None,
                model: str = "") -> dict[str, Any]:
    """The loop-mode report over per-question records (one part)."""
    false_refusals = [r for r in records if r["answerable"] and r["refusal_stage"]]
    return {
        "mode": "loop", "model": model, "n": len(records), "n_errors": len(errors or []),
        "errors": (errors or [])[:20],
        "false_refusals_by_stage": dict(Counter(r["refusal_stage"] for r in false_refusals)),
        "unanswerable_answered": sum(1 for r in records
                                     if not r["answerable"] and r["status"] == "answered"),
        "rows": loop_rows(records),
    }


def loop_markdown(report: dict[str, Any]) -> str:
    """Markdown table of a loop-mode report."""
    def fmt(v: Any) -> str:
        return "-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))

    lines = [f"Loop mode [{report['model']}], {report['n']} questions "
             f"({report['n_errors']} errors). False refusals by stage: "
             f"{report['false_refusals_by_stage'] or 'none'}.", "",
             "| lang | type | answerable | n | answered | with expected fact | abstained | "
             "off-question delivered | refused by | fact drafted, lost |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in report["rows"]:
        stages = ", ".join(f"{k} {v}" for k, v in sorted(row["refused_by"].items())) or "-"
        lines.append(
            f"| {row['language']} | {row['type']} | {'yes' if row['answerable'] else 'no'} "
            f"| {row['n']} | {fmt(row['answered'])} | {fmt(row['answered_with_expected_fact'])} "
            f"| {fmt(row['abstained'])} | {fmt(row['off_question_delivered'])} | {stages} "
            f"| {fmt(row['fact_drafted_lost'])} |")
    return "\n".join(lines) + "\n"


def run_loop(items: list[SmallCorpusItem], collections: dict[str, Collection], *,
             model: str | None = None, settings: dict[str, Any] | None = None,
             cache: Any = None, factory: Any = None, generator: Any = None,
             verifier: Any = None, progress: bool = True) -> dict[str, Any]:
    """Run the graph on each question over its collection; the loop-mode report."""
    from grounded_rag.context import apply_preset, default_model_spec, validate_settings
    from grounded_rag.evaluation import _answer, _verify
    from grounded_rag.evaluation._datasets import EvalItem
    from grounded_rag.evaluation._small_corpus_gate import default_retriever_factory
    from grounded_rag.graph import build_graph
    from grounded_rag.models import resolve_verifier

    spec = model or default_model_spec()
    settings = validate_settings(dict(settings or {}))
    resolved = apply_preset({**settings, "generator_model": settings.get("generator_model")
                             or spec})
    instrumented = _verify.InstrumentedVerifier(resolve_verifier(
        verifier if verifier is not None else (resolved.verifier_model or spec), ""))
    recorder = _answer.RecordingRetriever()
    graph = build_graph(retriever=recorder, generator=generator,
                        verifier=instrumented.verifier)
    configurable = {**settings, "generator_model": settings.get("generator_model") or spec}
    factory = factory or default_retriever_factory()
    retrievers: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    errors: list[dict[str, str]] = []
    for n, item in enumerate(items, 1):
        result = cache.get(item.id) if cache is not None else None
        if result is None:
            if item.collection not in retrievers:
                retrievers[item.collection] = factory(collections[item.collection].documents)
            recorder.base, recorder.last = retrievers[item.collection], []
            eval_item = EvalItem(id=item.id, subset=f"{item.language}:{item.group}",
                                 language=item.language, question=item.question,
                                 answers=item.answers, gold_doc_ids=item.gold_doc_ids,
                                 answerable=item.answerable)
            try:
                result = _answer.answer_item(eval_item, graph, recorder, instrumented,
                                             configurable=configurable, price=None)
            except Exception as exc:  # one bad question must not lose the run
                errors.append({"id": item.id, "error": f"{type(exc).__name__}: {exc}"})
                continue
            if cache is not None:
                cache.put(item.id, result)
        records.append(loop_record(item, result))
        if progress:
            print(f"  small-corpus loop: {n}/{len(items)} {item.id} -> {result['status']}",
                  file=sys.stderr, flush=True)
    report = loop_report(records, errors=errors, model=spec if generator is None else "custom")
    report["records"] = records
    return report
