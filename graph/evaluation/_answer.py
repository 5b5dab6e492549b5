"""The ``answer`` task: the whole graph over a corpus built from the set, and its metrics."""

from __future__ import annotations

import re
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from grounded_rag.evaluation import _metrics as m
from grounded_rag.evaluation._datasets import EvalItem, classify_baseline
from grounded_rag.evaluation._verify import InstrumentedVerifier
from grounded_rag.retrieval.base import Retriever
from grounded_rag.types import Evidence
from grounded_rag.verification import rules
from grounded_rag.verification.modes import claim_to_check

RetrieverFactory = Callable[[list[dict[str, str]]], Retriever]
"""Builds a retriever over documents ``{id, title, text, url}``."""

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "openai:gpt-4.1-mini": (0.40, 1.60),
    "google_genai:gemini-2.5-flash": (0.30, 2.50),
}
"""USD per million (input, output) tokens: list prices when written; override with --price."""


def memory_retriever_factory(mode: str = "hybrid", embeddings: Any = None) -> RetrieverFactory:
    """A factory of in-memory retrievers; the embedding model is loaded once and shared.

    Without ``embeddings`` it uses the product's default embedder (multilingual-e5 where it
    installs, else MiniLM), whose relevance the default abstain threshold is calibrated
    for, behind an on-disk vector cache so a shared corpus is embedded once across runs.
    ``bm25`` mode loads no embedder, so its relevance lacks the cosine and runs below the
    default threshold: pair it with ``--set abstain_threshold=0``.
    """
    shared: dict[str, Any] = {"embeddings": embeddings}

    def build(documents: list[dict[str, str]]) -> Retriever:
        from grounded_rag.retrieval import InMemoryRetriever

        if mode != "bm25" and shared["embeddings"] is None:
            from grounded_rag.retrieval.embeddings import default_embeddings
            from grounded_rag.retrieval.vector_cache import CachedEmbeddings

            shared["embeddings"] = CachedEmbeddings(default_embeddings(), "eval")
        return InMemoryRetriever(documents, mode=mode,  # type: ignore[arg-type]
                                 embeddings=shared["embeddings"], chunk=False)

    return build


class RecordingRetriever:
    """Delegates to the current item's retriever and keeps what it returned."""

    def __init__(self) -> None:
        self.base: Retriever | None = None
        self.last: list[Evidence] = []

    @property
    def embeddings(self) -> Any:
        """The current base retriever's embedder (None without one)."""
        return getattr(self.base, "embeddings", None)

    def retrieve(self, query: str, k: int) -> list[Evidence]:
        """Retrieve through the current base retriever and remember the hits."""
        if self.base is None:
            raise RuntimeError("no retriever set for this item")
        self.last = list(self.base.retrieve(query, k))
        return self.last


def chat_call_counter() -> Any:
    """A callback handler counting chat model calls (generator, extractor, API judges).

    Built on first use so that importing the evaluation package loads no LangChain.
    """
    from langchain_core.callbacks import BaseCallbackHandler

    class ChatCallCounter(BaseCallbackHandler):
        def __init__(self) -> None:
            self.calls = 0

        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            self.calls += 1

    return ChatCallCounter()


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"[\s\u3000、。,.「」『』()（）\"'・]+", "", text)


_VERDICT = re.compile(r"(?:^|[.!?;:]\s*)[^\w]*(yes|no)\b", re.I)


_NICKNAME = re.compile(r"^\S.*?\s[\"\u201c']([^\"\u201c\u201d']+)[\"\u201d']\s+(\S.*)$")
"""A full name with the name a person goes by quoted in it: 'Kemal Amin "Casey" Kasem'."""


def _gold_forms(gold: str) -> list[str]:
    """The gold string, and for a full name with a quoted nickname, the nickname + surname."""
    match = _NICKNAME.match(unicodedata.normalize("NFKC", gold).strip())
    return [gold, f"{match.group(1)} {match.group(2)}"] if match else [gold]


