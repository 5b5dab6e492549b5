"""Gate mode of the small-corpus evaluation: retrieval and the pre-model abstain gate, no LLM.

Each collection gets the product's own in-memory hybrid retriever (sections chunked like an
ingested file, the default embedder behind the on-disk vector cache); each question is
retrieved exactly as the graph's retrieve node does (``top_k`` results) and judged by the
graph's gate function :func:`grounded_rag.retrieval.calibration.clears_gate`.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any, cast

from grounded_rag.evaluation import _metrics as m
from grounded_rag.evaluation._small_corpus import (
    CROSS,
    DEV,
    Collection,
    SmallCorpusItem,
    report_rows,
)

RetrieverFactory = Callable[[list[dict[str, str]]], Any]
KEEP_SHARE = 0.98
"""The share of answerable dev questions the fitted threshold must keep."""


def default_retriever_factory() -> RetrieverFactory:
    """The product's in-memory hybrid retriever over the default embedder (vectors cached)."""
    shared: dict[str, Any] = {}

    def build(documents: list[dict[str, str]]) -> Any:
        from grounded_rag.retrieval import InMemoryRetriever

        if "embeddings" not in shared:
            from grounded_rag.retrieval.embeddings import default_embeddings
            from grounded_rag.retrieval.vector_cache import CachedEmbeddings

            shared["embeddings"] = CachedEmbeddings(default_embeddings(), "small-corpus",
                                                    progress=False)
        return InMemoryRetriever(documents, mode="hybrid", embeddings=shared["embeddings"],
                                 chunk=True)

    return build


def cross_ratio() -> float:
    """Other-language gate / same-language gate for a user's number (scaled together)."""
    from grounded_rag.retrieval.calibration import cross_language_threshold

    return cross_language_threshold(1.0)


def gate_fields(evidence: list[dict[str, Any]], asked: str,
                threshold: float | None) -> dict[str, Any]:
    """What the graph's gate sees in one retrieval, for a question in language ``asked``.

    ``gate_score`` is the highest same-language threshold at which the gate still lets the
    question through (other-language evidence counted on the same-language scale); ``gate``
    is the same-language threshold in use, ``kept`` the gate's verdict.
    """
    from grounded_rag.retrieval.calibration import best_by_language, clears_gate

    passes, best, same_gate, cross_gate = clears_gate(evidence, asked, threshold)
    same, cross = best_by_language(evidence, asked)
    scale = same_gate / cross_gate if cross_gate > 0 else 1.0
    score = max(same, cross * scale if cross > 0 else 0.0)
    return {"best_relevance": round(best, 4), "same_language": round(same, 4),
            "other_language": round(cross, 4), "gate_score": round(score, 6), "kept": passes,
            "gate": same_gate}


def gate_record(item: SmallCorpusItem, evidence: list[dict[str, Any]],
                threshold: float | None, n_sections: int) -> dict[str, Any]:
    """What gate mode keeps of one question's retrieval."""
    from grounded_rag.lang import detect_language
    from grounded_rag.retrieval.calibration import is_same_language
    from grounded_rag.verification.on_question import predicate_absent

    asked = detect_language(item.question)  # the graph gates on the detected language
    gold = set(item.gold_doc_ids)
    rank = next((n for n, e in enumerate(evidence, 1) if e["doc_id"] in gold), None)
    record: dict[str, Any] = {
        "id": item.id, "collection": item.collection, "split": item.split,
        "language": item.language, "type": item.group, "answerable": item.answerable,
        **gate_fields(evidence, asked, threshold),
        "gold_rank": rank if gold else None, "n_sections": n_sections, "k": len(evidence),
        # the graph's second pre-model check (a yes/no predicate no passage names)
        "predicate_absent": bool(predicate_absent(item.question, cast(Any, evidence), asked)),
    }
    if item.qtype == CROSS:
        # An unrelated section in the question's own language ranked above the answering one
        # (or the answering one missing from the top k while such a section is there).
        ahead = evidence[: (rank - 1) if rank else len(evidence)]
        record["same_language_above_gold"] = any(
            is_same_language(e, asked) for e in ahead)
    return record


def fit_threshold(scores: list[float], keep: float = KEEP_SHARE) -> float | None:
    """The highest threshold that keeps at least ``keep`` of the questions (gate_score >= t)."""
    if not scores:
        return None
    ordered = sorted(scores)
    misses = int(len(ordered) * (1 - keep) + 1e-9)
    return ordered[misses]


