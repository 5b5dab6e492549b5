"""Claims labelled by construction, shaped like the loop's own Japanese claims.

The generator restates the question with the value it found ("梅雨とは雨季の一種です").
From a JSQuAD / JaQuAD question with a gold answer, the wh-word is replaced by the answer:

- the gold answer, against its gold passage: **supported**;
- the answer of another question on the same passage (the neighbouring value the generator
  tends to write): **contradicted**;
- the gold claim against another passage of the same article that does not hold the answer
  (the wrong section of the right document): **neutral**.

Only articles of the small-corpus **dev** collections are used, and none of the questions
those collections ask: the small-corpus held-out part stays unseen, and its dev questions
too. Every example of one article shares a fold key.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from typing import Any

from grounded_rag.evaluation._answer import contains_answer
from grounded_rag.evaluation._small_corpus import _strip_title
from grounded_rag.training._examples import CLAIM, JudgeExample, SetPlan, _evidence, _h
from grounded_rag.verification.base import ClaimToCheck

_COUNTERS = "年月日人回個種つ色度倍番歳階件冊本枚台隻位社校県市語曲部話点%％"
_WH = re.compile(
    r"(何という(?:名前|名称)?|何と(?:言う|いう)|何と呼ばれ|どのような|どのよう|どんな|どの|どこ|"
    rf"誰|だれ|いつ|いくつ|いくら|どれ|何[{_COUNTERS}]|何|なに|なん)")
_END = re.compile(r"(ですか|でしょうか|でしょう|か)?\s*[。？?！!]*\s*$")
_DIGIT = re.compile(r"[0-9０-９一二三四五六七八九十百千万億]")
_TOPIC_END = re.compile(r"(は|とは)\s*[。？?]*\s*$")


def claim_of(question: str, answer: str) -> str | None:
    """The question restated with ``answer`` in place of its wh-word (None: no wh-word).

    A question with no wh-word that ends on its topic ("…の著者は？") gets the answer after
    the topic.
    """
    q = question.strip()
    value = answer.strip()
    if not value:
        return None
    if "どちら" in q:  # an either-or question does not restate as one claim
        return None
    matches = list(_WH.finditer(q))
    match = matches[-1] if matches else None  # the wh-word sits late in a Japanese question
    if match is None:
        topic = _TOPIC_END.search(q)
        if topic is None:
            return None
        return q[:topic.end(1)] + value + "。"
    wh = match.group(1)
    if len(wh) == 2 and wh[0] == "何" and wh[1] in _COUNTERS and not value.endswith(wh[1]):
        value += wh[1]
    rest = q[match.end():]
    for k in range(min(4, len(rest)), 0, -1):  # 何湖 -> マレボ湖, not マレボ湖湖
        head = rest[:k]
        if head.lstrip("の") and value.endswith(head.lstrip("の")):
            rest = rest[k:]
            break
    else:
        if wh in ("どのような", "どのよう", "どんな", "どの"):
            value += "の"
        elif wh in ("何という", "何と言う"):
            value += "という"
        elif wh == "何と呼ばれ":
            value += "と呼ばれ"
    body = _END.sub("", q[:match.start()] + value + rest).rstrip("、 ")
    if len(body) < 6 or body == value:
        return None
    return body + "。"


def constructed_claims(plan: SetPlan, seed: int = 0) -> list[JudgeExample]:
    """The constructed examples (see the module docstring), ``plan.limit`` questions."""
    from grounded_rag.evaluation._small_corpus import DEV, build_small_corpus
    from grounded_rag.evaluation._small_corpus_run import load_sources

    sources = load_sources()
    built = build_small_corpus(sources)
    asked = {item.id.split("|", 1)[1] for item in built.items if "|" in item.id}
    dev_titles = {(c.source, c.id.split(":", 1)[1]) for c in built.collections.values()
                  if c.source in sources.ja_sets and c.split == DEV}
    pool: list[tuple[str, dict[str, Any], dict[str, Any], list[dict[str, Any]]]] = []
    for name, (passages, questions) in sorted(sources.ja_sets.items()):
        by_pid = {str(p["pid"]): p for p in passages}
        by_title: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for p in passages:
            by_title[str(p.get("title") or "")].append(p)
        for q in questions:
            gold = by_pid.get(str(q.get("gold_pid")))
            if gold is None or q.get("is_impossible") or str(q["id"]) in asked:
                continue
            title = str(gold.get("title") or "")
            if (name, title) in dev_titles and q.get("answers"):
                pool.append((name, q, gold, by_title[title]))
    rng = random.Random(seed)
    rng.shuffle(pool)
    answers_of: dict[str, list[str]] = defaultdict(list)
    for _, q, gold, _ in pool:
        answers_of[str(gold["pid"])].append(str(q["answers"][0]).strip())
    out: list[JudgeExample] = []
    taken = 0
    for name, q, gold, siblings in pool:
        if plan.limit is not None and taken >= plan.limit:
            break
        answers = [str(a).strip() for a in q["answers"]]
        claim = claim_of(str(q["question"]), answers[0])
        if claim is None or not contains_answer(str(gold["text"]), answers):
            continue
        numeric = bool(_DIGIT.search(answers[0]))  # swap a number for a number, a name for a name
        wrong = [a for a in answers_of[str(gold["pid"])]
                 if a and not any(a in g or g in a for g in answers)
                 and bool(_DIGIT.search(a)) == numeric]
        other = [p for p in siblings if p["pid"] != gold["pid"]
                 and not contains_answer(str(p["text"]), answers)]
        title = str(gold.get("title") or "")
        keys = [f"title:{title}"]
        base = f"{name}:{q['id']}"
        out.append(_one(base, "sup", claim, gold, "supported", keys))
        if wrong:
            swapped = claim_of(str(q["question"]), rng.choice(wrong))
            if swapped and swapped != claim:
                out.append(_one(base, "con", swapped, gold, "contradicted", keys))
        if other:
            out.append(_one(base, "neu", claim, rng.choice(other), "neutral", keys))
        taken += 1
    return out


def _one(base: str, tag: str, text: str, passage: dict[str, Any], label3: str,
         keys: list[str]) -> JudgeExample:
    evidence = _evidence({"id": str(passage["pid"]), "title": str(passage.get("title") or ""),
                          "text": _strip_title(str(passage["text"])).strip()})
    return JudgeExample(
        id=f"ja_constructed:{base}:{tag}", set="ja_constructed", task=CLAIM, language="ja",
        claim=ClaimToCheck(text=text, evidence=[evidence]), label3=label3,
        positive=label3 == "supported", bag=f"ja_constructed:{base}:{tag}",
        bag_positive=label3 == "supported", keys=[*keys, f"src:{_h(str(passage['text']))}"])

