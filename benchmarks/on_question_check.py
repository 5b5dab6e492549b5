"""False alarms and catches of the off-question check on real QA data (no model; ~1 minute).

``off_question_findings`` (``grounded_rag.verification.on_question``) must not flag answers
that do answer, and should flag answers that do not. This runs it, through the product's own
function, over the dev sets in ``../shared/eval`` (or ``$GROUNDED_RAG_EVAL_DIR``):

- **gold**: each question with its gold answer as the statement, citing the context sentence
  that contains the answer (among several, the one sharing most words with the question; the
  whole knowledge when no sentence contains it, as for a HaluEval "yes"). Any finding is a
  false alarm.
- **swapped**: the same question answered by another question's answer and sentence, from
  the same passage where one exists (else the same article, else the next article). Swaps
  whose answer overlaps the question's own gold answers are skipped. A finding is a catch.

Sets: JSQuAD and JaQuAD dev (Japanese; passage title = document title), HaluEval QA dev
(English; the ``right`` answers, knowledge as the passage, no title). Rates are reported for
all questions and per question type: ``yes/no`` (the predicate check), ``money`` / ``number``
/ ``date`` (the value checks), ``other``. For yes/no questions the rate is also given for
the looser rule "one predicate word suffices" (``one-word``), to show why half is required.
Absent sets are skipped with a message. The check was written before these numbers were
taken; the sets are dev splits (see ``../shared/eval/README.md``).

    .venv/bin/python benchmarks/on_question_check.py [--sets jsquad,jaquad,halueval]
                                                    [--limit N] [--examples K] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import eval_path, read_jsonl  # noqa: E402

SETS = ("jsquad", "jaquad", "halueval")


def _item(qid: str, question: str, answers: list[str], passage: dict[str, str],
          group: str) -> dict[str, Any]:
    return {"id": qid, "question": question, "answers": [a for a in answers if a.strip()],
            "passage": passage, "group": group}


def load_squad_like(folder: str, limit: int | None) -> list[dict[str, Any]] | None:
    """JSQuAD / JaQuAD dev: questions with gold answers and their gold passage."""
    qpath, ppath = eval_path(folder, "questions.dev.jsonl"), eval_path(folder, "passages.jsonl")
    if qpath is None or ppath is None:
        return None
    passages = {p["pid"]: p for p in read_jsonl(ppath)}
    items = []
    for row in read_jsonl(qpath, limit):
        passage = passages.get(row["gold_pid"])
        if passage is None or row.get("is_impossible"):
            continue
        text = passage["text"].split(" [SEP] ", 1)[-1]
        items.append(_item(row["id"], row["question"], row["answers"],
                           {"pid": passage["pid"], "title": passage["title"], "text": text},
                           passage["title"]))
    return items


def load_halueval(limit: int | None) -> list[dict[str, Any]] | None:
    """HaluEval QA dev: the right answers, with the knowledge as the passage."""
    path = eval_path("halueval_qa", "pairs.dev.jsonl")
    if path is None:
        return None
    items = []
    for row in read_jsonl(path):
        if row["label"] != 0:
            continue
        pid = f"halueval:{row['example']}"
        items.append(_item(row["id"], row["question"], [row["answer"]],
                           {"pid": pid, "title": "", "text": row["knowledge"].strip()}, pid))
        if limit and len(items) >= limit:
            break
    return items


def _sentence_with(answer: str, passage: dict[str, str], question: str) -> str:
    """The passage sentence holding ``answer`` that shares most words with the question."""
    from grounded_rag.lang import split_sentences
    from grounded_rag.verification.evidence import key_tokens

    sentences = [s for s in split_sentences(passage["text"]) if answer in s]
    if not sentences:
        return passage["text"]
    q = key_tokens(question)
    return max(sentences, key=lambda s: len(key_tokens(s) & q))


def _evidence(passage: dict[str, str]) -> dict[str, Any]:
    return {"source_id": passage["pid"], "doc_id": passage["pid"].rsplit(":", 1)[0],
            "title": passage["title"], "url": "", "text": passage["text"],
            "score": 1.0, "relevance": 1.0}


def _answer(answer: str, passage: dict[str, str], question: str) -> list[dict[str, Any]]:
    quote = _sentence_with(answer, passage, question)
    return [{"text": answer, "citations": [{"source_id": passage["pid"], "quote": quote,
                                            "start": 0, "end": len(quote)}]}]


def _swap_for(i: int, items: list[dict[str, Any]], by_pid: dict[str, list[int]],
              by_group: dict[str, list[int]]) -> int | None:
    """Another question whose answer is not this one's: same passage, article, or next."""
    own = [a.lower() for a in items[i]["answers"]]

    def fits(j: int) -> bool:
        other = items[j]["answers"][0].lower()
        return j != i and not any(other in a or a in other for a in own)

    for pool in (by_pid[items[i]["passage"]["pid"]], by_group[items[i]["group"]]):
        for j in pool:
            if fits(j):
                return j
    for step in range(1, len(items)):
        j = (i + step) % len(items)
        if items[j]["group"] != items[i]["group"] and fits(j):
            return j
    return None


