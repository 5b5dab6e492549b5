"""Training and evaluation examples for the judge heads, built from the dev sets.

Two tasks:

- ``claim``: a claim with its evidence, labelled supported / contradicted / neutral where
  the set is three-way, else supported or not. Sets whose label belongs to a whole response
  (a summary, a Japanese RAG answer) also keep their bag (the response) and its label.
- ``answerable``: a question with one passage, labelled whether the passage holds the
  answer (SQuAD-style sets and HaluEval-QA knowledge, with hard negatives from the same
  article or the closest other passage), or only per query (NoMIRACL: the passages our own
  retriever ranks first for a query whose 10 passages do, or do not, hold the answer).

Every example carries grouping keys: examples that share a source text (or a question)
must land in the same cross-validation fold.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from grounded_rag.evaluation._answer import contains_answer
from grounded_rag.evaluation._datasets import EvalItem, load_dataset, sample_items
from grounded_rag.types import Evidence
from grounded_rag.verification.base import ClaimToCheck
from grounded_rag.verification.evidence import content_tokens

CLAIM = "claim"
ANSWERABLE = "answerable"

EVAL_RESERVE = 200
"""Questions of the SQuAD-style sets kept out of training (see ``_squad_answerable``)."""


@dataclass
class JudgeExample:
    """One unit the head is trained or measured on."""

    id: str
    """Unique id: ``<set>:<item id>[:<index>]``."""
    set: str
    """Source set name (``jnli``, ``nomiracl``, ...)."""
    task: str
    """``claim`` or ``answerable``."""
    language: str
    """``ja`` or ``en``."""
    claim: ClaimToCheck | None = None
    """Claim task: the claim with its evidence (and question, for bare answers)."""
    question: str = ""
    """Answerable task: the question."""
    passage: Evidence | None = None
    """Answerable task: the passage."""
    label3: str | None = None
    """Claim task: supported / contradicted / neutral where the set is three-way."""
    positive: bool | None = None
    """Supported (claim) or holds the answer (passage); None when only the bag is labelled."""
    bag: str = ""
    """The response or query the example belongs to."""
    bag_positive: bool | None = None
    """The bag's label: response faithful / query answerable."""
    keys: list[str] = field(default_factory=list)
    """Grouping keys (source text hashes, question ids): shared key = same fold."""
    held_out: bool = False
    """Never used for fitting; measured separately."""


def _h(text: str) -> str:
    return hashlib.sha1(text.strip().encode("utf-8")).hexdigest()[:16]


def _evidence(source: dict[str, str]) -> Evidence:
    return Evidence(source_id=source["id"], doc_id=source["id"], title=source.get("title", ""),
                    url=source.get("url", ""), text=source["text"], score=1.0, relevance=1.0)


def _claim_examples(name: str, items: Iterable[EvalItem], *, held_out: bool = False,
                    extra_keys: Callable[[EvalItem], list[str]] | None = None,
                    ) -> list[JudgeExample]:
    out = []
    for item in items:
        evidence = [_evidence(s) for s in item.sources]
        if not evidence or not item.claims:
            continue
        keys = [f"src:{_h(e['text'])}" for e in evidence] + (extra_keys(item) if extra_keys
                                                            else [])
        bag_positive = None if item.gold_hallucinated is None else not item.gold_hallucinated
        for k, text in enumerate(item.claims):
            claim = ClaimToCheck(text=text, evidence=evidence)
            if item.claim_question:
                claim["question"] = item.claim_question
            if item.gold_claims is not None:
                gold = item.gold_claims[k]
                positive = None if gold is None else not gold
            elif len(item.claims) == 1:
                positive = bag_positive
            else:  # a response labelled as a whole: a faithful one is faithful throughout
                positive = True if bag_positive else None
            label3 = item.gold_label3 if len(item.claims) == 1 else None
            out.append(JudgeExample(
                id=f"{name}:{item.id}:{k}", set=name, task=CLAIM, language=item.language,
                claim=claim, label3=label3, positive=positive, bag=f"{name}:{item.id}",
                bag_positive=bag_positive, keys=keys, held_out=held_out,
            ))
    return out


@dataclass(frozen=True)
class SetPlan:
    """How many examples a set contributes and how they are drawn."""

    name: str
    """Dataset short name (``grounded-rag eval`` names)."""
    task: str
    """``claim`` or ``answerable``."""
    limit: int | None
    """Items drawn (None: all)."""
    held_out: bool = False
    """Measured, never fitted on."""
    strategy: str = "balanced"
    """Sampling strategy (see ``sample_items``)."""


