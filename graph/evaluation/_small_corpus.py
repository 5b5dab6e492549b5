"""Small-corpus evaluation set: many collections of a few sections each, built from dev data.

Users first try the product on a handful of their own documents, where relevance behaves
otherwise than in the large pools the gates were fitted on (BM25 statistics come from a
few sections, and most questions have nothing close in the store). This module builds such
collections deterministically from the third-party dev sets:

- Japanese: JSQuAD and JaQuAD grouped by article title. A title's questions are answerable
  on its collection; questions about other titles and NoMIRACL no-answer queries are not.
- English: HaluEval-QA knowledge paragraphs grouped into collections of ten; questions
  starting with an auxiliary verb are yes/no questions (HotpotQA comparisons).
- Cross-language: English questions over Japanese passages (``benchmarks/xlang_en_ja*``),
  asked of the title's passages plus a few English paragraphs, so an unrelated section in
  the question's own language competes with the answering one. The expected fact is the
  gold answer's English renderings (``answers_en``, written by hand for these files) or the
  Japanese gold string itself.

Collections go to the ``dev`` or the ``heldout`` part by a hash of their id; questions
borrowed from other collections and NoMIRACL queries come from the same part only.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

DEV = "dev"
HELDOUT = "heldout"
HELDOUT_EVERY = 3
"""One collection in three (by id hash) is held out."""

FACTOID, YES_NO = "factoid", "yes-no"
CROSS, OFF_TOPIC, CROSS_OFF_TOPIC, OTHER_TITLE = (
    "cross-language", "off-topic", "cross-off-topic", "other-title")
QUESTION_TYPES = (FACTOID, YES_NO, CROSS, OTHER_TITLE, OFF_TOPIC, CROSS_OFF_TOPIC)

_YES_NO_EN = re.compile(
    r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.I)
_SEP = " [SEP] "


@dataclass
class Collection:
    """One small corpus: the documents a user would have put in the store."""

    id: str
    source: str
    """``jsquad`` / ``jaquad`` / ``halueval`` / ``xlang`` (Japanese + a few English)."""
    language: str
    """``ja``, ``en`` or ``mixed``."""
    split: str
    documents: list[dict[str, str]]
    """``{id, title, text, url}``, chunked into sections like an ingested file."""


@dataclass
class SmallCorpusItem:
    """One question asked of one collection."""

    id: str
    collection: str
    question: str
    language: str
    qtype: str
    """factoid / yes-no / cross-language (answerable); other-title / off-topic /
    cross-off-topic (unanswerable on this collection)."""
    answerable: bool
    split: str
    form: str = FACTOID
    """factoid or yes-no: the question's shape, also for unanswerable ones."""
    answers: list[str] = field(default_factory=list)
    """Expected fact(s): gold answer strings."""
    gold_doc_ids: list[str] = field(default_factory=list)
    origin: str = ""
    """Where the question comes from (``jsquad``, ``nomiracl``, ``xlang_en_ja.dev`` ...)."""

    @property
    def group(self) -> str:
        """The report row: the type, with the yes/no shape split out of borrowed questions."""
        if self.form == YES_NO and self.qtype not in (YES_NO, FACTOID):
            return f"{self.qtype}/{YES_NO}"
        return self.qtype


@dataclass
class Sources:
    """Raw rows the collections are built from (any may be empty)."""

    ja_sets: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = field(
        default_factory=dict)
    """name -> (passages ``{pid, title, text}``,
    questions ``{id, question, answers, gold_pid}``)."""
    en_pairs: list[dict[str, Any]] = field(default_factory=list)
    """HaluEval-QA rows ``{id, knowledge, question, answer, label}`` (label 0 used)."""
    no_answer: list[dict[str, Any]] = field(default_factory=list)
    """NoMIRACL rows ``{id, lang, question, answerable}`` (unanswerable ones used)."""
    xlang: list[dict[str, Any]] = field(default_factory=list)
    """``{id, question_en, gold_pid, file}`` English questions on JSQuAD passages."""
    notes: list[str] = field(default_factory=list)


@dataclass
class SmallCorpusSet:
    """The built collections and questions."""

    collections: dict[str, Collection]
    items: list[SmallCorpusItem]
    notes: list[str] = field(default_factory=list)

    def part(self, split: str) -> list[SmallCorpusItem]:
        """The questions of one part (``dev`` or ``heldout``)."""
        return [i for i in self.items if i.split == split]


