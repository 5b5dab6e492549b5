"""The retrieval benchmark's parts (``retrieval_bench.py`` runs them; not part of the package).

* the evaluation pools (passages and questions per dataset; also read by ``store_bench.py``
  and the fits), and :func:`shrink`, which cuts a pool to its ``--quick`` size;
* recall: warming the vector cache, recall per pool and embedder, fusion weights on dev
  folds;
* latency: grounded-rag's hybrid retriever vs LangChain's stock ``EnsembleRetriever``;
* indexing: ingest throughput and peak memory, and the BM25 tokenizers compared.

Every ``bench_*`` function prints its lines and returns the same figures as a
JSON-serialisable dict (empty when its data is absent).
"""

from __future__ import annotations

import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from _common import CachedEmbeddings, eval_path, read_jsonl

from grounded_rag.retrieval.embeddings import E5Embeddings, MiniLMEmbeddings

HERE = Path(__file__).resolve().parent
BENCH_SCRIPT = HERE / "retrieval_bench.py"
"""The script each measured ingest runs in, as a child process (``_ingest_child``)."""

QUICK = (8, 16)
"""``--quick``: every pool cut to its first 8 questions over at most 16 passages."""

Small = tuple[int, int] | None
"""(questions, passages) each pool is cut to (:func:`shrink`), or None for the full pools."""


# -- shared: the load line and the embedders ----------------------------------------------
def load_average() -> str:
    """``load average`` and its three numbers, printed next to every timing."""
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def make_embedder(name: str, threads: int = 1, *, cached: bool = True):
    """A built-in embedder, wrapped in the on-disk vector cache unless ``cached=False``."""
    inner = E5Embeddings(threads=threads) if name == "e5" else MiniLMEmbeddings(threads=threads)
    return CachedEmbeddings(inner, name) if cached else inner


def _finite(x: float) -> float | None:
    """A figure for the JSON record (NaN, where a score is undefined, becomes null)."""
    return None if math.isnan(x) else round(float(x), 4)


# -- pools ------------------------------------------------------------------------------
XLANG_FILE = HERE / "xlang_en_ja.jsonl"
"""50 English translations of JSQuAD dev questions with their gold passage ids (reported)."""
XLANG_DEV_FILE = HERE / "xlang_en_ja.dev.jsonl"
"""50 more, disjoint: the fold on which the cross-language fusion weight is chosen."""


@dataclass
class Pool:
    """One retrieval task: a passage pool and questions with gold passage ids."""

    name: str
    docs: list[dict]
    questions: list[tuple[str, set[str]]]
    k: int = 5
    extra: dict = field(default_factory=dict)


def _squad_like(folder: str, name: str, limit: int | None) -> Pool | None:
    qp, pp = eval_path(folder, "questions.dev.jsonl"), eval_path(folder, "passages.jsonl")
    if not (qp and pp):
        return None
    docs = [{"id": p["pid"], "title": p["title"], "text": p["text"]} for p in read_jsonl(pp)]
    qs = [(q["question"], {q["gold_pid"]}) for q in read_jsonl(qp, limit)]
    return Pool(name, docs, qs, 5)


def jsquad(limit: int | None = 1000) -> Pool | None:
    """JSQuAD dev: first ``limit`` questions over all 2,304 passages."""
    return _squad_like("jsquad_ja", "jsquad_ja", limit)


def jaquad(limit: int | None = None) -> Pool | None:
    """JaQuAD dev: all 612 questions over all 1,431 passages."""
    return _squad_like("jaquad_ja", "jaquad_ja", limit)


def scifact(limit: int | None = None) -> Pool | None:
    """SciFact dev claims with evidence over all 5,183 abstracts (recall@10)."""
    cp, dp = eval_path("scifact", "claims.dev.jsonl"), eval_path("scifact", "corpus.jsonl")
    if not (cp and dp):
        return None
    docs = [
        {"id": d["doc_id"], "title": d["title"], "text": " ".join(d["abstract"])}
        for d in read_jsonl(dp)
    ]
    claims = [c for c in read_jsonl(cp) if c["evidence"]][: limit or None]
    return Pool("scifact", docs, [(c["claim"], set(c["evidence"])) for c in claims], 10)


