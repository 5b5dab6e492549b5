"""Retrieval benchmarks: latency at 10k / 100k chunks, ingest throughput, store size, recall.

Usage (from the repository root; run with ``nice`` on shared machines)::

    python benchmarks/retrieval_bench.py latency --sizes 10000 100000
    python benchmarks/retrieval_bench.py recall --jsquad-questions 1000
    python benchmarks/retrieval_bench.py tokenizers   # sudachi vs fugashi, if installed

Latency uses synthetic chunks (random words, clustered random vectors) so building a
100k store does not take hours of embedding; the query embedding is the real MiniLM model
and is included in every timing. Recall uses the real model on ../shared/eval (never copied
into the repository); document vectors are cached under ~/.cache/grounded-rag-bench.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CachedEmbeddings, eval_path, read_jsonl  # noqa: E402

from grounded_rag.retrieval.chunking import Document  # noqa: E402
from grounded_rag.retrieval.embeddings import MiniLMEmbeddings  # noqa: E402


class SyntheticEmbeddings:
    """Clustered random unit vectors (deterministic per text), 384-d: fast stand-ins."""

    model_name = "synthetic-384"

    def __init__(self, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.centers = rng.normal(size=(512, 384)).astype(np.float32)

    def embed_documents(self, texts):
        out = []
        for t in texts:
            r = np.random.default_rng(abs(hash(t)) % (2**32))
            v = self.centers[r.integers(512)] + 0.7 * r.normal(size=384).astype(np.float32)
            out.append(v / np.linalg.norm(v))
        return np.asarray(out)

    def embed_query(self, text):
        return self.embed_documents([text])[0]


def _synthetic_docs(n_chunks: int, seed: int = 0) -> list[Document]:
    rng = np.random.default_rng(seed)
    en = [f"w{i}" for i in range(20000)]
    ja = [
        "契約",
        "委託",
        "料金",
        "支払",
        "期限",
        "出張",
        "旅費",
        "精算",
        "障害",
        "復旧",
        "手順",
        "承認",
        "申請",
        "規程",
        "対象",
        "期間",
        "更新",
        "解除",
        "秘密",
        "保持",
        "損害",
        "賠償",
        "手当",
        "通信",
    ]
    zipf = np.minimum(rng.zipf(1.3, size=n_chunks * 60), len(en)) - 1
    docs = []
    per_doc = 10
    pos = 0
    for d in range(n_chunks // per_doc):
        parts = []
        for s in range(per_doc):
            words = [en[i] for i in zipf[pos : pos + 50]]
            pos += 50
            if (d + s) % 3 == 0:
                words += list(rng.choice(ja, size=10)) + ["です。"]
            parts.append(f"## Section {s}\n" + " ".join(words))
        docs.append(Document(f"doc{d}", f"Synthetic {d}", "\n\n".join(parts), source=f"syn{d}"))
    return docs


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def bench_latency(sizes: list[int], queries: int) -> None:
    from grounded_rag.retrieval.hybrid import HybridRetriever
    from grounded_rag.retrieval.ingest import IngestReport, ingest_documents
    from grounded_rag.retrieval.store import Store

    model = MiniLMEmbeddings()
    model.embed_query("warm up")
    for n in sizes:
        root = Path(tempfile.mkdtemp(prefix="grb-"))
        try:
            docs = _synthetic_docs(n)
            store = Store(root / "store", create=True)
            t0 = time.perf_counter()
            report = ingest_documents(
                docs, store, SyntheticEmbeddings(), report=IngestReport(str(root)), progress=False
            )
            dt = time.perf_counter() - t0
            size = _dir_size(root / "store")
            print(
                f"[{n} chunks] ingest (synthetic vectors, excludes embedding): {report.chunks_written} chunks "
                f"in {dt:.1f} s = {report.chunks_written / dt:.0f} chunks/s; store size {size / 2**20:.1f} MiB "
                f"= {size / 2**20 / (n / 10000):.1f} MiB per 10k chunks"
            )
            retriever = HybridRetriever(store, model)
            rng = np.random.default_rng(1)
            qs = [
                f"w{rng.integers(1, 300)} w{rng.integers(1, 3000)} w{rng.integers(1, 20000)} 契約の期限"
                if i % 2
                else f"how long is w{rng.integers(1, 3000)} for w{rng.integers(1, 300)}"
                for i in range(queries)
            ]
            for q in qs[:10]:
                retriever.retrieve(q + " warm", k=5)
            ts = []
            for i, q in enumerate(qs):
                q = f"{q} {i}"  # defeat the query-embedding cache
                t = time.perf_counter()
                retriever.retrieve(q, k=5)
                ts.append((time.perf_counter() - t) * 1000)
            ts.sort()
            p50 = ts[len(ts) // 2]
            p99 = ts[min(len(ts) - 1, int(len(ts) * 0.99))]
            # the parts, to say where the time goes
            parts = {"embed": [], "bm25": [], "chroma": []}
            bm25 = store.bm25_index()
            from grounded_rag.retrieval.text_analysis import tokenize

            for i, q in enumerate(qs[:100]):
                q = f"{q} part{i}"
                t = time.perf_counter()
                v = model.embed_query(q)
                parts["embed"].append(time.perf_counter() - t)
                t = time.perf_counter()
                bm25.search(tokenize(q), 20)
                parts["bm25"].append(time.perf_counter() - t)
                t = time.perf_counter()
                store.vector_search(v, 20)
                parts["chroma"].append(time.perf_counter() - t)
            med = {k: statistics.median(v) * 1000 for k, v in parts.items()}
            print(
                f"[{n} chunks] hybrid query latency (k=5, query embedding included, {queries} queries): "
                f"P50 {p50:.2f} ms, P99 {p99:.2f} ms; medians: embed {med['embed']:.2f} ms, "
                f"bm25 {med['bm25']:.2f} ms, chroma {med['chroma']:.2f} ms"
            )
            store.close()
        finally:
            shutil.rmtree(root, ignore_errors=True)


def bench_embed_throughput(n: int) -> None:
    rows = read_jsonl(p, n) if (p := eval_path("scifact", "corpus.jsonl")) else []
    if not rows:
        return
    texts = [r["title"] + "\n" + " ".join(r["abstract"])[:900] for r in rows]
    model = MiniLMEmbeddings()
    model.embed_documents(texts[:8])
    t = time.perf_counter()
    model.embed_documents(texts)
    dt = time.perf_counter() - t
    print(
        f"embedding throughput (MiniLM int8, {len(texts)} chunks of <=900 chars): {len(texts) / dt:.0f} chunks/s"
    )


def _recall_table(
    name: str, docs: list[dict], questions: list[tuple[str, set[str]]], k: int
) -> dict:
    from grounded_rag.retrieval.memory import InMemoryRetriever

    emb = CachedEmbeddings(MiniLMEmbeddings(), name)
    t = time.perf_counter()
    hybrid = InMemoryRetriever(docs, embeddings=emb, chunk=False, mode="hybrid")
    print(
        f"{name}: indexed {len(docs)} passages in {time.perf_counter() - t:.1f} s (vectors cached after the first run)"
    )
    results = {}
    default_w = hybrid.ja_vector_weight
    runs = [("bm25", default_w), ("vector", default_w), ("hybrid", default_w)]
    if name.endswith("_ja"):
        runs += [("hybrid", 1.0), ("hybrid", 0.5), ("hybrid", 0.1), ("hybrid", 0.0)]
    for mode, w in runs:
        hybrid.mode = mode
        hybrid.ja_vector_weight = w
        total = 0.0
        t = time.perf_counter()
        for q, gold in questions:
            got = {ev["doc_id"] for ev in hybrid.retrieve(q, k)}
            total += len(got & gold) / len(gold)
        label = (
            mode
            if mode != "hybrid" or not name.endswith("_ja")
            else f"hybrid (ja vector weight {w})"
        )
        results[label] = total / len(questions)
        print(
            f"  {name} recall@{k} {label:6s}: {results[label]:.3f}  ({len(questions)} questions, "
            f"{(time.perf_counter() - t) / len(questions) * 1000:.1f} ms/query)"
        )
    return results


def bench_recall(jsquad_n: int | None, scifact_n: int | None) -> None:
    if (qp := eval_path("jsquad_ja", "questions.dev.jsonl")) and (
        pp := eval_path("jsquad_ja", "passages.jsonl")
    ):
        passages = read_jsonl(pp)
        docs = [{"id": p["pid"], "title": p["title"], "text": p["text"]} for p in passages]
        qs = [(q["question"], {q["gold_pid"]}) for q in read_jsonl(qp, jsquad_n)]
        _recall_table("jsquad_ja", docs, qs, 5)
    if (cp := eval_path("scifact", "claims.dev.jsonl")) and (
        dp := eval_path("scifact", "corpus.jsonl")
    ):
        corpus = read_jsonl(dp)
        docs = [
            {"id": d["doc_id"], "title": d["title"], "text": " ".join(d["abstract"])}
            for d in corpus
        ]
        claims = [c for c in read_jsonl(cp) if c["evidence"]][: scifact_n or None]
        qs = [(c["claim"], set(c["evidence"])) for c in claims]
        _recall_table("scifact", docs, qs, 10)


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
            f"{name}: tokenize {len(passages)} passages in {t_index:.2f} s; BM25 recall@5 {hits / len(qs):.3f} ({len(qs)} questions)"
        )


def make_embedder(name: str, threads: int = 1):
    """A built-in embedder wrapped in the on-disk vector cache (one thread by default)."""
    from grounded_rag.retrieval.embeddings import E5Embeddings

    inner = E5Embeddings(threads=threads) if name == "e5" else MiniLMEmbeddings(threads=threads)
    return CachedEmbeddings(inner, name)


def bench_warm(embedders: list[str], jsquad_n: int | None) -> None:
    """Embed every pool and question set once into the cache (long; resumable)."""
    import _pools

    pools = [
        _pools.jsquad(jsquad_n), _pools.jaquad(), _pools.nomiracl("ja"), _pools.nomiracl("en"),
        _pools.xlang("en"), _pools.scifact(),
    ]
    models = {name: make_embedder(name) for name in embedders}
    for pool in pools:
        for name, emb in models.items():
            if pool is None:
                continue
            t = time.perf_counter()
            emb.embed_queries([q for q, _ in pool.questions])
            emb.embed_documents(_pools.passage_texts(pool.docs), label=f"{name} {pool.name}")
            print(f"warm {name} {pool.name}: {time.perf_counter() - t:.0f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="what", required=True)
    lat = sub.add_parser("latency")
    lat.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    lat.add_argument("--queries", type=int, default=300)
    sub.add_parser("throughput").add_argument("--n", type=int, default=500)
    rec = sub.add_parser("recall")
    rec.add_argument(
        "--jsquad-questions", type=int, default=1000, help="first N questions (0 = all)"
    )
    rec.add_argument(
        "--scifact-claims", type=int, default=0, help="first N claims with evidence (0 = all)"
    )
    sub.add_parser("tokenizers").add_argument("--n", type=int, default=1000)
    warm = sub.add_parser("warm", help="fill the vector cache for all pools")
    warm.add_argument("--embedders", nargs="+", default=["minilm", "e5"])
    warm.add_argument("--jsquad-questions", type=int, default=1000)
    args = ap.parse_args()
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    if args.what == "latency":
        bench_latency(args.sizes, args.queries)
    elif args.what == "throughput":
        bench_embed_throughput(args.n)
    elif args.what == "recall":
        bench_recall(args.jsquad_questions or None, args.scifact_claims or None)
    elif args.what == "tokenizers":
        bench_tokenizers(args.n)
    elif args.what == "warm":
        bench_warm(args.embedders, args.jsquad_questions or None)
    print(json.dumps({"python": sys.version.split()[0], "cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()
