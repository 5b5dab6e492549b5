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

    python benchmarks/fit_relevance.py --embedder e5 --fit --fit-questions 400
    python benchmarks/fit_relevance.py --embedder minilm   # curve, coefficients as in code
    python benchmarks/fit_relevance.py --cross             # the cross-language gate only
    python benchmarks/fit_relevance.py --quick --json FILE # every step, tiny (CI)

``--quick`` runs ``--fit`` (2 questions per language over their gold passages and 8 others:
``--fit-questions 2 --pool 8``), the NoMIRACL curve and the cross-language gate on one
query per language and class (``--queries 1``): every step at the smallest size, in
well under a minute; it prints coefficients and curves only (this script writes no file
into the package: fitted values are copied into ``graph/retrieval/calibration.py`` by
hand), and its figures are not for reporting. No local LLM is loaded (the embedder runs
on one thread), so no model lock is taken.

Data is read from ../shared/eval (never copied into the repository); when it is absent the
run prints a skip line and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    CachedEmbeddings,
    add_result_args,
    eval_path,
    read_jsonl,
    write_result,
)

from grounded_rag.retrieval.embeddings import E5Embeddings, MiniLMEmbeddings  # noqa: E402
from grounded_rag.retrieval.memory import InMemoryRetriever  # noqa: E402
from grounded_rag.retrieval.rerank import FeatureScorer, default_scorer  # noqa: E402

NAME = "fit_relevance"
QUICK = {"fit_questions": 2, "pool": 8, "queries": 1}
"""``--quick``'s sizes: fit questions per language, other passages per pool, curve queries
per language and class."""


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


def _small_pool(docs: list[dict], questions: list[tuple[str, set[str]]], pool: int
                ) -> list[dict]:
    """``--pool N``: the questions' gold passages and the first N others (0: every one)."""
    if not pool:
        return docs
    gold = set().union(*(g for _, g in questions)) if questions else set()
    out, others = [], 0
    for d in docs:
        if d["id"] in gold:
            out.append(d)
        elif others < pool:
            out.append(d)
            others += 1
    return out


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


def fit(n: int, embedder: str, en_source: str = "scifact", *, pool: int = 0,
        queries: int = 0, figures: dict[str, Any] | None = None) -> dict[str, float]:
    """The scorer's coefficients; ``pool``/``queries`` shrink the pools (``--quick``), and
    ``figures`` (when given) receives what each fit printed."""
    figures = {} if figures is None else figures
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
        import _retrieval as _pools

        hpool = _pools.halueval_qa()
        if hpool is None:
            raise SystemExit("skip: --en-fit halueval needs halueval_qa in ../shared/eval")
        en_docs, en_q = hpool.docs, hpool.questions[:n]
        print(f"English fit on {hpool.name}: {len(en_q)} questions over {len(en_docs)} passages")
    ja_docs, en_docs = _small_pool(ja_docs, ja_q, pool), _small_pool(en_docs, en_q, pool)
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
        figures[lang] = {"questions": len(questions), "passages": len(docs),
                         "candidate_rows": len(rows), "positives": float(rows[:, 2].mean()),
                         "reliability": rel}
    if getattr(emb, "multilingual", False):
        import _retrieval as _pools

        xdev = _pools.xlang("en", fold="dev")
        if xdev is not None:
            # English questions over Japanese passages: the cross-language dev fold
            xq = xdev.questions[: queries or None]
            xdocs = _small_pool(xdev.docs, xq, pool)
            rows = _candidate_rows(emb, xdocs, xq)
            b0, w0 = _fit_logistic(rows[:, :1], rows[:, 2])
            coef["bias_x"], coef["w_cosine_x"] = round(float(b0), 3), round(float(w0), 3)
            p = 1 / (1 + np.exp(-(b0 + w0 * rows[:, 0])))
            print(
                f"cross-language fit on {xdev.name}: {len(rows)} candidate rows, positives "
                f"{rows[:, 2].mean():.3f}; bias={b0:.3f} cosine={w0:.3f}; gold found in the "
                f"top 20 for {int(rows[:, 2].sum())} of {len(xq)}; mean predicted "
                f"{p.mean():.3f} vs actual {rows[:, 2].mean():.3f}"
            )
            figures["cross"] = {"questions": len(xq), "passages": len(xdocs),
                                "candidate_rows": len(rows), "gold_in_top20": int(rows[:, 2].sum()),
                                "mean_predicted": float(p.mean()),
                                "actual": float(rows[:, 2].mean())}
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
            figures["cross"] = {"shift": shift}
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