DEFAULT_PLAN: tuple[SetPlan, ...] = (
    SetPlan("jnli", CLAIM, None),
    SetPlan("halueval_qa", CLAIM, None, strategy="length_matched"),
    SetPlan("jsick", CLAIM, None),
    SetPlan("janli", CLAIM, 1600),
    SetPlan("nomiracl", ANSWERABLE, None),
    SetPlan("jsquad", ANSWERABLE, 250),
    SetPlan("halueval_qa_answerable", ANSWERABLE, 200),
    SetPlan("jsick_train", CLAIM, 1500),
    SetPlan("scifact", CLAIM, 450),
    SetPlan("expertqa", CLAIM, 500),
    SetPlan("jaquad", ANSWERABLE, 150),
    SetPlan("ja_constructed", CLAIM, 400),
    SetPlan("jhars", CLAIM, None, held_out=True),
    SetPlan("halueval_summarization", CLAIM, 100, held_out=True),
)
"""The training plan, in extraction order (cheap and most useful sets first). Held out:
JHARS (Japanese RAG answers) and HaluEval summaries, never fitted on."""


def build_examples(plan: SetPlan, *, seed: int = 0) -> list[JudgeExample]:
    """The examples of one planned set (deterministic for a seed)."""
    if plan.name == "jsick_train":
        return _jsick_train(plan, seed)
    if plan.name == "ja_constructed":
        from grounded_rag.training._constructed import constructed_claims

        return constructed_claims(plan, seed)
    if plan.name == "halueval_qa_answerable":
        return _halueval_answerable(plan, seed)
    if plan.task == ANSWERABLE and plan.name in {"jsquad", "jaquad"}:
        return _squad_answerable(plan, seed)
    if plan.name == "nomiracl":
        return _nomiracl(plan, seed)
    dataset = load_dataset(plan.name)
    items = dataset.items
    if plan.name == "expertqa":
        items = [i for i in items if i.sources]
    if plan.strategy == "length_matched":
        items = length_matched(items, plan.limit, seed=seed)
    else:
        items = sample_items(items, plan.limit, strategy=plan.strategy, seed=seed)
    extra: Callable[[EvalItem], list[str]] | None = None
    if plan.name == "jsick":  # the Japanese pair and its English original share a fold
        def extra(item: EvalItem) -> list[str]:
            return [f"jsick:{item.id.split(':', 1)[-1]}"]
    return _claim_examples(plan.name, items, held_out=plan.held_out, extra_keys=extra)


def length_matched(items: list[EvalItem], limit: int | None, *, seed: int = 0,
                   ) -> list[EvalItem]:
    """As many faithful as hallucinated items in every half-octave bin of answer length.

    HaluEval-QA's hallucinated answers are several times longer than its right ones (answer
    length alone separates them at AUROC 0.98), so a judge trained on a plain sample learns
    length. Within a bin the classes have the same lengths.
    """
    import math

    cells: dict[tuple[float, bool], list[EvalItem]] = defaultdict(list)
    for item in items:
        chars = max(1, len(item.claims[0]) if item.claims else 1)
        cells[(math.floor(math.log2(chars) * 2) / 2, bool(item.gold_hallucinated))].append(item)
    rng = random.Random(seed)
    chosen: list[EvalItem] = []
    for b in sorted({b for b, _ in cells}):
        good, bad = cells.get((b, False), []), cells.get((b, True), [])
        k = min(len(good), len(bad))
        for group in (good, bad):
            group = sorted(group, key=lambda i: i.id)
            rng.shuffle(group)
            chosen += group[:k]
    keep = {id(i) for i in chosen[: limit or len(chosen)]}
    return [i for i in items if id(i) in keep]


def _jsick_train(plan: SetPlan, seed: int) -> list[JudgeExample]:
    from grounded_rag.evaluation._datasets import default_eval_dir, read_jsonl

    path = default_eval_dir().parent / "train" / "jsick_ja" / "jsick_train.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"JSICK train split not found at {path}")
    labels = {"entailment": "supported", "contradiction": "contradicted", "neutral": "neutral"}
    rows = [r for r in read_jsonl(path) if r.get("label") in labels]
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_label[r["label"]].append(r)
    rng = random.Random(seed)
    per = (plan.limit or len(rows)) // len(by_label)
    chosen = []
    for label in sorted(by_label):
        group = by_label[label]
        rng.shuffle(group)
        chosen += group[:per]
    items = [
        EvalItem(id=str(r["id"]), subset="ja", language="ja", claims=[r["hypothesis"].strip()],
                 sources=[{"id": "premise", "title": "", "url": "",
                           "text": r["premise"].strip()}],
                 gold_hallucinated=labels[r["label"]] != "supported",
                 gold_label3=labels[r["label"]])
        for r in chosen
    ]
    return _claim_examples("jsick_train", items)


def _nearest(question: str, candidates: list[tuple[str, str]], exclude: Callable[[str], bool],
             ) -> tuple[str, str] | None:
    """The candidate (id, text) sharing most content words with the question, not excluded."""
    q = content_tokens(question)
    best: tuple[float, str, str] | None = None
    for cid, text in candidates:
        if exclude(text):
            continue
        score = len(q & content_tokens(text)) / (1 + len(q))
        if best is None or score > best[0]:
            best = (score, cid, text)
    return None if best is None else (best[1], best[2])