def contains_answer(answer: str, gold: list[str]) -> bool:
    """True when a gold answer string appears in the answer (NFKC, case and space folded).

    A yes/no gold ("yes", "no") is a verdict: it must open a sentence of the answer as a
    word ("No. Lysichiton is ..."), not be found inside another word ("November", "North")
    once spaces are folded away. A full name with a quoted nickname ('Kemal Amin "Casey"
    Kasem') is also found as the name the person goes by ("Casey Kasem").
    """
    text = unicodedata.normalize("NFKC", re.sub(r"\[\d+\]", "", answer))
    body = _norm(text)
    verdicts = {m.lower() for m in _VERDICT.findall(text)}
    forms = [f for g in gold for f in _gold_forms(g)]
    return any(_norm(g) in verdicts if _norm(g) in ("yes", "no") else bool(_norm(g))
               and _norm(g) in body for g in forms)


def answer_item(
    item: EvalItem,
    graph: Any,
    recorder: RecordingRetriever,
    verifier: InstrumentedVerifier,
    *,
    configurable: dict[str, Any],
    price: tuple[float, float] | None,
) -> dict[str, Any]:
    """Run the graph on one question; a JSON-ready result with everything metrics need."""
    from langchain_core.callbacks import UsageMetadataCallbackHandler

    usage = UsageMetadataCallbackHandler()
    chats = chat_call_counter()
    config = {"configurable": dict(configurable), "callbacks": [usage, chats]}
    before = verifier.counts()
    fired_before = rules.counts()
    drafts: list[dict[str, Any]] = []
    checks: list[list[dict[str, Any]]] = []
    final: dict[str, Any] = {}
    declined = False
    start = time.perf_counter()
    for mode, chunk in graph.stream({"question": item.question}, config,
                                    stream_mode=["updates", "values"]):
        if mode == "values":
            final = chunk
            continue
        for node, update in (chunk or {}).items():
            if not isinstance(update, dict):
                continue
            if node in {"generate_answer", "revise_answer"}:
                draft = update.get("draft")
                declined = draft is not None and not draft.get("answerable", True)
            if node in {"verify_claims", "verify_after_answer"}:
                checks.append([
                    {"text": str(c.get("text", ""))[:200], "verdict": c.get("verdict"),
                     "support": round(float(c.get("support", 0.0)), 4),
                     "reason": str(c.get("reason", ""))[:200]}
                    for c in update.get("claims") or []])
            if node == "check_citations":
                statements = (update.get("draft") or {}).get("statements", [])
                kinds = Counter(f["type"] for f in update.get("citation_findings", []))
                text = " ".join(str(s.get("text", "")) for s in statements)
                drafts.append({
                    # does this draft contain the gold answer (before the off-question check
                    # and the verifier had their say on it)?
                    "answer_match": (contains_answer(text, item.answers)
                                     if item.answers and statements else None),
                    "citations": sum(len(s.get("citations", [])) for s in statements),
                    "phantom": kinds.get("phantom_source", 0),
                    "quote_not_found": kinds.get("quote_not_found", 0),
                    "off_question": kinds.get("off_question", 0),
                })
    wall_ms = (time.perf_counter() - start) * 1000
    after = verifier.counts()
    retrieved = recorder.last
    status = final.get("status", "abstained")
    attempts = int(final.get("attempts", 0) or 0)
    if status == "answered":
        reason = ""
    elif attempts == 0 and any(f.get("type") == "no_answer_in_sources"
                               for f in final.get("findings") or []):
        reason = "answerability_check"
    elif attempts == 0:
        reason = "retrieval_gate"
    elif declined:
        reason = "generator_declined"
    else:
        reason = "verification_failed"
    claims = final.get("claims") or []
    judged_against = {e["source_id"]: e for e in retrieved}
    cited_docs = {s["id"].split("#")[0] for s in final.get("sources") or []}
    citations = [
        {"located": c.get("start", -1) >= 0 and float(c.get("match", 0.0)) >= 0.85,
         "supported": claim.get("verdict") == "supported"}
        for claim in claims for c in claim.get("citations", [])
    ]
    tokens_in = sum(u.get("input_tokens", 0) for u in usage.usage_metadata.values())
    tokens_out = sum(u.get("output_tokens", 0) for u in usage.usage_metadata.values())
    cost = (tokens_in * price[0] + tokens_out * price[1]) / 1e6 if price else None
    gold_docs = set(item.gold_doc_ids)
    return {
        "id": item.id,
        "subset": item.subset,
        "language": item.language,
        "answerable": item.answerable,
        "status": status,
        "abstain_reason": reason,
        "stage_scores": final.get("stage_scores") or {},
        "answer": (final.get("answer") or "")[:1000],
        "attempts": attempts,
        "regenerations": max(0, attempts - 1),
        "grounding_score": final.get("grounding_score"),
        "confidence": final.get("confidence"),
        "verdicts": [c.get("verdict", "neutral") for c in claims],
        "verification": final.get("verification"),
        "checked_claims": final.get("checked_claims"),
        # What a claim was judged against, so another judge can audit the same claims.
        "final_claims": [
            {"text": c["text"], "verdict": c.get("verdict", "neutral"),
             "evidence": [{k: e[k] for k in ("source_id", "doc_id", "title", "text")}
                          for e in claim_to_check(c, list(judged_against.values()))["evidence"]]}
            for c in claims],
        "citations": citations,
        "drafts": drafts,
        "checks": checks,
        # the deterministic rules that changed an outcome on this question (rules.RULES)
        "rules_fired": rules.since(fired_before),
        "retrieved_doc_ids": [e["doc_id"] for e in retrieved],
        "best_relevance": max((e["relevance"] for e in retrieved), default=0.0),
        "gold_doc_ids": sorted(gold_docs),
        "gold_retrieved": bool(gold_docs & {e["doc_id"] for e in retrieved}) if gold_docs else None,
        "gold_cited": bool(gold_docs & cited_docs) if gold_docs and status == "answered" else None,
        "answer_match": (contains_answer(final.get("answer") or "", item.answers)
                         if item.answers and status == "answered" else None),
        "timings_ms": {k: round(float(v), 3) for k, v in (final.get("timings_ms") or {}).items()},
        "latency_ms": round(wall_ms, 3),
        "verifier_calls": after[0] - before[0],
        "model_calls": after[1] - before[1],
        "model_claims": after[2] - before[2],
        "chat_calls": chats.calls,
        "tokens": {"input": tokens_in, "output": tokens_out, "total": tokens_in + tokens_out},
        "cost_usd": round(cost, 8) if cost is not None else None,
        "findings": sorted({f["type"] for f in final.get("findings") or []}),
        "baselines": {name: classify_baseline(text)
                      for name, text in (item.extra.get("baseline_outputs") or {}).items()},
    }