def question_type(question: str) -> str:
    """``yes/no``, ``money``, ``number``, ``date`` or ``other`` (as the check reads it)."""
    from grounded_rag.verification import asked
    from grounded_rag.verification.on_question import question_kind

    kind = question_kind(question)
    if kind == "number" and asked.asks_money(question):
        return "money"
    if kind:
        return kind
    return "yes/no" if asked.is_yes_no(question) else "other"


def _rule(detail: str) -> str:
    from grounded_rag.prompts import addresses, feedback

    for lang in ("en", "ja"):
        after = addresses.CASE_NOT_ADDRESSED[lang].split("{terms}")[1][:6]
        if after in detail:
            return "condition"
        # The words just before the asked terms are this finding's own.
        if addresses.NOT_ADDRESSED[lang].split("{terms}")[0][-8:] in detail:
            return "predicate"
        if addresses.MONEY_REASON[lang] in detail:
            return "money"
        reasons = feedback.OFF_QUESTION_REASONS[lang]
        if reasons["heading"] in detail or reasons["question"] in detail:
            return "restated"
        if reasons["number"] in detail or reasons["date"] in detail:
            return "value"
    return "other"


def _one_word_flags(question: str, statements: list[dict[str, Any]],
                    evidence: dict[str, Any]) -> bool:
    """Whether the looser rule (any one predicate word addresses it) would flag."""
    from grounded_rag.verification import asked

    terms = asked.asked_terms(question, [evidence["title"]])
    cited = [s["text"] for s in statements] + [c["quote"] for s in statements
                                               for c in s["citations"]]
    return bool(terms) and len(asked.missing_terms(terms, cited)) == len(terms)


def run_set(name: str, items: list[dict[str, Any]], language: str,
            examples: int) -> dict[str, Any]:
    """Gold false alarms and swapped catches, overall and per question type."""
    from grounded_rag.verification.on_question import off_question_findings

    by_pid: dict[str, list[int]] = defaultdict(list)
    by_group: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        by_pid[item["passage"]["pid"]].append(i)
        by_group[item["group"]].append(i)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    rules: dict[str, Counter[str]] = {"gold": Counter(), "swapped": Counter()}
    shown: dict[str, list[dict[str, Any]]] = {"false_alarm": [], "missed": []}
    for i, item in enumerate(items):
        question, qtype = item["question"], question_type(item["question"])
        gold = _answer(item["answers"][0], item["passage"], question)
        gold_evidence = _evidence(item["passage"])
        found = off_question_findings(question, gold, [gold_evidence], language)
        for key in ("all", qtype):
            counts[key]["gold"] += 1
            counts[key]["false_alarm"] += bool(found)
        rules["gold"].update({_rule(f["detail"]) for f in found})
        if found and len(shown["false_alarm"]) < examples:
            shown["false_alarm"].append({"question": question, "answer": gold[0]["text"],
                                         "quote": gold[0]["citations"][0]["quote"][:160],
                                         "detail": found[0]["detail"][:200]})
        if qtype == "yes/no":
            counts["yes/no"]["false_alarm_one_word"] += _one_word_flags(question, gold,
                                                                        gold_evidence)
        j = _swap_for(i, items, by_pid, by_group)
        if j is None:
            continue
        other = items[j]
        swapped = _answer(other["answers"][0], other["passage"], other["question"])
        swapped_evidence = _evidence(other["passage"])
        caught = off_question_findings(question, swapped, [swapped_evidence], language)
        same = "same_passage" if other["passage"]["pid"] == item["passage"]["pid"] else (
            "same_article" if other["group"] == item["group"] else "other_article")
        for key in ("all", qtype):
            counts[key]["swapped"] += 1
            counts[key]["caught"] += bool(caught)
            counts[key][f"swapped_{same}"] += 1
            counts[key][f"caught_{same}"] += bool(caught)
        rules["swapped"].update({_rule(f["detail"]) for f in caught})
        if qtype == "yes/no":
            counts["yes/no"]["caught_one_word"] += _one_word_flags(question, swapped,
                                                                   swapped_evidence)
        if not caught and qtype != "other" and len(shown["missed"]) < examples:
            shown["missed"].append({"question": question, "answer": swapped[0]["text"],
                                    "quote": swapped[0]["citations"][0]["quote"][:160]})
    return {"set": name, "language": language, "counts": {k: dict(v) for k, v in counts.items()},
            "rules": {k: dict(v) for k, v in rules.items()}, "examples": shown}


