"""One reader per third-party evaluation format: its rows as evaluation items (``_datasets``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from grounded_rag.evaluation._datasets import (
    ANSWER,
    VERIFY,
    Dataset,
    DatasetError,
    EvalItem,
    read_jsonl,
)
from grounded_rag.lang import split_sentences, strip_markers


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
