"""Evaluation pools for the retrieval benchmarks: passages and questions per dataset."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from _common import eval_path, read_jsonl

XLANG_FILE = Path(__file__).resolve().parent / "xlang_en_ja.jsonl"
"""50 English translations of JSQuAD dev questions with their gold passage ids (reported)."""
XLANG_DEV_FILE = Path(__file__).resolve().parent / "xlang_en_ja.dev.jsonl"
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
