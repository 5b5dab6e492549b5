"""Query latency: grounded-rag's hybrid retriever vs LangChain's stock EnsembleRetriever."""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

import _pools
import numpy as np
from _retrieval_common import load_average, make_embedder

from grounded_rag.retrieval.embeddings import E5Embeddings


class _NoCache(dict):
    """A query cache that never stores: every timed query is really embedded."""

    def __setitem__(self, key, value) -> None:
        return None


# -- latency: ours vs LangChain's stock hybrid ------------------------------------------
def _latency_corpus(
    n: int, fill: str = "repeat", seed: int = 0
) -> tuple[list[dict], np.ndarray, list]:
    """``n`` passages with e5 vectors: real passages (cached vectors), then fillers.

    ``fill="repeat"`` repeats the non-JSQuAD passages (vector plus a little noise);
    ``fill="synthetic"`` uses only JSQuAD as real text and fills with random-word passages
    and clustered random vectors (no other pool needs to be embedded first).
    """
    emb = make_embedder("e5")
    sources = [_pools.jsquad(None)]
    if fill == "repeat":
        sources += [_pools.jaquad(), _pools.nomiracl("ja"), _pools.nomiracl("en"), _pools.scifact()]
    real: list[dict] = []
    for pool in sources:
        if pool is not None:
            real.extend(pool.docs)
    seen: set[str] = set()
    real = [d for d in real if not (d["id"] in seen or seen.add(d["id"]))]
    texts = _pools.passage_texts(real)
    vectors = np.asarray(emb.embed_documents(texts, label="e5 latency corpus"), np.float32)
    n_jsquad = len(_pools.jsquad(None).docs)
    docs, vecs = list(real[:n]), list(vectors[:n])
    rng = np.random.default_rng(seed)
    if fill == "synthetic":
        words = [f"w{i}" for i in range(20000)]
        centers = rng.normal(size=(512, vectors.shape[1])).astype(np.float32)
        while len(docs) < n:
            i = len(docs)
            picks = np.minimum(rng.zipf(1.3, size=120), len(words)) - 1
            docs.append(
                {
                    "id": f"syn{i}",
                    "title": f"Synthetic {i}",
                    "text": " ".join(words[j] for j in picks),
                }
            )
            v = centers[rng.integers(512)] + 0.7 * rng.normal(size=vectors.shape[1]).astype(
                np.float32
            )
            vecs.append(v / np.linalg.norm(v))
    copy = 0
    while len(docs) < n:
        copy += 1
        for d, v in zip(real[n_jsquad:], vectors[n_jsquad:], strict=True):
            if len(docs) >= n:
                break
            noisy = v + rng.normal(scale=0.02, size=v.shape).astype(np.float32)
            docs.append({**d, "id": f"{d['id']}~{copy}"})
            vecs.append(noisy / np.linalg.norm(noisy))
    questions = _pools.jsquad(None).questions
    return docs, np.asarray(vecs, np.float32), questions


def _timed(fn, queries: list[str]) -> tuple[list[float], list]:
    out, ts = [], []
    for q in queries:
        t = time.perf_counter()
        out.append(fn(q))
        ts.append((time.perf_counter() - t) * 1000)
    return ts, out


def _measure(fn, qs: list[tuple[str, set[str]]]) -> tuple[float, float, float]:
    """Recall@5, P50 and P99 (ms) of ``fn`` over the questions."""
    ts, got = _timed(fn, [q for q, _ in qs])
    recall = float(
        np.mean([len(g & gold) / len(gold) for g, (_, gold) in zip(got, qs, strict=True)])
    )
    return recall, _pct(ts, 0.5), _pct(ts, 0.99)


def _pct(ts: list[float], p: float) -> float:
    s = sorted(ts)
    return s[min(len(s) - 1, int(len(s) * p))]