@dataclass
class Sizes:
    """How big the collections are and how many questions each gets."""

    max_sections: int = 20
    min_sections: int = 3
    answerable: int = 8
    other_title: int = 4
    off_topic: int = 2
    cross_off_topic: int = 1
    en_group: int = 10
    en_collections: int = 40
    mixed_en_docs: int = 8


def split_of(key: str) -> str:
    """``heldout`` for one key in ``HELDOUT_EVERY`` (stable hash), else ``dev``."""
    digest = int(hashlib.sha1(key.encode("utf-8")).hexdigest(), 16)
    return HELDOUT if digest % HELDOUT_EVERY == 0 else DEV


def question_form(question: str, language: str) -> str:
    """``yes-no`` for an English question opening with an auxiliary verb, else ``factoid``."""
    return YES_NO if language == "en" and _YES_NO_EN.match(question.strip()) else FACTOID


def _strip_title(text: str) -> str:
    # JSQuAD passages open with "title [SEP] "; a user's section has no such marker.
    return text.split(_SEP, 1)[1] if _SEP in text else text


def _doc(pid: str, title: str, text: str) -> dict[str, str]:
    return {"id": pid, "title": title or pid, "text": text, "url": ""}


def _pick(rng: random.Random, pool: list[Any], n: int) -> list[Any]:
    return rng.sample(pool, min(n, len(pool)))


def _sections(passages: list[dict[str, Any]], needed: set[str], cap: int) -> list[dict[str, Any]]:
    """The needed passages, then the title's others in order, up to ``cap``, in file order."""
    keep = {p["pid"] for p in passages if p["pid"] in needed}
    for p in passages:
        if len(keep) >= cap:
            break
        keep.add(p["pid"])
    return [p for p in passages if p["pid"] in keep]


def build_small_corpus(sources: Sources, *, seed: int = 0, sizes: Sizes | None = None
                       ) -> SmallCorpusSet:
    """Build every collection and its questions from ``sources`` (deterministic in ``seed``)."""
    sizes = sizes or Sizes()
    collections: dict[str, Collection] = {}
    answerable: dict[str, list[SmallCorpusItem]] = defaultdict(list)
    notes = list(sources.notes)

    def rng_for(key: str) -> random.Random:
        return random.Random(f"{seed}\x1f{key}")

    passages_by_pid: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, (passages, questions) in sorted(sources.ja_sets.items()):
        by_title: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for p in passages:
            by_title[str(p.get("title") or "")].append(p)
            passages_by_pid[str(p["pid"])] = (name, p)
        pid_title = {str(p["pid"]): str(p.get("title") or "") for p in passages}
        asked: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for q in questions:
            title = pid_title.get(str(q.get("gold_pid")))
            if title is not None and not q.get("is_impossible"):
                asked[title].append(q)
        for title in sorted(asked):
            cid = f"{name}:{title}"
            if len(by_title[title]) < sizes.min_sections:
                continue
            chosen = _pick(rng_for(cid), asked[title], sizes.answerable)
            docs = _sections(by_title[title], {str(q["gold_pid"]) for q in chosen},
                             sizes.max_sections)
            kept = {str(p["pid"]) for p in docs}
            split = split_of(cid)
            collections[cid] = Collection(
                cid, name, "ja", split,
                [_doc(str(p["pid"]), title, _strip_title(str(p["text"]))) for p in docs])
            for q in chosen:
                if str(q["gold_pid"]) not in kept:
                    continue
                answerable[cid].append(SmallCorpusItem(
                    id=f"{cid}|{q['id']}", collection=cid, question=str(q["question"]).strip(),
                    language="ja", qtype=FACTOID, answerable=True, split=split,
                    answers=[str(a) for a in q.get("answers") or []],
                    gold_doc_ids=[str(q["gold_pid"])], origin=name))

    en_docs = _build_english(sources.en_pairs, sizes, seed, collections, answerable)
    _build_cross(sources, sizes, seed, collections, answerable, passages_by_pid, en_docs)

    items: list[SmallCorpusItem] = []
    no_answer = [r for r in sources.no_answer if not r.get("answerable")]
    for cid in sorted(collections):
        col = collections[cid]
        own = answerable.get(cid, [])
        if not own:
            continue
        items += own
        items += _unanswerable(col, own, answerable, collections, no_answer, sizes,
                               rng_for(f"unanswerable\x1f{cid}"))
    notes.append(
        f"{len(collections)} collections ({sum(c.split == DEV for c in collections.values())} "
        f"dev), {len(items)} questions; held-out = collections whose id hash is 0 mod "
        f"{HELDOUT_EVERY}.")
    return SmallCorpusSet(collections, items, notes)