def run_gate(items: list[SmallCorpusItem], collections: dict[str, Collection], *,
             top_k: int, threshold: float | None, factory: RetrieverFactory | None = None,
             progress: bool = True) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Retrieve every question from its own collection; records and timings."""
    factory = factory or default_retriever_factory()
    by_collection: dict[str, list[SmallCorpusItem]] = defaultdict(list)
    for item in items:
        by_collection[item.collection].append(item)
    records: list[dict[str, Any]] = []
    build_s = query_s = 0.0
    for n, cid in enumerate(sorted(by_collection), 1):
        t0 = time.perf_counter()
        retriever = factory(collections[cid].documents)
        t1 = time.perf_counter()
        n_sections = len(getattr(retriever, "chunks", collections[cid].documents))
        for item in by_collection[cid]:
            evidence = list(retriever.retrieve(item.question, top_k))[:top_k]
            records.append(gate_record(item, evidence, threshold, n_sections))
        build_s += t1 - t0
        query_s += time.perf_counter() - t1
        if progress and (n % 20 == 0 or n == len(by_collection)):
            print(f"  small-corpus gate: {n}/{len(by_collection)} collections "
                  f"({len(records)} questions)", file=sys.stderr, flush=True)
    return records, {"build_s": round(build_s, 2), "query_s": round(query_s, 2)}


def fitted_thresholds(dev_records: list[dict[str, Any]]) -> dict[str, float | None]:
    """Per question language and overall: the threshold keeping 98% of answerable dev ones."""
    out: dict[str, float | None] = {}
    for lang in ("ja", "en"):
        scores = [r["gate_score"] for r in dev_records
                  if r["answerable"] and r["language"] == lang]
        out[lang] = fit_threshold(scores)
    # Both languages together, as a multiple of each question's own gate.
    multiples = [r["gate_score"] / r["gate"] for r in dev_records
                 if r["answerable"] and r.get("gate", 0) > 0]
    out["all"] = fit_threshold(multiples)
    return out


def gate_rows(records: list[dict[str, Any]], fitted: dict[str, float | None],
              top_k: int) -> list[dict[str, Any]]:
    """One row per (language, type): relevance spread, gate pass rates, gold ranks."""
    rows = []
    for (lang, kind), group in report_rows(records).items():
        best = [r["best_relevance"] for r in group]
        fit = fitted.get(lang)
        ranks = [r["gold_rank"] for r in group]  # None: the gold section is not in the top k
        row: dict[str, Any] = {
            "language": lang, "type": kind, "answerable": group[0]["answerable"],
            "n": len(group),
            "relevance": {f"p{q}": m.percentile(best, q) for q in (10, 25, 50, 75, 90)},
            "kept_current": m.rate(sum(r["kept"] for r in group), len(group)),
            "kept_fitted": (m.rate(sum(r["gate_score"] >= fit for r in group), len(group))
                            if fit is not None else None),
            "recall_at_1": m.rate(sum(1 for x in ranks if x == 1), len(ranks))
            if group[0]["answerable"] else None,
            f"recall_at_{top_k}": m.rate(sum(1 for x in ranks if x is not None), len(ranks))
            if group[0]["answerable"] else None,
        }
        outranked = [r["same_language_above_gold"] for r in group
                     if "same_language_above_gold" in r]
        if outranked:
            row["same_language_above_gold"] = m.rate(sum(outranked), len(outranked))
        rows.append(row)
    return rows


def gate_summary(records: list[dict[str, Any]], fitted: dict[str, float | None]) -> dict[str, Any]:
    """Per language: answerable kept and unanswerable let through, at both thresholds."""
    out: dict[str, Any] = {}
    for lang in ("ja", "en"):
        mine = [r for r in records if r["language"] == lang]
        yes = [r for r in mine if r["answerable"]]
        no = [r for r in mine if not r["answerable"]]
        fit = fitted.get(lang)
        out[lang] = {
            "answerable": len(yes), "unanswerable": len(no),
            "kept_current": m.rate(sum(r["kept"] for r in yes), len(yes)),
            "let_through_current": m.rate(sum(r["kept"] for r in no), len(no)),
            "kept_fitted": (m.rate(sum(r["gate_score"] >= fit for r in yes), len(yes))
                            if fit is not None else None),
            "let_through_fitted": (m.rate(sum(r["gate_score"] >= fit for r in no), len(no))
                                   if fit is not None else None),
            # of those the gate keeps, refused by the predicate check (no model call)
            "predicate_absent_answerable": m.rate(
                sum(r["kept"] and r.get("predicate_absent", False) for r in yes), len(yes)),
            "predicate_absent_unanswerable": m.rate(
                sum(r["kept"] and r.get("predicate_absent", False) for r in no), len(no)),
            "auroc": m.auroc([r["answerable"] for r in mine], [r["gate_score"] for r in mine])
            if yes and no else None,
        }
    return out


def gate_report(records_by_split: dict[str, list[dict[str, Any]]], *, threshold: float | None,
                top_k: int, dev_records: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The gate-mode report: thresholds fitted on dev only, applied to every part shown.

    ``dev_records`` (default: the dev part of ``records_by_split``) are what the thresholds
    are fitted on, also when only the held-out part is shown.
    """
    dev = dev_records if dev_records is not None else records_by_split.get(DEV, [])
    fitted = fitted_thresholds(dev)
    consistency = sum(1 for recs in records_by_split.values() for r in recs
                      if r["kept"] != (r["gate_score"] >= r.get("gate", threshold or 0.0)))
    from grounded_rag.retrieval.calibration import DEFAULT_GATES

    return {
        "mode": "gate",
        "threshold": threshold if threshold is not None
        else f"per language (ja {DEFAULT_GATES['ja']:g}, en {DEFAULT_GATES['en']:g})",
        "cross_language_threshold": round(threshold * cross_ratio(), 4)
        if threshold is not None else DEFAULT_GATES["cross"], "top_k": top_k,
        "fitted_on": "dev answerable questions", "keep_share": KEEP_SHARE, "fitted": fitted,
        # gate_score >= threshold must say what clears_gate said; non-zero means the score
        # no longer mirrors the product's gate
        "gate_score_mismatches": consistency,
        "splits": {
            split: {"n": len(recs), "summary": gate_summary(recs, fitted),
                    "rows": gate_rows(recs, fitted, top_k)}
            for split, recs in records_by_split.items()
        },
    }


