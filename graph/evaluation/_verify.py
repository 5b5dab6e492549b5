"""The ``verify`` task: claims of a given response judged against given sources, and its metrics."""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from typing import Any

from grounded_rag.evaluation import _metrics as m
from grounded_rag.evaluation._datasets import EvalItem
from grounded_rag.types import Evidence
from grounded_rag.verification.base import ClaimToCheck, ClaimVerdict, Verifier
from grounded_rag.verification.cascade import CascadeVerifier
from grounded_rag.verification.modes import UNCHECKED, run_verifier, select_claims


class CountingVerifier:
    """Wraps a verifier and counts its calls and the claims it was given."""

    def __init__(self, inner: Verifier) -> None:
        self.inner = inner
        self.calls = 0
        self.claims = 0

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        """Delegate, counting one call and ``len(claims)`` claims."""
        self.calls += 1
        self.claims += len(claims)
        return self.inner.verify(claims, language=language)


class InstrumentedVerifier:
    """The configured verifier with counters on the outside and on its model stage.

    ``calls`` counts verifier calls (one per graph attempt, or per item in the verify task);
    ``model_calls`` counts calls that reached the model behind a ``CascadeVerifier`` (claims
    its deterministic cues decide never get there). ``verifier`` is the same cascade built
    around a counting inner stage (``with_inner``), with fresh counters, so the graph's
    ``resolve_verifier`` takes it as is (a cascade is not wrapped in a second cascade) and
    a cached, shared verifier stays untouched. Any other verifier is counted by a plain
    wrapper; its model calls are those of its ``inner`` stage when it has one, else its
    calls.
    """

    def __init__(self, verifier: Verifier) -> None:
        self.model_counter: CountingVerifier | None = None
        self.cascade: CascadeVerifier | None = None
        self.outer: CountingVerifier | None = None
        if isinstance(verifier, CascadeVerifier):
            self.model_counter = CountingVerifier(verifier.inner)
            self.cascade = verifier.with_inner(self.model_counter)
            self.verifier: Verifier = self.cascade
        else:
            target = verifier
            if hasattr(verifier, "inner"):  # another two-stage verifier: count its model too
                target = copy.copy(verifier)
                self.model_counter = CountingVerifier(target.inner)
                target.inner = self.model_counter
            self.outer = CountingVerifier(target)
            self.verifier = self.outer

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        """Verify through both counters."""
        return self.verifier.verify(claims, language=language)

    @property
    def calls(self) -> int:
        """Verifier calls so far."""
        if self.cascade is not None:
            return self.cascade.calls
        return self.outer.calls if self.outer else 0

    @property
    def model_calls(self) -> int:
        """Calls that reached the model stage so far."""
        return self.model_counter.calls if self.model_counter else self.calls

    @property
    def model_claims(self) -> int:
        """Claims handed to the model stage so far (the rest were decided by cues)."""
        if self.model_counter is not None:
            return self.model_counter.claims
        return self.outer.claims if self.outer else 0

    def counts(self) -> tuple[int, int, int]:
        """A snapshot (calls, model calls, model claims) for per-item differences."""
        return self.calls, self.model_calls, self.model_claims


def as_evidence(source: dict[str, str]) -> Evidence:
    """An evaluation source document as a graph ``Evidence`` record."""
    return Evidence(
        source_id=source["id"], doc_id=source["id"].split("#")[0], title=source.get("title", ""),
        url=source.get("url", ""), text=source["text"], score=1.0, relevance=1.0,
    )


def sources_block(question: str, evidence: list[Evidence]) -> str:
    """The numbered sources block the local generator would read for ``question``."""
    from grounded_rag.context import Context
    from grounded_rag.nodes.write import evidence_view
    from grounded_rag.prompts import generate
    from grounded_rag.verification.citations import render_view

    view = evidence_view(question, evidence, Context().evidence_tokens)
    return render_view(view, evidence, header=generate.SOURCE_HEADER)


def label3_of(verdicts: Sequence[str]) -> str:
    """One three-way label for a response: any contradiction wins, then any neutral."""
    if any(v == "contradicted" for v in verdicts):
        return "contradicted"
    if all(v == "supported" for v in verdicts):
        return "supported"
    return "neutral"


