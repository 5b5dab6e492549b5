"""Readers for the third-party evaluation sets, auto-detected from each file's fields.

The data is never copied into the repository: it is read from ``../shared/eval`` next to
the repository (``GROUNDED_RAG_EVAL_DIR`` overrides), or from any path a caller gives.
"""

from __future__ import annotations

import json
import os
import random
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grounded_rag.lang import split_sentences, strip_markers

VERIFY = "verify"
ANSWER = "answer"


class DatasetError(ValueError):
    """A file that is missing, empty, or in no format the harness knows."""


def default_eval_dir() -> Path:
    """``$GROUNDED_RAG_EVAL_DIR``, else ``../shared/eval`` relative to the repository root."""
    env = os.environ.get("GROUNDED_RAG_EVAL_DIR")
    if env:
        return Path(env)
    # graph/evaluation/_datasets.py -> the repository root is two folders up.
    beside_repo = Path(__file__).resolve().parents[2].parent / "shared" / "eval"
    if beside_repo.exists():
        return beside_repo
    return Path.cwd().parent / "shared" / "eval"  # a non-editable install run from the repo


SHORT_NAMES: dict[str, str] = {
    "halueval_qa": "halueval_qa/pairs.dev.jsonl",
    "halueval_summarization": "halueval_summarization_sample/pairs.dev.jsonl",
    "jhars": "jhars_ja/responses_relaxed.dev.jsonl",
    "jnli": "jnli_ja/jnli.dev.jsonl",
    "janli": "janli_ja/janli.dev.jsonl",
    "jsick": "jsick_ja/jsick_test.dev.jsonl",
    "scifact": "scifact/claims.dev.jsonl",
    "expertqa": "expertqa_attribution/claims.dev.jsonl",
    "nomiracl": "nomiracl_ja_en/nomiracl.dev.jsonl",
    "jsquad": "jsquad_ja/questions.dev.jsonl",
    "jaquad": "jaquad_ja/questions.dev.jsonl",
}
"""Dataset names accepted instead of a path, resolved inside the eval directory."""


@dataclass
class EvalItem:
    """One unit of evaluation: a response to verify, or a question to answer."""

    id: str
    """Stable id within the dataset (the cache key)."""
    subset: str
    """Slice the metrics are also reported for (language, evidence present, ...)."""
    language: str
    """``ja`` or ``en``."""
    claims: list[str] = field(default_factory=list)
    """Verify task: the response split into claims (same language as the response)."""
    sources: list[dict[str, str]] = field(default_factory=list)
    """Verify task: evidence documents ``{id, title, text, url}``."""
    gold_hallucinated: bool | None = None
    """Verify task: the response (or claim) is not fully supported by the sources."""
    gold_label3: str | None = None
    """Verify task: supported / contradicted / neutral, where the set is three-way."""
    gold_claims: list[bool | None] | None = None
    """Verify task: per-claim hallucination labels (None = excluded, e.g. disputed)."""
    claim_question: str = ""
    """Verify task: the question the claims answer, when they are answers rather than
    self-contained statements (HaluEval-QA); judges read question and answer together."""
    question: str = ""
    """Answer task: the question asked."""
    answers: list[str] = field(default_factory=list)
    """Answer task: gold answer strings, when the set has them."""
    gold_doc_ids: list[str] = field(default_factory=list)
    """Answer task: documents that hold the answer (for source recall)."""
    answerable: bool | None = None
    """Answer task: False when the corpus holds no answer (the graph must abstain)."""
    corpus: list[dict[str, str]] | None = None
    """Answer task: a corpus of this item's own (NoMIRACL's 10 passages)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Anything else reports use (e.g. NoMIRACL's published baseline outputs)."""

    @property
    def stratum(self) -> tuple[str, str]:
        """What sampling keeps balanced: the subset and the gold class."""
        if self.gold_label3 is not None:
            return self.subset, self.gold_label3
        if self.gold_hallucinated is not None:
            return self.subset, str(self.gold_hallucinated)
        return self.subset, str(self.answerable)