def _fmt(value: Any) -> str:
    return "-" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def _fmt4(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def gate_markdown(report: dict[str, Any]) -> str:
    """Markdown tables of a gate-mode report."""
    k = report["top_k"]
    fitted = report["fitted"]
    lines = [
        f"Gate at abstain_threshold {report['threshold']} (other-language evidence "
        f"{report['cross_language_threshold']}), top_k {k}. Fitted = the highest threshold "
        f"keeping >= {report['keep_share']:.0%} of answerable dev questions: "
        f"ja {_fmt4(fitted['ja'])}, en {_fmt4(fitted['en'])}, both x{_fmt(fitted['all'])} "
        "of each language's gate "
        "(fitted on dev only; relevance is rounded to 4 places).", ""]
    for split, part in report["splits"].items():
        lines += [f"**{split}** ({part['n']} questions)", "",
                  f"| lang | type | answerable | n | best relevance p10 / p50 / p90 | kept "
                  f"@{report['threshold']} | kept @fitted | R@1 | R@{k} | same-lang above gold |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for row in part["rows"]:
            rel = row["relevance"]
            lines.append(
                f"| {row['language']} | {row['type']} | {'yes' if row['answerable'] else 'no'} "
                f"| {row['n']} | {_fmt(rel['p10'])} / {_fmt(rel['p50'])} / {_fmt(rel['p90'])} "
                f"| {_fmt(row['kept_current'])} | {_fmt(row['kept_fitted'])} "
                f"| {_fmt(row['recall_at_1'])} | {_fmt(row[f'recall_at_{k}'])} "
                f"| {_fmt(row.get('same_language_above_gold'))} |")
        lines += ["", "| lang | answerable kept @current / @fitted | unanswerable let through "
                  "@current / @fitted | ROC AUC |", "|---|---|---|---|"]
        for lang, s in part["summary"].items():
            lines.append(
                f"| {lang} | {_fmt(s['kept_current'])} / {_fmt(s['kept_fitted'])} "
                f"| {_fmt(s['let_through_current'])} / {_fmt(s['let_through_fitted'])} "
                f"| {_fmt(s['auroc'])} |")
        lines.append("")
    return "\n".join(lines)
