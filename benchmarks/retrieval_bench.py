"""Retrieval benchmarks: recall per embedder, fusion weights, latency vs LangChain, ingest.

It stays one script over 400 lines because its sub-commands share the pools, the vector
cache and the timing helpers, and one file is what a reader runs and reads.

Usage (from the repository root; on a shared machine with one thread and the model lock)::

    GROUNDED_RAG_THREADS=1 flock /tmp/grag-model.lock \\
        python benchmarks/retrieval_bench.py warm              # embed every pool once (cached)
    python benchmarks/retrieval_bench.py recall               # BM25 / MiniLM / e5 side by side
    python benchmarks/retrieval_bench.py weights              # per-language fusion weights
    python benchmarks/retrieval_bench.py latency --sizes 10000 100000   # ours vs LangChain
    python benchmarks/retrieval_bench.py ingest --mb 5 --embedders minilm e5 --threads 2
    python benchmarks/retrieval_bench.py tokenizers           # sudachi vs fugashi, if installed

Recall data is read from ../shared/eval (never copied into the repository) at passage
level (each passage is one chunk); document and question vectors are cached per text under
``~/.cache/grounded-rag-bench`` (``$GROUNDED_RAG_BENCH_CACHE``), so only ``warm`` embeds.
The cross-language set ``xlang_en_ja.jsonl`` holds 50 English translations of JSQuAD dev
questions (see ``RETRIEVAL.md`` for how they were made).

Latency indexes real passages with their real e5 vectors (JSQuAD, JaQuAD, NoMIRACL,
SciFact: ~10k); the 100k index adds repeats of the non-JSQuAD passages (vector plus a
little noise) as distractors. Every query is embedded by the real e5 model inside the
timing (no query cache), on ``--threads`` threads (default 1).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pools  # noqa: E402
from _common import CachedEmbeddings, eval_path, read_jsonl  # noqa: E402

from grounded_rag.retrieval.embeddings import E5Embeddings, MiniLMEmbeddings  # noqa: E402


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def make_embedder(name: str, threads: int = 1, *, cached: bool = True):
    """A built-in embedder, wrapped in the on-disk vector cache unless ``cached=False``."""
    inner = E5Embeddings(threads=threads) if name == "e5" else MiniLMEmbeddings(threads=threads)
    return CachedEmbeddings(inner, name) if cached else inner


class _NoCache(dict):
    """A query cache that never stores: every timed query is really embedded."""

    def __setitem__(self, key, value) -> None:
        return None


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

    print(f"latency: {_load()}, e5 query threads {threads}", flush=True)
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
                f"(LangChain); {_load()}",
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
                f"{p99b / p99a:.1f}x; recall@5 {r1:.3f} vs {r2:.3f}; {_load()}",
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


# -- ingest throughput ------------------------------------------------------------------
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
    return [out]


def _ingest_child(path: str, embedder: str, threads: int, store: str) -> None:
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
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = report.chunks_written
    print(
        json.dumps(
            {"chunks": n, "wall_s": wall, "chunks_per_s": n / wall, "peak_mib": peak, **spent}
        )
    )


def bench_ingest(mb: float, embedders: list[str], threads: int) -> None:
    """Chunks/s and peak memory of ``ingest`` on one big text file, per embedder."""
    root = Path(tempfile.mkdtemp(prefix="grb-ing-"))
    try:
        files = _ingest_files(root, mb)
        size = sum(f.stat().st_size for f in files) / 1e6
        print(f"ingest: {size:.1f} MB text file, {threads} thread(s), {_load()}", flush=True)
        for name in embedders:
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
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
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            other = r["wall_s"] - r["embed"] - r["tokenize"] - r["chroma"] - r["commit"]
            print(
                f"  {name:7s}: {r['chunks']} chunks in {r['wall_s']:.1f} s = "
                f"{r['chunks_per_s']:.1f} chunks/s, peak RSS {r['peak_mib']:.0f} MiB; time in "
                f"embedding {r['embed']:.1f} s, BM25 tokenizing {r['tokenize']:.1f} s, Chroma "
                f"writes {r['chroma']:.1f} s, commits {r['commit']:.1f} s, rest "
                f"(load, chunk, hash) {other:.1f} s; {_load()}",
                flush=True,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


# -- tokenizers -------------------------------------------------------------------------
def bench_tokenizers(n: int) -> None:
    """Sudachi (chosen) vs fugashi + unidic-lite on JSQuAD: index time and BM25 recall@5."""
    import importlib.util

    import bm25s

    from grounded_rag.retrieval import text_analysis

    qp, pp = eval_path("jsquad_ja", "questions.dev.jsonl"), eval_path("jsquad_ja", "passages.jsonl")
    if not (qp and pp):
        return
    passages = read_jsonl(pp)
    qs = read_jsonl(qp, n)
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


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_ingest_child":
        _ingest_child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--threads", type=int, default=1, help="embedder threads (default 1)")
    sub = ap.add_subparsers(dest="what", required=True)
    warm = sub.add_parser("warm", help="embed every pool once into the cache")
    warm.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    warm.add_argument(
        "--sets", nargs="+", default=["jsquad", "jaquad", "nomiracl", "xlang", "scifact"]
    )
    warm.add_argument("--part", default="0/1", help="i/n: every n-th passage from the i-th")
    warm.add_argument("--jsquad-questions", type=int, default=1000)
    rec = sub.add_parser("recall", help="recall per pool: BM25, MiniLM, e5")
    rec.add_argument(
        "--sets", nargs="+", default=["jsquad", "jaquad", "scifact", "nomiracl", "xlang"]
    )
    rec.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    rec.add_argument("--jsquad-questions", type=int, default=1000, help="first N (0 = all)")
    wts = sub.add_parser("weights", help="choose per-language fusion weights on dev folds")
    wts.add_argument("--embedder", default="e5")
    wts.add_argument("--which", nargs="+", default=["ja", "en", "cross_lexical"])
    lat = sub.add_parser("latency", help="ours vs LangChain EnsembleRetriever")
    lat.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    lat.add_argument("--queries", type=int, default=300)
    lat.add_argument("--fill", choices=["repeat", "synthetic"], default="repeat")
    ing = sub.add_parser("ingest", help="ingest throughput and peak memory on a big file")
    ing.add_argument("--mb", type=float, default=5.0)
    ing.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    sub.add_parser("tokenizers").add_argument("--n", type=int, default=1000)
    args = ap.parse_args()
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    if args.what == "warm":
        bench_warm(
            args.embedders, args.sets, args.jsquad_questions or None, args.threads, args.part
        )
    elif args.what == "recall":
        bench_recall(args.sets, args.embedders, args.jsquad_questions or None, args.threads)
    elif args.what == "weights":
        bench_weights(args.embedder, args.threads, args.which)
    elif args.what == "latency":
        bench_latency(args.sizes, args.queries, args.threads, args.fill)
    elif args.what == "ingest":
        bench_ingest(args.mb, args.embedders, args.threads)
    elif args.what == "tokenizers":
        bench_tokenizers(args.n)
    print(json.dumps({"python": sys.version.split()[0], "cpus": os.cpu_count(), "load": _load()}))


if __name__ == "__main__":
    main()