def xlang(direction: str = "en", fold: str = "test") -> Pool | None:
    """The 50 cross-language questions over the JSQuAD pool (``en``, or the ``ja`` originals).

    The file keeps only ids, the English translations and gold passage ids; the Japanese
    originals are read from the evaluation data.
    """
    qp, pp = eval_path("jsquad_ja", "questions.dev.jsonl"), eval_path("jsquad_ja", "passages.jsonl")
    file = XLANG_DEV_FILE if fold == "dev" else XLANG_FILE
    if not (qp and pp) or not file.exists():
        return None
    docs = [{"id": p["pid"], "title": p["title"], "text": p["text"]} for p in read_jsonl(pp)]
    rows = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    original = {q["id"]: q["question"] for q in read_jsonl(qp)}
    qs = [
        (r["question_en"] if direction == "en" else original[r["id"]], {r["gold_pid"]})
        for r in rows
    ]
    suffix = " (dev fold)" if fold == "dev" else ""
    return Pool(f"xlang_{direction}->ja{suffix}", docs, qs, 5)


def halueval_qa(n_passages: int = 1000) -> Pool | None:
    """English questions over HaluEval-QA knowledge passages (the first ``n_passages``
    distinct ones); the gold passage is the question's own. Used to fit e5's English
    relevance coefficients when SciFact vectors are not at hand."""
    p = eval_path("halueval_qa", "pairs.dev.jsonl")
    if p is None:
        return None
    docs: dict[str, dict] = {}
    qs: dict[str, tuple[str, set[str]]] = {}
    for r in read_jsonl(p):
        text = r["knowledge"].strip()
        if text not in docs:
            if len(docs) >= n_passages:
                continue
            docs[text] = {"id": f"hq{r['example']}", "title": "", "text": text}
        qs.setdefault(r["question"], (r["question"], {docs[text]["id"]}))
    return Pool("halueval_qa_en", list(docs.values()), list(qs.values()), 5)


def nomiracl(lang: str) -> Pool | None:
    """NoMIRACL dev for one language: pooled passages; questions carry answerability."""
    p = eval_path("nomiracl_ja_en", "nomiracl.dev.jsonl")
    if p is None:
        return None
    rows = [r for r in read_jsonl(p) if r["lang"] == lang]
    docs: dict[str, dict] = {}
    for r in rows:
        for x in r["passages"]:
            docs.setdefault(x["docid"], {"id": x["docid"], "title": x["title"], "text": x["text"]})
    qs = [(r["question"], {x["docid"] for x in r["passages"]}) for r in rows]
    return Pool(
        f"nomiracl_{lang}",
        list(docs.values()),
        qs,
        10,
        {"answerable": [bool(r["answerable"]) for r in rows]},
    )


