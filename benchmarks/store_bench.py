"""The embedded store and the networked store (Postgres + a Chroma server) side by side.

Usage (from the repository root; Postgres on 127.0.0.1:5432, database ``test``, and the
``chroma`` CLI of the environment; a Chroma server is started unless ``--chroma-url``)::

    python benchmarks/store_bench.py recall                    # JSQuAD dev, 1,000 questions
    python benchmarks/store_bench.py latency --chunks 100000   # hybrid query P50 / P99
    python benchmarks/store_bench.py ingest                    # ingest_paths into each store
    python benchmarks/store_bench.py all                       # the three, one Chroma server

    # every part at its smallest size (what CI runs: ``benchmarks/run.py --quick``)
    flock /tmp/grag-model.lock python benchmarks/store_bench.py all --quick --json FILE

Every sub-command takes ``--quick`` (recall: 20 questions over 40 passages; latency: 500
chunks, 20 questions; ingest: 20 files; figures not for reporting) and ``--json FILE`` (the
printed figures, the commit, the host's load and cores, as JSON). Evaluation data is read
from ../shared/eval; absent, the script prints a skip line and exits 0.

``recall``: JSQuAD dev (first 1,000 questions, all 2,304 passages, one passage = one
chunk) written into both stores with the same multilingual-e5 vectors, then the same
hybrid retriever over each: recall@5, how many questions get the very same top-5 chunks in
the same order (what the generator is shown, hence its answer), and the query latency.
Vectors of passages and questions come from the benchmarks' cache
(``~/.cache/grounded-rag-bench``; the first run embeds them, ~2 min on 2 cores).

``latency``: ``--chunks`` chunks = JSQuAD's 2,304 passages with their real e5 vectors plus
copies of the Japanese JaQuAD and NoMIRACL passages (real text, so BM25 meets real
Japanese term frequencies) under **synthetic vectors** (clustered random unit vectors:
embedding 100k chunks with e5 takes hours on 2 cores, and HNSW search costs the same for
any vectors). Query vectors are the questions' real e5 vectors from the cache, so the
timings are the store and the fusion alone; the e5 query embedding is timed apart.

``ingest``: ``--files`` JSQuAD passages, one ``.txt`` file each, ingested by
``ingest_paths`` (what ``grounded-rag ingest`` runs) into each store, then again (every
file unchanged: the skip path); e5 vectors through the cache, the time spent embedding
printed apart from the store's.

Every timing line carries the load average. The Postgres schema (``store_bench_<pid>``) and
the Chroma collections are dropped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _retrieval as _pools  # noqa: E402
from _common import (  # noqa: E402
    CachedEmbeddings,
    add_result_args,
    skip_without_eval_data,
    write_result,  # noqa: E402
)

POSTGRES = os.environ.get("GR_BENCH_POSTGRES", "postgresql://127.0.0.1:5432/test")

QUICK_RECALL = (20, 40)
"""``--quick`` recall: the first 20 JSQuAD questions over 40 passages (their gold ones)."""
QUICK_LATENCY = (500, 20, 200)
"""``--quick`` latency: 500 chunks, 20 questions, copies of at most 200 filler passages."""
QUICK_INGEST = 20
"""``--quick`` ingest: 20 files."""


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(len(s) * p))]


@contextlib.contextmanager
def chroma_server(url: str | None) -> Iterator[str]:
    """The given Chroma server, or ``chroma run`` on a free port for the benchmark's life."""
    if url:
        yield url
        return
    exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    root = Path(tempfile.mkdtemp(prefix="store-bench-chroma-"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([exe, "run", "--path", str(root), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={"ANONYMIZED_TELEMETRY": "False", "PATH": "/usr/bin:/bin"})
    try:
        for _ in range(600):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


def _embedder(threads: int):
    from grounded_rag.retrieval.embeddings import E5Embeddings

    return CachedEmbeddings(E5Embeddings(threads=threads), "e5")


def _write(store, identity, docs: list[dict], vectors: np.ndarray,
           tokens: list[list[str]]) -> float:
    """One passage = one chunk, vectors then one commit (as ingest does); seconds taken."""
    from grounded_rag.retrieval.chunking import Chunk

    t = time.perf_counter()
    store.check_embeddings(identity)
    chunks = [Chunk(f"{d['id']}#sec0", d["id"], d["title"], "", "", d["text"], 0,
                    len(d["text"])) for d in docs]
    keys = [f"{c.id}@v" for c in chunks]
    for i in range(0, len(keys), 5000):
        store.add_vectors(keys[i:i + 5000], vectors[i:i + 5000],
                          [c.doc_id for c in chunks[i:i + 5000]])
    order = sorted(range(len(chunks)), key=lambda i: chunks[i].doc_id)
    rows = [(chunks[i].doc_id, "h", "v", chunks[i].title, "", "",
             [(keys[i], chunks[i], tokens[i])]) for i in order]
    store.commit(rows, [])
    if hasattr(store, "url"):
        store.collect_garbage()  # statistics and the visibility map, as ingest's end does
    return time.perf_counter() - t


@contextlib.contextmanager
def both_stores(docs: list[dict], vectors: np.ndarray, tokens: list[list[str]], identity,
                chroma: str, report: dict | None = None) -> Iterator[dict]:
    """{"embedded": Store, "networked": PostgresStore}, the same chunks in each; the build
    and BM25-load times go into ``report``."""
    report = {} if report is None else report
    from grounded_rag.retrieval._pg_store import PostgresStore, drop_store
    from grounded_rag.retrieval.store import Store

    root = Path(tempfile.mkdtemp(prefix="store-bench-"))
    url = f"{POSTGRES}?schema=store_bench_{os.getpid()}"
    drop_store(url, chroma_url=chroma)
    stores = {"embedded": Store(root / "embedded", create=True),
              "networked": PostgresStore(url, chroma_url=chroma, create=True)}
    try:
        for name, store in stores.items():
            took = _write(store, identity, docs, vectors, tokens)
            report.setdefault("build_s", {})[name] = round(took, 3)
            print(f"  built {name}: {len(docs)} chunks in {took:.0f} s; {_load()}", flush=True)
        for name, store in stores.items():  # what a worker pays once per generation
            fresh = type(store)(root / "embedded" if name == "embedded" else url,
                                chroma_url=None if name == "embedded" else chroma)
            t = time.perf_counter()
            fresh.bm25_index()
            loaded = (time.perf_counter() - t) * 1000
            report.setdefault("bm25_load_ms", {})[name] = round(loaded, 2)
            print(f"  {name}: a new generation's BM25 index loaded in "
                  f"{loaded:.0f} ms; {_load()}", flush=True)
            fresh.close()
        yield stores
    finally:
        for store in stores.values():
            store.close()
        drop_store(url, chroma_url=chroma)
        shutil.rmtree(root, ignore_errors=True)


def _run(retriever, questions: list[tuple[str, set[str]]]) -> tuple[float, list, list[float]]:
    """Recall@5, the top-5 source ids per question, and the latency of each query (ms)."""
    total, tops, times = 0.0, [], []
    for q, gold in questions:
        t = time.perf_counter()
        hits = retriever.retrieve(q, 5)
        times.append((time.perf_counter() - t) * 1000)
        tops.append([h["source_id"] for h in hits])
        total += len({h["doc_id"] for h in hits} & gold) / len(gold)
    return total / max(len(questions), 1), tops, times


def _compare(stores: dict, emb, questions: list[tuple[str, set[str]]], label: str) -> dict:
    from grounded_rag.retrieval.hybrid import HybridRetriever

    results = {}
    for name, store in stores.items():
        retriever = HybridRetriever(store, emb)
        for q, _ in questions[:20]:  # warm: connections, prepared statements, caches
            retriever.retrieve(q, 5)
        print(f"  [{label}] {name} measuring ({_load()})", flush=True)
        results[name] = _run(retriever, questions)
        print(f"  [{label}] {name} done ({_load()})", flush=True)
    same = sum(a == b for a, b in zip(results["embedded"][1], results["networked"][1],
                                      strict=True))
    differ = sum(set(a) != set(b) for a, b in zip(results["embedded"][1],
                                                  results["networked"][1], strict=True))
    for name, (recall, _, times) in results.items():
        print(f"[{label}] {name:9s} recall@5 {recall:.3f} ({recall * len(questions):.0f}/"
              f"{len(questions)})  P50 {statistics.median(times):6.2f} ms  "
              f"P99 {_pct(times, 0.99):6.2f} ms")
    print(f"[{label}] same top-5 (ids and order) for {same}/{len(questions)} questions; "
          f"another top-5 set for {differ}; {_load()}", flush=True)
    figures = {name: {"recall@5": round(recall, 4), "p50_ms": round(statistics.median(times), 2),
                      "p99_ms": round(_pct(times, 0.99), 2)}
               for name, (recall, _, times) in results.items()}
    return {"questions": len(questions), **figures, "same_top5": same, "other_top5_set": differ,
            **_attribute(stores, emb, questions, label)}


def _attribute(stores: dict, emb, questions: list[tuple[str, set[str]]], label: str) -> dict:
    """Where the two stores' results differ: the BM25 side, or the vector side (HNSW)."""
    from grounded_rag.retrieval.hybrid import HybridRetriever

    lexical = [[[h["source_id"] for h in HybridRetriever(store, emb, mode="bm25").retrieve(q, 5)]
                for q, _ in questions] for store in stores.values()]
    vectors = []
    for store in stores.values():
        store.bm25_index()  # pins the generation the vector search filters by
        vectors.append([[k for k, _ in store.vector_search(emb.embed_query(q), 60)]
                        for q, _ in questions])
    same_lexical = sum(a == b for a, b in zip(*lexical, strict=True))
    same_vectors = sum(a == b for a, b in zip(*vectors, strict=True))
    print(f"[{label}] BM25 alone: same top-5 for {same_lexical}/{len(questions)}; vector "
          f"side (Chroma HNSW, 60 candidates): same list for {same_vectors}/{len(questions)}",
          flush=True)
    return {"same_bm25_top5": same_lexical, "same_vector_candidates": same_vectors}


def bench_recall(n_questions: int, threads: int, chroma: str,
                 n_passages: int | None = None) -> dict:
    """Recall, same top-5 and latency over JSQuAD in both stores (``n_passages``: the pool
    cut to that many, the questions' gold passages kept)."""
    from grounded_rag.retrieval.embeddings import embedder_identity
    from grounded_rag.retrieval.text_analysis import tokenize

    pool = _pools.jsquad(n_questions)
    if pool is None:
        return {}
    if n_passages is not None:
        pool = _pools.shrink(pool, (n_questions, n_passages))
    emb = _embedder(threads)
    texts = _pools.passage_texts(pool.docs)
    vectors = np.asarray(emb.embed_documents(texts, label="e5 jsquad passages"), np.float32)
    emb.embed_queries([q for q, _ in pool.questions])
    tokens = [tokenize(t) for t in texts]
    print(f"recall: JSQuAD dev, {len(pool.questions)} questions over {len(pool.docs)} "
          f"passages, e5 vectors; {_load()}", flush=True)
    report: dict = {"chunks": len(pool.docs)}
    with both_stores(pool.docs, vectors, tokens, embedder_identity(emb), chroma,
                     report) as stores:
        report.update(_compare(stores, emb, pool.questions, f"{len(pool.docs)} chunks"))
    return report


def _filled(n: int, seed: int = 0, small: tuple[int, int] | None = None,
            max_fillers: int | None = None):
    """JSQuAD passages (real e5 vectors) + copies of Japanese passages (synthetic vectors).

    ``small`` cuts the JSQuAD pool (:func:`_retrieval.shrink`), ``max_fillers`` the
    passages copied."""
    from grounded_rag.retrieval.text_analysis import tokenize

    emb = _embedder(1)
    pool = _pools.shrink(_pools.jsquad(1000), small)
    if pool is None:
        return None
    real_texts = _pools.passage_texts(pool.docs)
    real = np.asarray(emb.embed_documents(real_texts, label="e5 jsquad passages"), np.float32)
    fillers: list[dict] = []
    for extra in (_pools.jaquad(), _pools.nomiracl("ja")):
        if extra is not None:
            fillers.extend(d for d in extra.docs if d["text"].strip())
    fillers = fillers[:max_fillers]
    filler_tokens = [tokenize(t) for t in _pools.passage_texts(fillers)]
    docs, tokens = list(pool.docs[:n]), [tokenize(t) for t in real_texts[:n]]
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(512, real.shape[1])).astype(np.float32)
    copy = 0
    while len(docs) < n:
        copy += 1
        for d, toks in zip(fillers, filler_tokens, strict=True):
            if len(docs) >= n:
                break
            docs.append({**d, "id": f"{d['id']}~{copy}"})
            tokens.append(toks)
    fake = centers[rng.integers(512, size=n - min(n, len(real)))]
    fake = fake + 0.7 * rng.normal(size=fake.shape).astype(np.float32)
    fake /= np.linalg.norm(fake, axis=1, keepdims=True)
    vectors = np.concatenate([real[:n], fake]) if len(fake) else real[:n]
    return docs, vectors, tokens, pool, emb, len(fillers)


def bench_latency(n_chunks: int, n_queries: int, chroma: str,
                  small: tuple[int, int] | None = None, max_fillers: int | None = None) -> dict:
    """Hybrid query latency over ``n_chunks`` chunks in both stores, and its parts."""
    from grounded_rag.retrieval.embeddings import E5Embeddings, embedder_identity

    t = time.perf_counter()
    filled = _filled(n_chunks, small=small, max_fillers=max_fillers)
    if filled is None:
        return {}
    docs, vectors, tokens, pool, emb, n_fillers = filled
    rng = np.random.default_rng(7)
    picked = rng.choice(len(pool.questions), size=min(n_queries, len(pool.questions)),
                        replace=False)
    questions = [pool.questions[i] for i in picked]
    emb.embed_queries([q for q, _ in questions])
    print(f"latency: {len(docs)} chunks ({min(len(docs), len(pool.docs))} JSQuAD with e5 "
          f"vectors, the rest copies of {n_fillers} Japanese passages with synthetic vectors; "
          f"prepared in {time.perf_counter() - t:.0f} s), {len(questions)} JSQuAD questions, "
          f"query vectors cached; {_load()}", flush=True)
    report: dict = {"chunks": len(docs), "fillers": n_fillers}
    with both_stores(docs, vectors, tokens, embedder_identity(emb), chroma, report) as stores:
        report.update(_compare(stores, emb, questions, f"{len(docs)} chunks"))
        report["networked_median_parts_ms"] = _parts(stores["networked"], emb, questions[:100],
                                                     len(docs))
    e5 = E5Embeddings(threads=1)
    times = []
    for q, _ in questions[:50]:
        e5._query_cache.clear()  # time real embeddings
        t0 = time.perf_counter()
        e5.embed_query(q)
        times.append((time.perf_counter() - t0) * 1000)
    print(f"e5 query embedding (one thread, not in the timings above): median "
          f"{statistics.median(times):.1f} ms; {_load()}", flush=True)
    report["e5_query_median_ms"] = round(statistics.median(times), 2)
    return report


def _parts(store, emb, questions: list[tuple[str, set[str]]], n: int) -> dict:
    """Median time of each step of a networked query."""
    from grounded_rag.retrieval.text_analysis import tokenize

    parts: dict[str, list[float]] = {"generation": [], "bm25 (in memory)": [],
                                     "vectors (Chroma)": [], "fetch (SQL)": []}
    for q, _ in questions:
        t = time.perf_counter()
        lexical = store.bm25_index()
        parts["generation"].append(time.perf_counter() - t)
        t = time.perf_counter()
        found = lexical.search(tokenize(q), 20)
        parts["bm25 (in memory)"].append(time.perf_counter() - t)
        vector = emb.embed_query(q)
        t = time.perf_counter()
        near = store.vector_search(vector, 60)
        parts["vectors (Chroma)"].append(time.perf_counter() - t)
        t = time.perf_counter()
        store.fetch(list({k for k, _ in found + near}))
        parts["fetch (SQL)"].append(time.perf_counter() - t)
    cells = ", ".join(f"{k} {statistics.median(v) * 1000:.2f} ms" for k, v in parts.items())
    print(f"[{n} chunks] networked, median parts: {cells}; {_load()}", flush=True)
    return {k: round(statistics.median(v) * 1000, 3) for k, v in parts.items()}


def bench_ingest(n_files: int, threads: int, chroma: str) -> dict:
    """``ingest_paths`` of ``n_files`` JSQuAD passages (one ``.txt`` each) into each store,
    then again unchanged; the embedding time (e5, through the cache) printed apart."""
    from grounded_rag.retrieval._pg_store import drop_store
    from grounded_rag.retrieval.ingest import ingest_paths

    pool = _pools.jsquad(1)
    if pool is None:
        return {}
    root = Path(tempfile.mkdtemp(prefix="store-bench-ingest-"))
    url = f"{POSTGRES}?schema=store_bench_ingest_{os.getpid()}"
    targets = {"embedded": (str(root / "embedded"), None), "networked": (url, chroma)}
    emb = _embedder(threads)
    spent = {"embed": 0.0}
    embed_documents = emb.embed_documents

    def timed_embed(*a, **kw):
        t = time.perf_counter()
        try:
            return embed_documents(*a, **kw)
        finally:
            spent["embed"] += time.perf_counter() - t

    emb.embed_documents = timed_embed
    report: dict = {"files": 0}
    try:
        folder = root / "docs"
        folder.mkdir()
        for i, d in enumerate(pool.docs[:n_files]):
            (folder / f"{i:05d}.txt").write_text(f"{d['title']}\n\n{d['text']}\n",
                                                 encoding="utf-8")
        report["files"] = min(n_files, len(pool.docs))
        drop_store(url, chroma_url=chroma)
        print(f"ingest: {report['files']} JSQuAD passages, one .txt file each, e5 vectors "
              f"through the cache; {_load()}", flush=True)
        for name, (target, chroma_url) in targets.items():
            row = {}
            for run in ("first", "unchanged"):
                spent["embed"] = 0.0
                t = time.perf_counter()
                r = ingest_paths([folder], target, embeddings=emb, chroma_url=chroma_url,
                                 progress=False)
                wall = time.perf_counter() - t
                if r.errors:
                    print(f"  {name} {run}: errors {r.errors[:3]}", flush=True)
                row[run] = {"wall_s": round(wall, 3), "embed_s": round(spent["embed"], 3),
                            "store_s": round(wall - spent["embed"], 3),
                            "added": len(r.added), "unchanged": len(r.unchanged),
                            "chunks_written": r.chunks_written, "errors": len(r.errors)}
                print(f"[ingest] {name:9s} {run:9s}: {len(r.added)} added, {len(r.unchanged)} "
                      f"unchanged, {r.chunks_written} chunks in {wall:.2f} s (embedding "
                      f"{spent['embed']:.2f} s, the rest {wall - spent['embed']:.2f} s); "
                      f"{_load()}", flush=True)
            report[name] = row
    finally:
        drop_store(url, chroma_url=chroma)
        shutil.rmtree(root, ignore_errors=True)
    return report


PARTS = ("recall", "latency", "ingest")
"""What ``all`` runs, in this order, on one Chroma server."""


def _run_part(part: str, a: argparse.Namespace, chroma: str) -> dict:
    if part == "recall":
        if a.quick:
            return bench_recall(QUICK_RECALL[0], a.threads, chroma, QUICK_RECALL[1])
        return bench_recall(a.questions, a.threads, chroma)
    if part == "latency":
        if a.quick:
            chunks, queries, fillers = QUICK_LATENCY
            return bench_latency(chunks, queries, chroma, QUICK_RECALL, fillers)
        return bench_latency(a.chunks, a.queries, chroma)
    return bench_ingest(QUICK_INGEST if a.quick else a.files, a.threads, chroma)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    recall = sub.add_parser("recall", help="recall, same top-5 and latency on JSQuAD")
    recall.add_argument("--questions", type=int, default=1000)
    latency = sub.add_parser("latency", help="hybrid query P50 / P99 on many chunks")
    latency.add_argument("--chunks", type=int, default=100_000)
    latency.add_argument("--queries", type=int, default=300)
    ingest = sub.add_parser("ingest", help="ingest_paths into each store, then unchanged")
    ingest.add_argument("--files", type=int, default=2304)
    every = sub.add_parser("all", help="recall, latency and ingest at their defaults")
    for p in (recall, latency, ingest, every):
        if p is not latency:
            p.add_argument("--threads", type=int, default=1, help="e5 threads for embedding")
        p.add_argument("--chroma-url", default=None, help="a running Chroma server")
        add_result_args(p)
    args = parser.parse_args()
    if skip_without_eval_data(args.json, "store", quick=args.quick):
        return
    parts = PARTS if args.cmd == "all" else (args.cmd,)
    figures: dict = {}
    with chroma_server(args.chroma_url) as chroma:
        for part in parts:
            a = args
            if args.cmd == "all":  # the part's own defaults, this run's flags
                a = parser.parse_args([part])
                a.quick, a.threads = args.quick, getattr(args, "threads", 1)
                print(f"== {part}", flush=True)
            figures[part] = _run_part(part, a, chroma)
    figures["load"] = _load()
    write_result(args.json, "store", figures, quick=args.quick)


if __name__ == "__main__":
    main()