def _first_per_class(rows: list[dict], n: int) -> list[dict]:
    """``--queries N``: the first N rows of each (language, answerable) (0: every row)."""
    if not n:
        return rows
    seen: dict[tuple[str, bool], int] = {}
    out = []
    for r in rows:
        key = (r["lang"], bool(r["answerable"]))
        if seen.get(key, 0) < n:
            seen[key] = seen.get(key, 0) + 1
            out.append(r)
    return out


def curve(scorer: FeatureScorer | None, embedder: str, *, queries: int = 0,
          figures: dict[str, Any] | None = None) -> float | None:
    figures = {} if figures is None else figures
    p = eval_path("nomiracl_ja_en", "nomiracl.dev.jsonl")
    if p is None:
        return None
    rows = _first_per_class(read_jsonl(p), queries)
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
    table = []
    for t in thresholds:
        cells = []
        row: dict[str, Any] = {"threshold": t}
        ok = True
        for lang in ("ja", "en", None):
            sel = [b for b in best if lang is None or b[0] == lang]
            ans = [s for _, a, s in sel if a]
            una = [s for _, a, s in sel if not a]
            answer_rate = np.mean([s >= t for s in ans])
            abstain_rate = np.mean([s < t for s in una])
            cells.append(f"{answer_rate:.2f}  {abstain_rate:.2f}")
            row[lang or "all"] = [round(float(answer_rate), 4), round(float(abstain_rate), 4)]
            if lang is None and answer_rate < MIN_ANSWER_RATE:
                ok = False
        if ok:
            chosen = t
        print(f"  {t:.3f}   | " + " | ".join(cells))
        table.append(row)
    aucs = {}
    for lang in ("ja", "en"):
        ans = np.array([s for l_, a, s in best if l_ == lang and a])
        una = np.array([s for l_, a, s in best if l_ == lang and not a])
        auc = np.mean([(x > y) + 0.5 * (x == y) for x in ans for y in una])
        print(
            f"{lang}: answerable {len(ans)}, unanswerable {len(una)}, "
            f"ROC AUC of best relevance {auc:.3f}"
        )
        aucs[lang] = {"answerable": len(ans), "unanswerable": len(una), "auc": float(auc)}
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
    figures.update({"queries": len(rows), "rates": table, "auc": aucs, "chosen": chosen,
                    "baselines": {m: float(np.mean(xs)) for m, xs in sorted(baseline.items())}})
    return chosen


def cross_curve(embedder: str, top_k: int, *, queries: int = 0, pool: int = 0,
                figures: dict[str, Any] | None = None) -> float | None:
    """Pick the gate for evidence in the other language than the question.

    Answerable: the English translations of JSQuAD dev questions (``xlang_en_ja.dev.jsonl``
    chooses, ``xlang_en_ja.jsonl`` is reported) over the Japanese JSQuAD pool; every chunk
    there is in the other language, so only the cross-language score can pass the gate.
    Unanswerable: NoMIRACL's English questions over the same pool (Wikipedia questions
    whose passages are not in it: "the store has nothing on this"). Chosen like the main
    threshold: the highest one that still answers >= 90% of the answerable dev questions.
    ``queries``/``pool`` shrink the question sets and the pool (``--quick``).
    """
    import _retrieval as _pools

    figures = {} if figures is None else figures
    dev, test, nomi = _pools.xlang("en", "dev"), _pools.xlang("en", "test"), _pools.nomiracl("en")
    if dev is None or test is None or nomi is None:
        print("skip: the cross-language curve needs jsquad_ja and nomiracl_ja_en in ../shared/eval")
        figures["skipped"] = "jsquad_ja or nomiracl_ja_en absent"
        return None
    emb = _embedder(embedder)
    scorer = default_scorer(emb)
    if scorer.bias_x is None:
        print("skip: the embedder has no cross-language coefficients (not multilingual)")
        figures["skipped"] = "embedder not multilingual"
        return None
    dev_q, test_q = dev.questions[: queries or None], test.questions[: queries or None]
    nomi_q = nomi.questions[: queries or None]
    docs = _small_pool(dev.docs, dev_q + test_q, pool)
    retr = InMemoryRetriever(docs, embeddings=emb, chunk=False, reranker=scorer)

    def best(questions: list[tuple[str, set[str]]]) -> tuple[np.ndarray, np.ndarray]:
        scores, found = [], []
        for q, gold in questions:
            hits = retr.retrieve(q, top_k)
            scores.append(max((h["relevance"] for h in hits), default=0.0))
            found.append(any(h["doc_id"] in gold for h in hits))
        return np.asarray(scores), np.asarray(found)

    dev_s, dev_f = best(dev_q)
    test_s, test_f = best(test_q)
    neg_s, _ = best([(q, set()) for q, _ in nomi_q])
    print(f"\ncross-language gate: best relevance in the top {top_k} over the JSQuAD pool "
          f"({len(docs)} Japanese passages); gold in the top {top_k}: dev "
          f"{dev_f.mean():.2f}, test {test_f.mean():.2f}")
    print("threshold | dev answer rate | test answer rate (gold found & passes) | "
          "NoMIRACL-en abstain rate")
    chosen = 0.0
    table = []
    for t in [0.0, 0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08,
              0.1, 0.12, 0.15, 0.2, 0.26]:
        dev_rate = float(np.mean(dev_s >= t))
        if dev_rate >= MIN_ANSWER_RATE:
            chosen = t
        print(f"  {t:.3f}   | {dev_rate:.2f} | {np.mean(test_s >= t):.2f} "
              f"({np.mean((test_s >= t) & test_f):.2f}) | {np.mean(neg_s < t):.2f}")
        table.append({"threshold": t, "dev_answers": round(dev_rate, 4),
                      "test_answers": round(float(np.mean(test_s >= t)), 4),
                      "test_answers_gold": round(float(np.mean((test_s >= t) & test_f)), 4),
                      "nomiracl_en_abstains": round(float(np.mean(neg_s < t)), 4)})
    auc = np.mean([(x > y) + 0.5 * (x == y) for x in np.r_[dev_s, test_s] for y in neg_s])
    print(f"answerable {len(dev_s) + len(test_s)} (dev + test), unanswerable {len(neg_s)}, "
          f"ROC AUC of best relevance {auc:.3f}")
    print(f"chosen cross-language threshold: {chosen:.3f} (highest keeping the dev answer rate "
          f">= {MIN_ANSWER_RATE:.0%}); at it: test answers {np.mean(test_s >= chosen):.2f}, "
          f"NoMIRACL-en abstains {np.mean(neg_s < chosen):.2f}")
    figures.update({"top_k": top_k, "passages": len(docs), "answerable": len(dev_s) + len(test_s),
                    "unanswerable": len(neg_s), "auc": float(auc), "rates": table,
                    "chosen": chosen})
    return chosen