def verify_item(item: EvalItem, verifier: InstrumentedVerifier, *, mode: str = "full",
                sample_rate: float = 1.0, execution: str = "batch") -> dict[str, Any]:
    """Judge the claims of one item (one verifier call in batch); a JSON-ready result.

    ``mode="sampled"`` judges only the claims ``select_claims`` picks (risky ones plus a
    ``sample_rate`` share of the rest); the others are ``unchecked`` and count as passed, as
    they do in an answer. ``deferred`` judges every claim, like ``full`` (it changes when
    the reader sees the verdicts, not which claims get one).
    """
    evidence = [as_evidence(s) for s in item.sources]
    to_check = [ClaimToCheck(text=c, evidence=evidence) for c in item.claims]
    sources = sources_block(item.question or item.claim_question, evidence)
    for check in to_check:
        if item.claim_question:
            check["question"] = item.claim_question
        # As in an answer of the local generator: the numbered sources it would have read
        # (a local plain judge reads the claim after them; other judges ignore them).
        check["sources"] = sources
    chosen = (select_claims(item.claims, sample_rate) if mode == "sampled"
              else list(range(len(to_check))))
    before = verifier.counts()
    start = time.perf_counter()
    judged = run_verifier(verifier, [to_check[i] for i in chosen], execution=execution,
                          language=item.language)
    seconds = time.perf_counter() - start
    after = verifier.counts()
    by_index = dict(zip(chosen, judged, strict=True))
    # An unchecked claim passes (support 1.0), exactly as it would in an answer.
    passed = ClaimVerdict(verdict="supported", reason="", evidence_quote="", support=1.0)
    verdicts = [by_index.get(i, passed) for i in range(len(to_check))]
    labels = [v["verdict"] for v in verdicts]
    supports = [float(v.get("support", 1.0 if v["verdict"] == "supported" else 0.0))
                for v in verdicts]
    shown = [v["verdict"] if i in by_index else UNCHECKED for i, v in enumerate(verdicts)]
    return {
        "id": item.id,
        "subset": item.subset,
        "language": item.language,
        "gold_hallucinated": item.gold_hallucinated,
        "gold_label3": item.gold_label3,
        "gold_claims": item.gold_claims,
        "pred_hallucinated": any(label != "supported" for label in labels),
        "pred_label3": label3_of(labels) if labels else "supported",
        "score": round(1.0 - min(supports), 6) if supports else 0.0,
        "claims": [
            {"text": c, "verdict": label, "support": round(s, 6),
             "reason": (v.get("reason") or "")[:300],
             "evidence_quote": (v.get("evidence_quote") or "")[:300]}
            for c, v, s, label in zip(item.claims, verdicts, supports, shown, strict=True)
        ],
        "n_claims": len(to_check),
        "checked_claims": len(chosen),
        "verifier_calls": after[0] - before[0],
        "model_calls": after[1] - before[1],
        "model_claims": after[2] - before[2],
        "seconds": round(seconds, 4),
    }


def _binary_block(gold: list[bool], pred: list[bool], scores: list[float]) -> dict[str, Any]:
    block = m.binary_metrics(gold, pred)
    block["auroc"] = m.auroc(gold, scores)
    block["best_threshold_on_this_data"] = m.best_threshold(gold, scores)
    return block