def bench_latency(sizes: list[int], n_queries: int, threads: int, fill: str) -> None:
    """Ours (store: BM25 + Chroma, RRF, relevance) vs EnsembleRetriever(BM25Retriever + Chroma)."""
    import chromadb
    from chromadb.config import Settings
    from langchain_chroma import Chroma
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_community.retrievers import BM25Retriever

    from grounded_rag.retrieval.chunking import Chunk, index_text
    from grounded_rag.retrieval.embeddings import embedder_identity
    from grounded_rag.retrieval.hybrid import HybridRetriever
    from grounded_rag.retrieval.store import Store
    from grounded_rag.retrieval.text_analysis import tokenize

    print(f"latency: {load_average()}, e5 query threads {threads}", flush=True)
    docs_all, vecs_all, questions = _latency_corpus(max(sizes), fill)
    rng = np.random.default_rng(7)
    picked = rng.choice(len(questions), size=min(n_queries, len(questions)), replace=False)
    qs = [questions[i] for i in picked]
    for n in sizes:
        docs, vecs = docs_all[:n], vecs_all[:n]
        root = Path(tempfile.mkdtemp(prefix="grb-lat-"))
        try:
            # ours: one passage = one chunk, written straight into a store
            t0 = time.perf_counter()
            query_model = E5Embeddings(threads=threads, query_threads=threads)
            query_model._query_cache = _NoCache()
            store = Store(root / "ours", create=True)
            store.check_embeddings(embedder_identity(query_model))
            chunks = [
                Chunk(f"{d['id']}#sec0", d["id"], d["title"], "", "", d["text"], 0, len(d["text"]))
                for d in docs
            ]
            texts = [index_text(c) for c in chunks]
            keys = [f"{c.id}@v" for c in chunks]
            store.add_vectors(keys, vecs, [c.doc_id for c in chunks])
            rows = [
                (d["id"], "h", "v", d["title"], "", "", [(k, c, tokenize(t))])
                for d, k, c, t in zip(docs, keys, chunks, texts, strict=True)
            ]
            store.commit(rows, [])
            build_ours = time.perf_counter() - t0
            ours = HybridRetriever(store, query_model)

            # LangChain: what its docs show for hybrid search
            t0 = time.perf_counter()
            lc_model = E5Embeddings(threads=threads, query_threads=threads)
            lc_model._query_cache = _NoCache()
            client = chromadb.PersistentClient(
                path=str(root / "lc"), settings=Settings(anonymized_telemetry=False)
            )
            vs = Chroma("langchain", embedding_function=lc_model, client=client)
            for i in range(0, n, 1000):
                vs._collection.add(
                    ids=[d["id"] for d in docs[i : i + 1000]],
                    embeddings=vecs[i : i + 1000],
                    documents=texts[i : i + 1000],
                    metadatas=[{"doc_id": d["id"]} for d in docs[i : i + 1000]],
                )
            bm25 = BM25Retriever.from_texts(
                texts, metadatas=[{"doc_id": d["id"]} for d in docs], k=5
            )
            stock = EnsembleRetriever(
                retrievers=[bm25, vs.as_retriever(search_kwargs={"k": 5})], weights=[0.5, 0.5]
            )
            build_lc = time.perf_counter() - t0
            print(
                f"[{n} passages] built in {build_ours:.0f} s (ours) / {build_lc:.0f} s "
                f"(LangChain); {load_average()}",
                flush=True,
            )
            for q, _ in qs[:5]:  # warm both
                ours.retrieve(q + " ", 5)
                stock.invoke(q + " ")
            results = {
                "grounded-rag hybrid": _measure(
                    lambda q, r=ours: {e["doc_id"] for e in r.retrieve(q, 5)}, qs
                ),
                "LangChain EnsembleRetriever": _measure(
                    lambda q, r=stock: {d.metadata["doc_id"] for d in r.invoke(q)[:5]}, qs
                ),
            }
            (r1, p50a, p99a), (r2, p50b, p99b) = results.values()
            for name, (r, p50, p99) in results.items():
                print(
                    f"[{n} passages] {name:28s} recall@5 {r:.3f}  P50 {p50:7.2f} ms  "
                    f"P99 {p99:7.2f} ms  ({len(qs)} JSQuAD questions, e5 query embedding included)"
                )
            print(
                f"[{n} passages] ratio LangChain / ours: P50 {p50b / p50a:.1f}x, P99 "
                f"{p99b / p99a:.1f}x; recall@5 {r1:.3f} vs {r2:.3f}; {load_average()}",
                flush=True,
            )
            parts = {"embed": [], "bm25": [], "chroma": []}
            index = store.bm25_index()
            for q, _ in qs[:100]:
                t = time.perf_counter()
                v = query_model.embed_query(q)
                parts["embed"].append(time.perf_counter() - t)
                t = time.perf_counter()
                index.search(tokenize(q), 20)
                parts["bm25"].append(time.perf_counter() - t)
                t = time.perf_counter()
                store.vector_search(v, 60)
                parts["chroma"].append(time.perf_counter() - t)
            med = {k: statistics.median(v) * 1000 for k, v in parts.items()}
            print(
                f"[{n} passages] ours, median parts: e5 query {med['embed']:.2f} ms, "
                f"BM25 {med['bm25']:.2f} ms, Chroma (60 candidates) {med['chroma']:.2f} ms",
                flush=True,
            )
            store.close()
        finally:
            shutil.rmtree(root, ignore_errors=True)
