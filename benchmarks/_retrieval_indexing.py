"""What indexing costs: ingest throughput and peak memory, and the BM25 tokenizers compared."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import eval_path, read_jsonl
from _retrieval_common import load_average

BENCH_SCRIPT = Path(__file__).resolve().with_name("retrieval_bench.py")
"""The script each measured ingest runs in, as a child process (``_ingest_child``)."""


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
        print(f"ingest: {size:.1f} MB text file, {threads} thread(s), {load_average()}", flush=True)
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