def verify_metrics(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Metrics over verify-task results (one slice: all items, or one subset)."""
    rows = [r for r in results if r.get("gold_hallucinated") is not None]
    out = _binary_block(
        [bool(r["gold_hallucinated"]) for r in rows],
        [bool(r["pred_hallucinated"]) for r in rows],
        [float(r["score"]) for r in rows],
    )
    three = [r for r in rows if r.get("gold_label3")]
    if three:
        out.update(m.three_way_metrics([r["gold_label3"] for r in three],
                                       [r["pred_label3"] for r in three]))
    sentence_gold: list[bool] = []
    sentence_pred: list[bool] = []
    sentence_scores: list[float] = []
    for r in rows:
        for gold, claim in zip(r.get("gold_claims") or [], r["claims"], strict=False):
            if gold is None:
                continue
            sentence_gold.append(bool(gold))
            sentence_pred.append(claim["verdict"] not in ("supported", UNCHECKED))
            sentence_scores.append(1.0 - float(claim["support"]))
    if sentence_gold:
        out["sentence_level"] = _binary_block(sentence_gold, sentence_pred, sentence_scores)
    claims = sum(r["n_claims"] for r in rows)
    seconds = sum(r["seconds"] for r in rows)
    out["cost"] = {
        "claims": claims,
        "claims_per_item": m.mean([r["n_claims"] for r in rows]),
        "checked_claim_share": (round(sum(r.get("checked_claims", r["n_claims"]) for r in rows)
                                      / claims, 4) if claims else None),
        "verifier_seconds": round(seconds, 3),
        "claims_verified_per_second": round(claims / seconds, 3) if seconds else None,
        "seconds_per_item_p50": m.percentile([r["seconds"] for r in rows], 50),
        "seconds_per_item_p99": m.percentile([r["seconds"] for r in rows], 99),
        "verifier_calls_per_item": m.mean([r["verifier_calls"] for r in rows]),
        "model_calls_per_item": m.mean([r["model_calls"] for r in rows]),
        "claims_decided_without_model": (
            round(1 - sum(r["model_claims"] for r in rows) / claims, 4) if claims else None),
    }
    return out


_CHECK_EVIDENCE = {
    "en": ("The city library opens at nine in the morning and closes in the evening. "
           "Visitors may borrow books, magazines and films. The reading room is on the "
           "second floor. Staff at the front desk help visitors find books. Children's "
           "books are kept next to the entrance. The library café sells coffee and tea."),
    "ja": ("市立図書館は朝に開館し、夕方に閉館します。利用者は本や雑誌、映画を借りられます。"
           "閲覧室は二階にあります。受付の職員が本探しを手伝います。児童書は入口の横にあります。"
           "館内のカフェではコーヒーと紅茶を販売しています。"),
}
_CHECK_CLAIMS = {
    "en": ["Visitors may borrow books.", "The reading room is on the second floor.",
           "Staff help visitors find books.", "Children's books are next to the entrance.",
           "The café sells coffee.", "The library closes in the evening.",
           "Visitors may borrow films.", "The café sells tea."],
    "ja": ["利用者は本を借りられます。", "閲覧室は二階にあります。", "職員が本探しを手伝います。",
           "児童書は入口の横にあります。", "カフェではコーヒーを販売しています。",
           "図書館は夕方に閉館します。", "利用者は映画を借りられます。",
           "カフェでは紅茶を販売しています。"],
}


def batching_check(verifier: Verifier, *, sizes: Sequence[int] = (1, 2, 4, 8),
                   language: str = "en") -> dict[str, Any]:
    """Verify growing batches of claims once each and count the calls that reach the model.

    Batched verification keeps model calls per attempt constant as the number of claims
    grows; a verifier that calls its model once per claim shows up as ``constant: false``.
    """
    lang = "ja" if language == "ja" else "en"
    evidence = [as_evidence({"id": "check#sec0", "title": "check", "text": _CHECK_EVIDENCE[lang]})]
    rows = []
    for size in sizes:
        instrumented = InstrumentedVerifier(verifier)
        texts = [_CHECK_CLAIMS[lang][i % len(_CHECK_CLAIMS[lang])] for i in range(size)]
        start = time.perf_counter()
        instrumented.verify([ClaimToCheck(text=t, evidence=evidence) for t in texts],
                            language=lang)
        seconds = time.perf_counter() - start
        rows.append({"claims": size, "verifier_calls": instrumented.calls,
                     "model_calls": instrumented.model_calls, "seconds": round(seconds, 4),
                     "claims_per_second": round(size / seconds, 3) if seconds else None})
    model_calls = {r["model_calls"] for r in rows}
    return {"language": lang, "rows": rows, "constant": len(model_calls) == 1}