def shrink(pool: Pool | None, small: Small) -> Pool | None:
    """``pool`` cut to ``small`` = (questions, passages): the first questions (for NoMIRACL
    half answerable, half not), their gold passages first, then the pool's first others,
    at most ``passages`` in all, in the pool's order. ``small=None`` keeps the pool."""
    if pool is None or small is None:
        return pool
    n_questions, n_passages = small
    labels = pool.extra.get("answerable")
    picked = list(range(len(pool.questions)))
    if labels:
        yes = [i for i in picked if labels[i]][: (n_questions + 1) // 2]
        no = [i for i in picked if not labels[i]][: n_questions // 2]
        picked = sorted(yes + no)
    else:
        picked = picked[:n_questions]
    questions = [pool.questions[i] for i in picked]
    keep: list[str] = []
    for _, gold in questions:
        keep.extend(str(g) for g in sorted(gold) if str(g) not in keep)
    keep = keep[:n_passages]
    others = (str(d["id"]) for d in pool.docs if str(d["id"]) not in keep)
    keep += [i for i, _ in zip(others, range(n_passages - len(keep)), strict=False)]
    wanted = set(keep)
    extra = dict(pool.extra)
    if labels:
        extra["answerable"] = [labels[i] for i in picked]
    docs = [d for d in pool.docs if str(d["id"]) in wanted]
    return Pool(pool.name, docs, questions, pool.k, extra)


def passage_texts(docs: list[dict]) -> list[str]:
    """The texts a passage-level in-memory index embeds (same as ``InMemoryRetriever``)."""
    from grounded_rag.retrieval.chunking import Chunk, index_text

    out = []
    for i, d in enumerate(docs):
        doc_id = str(d.get("id") or f"doc{i}")
        text = str(d.get("text") or "")
        if not text.strip():
            continue
        title = str(d.get("title") or doc_id)
        out.append(index_text(Chunk(f"{doc_id}#sec0", doc_id, title, "", "", text, 0, len(text))))
    return out


# -- recall: warm -------------------------------------------------------------------------
def _pools_for(sets: list[str], jsquad_n: int | None, small: Small = None) -> list[Pool]:
    makers = {
        "jsquad": lambda: [jsquad(jsquad_n)],
        "jaquad": lambda: [jaquad()],
        "scifact": lambda: [scifact()],
        "nomiracl": lambda: [nomiracl("ja"), nomiracl("en")],
        "xlang": lambda: [xlang("en"), xlang("ja")],
        "halueval": lambda: [halueval_qa()],
    }
    return [shrink(p, small) for s in sets for p in makers[s]() if p is not None]


def bench_warm(
    embedders: list[str], sets: list[str], jsquad_n: int | None, threads: int, part: str,
    small: Small = None,
) -> dict:
    """Embed pools and questions into the cache (resumable). ``part`` "i/n" does every n-th
    passage from the i-th, so a long pool can be split into short runs under the lock."""
    index, count = (int(x) for x in part.split("/"))
    pools = [p for p in _pools_for(sets, jsquad_n, small) if p.name != "xlang_ja->ja"]
    models = {name: make_embedder(name, threads) for name in embedders}
    seconds: dict[str, dict[str, float]] = {}
    for pool in pools:
        for name, emb in models.items():
            t = time.perf_counter()
            emb.embed_queries([q for q, _ in pool.questions])
            if pool.name == "jsquad_ja" and (folds := _weights_folds(small)):
                emb.embed_queries([q for q, _ in folds[0].questions])
                emb.embed_queries([q for q, _ in folds[1].questions])
                if xdev := xlang("en", fold="dev"):
                    emb.embed_queries([q for q, _ in shrink(xdev, small).questions])
            texts = passage_texts(pool.docs)[index::count]
            emb.embed_documents(texts, label=f"{name} {pool.name} part {part}")
            took = time.perf_counter() - t
            seconds.setdefault(pool.name, {})[name] = round(took, 1)
            print(f"warm {name} {pool.name} part {part}: {took:.0f} s", flush=True)
    return {"part": part, "seconds": seconds}


# -- recall: per pool ---------------------------------------------------------------------
def _recall(retriever, questions: list[tuple[str, set[str]]], k: int) -> float:
    total = 0.0
    for q, gold in questions:
        got = {ev["doc_id"] for ev in retriever.retrieve(q, k)}
        total += len(got & gold) / len(gold)
    return total / max(len(questions), 1)


def _retriever(pool: Pool, embedder: str | None, threads: int):
    from grounded_rag.retrieval.memory import InMemoryRetriever

    if embedder is None:
        return InMemoryRetriever(pool.docs, chunk=False, mode="bm25")
    emb = make_embedder(embedder, threads)
    return InMemoryRetriever(pool.docs, embeddings=emb, chunk=False, mode="hybrid")


def _auc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return float("nan")
    return float(np.mean([(x > y) + 0.5 * (x == y) for x in pos for y in neg]))


def bench_recall(
    sets: list[str], embedders: list[str], jsquad_n: int | None, threads: int,
    small: Small = None,
) -> dict:
    """Recall@k per pool: BM25 alone, then vector and hybrid for each embedder."""
    results: dict[str, dict] = {}
    for pool in _pools_for(sets, jsquad_n, small):
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
        cells = "  ".join(f"{k} {v:.3f}" for k, v in row.items())
        print(
            f"{pool.name} recall@{pool.k} ({len(pool.questions)} questions, {len(pool.docs)} "
            f"passages; {time.perf_counter() - t:.0f} s): {cells}",
            flush=True,
        )
        results[pool.name] = {"k": pool.k, "questions": len(pool.questions),
                              "passages": len(pool.docs),
                              **{k: _finite(v) for k, v in row.items()}}
    return results


def _nomiracl_relevance(pool: Pool, embedders: list[str], threads: int) -> dict:
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
    return {"queries": len(labels), "passages": len(pool.docs),
            **{k: _finite(v) for k, v in row.items()}}


# -- recall: fusion weights ---------------------------------------------------------------
def _weights_folds(small: Small = None) -> tuple[Pool, Pool] | None:
    """Dev folds the reported recall does not use: JSQuAD questions 1000-1999 (minus the
    cross-language sample) and the odd-numbered SciFact claims."""
    ja = jsquad(2000)
    en = scifact()
    if ja is None or en is None:
        return None
    xl = {json.loads(x)["id"] for x in XLANG_FILE.read_text().splitlines()}
    qp = eval_path("jsquad_ja", "questions.dev.jsonl")
    ids = [q["id"] for q in read_jsonl(qp, 2000)] if qp else []
    ja.questions = [q for i, q in enumerate(ja.questions) if i >= 1000 and ids[i] not in xl]
    ja.name = "jsquad_ja[1000:2000]"
    en.questions = en.questions[1::2]
    en.name = "scifact[odd]"
    return shrink(ja, small), shrink(en, small)


def bench_weights(embedder: str, threads: int, which: list[str], small: Small = None) -> dict:
    """RRF weights of the vector side per query language, and of the other-language
    ranking, each the best on a dev fold the reported recall does not use."""
    from grounded_rag.retrieval import fusion

    folds = _weights_folds(small)
    xdev = shrink(xlang("en", fold="dev"), small)
    if folds is None:
        return {}
    chosen: dict[str, float] = {}
    recalls: dict[str, dict[str, float]] = {}
    grid = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
    tasks = [("ja", folds[0], "ja_vector_weight"), ("en", folds[1], "en_vector_weight")]
    if xdev is not None:
        tasks.append(("cross_lexical", xdev, "cross_lexical"))
    for key, pool, attr in [t for t in tasks if t[0] in which]:
        retr = _retriever(pool, embedder, threads)
        scores = {}
        for w in grid:
            if attr.startswith("cross"):
                fusion.VECTOR_WEIGHTS["multilingual"][attr] = w
            else:
                setattr(retr, attr, w)
            scores[w] = _recall(retr, pool.questions, pool.k)
        best = max(scores.values())
        # ties go to the weight closest to 1 (plain RRF)
        chosen[key] = min((w for w, s in scores.items() if s == best), key=lambda w: abs(w - 1))
        if attr.startswith("cross"):
            fusion.VECTOR_WEIGHTS["multilingual"][attr] = chosen[key]
        recalls[key] = {"pool": pool.name, "questions": len(pool.questions),
                        **{str(w): round(s, 4) for w, s in scores.items()}}
        cells = "  ".join(f"{w}: {s:.3f}" for w, s in scores.items())
        print(
            f"{embedder} {pool.name} recall@{pool.k} by {key} weight "
            f"({len(pool.questions)} q): {cells} -> {chosen[key]}",
            flush=True,
        )
    print("chosen:", json.dumps(chosen))
    return {"embedder": embedder, "chosen": chosen, "recall_by_weight": recalls}


# -- latency: ours vs LangChain's stock hybrid ------------------------------------------
class _NoCache(dict):
    """A query cache that never stores: every timed query is really embedded."""

    def __setitem__(self, key, value) -> None:
        return None


def _latency_corpus(
    n: int, fill: str = "repeat", seed: int = 0, small: Small = None
) -> tuple[list[dict], np.ndarray, list] | None:
    """``n`` passages with e5 vectors: real passages (cached vectors), then fillers.

    ``fill="repeat"`` repeats the non-JSQuAD passages (vector plus a little noise);
    ``fill="synthetic"`` uses only JSQuAD as real text and fills with random-word passages
    and clustered random vectors (no other pool needs to be embedded first). With
    ``small`` every real pool is cut first (:func:`shrink`); the questions are JSQuAD's.
    """
    base = shrink(jsquad(None), small)
    if base is None:
        return None
    emb = make_embedder("e5")
    sources = [base]
    if fill == "repeat":
        sources += [shrink(p, small) for p in (jaquad(), nomiracl("ja"), nomiracl("en"),
                                               scifact())]
    real: list[dict] = []
    for pool in sources:
        if pool is not None:
            real.extend(pool.docs)
    seen: set[str] = set()
    real = [d for d in real if not (d["id"] in seen or seen.add(d["id"]))]
    texts = passage_texts(real)
    vectors = np.asarray(emb.embed_documents(texts, label="e5 latency corpus"), np.float32)
    n_jsquad = len(base.docs)
    docs, vecs = list(real[:n]), list(vectors[:n])
    rng = np.random.default_rng(seed)
    if fill == "synthetic" or len(real) <= n_jsquad:
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
    return docs, np.asarray(vecs, np.float32), base.questions


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


def bench_latency(
    sizes: list[int], n_queries: int, threads: int, fill: str, small: Small = None
) -> dict:
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
    corpus = _latency_corpus(max(sizes), fill, small=small)
    if corpus is None:
        return {}
    docs_all, vecs_all, questions = corpus
    rng = np.random.default_rng(7)
    picked = rng.choice(len(questions), size=min(n_queries, len(questions)), replace=False)
    qs = [questions[i] for i in picked]
    figures: dict[str, dict] = {}
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
                f"[{len(docs)} passages] built in {build_ours:.0f} s (ours) / {build_lc:.0f} s "
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
                    f"[{len(docs)} passages] {name:28s} recall@5 {r:.3f}  P50 {p50:7.2f} ms  "
                    f"P99 {p99:7.2f} ms  ({len(qs)} JSQuAD questions, e5 query embedding included)"
                )
            print(
                f"[{len(docs)} passages] ratio LangChain / ours: P50 {p50b / p50a:.1f}x, P99 "
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
                f"[{len(docs)} passages] ours, median parts: e5 query {med['embed']:.2f} ms, "
                f"BM25 {med['bm25']:.2f} ms, Chroma (60 candidates) {med['chroma']:.2f} ms",
                flush=True,
            )
            store.close()
            figures[str(len(docs))] = {
                "queries": len(qs),
                "build_s": {"ours": round(build_ours, 2), "langchain": round(build_lc, 2)},
                **{name: {"recall@5": round(r, 4), "p50_ms": round(p50, 2),
                          "p99_ms": round(p99, 2)} for name, (r, p50, p99) in results.items()},
                "ratio_p50": round(p50b / p50a, 2), "ratio_p99": round(p99b / p99a, 2),
                "ours_median_parts_ms": {k: round(v, 3) for k, v in med.items()},
            }
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return figures


# -- indexing: ingest throughput --------------------------------------------------------
def _ingest_files(root: Path, mb: float) -> list[Path]:
    """A plain-text file of ``mb`` MB (SciFact abstracts) like a user's big export."""
    p = eval_path("scifact", "corpus.jsonl")
    rows = read_jsonl(p) if p else []
    out = root / f"scifact-{mb}mb.txt"
    size = 0
    with open(out, "w", encoding="utf-8") as fh:
        i = 0
        while size < mb * 1_000_000 and rows:
            r = rows[i % len(rows)]
            block = f"{r['title']}\n\n" + " ".join(r["abstract"]) + "\n\n"
            fh.write(block)
            size += len(block.encode())
            i += 1
    return [out] if size else []


def _peak_mib() -> float:
    """This process's peak resident memory in MiB: ``VmHWM`` (which starts afresh at exec;
    ``ru_maxrss`` keeps the forking parent's peak, a big one after ``all``'s other parts)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ingest_child(path: str, embedder: str, threads: int, store: str) -> None:
    """Run one ingest in this (child) process and print one JSON line with its numbers."""
    from grounded_rag.retrieval import ingest as ingest_mod
    from grounded_rag.retrieval import store as store_mod
    from grounded_rag.retrieval.embeddings import default_embeddings

    os.environ["GROUNDED_RAG_THREADS"] = str(threads)
    spent = {"embed": 0.0, "tokenize": 0.0, "chroma": 0.0, "commit": 0.0}

    def timed(key, fn):
        def wrapper(*a, **kw):
            t = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent[key] += time.perf_counter() - t

        return wrapper

    emb = default_embeddings(embedder)
    emb.embed_documents = timed("embed", emb.embed_documents)
    from grounded_rag.retrieval import _ingest_embed

    _ingest_embed.tokenize = timed("tokenize", _ingest_embed.tokenize)
    store_mod.Store.add_vectors = timed("chroma", store_mod.Store.add_vectors)
    store_mod.Store.commit = timed("commit", store_mod.Store.commit)
    t = time.perf_counter()
    report = ingest_mod.ingest_paths([path], store, embeddings=emb, progress=False)
    wall = time.perf_counter() - t
    peak = _peak_mib()
    n = report.chunks_written
    print(
        json.dumps(
            {"chunks": n, "wall_s": wall, "chunks_per_s": n / wall, "peak_mib": peak, **spent}
        )
    )


def bench_ingest(mb: float, embedders: list[str], threads: int) -> dict:
    """Chunks/s and peak memory of ``ingest`` on one big text file, per embedder."""
    root = Path(tempfile.mkdtemp(prefix="grb-ing-"))
    figures: dict[str, dict] = {}
    try:
        files = _ingest_files(root, mb)
        if not files:
            return {}
        size = sum(f.stat().st_size for f in files) / 1e6
        print(f"ingest: {size:.2f} MB text file, {threads} thread(s), {load_average()}",
              flush=True)
        for name in embedders:
            out = subprocess.run(
                [
                    sys.executable,
                    str(BENCH_SCRIPT),
                    "_ingest_child",
                    str(files[0]),
                    name,
                    str(threads),
                    str(root / f"store-{name}"),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if out.returncode != 0:
                print(f"  {name}: failed\n{out.stderr[-2000:]}")
                figures[name] = {"failed": out.stderr[-500:]}
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            other = r["wall_s"] - r["embed"] - r["tokenize"] - r["chroma"] - r["commit"]
            print(
                f"  {name:7s}: {r['chunks']} chunks in {r['wall_s']:.1f} s = "
                f"{r['chunks_per_s']:.1f} chunks/s, peak RSS {r['peak_mib']:.0f} MiB; time in "
                f"embedding {r['embed']:.1f} s, BM25 tokenizing {r['tokenize']:.1f} s, Chroma "
                f"writes {r['chroma']:.1f} s, commits {r['commit']:.1f} s, rest "
                f"(load, chunk, hash) {other:.1f} s; {load_average()}",
                flush=True,
            )
            figures[name] = {k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}
            figures[name]["rest_s"] = round(other, 3)
        return {"mb": round(size, 3), "threads": threads, "embedders": figures}
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- indexing: tokenizers ---------------------------------------------------------------
def bench_tokenizers(n: int, n_passages: int | None = None) -> dict:
    """Sudachi (chosen) vs fugashi + unidic-lite on JSQuAD: index time and BM25 recall@5
    (``n`` questions; ``n_passages`` cuts the pool, its questions' gold passages kept)."""
    import importlib.util

    import bm25s

    from grounded_rag.retrieval import text_analysis

    qp, pp = eval_path("jsquad_ja", "questions.dev.jsonl"), eval_path("jsquad_ja", "passages.jsonl")
    if not (qp and pp):
        return {}
    passages = read_jsonl(pp)
    qs = read_jsonl(qp, n)
    if n_passages is not None:
        gold = {q["gold_pid"] for q in qs}
        others = [p for p in passages if p["pid"] not in gold][: max(0, n_passages - len(gold))]
        keep = gold | {p["pid"] for p in others}
        passages = [p for p in passages if p["pid"] in keep]
    tokenizers = {"sudachi (mode A, normalized, POS-filtered)": text_analysis.tokenize}
    if importlib.util.find_spec("fugashi"):
        import fugashi

        tagger = fugashi.Tagger()
        drop = {"助詞", "助動詞", "補助記号", "空白", "記号", "代名詞"}

        def fugashi_tok(text: str) -> list[str]:
            return [
                (w.feature.lemma or w.surface)
                for w in tagger(text.lower())
                if w.feature.pos1 not in drop
            ]

        tokenizers["fugashi + unidic-lite (lemma, POS-filtered)"] = fugashi_tok
    else:
        print("fugashi not installed: pip install 'fugashi[unidic-lite]' to compare")
    figures: dict[str, dict] = {}
    for name, tok in tokenizers.items():
        t = time.perf_counter()
        corpus = [tok(p["title"] + "\n" + p["text"]) for p in passages]
        t_index = time.perf_counter() - t
        model = bm25s.BM25()
        model.index(corpus, show_progress=False)
        vocab = model.vocab_dict
        hits = 0
        for q in qs:
            toks = [x for x in tok(q["question"]) if x in vocab]
            if not toks:
                continue
            scores = model.get_scores(toks)
            top = np.argsort(-scores)[:5]
            hits += any(passages[i]["pid"] == q["gold_pid"] for i in top)
        print(
            f"{name}: tokenize {len(passages)} passages in {t_index:.2f} s; "
            f"BM25 recall@5 {hits / len(qs):.3f} ({len(qs)} questions)"
        )
        figures[name] = {"passages": len(passages), "questions": len(qs),
                         "tokenize_s": round(t_index, 3), "bm25_recall@5": round(hits / len(qs), 4)}
    return figures