@dataclass
class Dataset:
    """A loaded evaluation set."""

    name: str
    """Short name, e.g. ``jnli`` (used in report and cache file names)."""
    format: str
    """Detected format."""
    path: Path
    """The file read."""
    items: list[EvalItem]
    """All items, in file order."""
    tasks: tuple[str, ...]
    """Tasks this set supports; the first is the default."""
    corpus: list[dict[str, str]] | None = None
    """Answer task: the shared corpus (SQuAD-style passages, SciFact abstracts)."""
    notes: list[str] = field(default_factory=list)
    """What the reader did that a reader of the report should know."""

    @property
    def default_task(self) -> str:
        """The task run when none is given."""
        return self.tasks[0]


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Rows of a JSONL file, skipping blank lines."""
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def resolve_path(name_or_path: str | os.PathLike[str]) -> Path:
    """A dataset file from a path, a folder holding one, or a short name (``jnli``)."""
    raw = str(name_or_path)
    path = Path(raw).expanduser()
    if not path.exists() and raw in SHORT_NAMES:
        path = default_eval_dir() / SHORT_NAMES[raw]
    if path.is_dir():
        candidates = sorted(
            p for p in path.glob("*.jsonl")
            if p.name not in {"corpus.jsonl", "passages.jsonl"} and ".orig." not in p.name
        )
        if len(candidates) != 1:
            raise DatasetError(f"{path} holds {len(candidates)} candidate files; name one")
        path = candidates[0]
    if not path.exists():
        raise DatasetError(
            f"evaluation data not found: {path}. The dev sets live in ../shared/eval next to "
            "the repository; set GROUNDED_RAG_EVAL_DIR to their folder or pass a file path. "
            f"Short names: {', '.join(SHORT_NAMES)}."
        )
    return path


def detect_format(row: dict[str, Any]) -> str:
    """Name the format of a row from its fields."""
    keys = set(row)
    rules: list[tuple[str, set[str]]] = [
        ("halueval_qa", {"knowledge", "question", "answer", "label"}),
        ("halueval_summarization", {"document", "summary", "label"}),
        ("jhars", {"reference_text", "response", "sentences"}),
        ("nomiracl", {"question", "passages", "answerable"}),
        ("scifact", {"claim", "evidence", "cited_doc_ids"}),
        ("expertqa", {"claim", "evidence", "support"}),
        ("janli", {"sentence_A_Ja", "sentence_B_Ja", "entailment_label_Ja"}),
        ("jsick", {"premise", "hypothesis", "label"}),
        ("jnli", {"sentence1", "sentence2", "label"}),
        ("squad_ja", {"question", "answers", "gold_pid"}),
    ]
    for name, needed in rules:
        if needed <= keys:
            return name
    if {"pid", "text"} <= keys or {"doc_id", "abstract"} <= keys:
        raise DatasetError(
            "this is a corpus file; pass the questions/claims file next to it instead"
        )
    raise DatasetError(f"unknown evaluation format (fields: {', '.join(sorted(keys))})")


def load_dataset(name_or_path: str | os.PathLike[str]) -> Dataset:
    """Read a dataset file (format auto-detected) into evaluation items."""
    path = resolve_path(name_or_path)
    rows = list(read_jsonl(path))
    if not rows:
        raise DatasetError(f"{path} is empty")
    fmt = detect_format(rows[0])
    dataset = _READERS[fmt](path, rows)
    _dedupe_ids(dataset.items)
    return dataset


def sample_items(
    items: list[EvalItem], limit: int | None, *, strategy: str = "stratified", seed: int = 0
) -> list[EvalItem]:
    """A deterministic subset of ``limit`` items.

    ``head``: the first ``limit``. ``stratified``: keeps each (subset, gold class) share, at
    least one item per stratum. ``balanced``: the same number per stratum. Sampling within a
    stratum is a seeded shuffle, so reruns with the same limit pick the same items (and the
    cache reuses them).
    """
    if limit is None or limit >= len(items):
        return list(items)
    if limit <= 0:
        return []
    if strategy == "head":
        return items[:limit]
    if strategy not in {"stratified", "balanced"}:
        raise ValueError(f"unknown sampling strategy {strategy!r}")
    groups: dict[tuple[str, str], list[EvalItem]] = defaultdict(list)
    for item in items:
        groups[item.stratum].append(item)
    rng = random.Random(seed)
    for key in sorted(groups):
        rng.shuffle(groups[key])
    keys = sorted(groups)
    if strategy == "balanced":
        quota = dict.fromkeys(keys, 0)
        remaining = limit
        while remaining:
            progressed = False
            for key in keys:
                if remaining and quota[key] < len(groups[key]):
                    quota[key] += 1
                    remaining -= 1
                    progressed = True
            if not progressed:
                break
    else:
        total = len(items)
        quota = {k: max(1, round(limit * len(groups[k]) / total)) for k in keys}
        # Trim or pad the largest strata so the quotas add up to the limit exactly.
        while sum(quota.values()) > limit:
            shrink = max((k for k in keys if quota[k] > 1), key=lambda k: quota[k], default=None)
            if shrink is None:
                break
            quota[shrink] -= 1
        while sum(quota.values()) < limit:
            grow = max((k for k in keys if quota[k] < len(groups[k])),
                       key=lambda k: len(groups[k]) - quota[k], default=None)
            if grow is None:
                break
            quota[grow] += 1
    chosen = {id(item) for key in keys for item in groups[key][: quota[key]]}
    return [item for item in items if id(item) in chosen][:limit]


def _dedupe_ids(items: list[EvalItem]) -> None:
    seen: dict[str, int] = {}
    for item in items:
        count = seen.get(item.id, 0)
        seen[item.id] = count + 1
        if count:
            item.id = f"{item.id}#{count}"


def _folder_name(path: Path, fallback: str) -> str:
    parent = path.parent.name
    for suffix in ("_ja_en", "_ja", "_sample", "_attribution"):
        parent = parent.removesuffix(suffix)
    return parent or fallback


def _source(doc_id: str, text: str, title: str = "", url: str = "") -> dict[str, str]:
    return {"id": doc_id, "title": title or doc_id, "text": text, "url": url}


def _read_halueval_qa(path: Path, rows: list[dict[str, Any]]) -> Dataset:
    items = [
        EvalItem(
            id=str(r.get("id", i)), subset="en", language="en",
            claims=[str(r["answer"]).strip()], claim_question=r["question"].strip(),
            sources=[_source("knowledge", r["knowledge"].strip())],
            gold_hallucinated=bool(int(r["label"])),
        )
        for i, r in enumerate(rows)
    ]
    return Dataset("halueval_qa", "halueval_qa", path, items, (VERIFY,), notes=[
        "Each answer is checked as the answer to its question (the model reads 'The answer "
        "to the question ... is: ...'; cues ignore what the question already says), "
        "judged against the given knowledge."])


def _read_halueval_summarization(path: Path, rows: list[dict[str, Any]]) -> Dataset:
    items = []
    for i, r in enumerate(rows):
        summary = r["summary"].strip()
        items.append(EvalItem(
            id=str(r.get("id", i)), subset="en", language="en",
            claims=split_sentences(summary, "en") or [summary],
            sources=[_source("document", r["document"].strip())],
            gold_hallucinated=bool(int(r["label"])),
        ))
    return Dataset("halueval_summarization", "halueval_summarization", path, items, (VERIFY,),
                   notes=["The summary is split into sentences; it counts as hallucinated when "
                          "any sentence is not supported by the document."])


_JHARS_BAD = {"Unverifiable", "Contradictory"}


def _read_jhars(path: Path, rows: list[dict[str, Any]]) -> Dataset:
    items = []
    for i, r in enumerate(rows):
        claims: list[str] = []
        gold: list[bool | None] = []
        for s in r.get("sentences") or []:
            text = (s.get("sentence") or "").strip()
            if not text:
                continue
            kind = s.get("hallucination_type")
            claims.append(text)
            gold.append(None if kind not in _JHARS_BAD and kind != "No_hallucination"
                        else kind in _JHARS_BAD)
        if not claims:
            claims = split_sentences(r["response"], "ja")
            gold = [None] * len(claims)
        items.append(EvalItem(
            id=str(r.get("id", i)), subset="ja", language="ja", claims=claims,
            sources=[_source("reference", r["reference_text"].strip())],
            gold_hallucinated=bool(int(r.get("response_label", 0))), gold_claims=gold,
            question=r.get("question", ""), extra={"model": r.get("model", "")},
        ))
    return Dataset("jhars", "jhars", path, items, (VERIFY,), notes=[
        "Claims are the annotated sentences (kept in Japanese) so sentence-level labels align; "
        "Unverifiable/Contradictory = hallucinated, DISPUTED sentences are left out of the "
        "sentence-level metrics. Response-level gold is the file's response_label."])


_NLI_TO_VERDICT = {"entailment": "supported", "contradiction": "contradicted",
                   "neutral": "neutral"}


def _nli_item(item_id: str, subset: str, language: str, premise: str, hypothesis: str,
              label: str) -> EvalItem:
    label3 = _NLI_TO_VERDICT[label.strip().lower()]
    return EvalItem(
        id=item_id, subset=subset, language=language, claims=[hypothesis.strip()],
        sources=[_source("premise", premise.strip())],
        gold_hallucinated=label3 != "supported", gold_label3=label3,
    )


def _read_jnli(path: Path, rows: list[dict[str, Any]]) -> Dataset:
    items = [
        _nli_item(str(r.get("sentence_pair_id", i)), "ja", "ja", r["sentence1"], r["sentence2"],
                  r["label"])
        for i, r in enumerate(rows)
    ]
    return Dataset("jnli", "jnli", path, items, (VERIFY,), notes=[
        "sentence1 is the evidence, sentence2 the claim; entailment = supported, "
        "contradiction = contradicted, neutral = neutral; hallucinated = not entailment."])


def _read_jsick(path: Path, rows: list[dict[str, Any]]) -> Dataset:
    items = []
    for i, r in enumerate(rows):
        rid = str(r.get("id", i))
        items.append(_nli_item(f"ja:{rid}", "ja", "ja", r["premise"], r["hypothesis"],
                               r["label"]))
        if r.get("premise_en") and r.get("hypothesis_en") and r.get("label_en"):
            items.append(_nli_item(f"en:{rid}", "en", "en", r["premise_en"],
                                   r["hypothesis_en"], r["label_en"]))
    return Dataset("jsick", "jsick", path, items, (VERIFY,), notes=[
        "Japanese pairs and their English versions are separate items (subsets ja / en)."])


def _read_janli(path: Path, rows: list[dict[str, Any]]) -> Dataset:
    items = []
    for i, r in enumerate(rows):
        entails = r["entailment_label_Ja"].strip() == "entailment"
        items.append(EvalItem(
            id=str(r.get("id", i)), subset="ja", language="ja",
            claims=[r["sentence_B_Ja"].strip()],
            sources=[_source("premise", r["sentence_A_Ja"].strip())],
            gold_hallucinated=not entails, extra={"heuristics": r.get("heuristics", "")},
        ))
    return Dataset("janli", "janli", path, items, (VERIFY,), notes=[
        "Two-way: non-entailment counts as hallucinated."])


def _load_scifact_corpus(path: Path) -> dict[str, dict[str, Any]]:
    corpus_path = path.parent / "corpus.jsonl"
    if not corpus_path.exists():
        raise DatasetError(f"SciFact needs corpus.jsonl next to {path.name} ({corpus_path})")
    return {str(r["doc_id"]): r for r in read_jsonl(corpus_path)}


def _read_scifact(path: Path, rows: list[dict[str, Any]]) -> Dataset:
    corpus = _load_scifact_corpus(path)

    def doc_source(doc_id: str) -> dict[str, str] | None:
        doc = corpus.get(str(doc_id))
        if doc is None:
            return None
        return _source(str(doc_id), " ".join(doc["abstract"]), title=doc.get("title", ""))

    items = []
    missing = 0
    for i, r in enumerate(rows):
        evidence = r.get("evidence") or {}
        labels = {e["label"] for sets in evidence.values() for e in sets}
        if "CONTRADICT" in labels:
            label3 = "contradicted"
        elif "SUPPORT" in labels:
            label3 = "supported"
        else:
            label3 = "neutral"
        doc_ids = list(evidence) or [str(d) for d in r.get("cited_doc_ids") or []]
        sources = [s for s in (doc_source(d) for d in doc_ids) if s is not None]
        if not sources:
            missing += 1
            continue
        rationale = {
            str(d): sorted({n for e in sets for n in e.get("sentences", [])})
            for d, sets in evidence.items()
        }
        items.append(EvalItem(
            id=str(r.get("id", i)), subset="en", language="en", claims=[r["claim"].strip()],
            sources=sources, gold_hallucinated=label3 != "supported", gold_label3=label3,
            question=r["claim"].strip(),
            gold_doc_ids=[str(d) for d in (r.get("cited_doc_ids") or doc_ids)],
            answerable=bool(evidence), extra={"rationale_sentences": rationale},
        ))
    corpus_docs = [
        _source(doc_id, " ".join(doc["abstract"]), title=doc.get("title", ""))
        for doc_id, doc in corpus.items()
    ]
    notes = [
        "Verify: the claim against the full abstracts of its evidence documents (cited "
        "documents for NEI claims); SUPPORT = supported, CONTRADICT = contradicted, "
        "NEI = neutral. Answer: the claim is the query over all abstracts; claims with "
        "evidence count as answerable, NEI claims as unanswerable."]
    if missing:
        notes.append(f"{missing} claims skipped: their documents are not in corpus.jsonl.")
    return Dataset("scifact", "scifact", path, items, (VERIFY, ANSWER), corpus=corpus_docs,
                   notes=notes)


_EXPERTQA_GOOD = {"Complete"}
_EXPERTQA_BAD = {"Partial", "Incomplete", "Missing"}


def _parse_expertqa_evidence(index: int, raw: str) -> dict[str, str]:
    head, _, body = raw.partition("\n\n")
    marker, _, url = head.strip().partition(" ")
    if body and marker.startswith("[") and marker.endswith("]"):
        return _source(marker, body.strip(), url=url.strip())
    return _source(f"[{index + 1}]", raw.strip())


def _read_expertqa(path: Path, rows: list[dict[str, Any]]) -> Dataset:
    items = []
    skipped = 0
    for i, r in enumerate(rows):
        support = r.get("support")
        if support not in _EXPERTQA_GOOD | _EXPERTQA_BAD:
            skipped += 1
            continue
        evidence = [_parse_expertqa_evidence(k, e) for k, e in enumerate(r.get("evidence") or [])]
        items.append(EvalItem(
            id=str(r.get("id", i)), subset="with_evidence" if evidence else "no_evidence",
            language="en", claims=[strip_markers(r["claim"])], sources=evidence,
            gold_hallucinated=support not in _EXPERTQA_GOOD, question=r.get("question", ""),
            extra={"support": support},
        ))
    return Dataset("expertqa", "expertqa", path, items, (VERIFY,), notes=[
        "support Complete = supported; Partial / Incomplete / Missing = hallucinated (not fully "
        f"supported); {skipped} rows with N/A or no judgement left out. Claims with no cited "
        "evidence form the no_evidence subset (always 'Missing')."])


_NOMIRACL_IDK = ("i don't know", "i do not know", "i dont know")
_NOMIRACL_YES = "answer is present"


def classify_baseline(text: str) -> str:
    """NoMIRACL's reading of a published output: ``abstain``, ``answer`` or ``invalid``."""
    lowered = text.strip().lower().replace("\u2019", "'")
    if any(p in lowered for p in _NOMIRACL_IDK):
        return "abstain"
    if _NOMIRACL_YES in lowered:
        return "answer"
    return "invalid"