def _build_english(rows: list[dict[str, Any]], sizes: Sizes, seed: int,
                   collections: dict[str, Collection],
                   answerable: dict[str, list[SmallCorpusItem]]) -> list[dict[str, str]]:
    """HaluEval-QA knowledge paragraphs in groups; returns the paragraphs used."""
    seen: set[str] = set()
    unique: list[dict[str, Any]] = []
    for r in rows:
        knowledge = str(r.get("knowledge") or "").strip()
        if int(r.get("label", 0)) != 0 or not knowledge or knowledge in seen:
            continue
        seen.add(knowledge)
        unique.append(r)
    # Grouping by a seeded hash of the example id: stable when the file grows or reorders.
    unique.sort(key=lambda r: hashlib.sha1(f"{seed}:{r.get('example', r['id'])}".encode())
                .hexdigest())
    docs = [_doc(f"doc-{r.get('example', r['id'])}", "", str(r["knowledge"]).strip())
            for r in unique]
    n_groups = min(sizes.en_collections, len(unique) // sizes.en_group)
    for g in range(n_groups):
        group = unique[g * sizes.en_group:(g + 1) * sizes.en_group]
        cid = f"halueval:g{g:03d}"
        split = split_of(cid)
        collections[cid] = Collection(cid, "halueval", "en", split,
                                      docs[g * sizes.en_group:(g + 1) * sizes.en_group])
        for r, d in zip(group, collections[cid].documents, strict=True):
            question = str(r["question"]).strip()
            form = question_form(question, "en")
            answerable[cid].append(SmallCorpusItem(
                id=f"{cid}|{r['id']}", collection=cid, question=question, language="en",
                qtype=form, form=form, answerable=True, split=split,
                answers=[str(r["answer"]).strip()], gold_doc_ids=[d["id"]], origin="halueval"))
    return docs[: n_groups * sizes.en_group]


def _build_cross(sources: Sources, sizes: Sizes, seed: int, collections: dict[str, Collection],
                 answerable: dict[str, list[SmallCorpusItem]],
                 passages_by_pid: dict[str, tuple[str, dict[str, Any]]],
                 en_docs: list[dict[str, str]]) -> None:
    """Japanese title passages plus a few English paragraphs; English questions on them."""
    by_title: dict[str, list[dict[str, Any]]] = defaultdict(list)
    answers: dict[str, list[str]] = {}
    for name, (passages, questions) in sources.ja_sets.items():
        if name != "jsquad":
            continue
        for p in passages:
            by_title[str(p.get("title") or "")].append(p)
        answers = {str(q["id"]): [str(a) for a in q.get("answers") or []] for q in questions}
    wanted: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in sources.xlang:
        found = passages_by_pid.get(str(r["gold_pid"]))
        if found is not None and found[0] == "jsquad":
            wanted[str(found[1].get("title") or "")].append(r)
    for title in sorted(wanted):
        cid = f"xlang:{title}"
        rng = random.Random(f"{seed}\x1f{cid}")
        docs = _sections(by_title[title], {str(r["gold_pid"]) for r in wanted[title]},
                         sizes.max_sections)
        split = split_of(f"jsquad:{title}")  # the title's part, whichever questions ask it
        english = _pick(rng, en_docs, sizes.mixed_en_docs)
        collections[cid] = Collection(
            cid, "xlang", "mixed", split,
            [_doc(str(p["pid"]), title, _strip_title(str(p["text"]))) for p in docs] + english)
        for r in wanted[title]:
            answerable[cid].append(SmallCorpusItem(
                id=f"{cid}|{r['id']}", collection=cid, question=str(r["question_en"]).strip(),
                language="en", qtype=CROSS, answerable=True, split=split,
                form=question_form(str(r["question_en"]), "en"),
                # English renderings of the gold answer (written for these files), then
                # the Japanese gold itself (an English answer may keep a name as written).
                answers=[*map(str, r.get("answers_en") or []), *answers.get(str(r["id"]), [])],
                gold_doc_ids=[str(r["gold_pid"])],
                origin=str(r.get("file") or "xlang")))


def _unanswerable(col: Collection, own: list[SmallCorpusItem],
                  answerable: dict[str, list[SmallCorpusItem]],
                  collections: dict[str, Collection], no_answer: list[dict[str, Any]],
                  sizes: Sizes, rng: random.Random) -> list[SmallCorpusItem]:
    """Questions this collection cannot answer, drawn from its own part only."""
    language = "ja" if col.language == "ja" else "en"

    def borrowed(pool: Iterable[SmallCorpusItem], n: int) -> list[SmallCorpusItem]:
        picks = _pick(rng, sorted(pool, key=lambda i: i.id), n)
        return [SmallCorpusItem(
            id=f"{col.id}|other|{q.id}", collection=col.id, question=q.question,
            language=q.language, qtype=OTHER_TITLE, answerable=False, split=col.split,
            form=q.form, answers=q.answers, origin=q.origin) for q in picks]

    # A question whose own section is also in this collection (the English paragraphs of a
    # cross-language collection come from the HaluEval groups) is answerable here.
    here = {str(d["id"]) for d in col.documents}
    others = [q for cid, qs in answerable.items() if cid != col.id
              and collections[cid].split == col.split for q in qs
              if q.language == language and q.qtype != CROSS
              and not here & set(q.gold_doc_ids)]
    out: list[SmallCorpusItem] = []
    if language == "ja":
        out += borrowed(others, sizes.other_title)
    else:
        # Half of the borrowed English questions are yes/no ones when there are any: an
        # unrelated yes/no question is where an answer from unrelated sentences shows.
        yes_no = [q for q in others if q.form == YES_NO]
        n_yes_no = min(len(yes_no), sizes.other_title // 2)
        out += borrowed(yes_no, n_yes_no)
        out += borrowed([q for q in others if q.form != YES_NO], sizes.other_title - n_yes_no)

    def queries(lang: str, n: int, qtype: str) -> list[SmallCorpusItem]:
        pool = [r for r in no_answer if (r.get("lang") or "en") == lang
                and split_of(f"nomiracl:{r['id']}") == col.split]
        return [SmallCorpusItem(
            id=f"{col.id}|nomiracl|{r['id']}", collection=col.id,
            question=str(r["question"]).strip(), language=lang, qtype=qtype,
            answerable=False, split=col.split, form=question_form(str(r["question"]), lang),
            origin="nomiracl") for r in _pick(rng, pool, n)]

    out += queries(language, sizes.off_topic, OFF_TOPIC)
    if col.language == "ja":
        out += queries("en", sizes.cross_off_topic, CROSS_OFF_TOPIC)
    return out


def sample_questions(items: list[SmallCorpusItem], limit: int | None, *, seed: int = 0
                     ) -> list[SmallCorpusItem]:
    """A deterministic sample of ``limit`` questions, taking each (language, type) in turn."""
    if limit is None or limit >= len(items):
        return list(items)
    groups: dict[tuple[str, str], list[SmallCorpusItem]] = defaultdict(list)
    for item in items:
        groups[(item.language, item.group)].append(item)
    rng = random.Random(seed)
    for key in sorted(groups):
        rng.shuffle(groups[key])
    # Alternate languages, so even a sample of three has Japanese and English questions.
    position = {k: sum(1 for o in groups if o[0] == k[0] and o < k) for k in groups}
    order = sorted(groups, key=lambda k: (position[k], k[0] != "ja", k))
    chosen: list[SmallCorpusItem] = []
    depth = 0
    while len(chosen) < max(limit, 0):
        layer = [groups[k][depth] for k in order if depth < len(groups[k])]
        if not layer:
            break
        chosen += layer[: limit - len(chosen)]
        depth += 1
    picked = {id(i) for i in chosen}
    return [i for i in items if id(i) in picked]


def report_rows(records: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Per-question records grouped by (language, type) in a stable order for the tables."""
    order = {t: n for n, t in enumerate(QUESTION_TYPES)}
    rows: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        rows[(r["language"], r["type"])].append(r)
    return dict(sorted(rows.items(), key=lambda kv: (
        kv[0][0] != "ja", order.get(kv[0][1].split("/")[0], 99), kv[0][1])))