def main(argv: list[str] | None = None) -> int:
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
    ap.add_argument("--pool", type=int, default=0, metavar="N",
                    help="fit and cross-language pools: the questions' gold passages and the "
                         "first N others (0: every passage)")
    ap.add_argument("--queries", type=int, default=0, metavar="N",
                    help="curves: the first N queries per language and class; cross-language "
                         "fit and gate: the first N questions per set (0: all)")
    add_result_args(ap)
    args = ap.parse_args(argv)
    fitting = (args.fit and not args.cross) or args.quick
    needed = []  # the evaluation files this run reads
    if fitting or args.cross:
        needed += [("jsquad_ja", "questions.dev.jsonl"), ("jsquad_ja", "passages.jsonl")]
    if fitting:
        needed += [("scifact", "claims.dev.jsonl"), ("scifact", "corpus.jsonl")]
    if args.cross or args.quick or not args.no_curve:
        needed += [("nomiracl_ja_en", "nomiracl.dev.jsonl")]
    missing = ["/".join(n) for n in needed if eval_path(*n) is None]
    if missing:
        write_result(args.json, NAME, {"skipped": missing}, quick=args.quick)
        return 0
    if args.quick:  # every step, at the smallest size (sizes given on the command line win)
        args.fit = True
        if args.fit_questions == ap.get_default("fit_questions"):
            args.fit_questions = QUICK["fit_questions"]
        args.pool = args.pool or QUICK["pool"]
        args.queries = args.queries or QUICK["queries"]
    from grounded_rag.context import Context

    figures: dict[str, Any] = {"embedder": args.embedder, "pool": args.pool,
                               "queries": args.queries}
    if args.cross or args.quick:
        figures["cross_gate"] = {}
        cross_curve(args.embedder, Context().top_k, queries=args.queries, pool=args.pool,
                    figures=figures["cross_gate"])
    if args.cross:
        write_result(args.json, NAME, figures, quick=args.quick)
        return 0
    scorer = None
    if args.fit:
        figures["fit"] = {"questions": args.fit_questions, "en_fit": args.en_fit}
        coef = fit(args.fit_questions, args.embedder, args.en_fit, pool=args.pool,
                   queries=args.queries, figures=figures["fit"])
        print("FEATURE_COEFFICIENTS =", json.dumps(coef))
        figures["coefficients"] = coef
        scorer = default_scorer(_embedder(args.embedder))
        for key, value in coef.items():  # coefficients not refitted keep their values
            setattr(scorer, key, value)
    if not args.no_curve:
        figures["curve"] = {}
        curve(scorer, args.embedder, queries=args.queries, figures=figures["curve"])
    write_result(args.json, NAME, figures, quick=args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