def _read_nomiracl(path: Path, rows: list[dict[str, Any]]) -> Dataset:
    items = []
    for i, r in enumerate(rows):
        lang = r.get("lang") or "en"
        corpus = [
            _source(str(p.get("docid", k)), p.get("text", ""), title=p.get("title", ""))
            for k, p in enumerate(r.get("passages") or [])
        ]
        items.append(EvalItem(
            id=str(r.get("id", i)), subset=lang, language=lang, question=r["question"],
            answerable=bool(r["answerable"]), corpus=corpus,
            extra={"baseline_outputs": r.get("baseline_outputs") or {}},
        ))
    return Dataset("nomiracl", "nomiracl", path, items, (ANSWER,), notes=[
        "Each query's own 10 passages form its corpus; queries whose passages are all "
        "non-relevant must abstain. Baselines: 'I don't know' = abstain, 'answer is "
        "present' = answer, anything else = invalid (NoMIRACL's reading)."])


def _read_squad_ja(path: Path, rows: list[dict[str, Any]]) -> Dataset:
    passages_path = path.parent / "passages.jsonl"
    if not passages_path.exists():
        raise DatasetError(f"needs passages.jsonl next to {path.name} ({passages_path})")
    corpus = [
        _source(str(p["pid"]), str(p["text"]), title=p.get("title", ""))
        for p in read_jsonl(passages_path)
    ]
    items = [
        EvalItem(
            id=str(r.get("id", i)), subset="ja", language="ja", question=r["question"],
            answers=[str(a) for a in r.get("answers") or []],
            gold_doc_ids=[str(r["gold_pid"])], answerable=not r.get("is_impossible", False),
        )
        for i, r in enumerate(rows)
    ]
    name = _folder_name(path, "squad_ja")
    return Dataset(name, "squad_ja", path, items, (ANSWER,), corpus=corpus, notes=[
        f"Corpus: all {len(corpus)} passages of passages.jsonl; every question is answerable."])


_READERS: dict[str, Callable[[Path, list[dict[str, Any]]], Dataset]] = {
    "halueval_qa": _read_halueval_qa,
    "halueval_summarization": _read_halueval_summarization,
    "jhars": _read_jhars,
    "jnli": _read_jnli,
    "jsick": _read_jsick,
    "janli": _read_janli,
    "scifact": _read_scifact,
    "expertqa": _read_expertqa,
    "nomiracl": _read_nomiracl,
    "squad_ja": _read_squad_ja,
}
