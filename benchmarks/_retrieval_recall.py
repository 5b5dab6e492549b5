"""Recall per embedder: warming the vector cache, recall per pool, fusion weights on dev folds."""

from __future__ import annotations

import json
import time

import _pools
import numpy as np
from _common import eval_path, read_jsonl
from _retrieval_common import make_embedder


def _pools_for(sets: list[str], jsquad_n: int | None) -> list[_pools.Pool]:
    makers = {
        "jsquad": lambda: [_pools.jsquad(jsquad_n)],
        "jaquad": lambda: [_pools.jaquad()],
        "scifact": lambda: [_pools.scifact()],
        "nomiracl": lambda: [_pools.nomiracl("ja"), _pools.nomiracl("en")],
        "xlang": lambda: [_pools.xlang("en"), _pools.xlang("ja")],
        "halueval": lambda: [_pools.halueval_qa()],
    }
    return [p for s in sets for p in makers[s]() if p is not None]


# -- warm ---------------------------------------------------------------------------------
def bench_warm(
    embedders: list[str], sets: list[str], jsquad_n: int | None, threads: int, part: str
) -> None:
    """Embed pools and questions into the cache (resumable). ``part`` "i/n" does every n-th
    passage from the i-th, so a long pool can be split into short runs under the lock."""
    index, count = (int(x) for x in part.split("/"))
    pools = [p for p in _pools_for(sets, jsquad_n) if p.name != "xlang_ja->ja"]
    models = {name: make_embedder(name, threads) for name in embedders}
    for pool in pools:
        for name, emb in models.items():
            t = time.perf_counter()
            emb.embed_queries([q for q, _ in pool.questions])
            if pool.name == "jsquad_ja" and (folds := _weights_folds()):
                emb.embed_queries([q for q, _ in folds[0].questions])
                emb.embed_queries([q for q, _ in folds[1].questions])
                if xdev := _pools.xlang("en", fold="dev"):
                    emb.embed_queries([q for q, _ in xdev.questions])
            texts = _pools.passage_texts(pool.docs)[index::count]
            emb.embed_documents(texts, label=f"{name} {pool.name} part {part}")
            print(
                f"warm {name} {pool.name} part {part}: {time.perf_counter() - t:.0f} s", flush=True
            )


# -- recall -------------------------------------------------------------------------------
def _recall(retriever, questions: list[tuple[str, set[str]]], k: int) -> float:
    total = 0.0
    for q, gold in questions:
        got = {ev["doc_id"] for ev in retriever.retrieve(q, k)}
        total += len(got & gold) / len(gold)
    return total / max(len(questions), 1)


def _retriever(pool: _pools.Pool, embedder: str | None, threads: int):
    from grounded_rag.retrieval.memory import InMemoryRetriever

    if embedder is None:
        return InMemoryRetriever(pool.docs, chunk=False, mode="bm25")
    emb = make_embedder(embedder, threads)
    return InMemoryRetriever(pool.docs, embeddings=emb, chunk=False, mode="hybrid")


def _auc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return float("nan")
    return float(np.mean([(x > y) + 0.5 * (x == y) for x in pos for y in neg]))


def bench_recall(sets: list[str], embedders: list[str], jsquad_n: int | None, threads: int) -> dict:
    """Recall@k per pool: BM25 alone, then vector and hybrid for each embedder."""
    results: dict[str, dict[str, float]] = {}
    for pool in _pools_for(sets, jsquad_n):
        if pool.name.startswith("nomiracl"):
            results[pool.name] = _nomiracl_relevance(pool, embedders, threads)
            continue
        row: dict[str, float] = {}
        t = time.perf_counter()
        row["bm25"] = _recall(_retriever(pool, None, threads), pool.questions, pool.k)
        for name in embedders:
            retr = _retriever(pool, name, threads)
            for mode in ("vector", "hybrid"):
                retr.mode = mode
                row[f"{name} {mode}"] = _recall(retr, pool.questions, pool.k)
        results[pool.name] = row
        cells = "  ".join(f"{k} {v:.3f}" for k, v in row.items())
        print(
            f"{pool.name} recall@{pool.k} ({len(pool.questions)} questions, {len(pool.docs)} "
            f"passages; {time.perf_counter() - t:.0f} s): {cells}",
            flush=True,
        )
    return results


