"""Fit the relevance scorer and pick the default abstain threshold.

Step 1 (``--fit``): passage-level logistic regression of "this candidate is the gold
passage" on the scorer's two signals (query-chunk cosine, IDF-weighted query-term
coverage), separately for Japanese (JSQuAD) and English (SciFact) queries, over the top-20
hybrid candidates of each question. The result is a relevance that reads as a probability.

For a multilingual embedder it also fits the cross-language coefficients (a chunk in the
other language than the question shares no terms with it, so only the cosine counts): a
cosine-only fit on the same candidates, shifted by how much lower e5 puts a translated
question than the original one against the same sentence (JSICK-ja/en dev pairs).

Step 2: on NoMIRACL (ja + en; answerable = at least one of the 10 passages is relevant,
unanswerable = all 10 judged non-relevant) retrieve over a pooled corpus per language
and take the best relevance; print threshold vs abstain rate (unanswerable) and answer
rate (answerable) per language, and the chosen default.

Usage::

    python benchmarks/calibrate_abstain.py --embedder e5 --fit --fit-questions 400
    python benchmarks/calibrate_abstain.py --embedder minilm   # curve, coefficients as in code

Data is read from ../shared/eval (never copied into the repository).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CachedEmbeddings, eval_path, read_jsonl  # noqa: E402

from grounded_rag.retrieval.embeddings import E5Embeddings, MiniLMEmbeddings  # noqa: E402
from grounded_rag.retrieval.memory import InMemoryRetriever  # noqa: E402
from grounded_rag.retrieval.rerank import FeatureScorer, default_scorer  # noqa: E402


def _embedder(name: str) -> CachedEmbeddings:
    inner = E5Embeddings(threads=1) if name == "e5" else MiniLMEmbeddings(threads=1)
    return CachedEmbeddings(inner, name)


MIN_ANSWER_RATE = 0.90
"""The gate runs before any model call: it may only drop clearly unsupported questions."""


def _fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, iters: int = 50) -> np.ndarray:
    """Newton-Raphson logistic regression with a small L2 penalty; returns [bias, w...]."""
    X = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(X.shape[1])
    for _ in range(iters):
        p = 1 / (1 + np.exp(-X @ w))
        grad = X.T @ (p - y) + l2 * np.r_[0, w[1:]]
        H = (X * (p * (1 - p))[:, None]).T @ X + l2 * np.diag(np.r_[0, np.ones(len(w) - 1)])
        step = np.linalg.solve(H, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def _candidate_rows(
    emb: CachedEmbeddings, docs: list[dict], questions: list[tuple[str, set[str]]]
) -> np.ndarray:
    retr = InMemoryRetriever(docs, embeddings=emb, chunk=False)
    rows = []
    for q, gold in questions:
        for _, cand in retr.retrieve_with_candidates(q, 20):
            cos = cand.cosine if cand.cosine is not None else 0.0
            rows.append((cos, cand.coverage, float(cand.chunk.doc_id in gold)))
    return np.asarray(rows)


def _cross_language_shift(emb: CachedEmbeddings) -> float | None:
    """Mean cosine lost when question and passage are in different languages (JSICK)."""
    p = eval_path("jsick_ja", "jsick_test.dev.jsonl")
    if p is None:
        return None
    rows = read_jsonl(p)[:300]
    prem_ja = np.asarray(emb.embed_documents([r["premise"] for r in rows], label="jsick ja"))
    prem_en = np.asarray(emb.embed_documents([r["premise_en"] for r in rows], label="jsick en"))
    hyp_ja = np.asarray([emb.embed_query(r["hypothesis"]) for r in rows])
    hyp_en = np.asarray([emb.embed_query(r["hypothesis_en"]) for r in rows])
    same = np.r_[(hyp_ja * prem_ja).sum(1), (hyp_en * prem_en).sum(1)]
    cross = np.r_[(hyp_en * prem_ja).sum(1), (hyp_ja * prem_en).sum(1)]
    print(
        f"JSICK ({len(rows)} pairs): mean cosine same-language {same.mean():.4f}, "
        f"cross-language {cross.mean():.4f}, shift {same.mean() - cross.mean():.4f}"
    )
    return float(same.mean() - cross.mean())


def fit(n: int, embedder: str, en_source: str = "scifact") -> dict[str, float]:
    coef: dict[str, float] = {}
    qp, pp = eval_path("jsquad_ja", "questions.dev.jsonl"), eval_path("jsquad_ja", "passages.jsonl")
    cp, dp = eval_path("scifact", "claims.dev.jsonl"), eval_path("scifact", "corpus.jsonl")
    if not (qp and pp and cp and dp):
        raise SystemExit("skip: fitting needs jsquad_ja and scifact in ../shared/eval")
    passages = read_jsonl(pp)
    ja_docs = [{"id": p["pid"], "title": p["title"], "text": p["text"]} for p in passages]
    # every 4th question from 2001: spread over many passages and disjoint from the
    # reported recall (questions 0-999), the fusion-weight fold (1000-1999) and both
    # cross-language sets (question numbers 1000 + 68k and 1034 + 68k)
    ja_q = [(q["question"], {q["gold_pid"]}) for q in read_jsonl(qp)[2001::4][:n]]
    corpus = read_jsonl(dp)
    en_docs = [
        {"id": d["doc_id"], "title": d["title"], "text": " ".join(d["abstract"])} for d in corpus
    ]
    en_q = [(c["claim"], set(c["evidence"])) for c in read_jsonl(cp) if c["evidence"]][:n]
    if en_source == "halueval":
        import _pools

        pool = _pools.halueval_qa()
        if pool is None:
            raise SystemExit("skip: --en-fit halueval needs halueval_qa in ../shared/eval")
        en_docs, en_q = pool.docs, pool.questions[:n]
        print(f"English fit on {pool.name}: {len(en_q)} questions over {len(en_docs)} passages")
    emb = _embedder(embedder)
    pooled = []
    langs = [("ja", ja_docs, ja_q)] + ([("en", en_docs, en_q)] if en_source != "none" else [])
    for lang, docs, questions in langs:
        rows = _candidate_rows(emb, docs, questions)
        pooled.append(rows)
        w = _fit_logistic(rows[:, :2], rows[:, 2])
        sfx = "_ja" if lang == "ja" else ""
        coef[f"bias{sfx}"], coef[f"w_cosine{sfx}"], coef[f"w_coverage{sfx}"] = (
            round(float(v), 3) for v in w
        )
        p = 1 / (1 + np.exp(-(w[0] + rows[:, :2] @ w[1:])))
        bins = np.clip((p * 5).astype(int), 0, 4)
        rel = ", ".join(
            f"[{b / 5:.1f},{(b + 1) / 5:.1f}): pred {p[bins == b].mean():.2f} / actual "
            f"{rows[bins == b, 2].mean():.2f} (n={int((bins == b).sum())})"
            for b in range(5)
            if (bins == b).any()
        )
        print(
            f"fit {lang}: {len(rows)} candidate rows, positives {rows[:, 2].mean():.3f}; "
            "coefficients "
            f"bias={w[0]:.3f} cosine={w[1]:.3f} coverage={w[2]:.3f}\n  reliability: {rel}"
        )
    if getattr(emb, "multilingual", False):
        import _pools

        xdev = _pools.xlang("en", fold="dev")
        if xdev is not None:
            # English questions over Japanese passages: the cross-language dev fold
            rows = _candidate_rows(emb, xdev.docs, xdev.questions)
            b0, w0 = _fit_logistic(rows[:, :1], rows[:, 2])
            coef["bias_x"], coef["w_cosine_x"] = round(float(b0), 3), round(float(w0), 3)
            p = 1 / (1 + np.exp(-(b0 + w0 * rows[:, 0])))
            print(
                f"cross-language fit on {xdev.name}: {len(rows)} candidate rows, positives "
                f"{rows[:, 2].mean():.3f}; bias={b0:.3f} cosine={w0:.3f}; gold found in the "
                f"top 20 for {int(rows[:, 2].sum())} of {len(xdev.questions)}; mean predicted "
                f"{p.mean():.3f} vs actual {rows[:, 2].mean():.3f}"
            )
        else:
            rows = np.vstack(pooled)
            b0, w0 = _fit_logistic(rows[:, :1], rows[:, 2])
            shift = _cross_language_shift(emb) or 0.0
            coef["bias_x"] = round(float(b0 + w0 * shift), 3)
            coef["w_cosine_x"] = round(float(w0), 3)
            print(
                f"cross-language: cosine-only fit bias={b0:.3f} cosine={w0:.3f}, shifted by "
                f"{shift:.4f} -> bias_x={coef['bias_x']}"
            )
    return coef


class _Lookup:
    """Embeddings served from vectors computed (and cached) per query batch."""

    def __init__(self, vectors: dict[str, list[float]], inner: CachedEmbeddings) -> None:
        self.vectors = vectors
        self.inner = inner
        self.model_name = inner.model_name
        self.multilingual = getattr(inner, "multilingual", False)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        return [self.vectors[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def curve(scorer: FeatureScorer | None, embedder: str) -> float | None:
    p = eval_path("nomiracl_ja_en", "nomiracl.dev.jsonl")
    if p is None:
        return None
    rows = read_jsonl(p)
    emb = _embedder(embedder)
    scorer = scorer or default_scorer(emb)
    # One pooled corpus per language (all queries' passages, deduplicated), like a real store:
    # an answerable query's relevant passage is in it, an unanswerable one's is not, and
    # IDF comes from ~1000 passages instead of the query's own 10.
    best: list[tuple[str, bool, float]] = []
    for lang in ("ja", "en"):
        lang_rows = [r for r in rows if r["lang"] == lang]
        vectors: dict[str, list[float]] = {}
        docs: dict[str, dict] = {}
        for r in lang_rows:
            texts = [f"{x['title']}\n{x['text']}" for x in r["passages"]]
            vectors.update(zip(texts, emb.embed_documents(texts), strict=True))
            for x in r["passages"]:
                docs.setdefault(
                    x["docid"], {"id": x["docid"], "title": x["title"], "text": x["text"]}
                )
        retr = InMemoryRetriever(
            list(docs.values()), embeddings=_Lookup(vectors, emb), chunk=False, reranker=scorer
        )
        for r in lang_rows:
            hits = retr.retrieve(r["question"], 10)
            best.append(
                (lang, bool(r["answerable"]), max((h["relevance"] for h in hits), default=0.0))
            )
    thresholds = [0.0, 0.001, 0.002, 0.005, 0.01, 0.015] + [
        round(t, 2) for t in np.arange(0.02, 0.61, 0.02)
    ]
    print(
        "\nNoMIRACL dev, pooled corpus per language (best relevance in the top 10); per language:"
    )
    print(
        "threshold | ja: answer rate (answerable)  abstain rate (unanswerable) | "
        "en: answer rate  abstain rate | all: answer  abstain"
    )
    chosen = 0.0
    for t in thresholds:
        cells = []
        ok = True
        for lang in ("ja", "en", None):
            sel = [b for b in best if lang is None or b[0] == lang]
            ans = [s for _, a, s in sel if a]
            una = [s for _, a, s in sel if not a]
            answer_rate = np.mean([s >= t for s in ans])
            abstain_rate = np.mean([s < t for s in una])
            cells.append(f"{answer_rate:.2f}  {abstain_rate:.2f}")
            if lang is None and answer_rate < MIN_ANSWER_RATE:
                ok = False
        if ok:
            chosen = t
        print(f"  {t:.3f}   | " + " | ".join(cells))
    for lang in ("ja", "en"):
        ans = np.array([s for l_, a, s in best if l_ == lang and a])
        una = np.array([s for l_, a, s in best if l_ == lang and not a])
        auc = np.mean([(x > y) + 0.5 * (x == y) for x in ans for y in una])
        print(
            f"{lang}: answerable {len(ans)}, unanswerable {len(una)}, "
            f"ROC AUC of best relevance {auc:.3f}"
        )
    print(
        f"\nchosen default: {chosen:.2f} (highest threshold keeping the answer rate on answerable "
        f">= {MIN_ANSWER_RATE:.0%} over both languages)"
    )
    baseline = {}
    for r in rows:
        if r["answerable"]:
            continue
        for model, out in (r.get("baseline_outputs") or {}).items():
            said_no = "i don't know" in str(out).lower()
            baseline.setdefault(model, []).append(said_no)
    if baseline:
        print('published baselines, abstain rate on the unanswerable queries ("I don\'t know"):')
        for model, xs in sorted(baseline.items()):
            print(f"  {model}: {np.mean(xs):.2f} (n={len(xs)})")
    return chosen


def cross_curve(embedder: str, top_k: int) -> float | None:
    """Pick the gate for evidence in the other language than the question.

    Answerable: the English translations of JSQuAD dev questions (``xlang_en_ja.dev.jsonl``
    chooses, ``xlang_en_ja.jsonl`` is reported) over the Japanese JSQuAD pool; every chunk
    there is in the other language, so only the cross-language score can pass the gate.
    Unanswerable: NoMIRACL's English questions over the same pool (Wikipedia questions
    whose passages are not in it: "the store has nothing on this"). Chosen like the main
    threshold: the highest one that still answers >= 90% of the answerable dev questions.
    """
    import _pools

    dev, test, nomi = _pools.xlang("en", "dev"), _pools.xlang("en", "test"), _pools.nomiracl("en")
    if dev is None or test is None or nomi is None:
        print("skip: the cross-language curve needs jsquad_ja and nomiracl_ja_en in ../shared/eval")
        return None
    emb = _embedder(embedder)
    scorer = default_scorer(emb)
    if scorer.bias_x is None:
        print("skip: the embedder has no cross-language coefficients (not multilingual)")
        return None
    retr = InMemoryRetriever(dev.docs, embeddings=emb, chunk=False, reranker=scorer)

    def best(questions: list[tuple[str, set[str]]]) -> tuple[np.ndarray, np.ndarray]:
        scores, found = [], []
        for q, gold in questions:
            hits = retr.retrieve(q, top_k)
            scores.append(max((h["relevance"] for h in hits), default=0.0))
            found.append(any(h["doc_id"] in gold for h in hits))
        return np.asarray(scores), np.asarray(found)

    dev_s, dev_f = best(dev.questions)
    test_s, test_f = best(test.questions)
    neg_s, _ = best([(q, set()) for q, _ in nomi.questions])
    print(f"\ncross-language gate: best relevance in the top {top_k} over the JSQuAD pool "
          f"({len(dev.docs)} Japanese passages); gold in the top {top_k}: dev "
          f"{dev_f.mean():.2f}, test {test_f.mean():.2f}")
    print("threshold | dev answer rate | test answer rate (gold found & passes) | "
          "NoMIRACL-en abstain rate")
    chosen = 0.0
    for t in [0.0, 0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08,
              0.1, 0.12, 0.15, 0.2, 0.26]:
        dev_rate = float(np.mean(dev_s >= t))
        if dev_rate >= MIN_ANSWER_RATE:
            chosen = t
        print(f"  {t:.3f}   | {dev_rate:.2f} | {np.mean(test_s >= t):.2f} "
              f"({np.mean((test_s >= t) & test_f):.2f}) | {np.mean(neg_s < t):.2f}")
    auc = np.mean([(x > y) + 0.5 * (x == y) for x in np.r_[dev_s, test_s] for y in neg_s])
    print(f"answerable {len(dev_s) + len(test_s)} (dev + test), unanswerable {len(neg_s)}, "
          f"ROC AUC of best relevance {auc:.3f}")
    print(f"chosen cross-language threshold: {chosen:.3f} (highest keeping the dev answer rate "
          f">= {MIN_ANSWER_RATE:.0%}); at it: test answers {np.mean(test_s >= chosen):.2f}, "
          f"NoMIRACL-en abstains {np.mean(neg_s < chosen):.2f}")
    return chosen


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--fit", action="store_true", help="refit the scorer coefficients first")
    ap.add_argument("--fit-questions", type=int, default=400)
    ap.add_argument("--embedder", choices=["e5", "minilm"], default="e5")
    ap.add_argument("--no-curve", action="store_true", help="fit only (no NoMIRACL curve)")
    ap.add_argument(
        "--en-fit",
        choices=["scifact", "halueval", "none"],
        default="scifact",
        help="English fit data (halueval: HaluEval-QA questions over 1000 knowledge passages)",
    )
    ap.add_argument("--cross", action="store_true",
                    help="only the cross-language gate (English questions, Japanese pool)")
    args = ap.parse_args()
    if args.cross:
        from grounded_rag.context import Context

        cross_curve(args.embedder, Context().top_k)
        return
    scorer = None
    if args.fit:
        coef = fit(args.fit_questions, args.embedder, args.en_fit)
        print("FEATURE_COEFFICIENTS =", json.dumps(coef))
        scorer = default_scorer(_embedder(args.embedder))
        for key, value in coef.items():  # coefficients not refitted keep their values
            setattr(scorer, key, value)
    if not args.no_curve:
        curve(scorer, args.embedder)


if __name__ == "__main__":
    main()