def _passage_example(name: str, qid: str, question: str, language: str, pid: str, title: str,
                     text: str, positive: bool, keys: list[str]) -> JudgeExample:
    passage = Evidence(source_id=f"{pid}#sec0", doc_id=pid, title=title, url="", text=text,
                       score=1.0, relevance=1.0)
    return JudgeExample(
        id=f"{name}:{qid}:{'pos' if positive else 'neg'}", set=name, task=ANSWERABLE,
        language=language, question=question, passage=passage, positive=positive,
        bag=f"{name}:{qid}", bag_positive=positive, keys=keys,
    )


def _squad_answerable(plan: SetPlan, seed: int) -> list[JudgeExample]:
    dataset = load_dataset(plan.name)
    corpus = {d["id"]: d for d in dataset.corpus or []}
    by_title: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for d in corpus.values():
        by_title[d.get("title", "")].append((d["id"], d["text"]))
    # The answer-task evaluation samples its items with the default seed; leaving its first
    # EVAL_RESERVE items out keeps `grounded-rag eval jsquad --task answer --limit N` (N up
    # to that) free of questions the answerability head was fitted on.
    reserved = {i.id for i in sample_items(dataset.items, EVAL_RESERVE, seed=0)}
    pool = [i for i in dataset.items if i.id not in reserved]
    items = sample_items(pool, plan.limit, strategy="stratified", seed=seed)
    out: list[JudgeExample] = []
    for item in items:
        gold = corpus.get(item.gold_doc_ids[0]) if item.gold_doc_ids else None
        if gold is None or not item.answers:
            continue
        title = gold.get("title", "")

        def holds(text: str, answers: list[str] = item.answers) -> bool:
            return contains_answer(text, answers)

        same = [c for c in by_title[title] if c[0] != gold["id"]]
        negative = _nearest(item.question, same, holds)
        if negative is None:  # a one-passage article: the closest passage elsewhere
            elsewhere = [(d["id"], d["text"]) for d in corpus.values() if d["id"] != gold["id"]]
            negative = _nearest(item.question, elsewhere, holds)
        if negative is None:
            continue
        keys = [f"title:{title}", f"src:{_h(gold['text'])}", f"src:{_h(negative[1])}"]
        out.append(_passage_example(plan.name, item.id, item.question, "ja", gold["id"], title,
                                    gold["text"], True, keys))
        neg_title = corpus[negative[0]].get("title", "")
        out.append(_passage_example(plan.name, item.id, item.question, "ja", negative[0],
                                    neg_title, negative[1], False,
                                    keys + [f"title:{neg_title}"]))
    return out


def _halueval_answerable(plan: SetPlan, seed: int) -> list[JudgeExample]:
    dataset = load_dataset("halueval_qa")
    right = [i for i in dataset.items if i.gold_hallucinated is False]
    rng = random.Random(seed)
    rng.shuffle(right)
    pool = [(i.id, i.sources[0]["text"]) for i in right]
    out: list[JudgeExample] = []
    for item in right[: plan.limit or len(right)]:
        answer = item.claims[0]
        knowledge = item.sources[0]["text"]
        if not contains_answer(knowledge, [answer]):
            continue  # the positive must visibly hold the answer

        def holds(text: str, answers: list[str] = [answer]) -> bool:  # noqa: B006
            return contains_answer(text, answers)

        others = [p for p in pool if p[0] != item.id]
        negative = _nearest(item.claim_question, others[:2000], holds)
        if negative is None:
            continue
        keys = [f"src:{_h(knowledge)}", f"src:{_h(negative[1])}"]
        name = "halueval_qa_answerable"
        out.append(_passage_example(name, item.id, item.claim_question, "en", item.id, "",
                                    knowledge, True, keys))
        out.append(_passage_example(name, item.id, item.claim_question, "en", negative[0], "",
                                    negative[1], False, keys))
    return out


def _nomiracl(plan: SetPlan, seed: int, passages: int = 3, top_k: int = 6,
              ) -> list[JudgeExample]:
    from grounded_rag.evaluation._answer import memory_retriever_factory

    dataset = load_dataset("nomiracl")
    items = sample_items(dataset.items, plan.limit, strategy="balanced", seed=seed)
    factory = memory_retriever_factory("hybrid")
    out: list[JudgeExample] = []
    for item in items:
        retriever = factory(item.corpus or [])
        top = list(retriever.retrieve(item.question, top_k))[:passages]
        for rank, evidence in enumerate(top):
            out.append(JudgeExample(
                id=f"nomiracl:{item.id}:{rank}", set="nomiracl", task=ANSWERABLE,
                language=item.language, question=item.question, passage=evidence,
                positive=None if item.answerable else False, bag=f"nomiracl:{item.id}",
                bag_positive=bool(item.answerable), keys=[f"query:{item.id}"],
            ))
    return out