def _nomiracl_relevance(pool: _pools.Pool, embedders: list[str], threads: int) -> dict:
    """Answerable vs unanswerable: ROC AUC of the best cosine and of the best relevance.

    NoMIRACL has no per-passage labels here, only whether any of a query's 10 passages
    answers it; the pooled corpus per language is searched like a real store.
    """
    labels = pool.extra["answerable"]
    row: dict[str, float] = {}
    for name in embedders:
        retr = _retriever(pool, name, threads)
        best_cos, best_rel = [], []
        for q, _ in pool.questions:
            pairs = retr.retrieve_with_candidates(q, 10)
            best_cos.append(max((c.cosine or 0.0 for _, c in pairs), default=0.0))
            best_rel.append(max((ev["relevance"] for ev, _ in pairs), default=0.0))
        for label, scores in (("best cosine", best_cos), ("best relevance", best_rel)):
            pos = [s for s, a in zip(scores, labels, strict=True) if a]
            neg = [s for s, a in zip(scores, labels, strict=True) if not a]
            row[f"{name} AUC {label}"] = _auc(pos, neg)
    cells = "  ".join(f"{k} {v:.3f}" for k, v in row.items())
    print(f"{pool.name} answerable-vs-not ({len(labels)} queries): {cells}", flush=True)
    return row


# -- fusion weights -----------------------------------------------------------------------
def _weights_folds() -> tuple[_pools.Pool, _pools.Pool] | None:
    """Dev folds the reported recall does not use: JSQuAD questions 1000-1999 (minus the
    cross-language sample) and the odd-numbered SciFact claims."""
    ja = _pools.jsquad(2000)
    en = _pools.scifact()
    if ja is None or en is None:
        return None
    xl = {json.loads(x)["id"] for x in _pools.XLANG_FILE.read_text().splitlines()}
    qp = eval_path("jsquad_ja", "questions.dev.jsonl")
    ids = [q["id"] for q in read_jsonl(qp, 2000)] if qp else []
    ja.questions = [q for i, q in enumerate(ja.questions) if i >= 1000 and ids[i] not in xl]
    ja.name = "jsquad_ja[1000:2000]"
    en.questions = en.questions[1::2]
    en.name = "scifact[odd]"
    return ja, en


def bench_weights(embedder: str, threads: int, which: list[str]) -> dict[str, float]:
    """RRF weights of the vector side per query language, and of the other-language
    ranking, each the best on a dev fold the reported recall does not use."""
    folds = _weights_folds()
    xdev = _pools.xlang("en", fold="dev")
    if folds is None:
        return {}
    chosen: dict[str, float] = {}
    grid = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
    tasks = [("ja", folds[0], "ja_vector_weight"), ("en", folds[1], "en_vector_weight")]
    if xdev is not None:
        tasks.append(("cross_lexical", xdev, "cross_lexical"))
    for key, pool, attr in [t for t in tasks if t[0] in which]:
        retr = _retriever(pool, embedder, threads)
        scores = {}
        for w in grid:
            if attr.startswith("cross"):
                from grounded_rag.retrieval import fusion

                fusion.VECTOR_WEIGHTS["multilingual"][attr] = w
            else:
                setattr(retr, attr, w)
            scores[w] = _recall(retr, pool.questions, pool.k)
        best = max(scores.values())
        # ties go to the weight closest to 1 (plain RRF)
        chosen[key] = min((w for w, s in scores.items() if s == best), key=lambda w: abs(w - 1))
        if attr.startswith("cross"):
            fusion.VECTOR_WEIGHTS["multilingual"][attr] = chosen[key]
        cells = "  ".join(f"{w}: {s:.3f}" for w, s in scores.items())
        print(
            f"{embedder} {pool.name} recall@{pool.k} by {key} weight "
            f"({len(pool.questions)} q): {cells} -> {chosen[key]}",
            flush=True,
        )
    print("chosen:", json.dumps(chosen))
    return chosen