def answer_metrics(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Metrics over answer-task results (one slice: all items, or one subset)."""
    n = len(results)
    answered = [r for r in results if r["status"] == "answered"]
    abstained = [r for r in results if r["status"] != "answered"]
    known = [r for r in results if r["answerable"] is not None]
    should_abstain = [r for r in known if not r["answerable"]]
    should_answer = [r for r in known if r["answerable"]]
    correct_abstain = [r for r in should_abstain if r["status"] != "answered"]
    abstained_known = [r for r in known if r["status"] != "answered"]
    drafts = [d for r in results for d in r["drafts"]]
    citations = [c for r in answered for c in r["citations"]]
    retrieved = [r for r in results if r["gold_retrieved"] is not None]
    cited = [r for r in answered if r["gold_cited"] is not None]
    matched = [r for r in answered if r["answer_match"] is not None]
    first_drafts = [r for r in results
                    if r["drafts"] and r["drafts"][0].get("answer_match") is not None]
    # A claim the verifier rejected (or any answer to an unanswerable question); claims left
    # unchecked by sampled verification are unknown, not hallucinated (see unchecked_claim_rate).
    hallucinated = [
        r for r in answered
        if r["answerable"] is False or any(v in ("contradicted", "neutral") for v in r["verdicts"])
    ]
    final_verdicts = [v for r in answered for v in r["verdicts"]]
    stages: dict[str, list[float]] = defaultdict(list)
    for r in results:
        for stage, ms in r["timings_ms"].items():
            stages[stage].append(ms)
        stages["total"].append(r["latency_ms"])
    costs = [r["cost_usd"] for r in results if r["cost_usd"] is not None]
    out: dict[str, Any] = {
        "n": n,
        "answered": len(answered),
        "answer_rate": m.rate(len(answered), n),
        "answer_rate_answerable": m.rate(
            sum(1 for r in should_answer if r["status"] == "answered"), len(should_answer)),
        "abstention_rate_unanswerable": m.rate(len(correct_abstain), len(should_abstain)),
        "abstention_precision": m.rate(len(correct_abstain), len(abstained_known)),
        "abstention_recall": m.rate(len(correct_abstain), len(should_abstain)),
        "abstain_reasons": dict(Counter(r["abstain_reason"] for r in abstained)),
        "source_recall": m.rate(sum(1 for r in retrieved if r["gold_retrieved"]), len(retrieved)),
        "cited_source_recall": m.rate(sum(1 for r in cited if r["gold_cited"]), len(cited)),
        "answer_match_rate": m.rate(sum(1 for r in matched if r["answer_match"]), len(matched)),
        # the first draft of every drafted question with gold answers, whatever became of
        # it: what an answer would contain without the off-question check and revisions
        "first_draft_match_rate": m.rate(
            sum(1 for r in first_drafts if r["drafts"][0]["answer_match"]), len(first_drafts)),
        "off_question_rate": m.rate(sum(1 for d in drafts if d.get("off_question")),
                                    len(drafts)),
        "phantom_citation_rate": m.rate(sum(d["phantom"] for d in drafts),
                                        sum(d["citations"] for d in drafts)),
        "quote_not_found_rate": m.rate(sum(d["quote_not_found"] for d in drafts),
                                       sum(d["citations"] for d in drafts)),
        "citation_precision": m.rate(sum(1 for c in citations if c["located"] and c["supported"]),
                                     len(citations)),
        "mean_grounding_score": m.mean([float(r["grounding_score"] or 0.0) for r in answered]),
        "mean_confidence": m.mean([float(r["confidence"] or 0.0) for r in answered]),
        "hallucination_rate": m.rate(len(hallucinated), len(answered)),
        "unchecked_claim_rate": m.rate(final_verdicts.count("unchecked"), len(final_verdicts)),
        "regenerations_per_question": m.mean([r["regenerations"] for r in results]),
        "latency_ms": {
            stage: {"p50": m.percentile(v, 50), "p99": m.percentile(v, 99), "n": len(v)}
            for stage, v in sorted(stages.items())
        },
        "cost": {
            "tokens_per_question": m.mean([r["tokens"]["total"] for r in results]),
            "input_tokens_per_question": m.mean([r["tokens"]["input"] for r in results]),
            "output_tokens_per_question": m.mean([r["tokens"]["output"] for r in results]),
            "cost_usd_per_question": m.mean(costs) if costs else None,
            "verifier_calls_per_answer": m.mean([r["verifier_calls"] for r in answered]),
            "model_calls_per_answer": m.mean([r["model_calls"] for r in answered]),
            # An attempt is verified when its draft reached the citation check.
            "verifier_calls_per_verified_attempt": m.rate(
                sum(r["verifier_calls"] for r in results), sum(len(r["drafts"]) for r in results)),
            "model_calls_per_verified_attempt": m.rate(
                sum(r["model_calls"] for r in results), sum(len(r["drafts"]) for r in results)),
        },
    }
    baselines = _baselines(results)
    if baselines:
        out["baselines"] = baselines
    return out


def _baselines(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Published NoMIRACL outputs on the same queries, read like ours, side by side."""
    names = sorted({name for r in results for name in r.get("baselines", {})})
    table: dict[str, Any] = {}
    unanswerable = [r for r in results if r["answerable"] is False]
    answerable = [r for r in results if r["answerable"] is True]
    for name in ["grounded-rag (this run)", *names]:
        def verdict(r: dict[str, Any], name: str = name) -> str | None:
            if name == "grounded-rag (this run)":
                return "answer" if r["status"] == "answered" else "abstain"
            return r["baselines"].get(name)

        un = [v for v in (verdict(r) for r in unanswerable) if v is not None]
        an = [v for v in (verdict(r) for r in answerable) if v is not None]
        table[name] = {
            "abstention_rate_unanswerable": m.rate(un.count("abstain"), len(un)),
            "answer_rate_answerable": m.rate(an.count("answer"), len(an)),
            "invalid_rate": m.rate(un.count("invalid") + an.count("invalid"), len(un) + len(an)),
            "n": len(un) + len(an),
        }
    return table if names else {}