def _rate(num: int, den: int) -> str:
    return f"{num}/{den} = {100 * num / den:.1f}%" if den else "-"


def report(result: dict[str, Any]) -> None:
    print(f"\n== {result['set']} ({result['language']})")
    order = ["all", "yes/no", "money", "number", "date", "other"]
    print(f"{'type':8} {'false alarms (gold)':>24} {'caught (swapped)':>24}   caught by origin")
    for key in order:
        c = result["counts"].get(key)
        if not c:
            continue
        origin = "  ".join(
            f"{o}: {_rate(c.get(f'caught_{o}', 0), c.get(f'swapped_{o}', 0))}"
            for o in ("same_passage", "same_article", "other_article")
            if c.get(f"swapped_{o}"))
        print(f"{key:8} {_rate(c['false_alarm'], c['gold']):>24} "
              f"{_rate(c.get('caught', 0), c.get('swapped', 0)):>24}   {origin}")
    yn = result["counts"].get("yes/no")
    if yn:
        print(f"yes/no with the one-word rule: false alarms "
              f"{_rate(yn.get('false_alarm_one_word', 0), yn['gold'])}, caught "
              f"{_rate(yn.get('caught_one_word', 0), yn.get('swapped', 0))}")
    print(f"findings by rule: gold {result['rules']['gold']}, swapped {result['rules']['swapped']}")
    for kind, rows in result["examples"].items():
        for row in rows:
            print(f"  [{kind}] {json.dumps(row, ensure_ascii=False)}")


def expertqa_conditions() -> dict[str, Any] | None:
    """The condition rule on ExpertQA's attributed answers (data it was not written against).

    One answer per (question, model): its claims marked fully supported, each with its
    evidence as the quote. Of the answers to a question that sets a condition, how many
    the rule flags (each is a false alarm: experts' answers speak to the case asked).
    """
    from grounded_rag.verification import asked
    from grounded_rag.verification.on_question import _condition_unmet

    path = eval_path("expertqa_attribution", "claims.dev.jsonl")
    if path is None:
        return None
    answers: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in read_jsonl(path):
        if row.get("support") == "Complete":
            answers[(row["question"], row["model"])].append(row)
    conditional = flagged = 0
    for (question, _), rows in answers.items():
        if not asked.condition_terms(question):
            continue
        conditional += 1
        statements = [{"text": r["claim"], "citations": [{"quote": e} for e in r["evidence"]]}
                      for r in rows]
        flagged += bool(_condition_unmet(question, statements))  # type: ignore[arg-type]
    return {"answers": len(answers), "conditional": conditional, "flagged": flagged}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--limit", type=int, default=None, help="questions per set")
    parser.add_argument("--examples", type=int, default=3, help="false alarms / misses shown")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    results = []
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        if name not in SETS:
            parser.error(f"unknown set {name!r}; choose from {', '.join(SETS)}")
        started = time.perf_counter()
        if name == "halueval":
            items, language = load_halueval(args.limit), "en"
        else:
            items, language = load_squad_like(f"{name}_ja", args.limit), "ja"
        if not items:
            print(f"skip: {name} (no data)", file=sys.stderr)
            continue
        result = run_set(name, items, language, args.examples)
        result["seconds"] = round(time.perf_counter() - started, 1)
        results.append(result)
        if not args.json:
            report(result)
            print(f"({result['seconds']} s)")
    expert = expertqa_conditions()
    if expert is None:
        print("skip: expertqa_attribution (no data)", file=sys.stderr)
    elif args.json:
        results.append({"set": "expertqa_conditions", **expert})
    else:
        print(f"\n== expertqa (en): condition rule on {expert['answers']} attributed answers: "
              f"{expert['flagged']}/{expert['conditional']} answers to a conditional question "
              "flagged (each a false alarm)")
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
