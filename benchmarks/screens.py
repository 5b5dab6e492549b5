"""The verifier's model-free checks on data they were not written from, and its rule table.

Usage::

    .venv/bin/python benchmarks/screens.py [--screens cues,off_question,...] [--limit N]
    .venv/bin/python benchmarks/screens.py --quick --json out.json      # what CI runs
    .venv/bin/python benchmarks/screens.py inventory RESULTS.jsonl [...]
    .venv/bin/python benchmarks/screens.py inventory --base B.jsonl --without NAME[,NAME]=A.jsonl

**Screens** (no model; the dev splits in ``../shared/eval`` or ``$GROUNDED_RAG_EVAL_DIR``,
absent sets skipped with a message). Each check that decides before any model call runs,
through the product's own function, on pairs whose right outcome is known by construction
or by the set's gold label. Every row says what the check should do there: ``pass`` rows
count false alarms (a fire costs a right answer), ``fire`` rows count catches (a pass lets a
wrong answer through). One table, one mechanism per screen:

- ``cues``: the decisive cues of ``verification.cues.check_claim`` (values, dates, roles,
  hedges, subjects, bindings, readings) per set and gold label: the NLI sets (JaNLI, JNLI,
  JSICK, JHARS, HaluEval, ExpertQA, SciFact), JSICK crossed between its two languages,
  JSQuAD's gold answers against their passage, and the cross-language questions' English
  answers against their Japanese passage and another passage of the same article;
- ``off_question``: ``on_question.off_question_findings`` with each question's gold answer
  citing its sentence (``pass``) and another question's answer and sentence (``fire``),
  JSQuAD, JaQuAD, HaluEval-QA; the condition rule on ExpertQA's attributed answers;
- ``predicate``: ``on_question.predicate_absent`` on HaluEval-QA's yes/no questions over their
  own paragraph (``pass``) and another question's (``fire``);
- ``topic``: ``subjects.topic_uncited`` with a right Japanese answer citing its gold passage;
- ``binding``: ``coverage.misbound_value`` on the true clauses of year-labelled series
  (``pass``) and on their values swapped between years (``fire``);
- ``cloze``: ``cascade.cloze_sentence`` on gold values (``settle``: a settle is a support without
  the model), other values of the same passage and another question's value (``pass``);
- ``chinese``: ``on_question.reads_as_chinese`` on every Japanese sentence of the sets.

**Inventory** reads the per-question lines of ``benchmarks/first_corpus.py --out`` or of
``grounded-rag eval ... --out DIR`` (``DIR/results.jsonl``), which record the rules that
changed an outcome (``rules_fired``), and prints every rule of
:data:`grounded_rag.verification.rules.RULES` with its mechanism, what it was written from,
the questions it fired on and how they ended (right / wrong / refused). With ``--base B
--without NAMES=A`` it is the leave-one-out comparison: ``A`` is the same questions asked with
the named rules off (``first_corpus.py --without NAME`` or ``GROUNDED_RAG_ABLATE=NAME``); an
outcome change on a question where none of them fired is noise and marked so.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402  # noqa: E402
    EVAL_DIR,
    add_result_args,
    eval_path,
    read_jsonl,
    write_result,
)

Row = dict[str, Any]
"""One table row: screen, set, case, expect (pass / fire / settle), n, fired, example."""


class Tally:
    """Counts per (set, case, expect) and the first example of each that fired."""

    def __init__(self, screen: str) -> None:
        self.screen = screen
        self.n: Counter[tuple[str, str, str]] = Counter()
        self.fired: Counter[tuple[str, str, str]] = Counter()
        self.example: dict[tuple[str, str, str], str] = {}

    def add(self, part: str, case: str, expect: str, hit: bool, example: str = "") -> None:
        key = (part, case, expect)
        self.n[key] += 1
        if hit:
            self.fired[key] += 1
            self.example.setdefault(key, example[:160])

    def rows(self) -> list[Row]:
        return [{"screen": self.screen, "set": k[0], "case": k[1], "expect": k[2],
                 "n": self.n[k], "fired": self.fired[k], "example": self.example.get(k, "")}
                for k in sorted(self.n)]


def _squad(folder: str, limit: int | None) -> tuple[list[dict], dict[str, dict]]:
    """A JSQuAD-style set's answerable dev questions and its passages (body without title)."""
    qs, ps = eval_path(folder, "questions.dev.jsonl"), eval_path(folder, "passages.jsonl")
    if qs is None or ps is None:
        return [], {}
    passages = {}
    for p in read_jsonl(ps):
        passages[p["pid"]] = {**p, "body": p["text"].split(" [SEP] ", 1)[-1]}
    rows = [q for q in read_jsonl(qs) if q.get("gold_pid") in passages
            and not q.get("is_impossible") and q.get("answers")]
    return rows[:limit] if limit else rows, passages


def _halueval(limit: int | None) -> list[dict]:
    path = eval_path("halueval_qa", "pairs.dev.jsonl")
    return read_jsonl(path, limit) if path else []


def _evidence(pid: str, text: str, title: str = "") -> dict[str, Any]:
    return {"source_id": pid, "doc_id": pid.rsplit(":", 1)[0].split("#")[0], "title": title,
            "url": "", "text": text, "score": 1.0, "relevance": 1.0}


# -- cues ------------------------------------------------------------------------------------

NLI_SETS = ("janli", "jnli", "jsick", "jhars", "halueval_qa", "halueval_summarization",
            "expertqa", "scifact")


def _nli_label(item: Any, k: int) -> str:
    if item.gold_label3:
        return str(item.gold_label3)
    gold = item.gold_claims[k] if item.gold_claims is not None else item.gold_hallucinated
    return "unlabelled" if gold is None else ("not supported" if gold else "supported")


def _cue_pairs(limit: int | None) -> Iterator[tuple[str, str, list[str], str, str, str]]:
    """(set, claim, evidence texts, question, language, gold label)."""
    from grounded_rag.evaluation._datasets import DatasetError, load_dataset

    for name in NLI_SETS:
        try:
            items = load_dataset(name).items
        except (DatasetError, FileNotFoundError) as exc:
            print(f"skip: {name}: {exc}", file=sys.stderr)
            continue
        for item in items[:limit] if limit else items:
            texts = [s["text"] for s in item.sources]
            if texts and item.language in ("ja", "en"):
                for k, claim in enumerate(item.claims):
                    yield name, claim, texts, item.claim_question, item.language, _nli_label(
                        item, k)
    path = eval_path("jsick_ja", "jsick_test.dev.jsonl")
    for r in read_jsonl(path, limit) if path else []:  # JSICK crossed between its languages
        yield "jsick en->ja", r["hypothesis_en"], [r["premise"]], "", "en", r["label"]
        yield "jsick ja->en", r["hypothesis"], [r["premise_en"]], "", "ja", r["label_en"]
    rows, passages = _squad("jsquad_ja", limit)
    for q in rows:
        yield ("jsquad gold", q["answers"][0], [passages[q["gold_pid"]]["body"]], q["question"],
               "ja", "supported")
    by_title: dict[str, list[str]] = defaultdict(list)
    for p in passages.values():
        by_title[p["title"]].append(p["pid"])
    for path in sorted(Path(__file__).resolve().parent.glob("xlang_en_ja*.jsonl")):
        for r in read_jsonl(path, limit):
            gold = passages.get(r["gold_pid"])
            if gold is None:
                continue
            others = [pid for pid in by_title[gold["title"]] if pid != gold["pid"]]
            for answer in r["answers_en"][:2]:
                yield "xlang en->ja", answer, [gold["body"]], r["question_en"], "en", "supported"
                if others:  # a fixed pick among the article's other passages
                    other = passages[others[sum(gold["pid"].encode()) % len(others)]]
                    yield ("xlang en->ja", answer, [other["body"]], r["question_en"], "en",
                           "other passage")


_SHOULD_PASS = {"supported", "entailment", "entailed"}


def screen_cues(limit: int | None) -> list[Row]:
    """Every decisive cue's fires, per set and gold label: on an entailed / supported pair a
    fire is a false alarm (``pass`` row); on a contradicted, neutral, not-supported or
    other-passage pair a fire is a catch (``fire`` row: either verdict keeps it undelivered)."""
    from grounded_rag.verification.cues import check_claim

    t = Tally("cues")
    for part, claim, texts, question, lang, label in _cue_pairs(limit):
        if label == "unlabelled":
            continue
        report = check_claim(claim, texts, language=lang, question=question)
        kinds = sorted({c.kind for c in report.cues if c.decisive})
        t.add(part, label, "pass" if label in _SHOULD_PASS else "fire", bool(kinds),
              f"{','.join(kinds)}: {claim} <- {texts[0][:80]}")
    return t.rows()


# -- off the question ------------------------------------------------------------------------


def _sentence_with(answer: str, text: str, question: str) -> str:
    from grounded_rag.lang import split_sentences
    from grounded_rag.verification.evidence import key_tokens

    sentences = [s for s in split_sentences(text) if answer in s]
    if not sentences:
        return text
    q = key_tokens(question)
    return max(sentences, key=lambda s: len(key_tokens(s) & q))


def _cited(answer: str, pid: str, text: str, question: str) -> list[dict[str, Any]]:
    quote = _sentence_with(answer, text, question)
    start = text.find(quote)  # the offsets the citation checks would have set
    return [{"text": answer, "citations": [{"source_id": pid, "quote": quote, "start": start,
                                            "end": start + len(quote) if start >= 0 else -1}]}]


def _question_type(question: str) -> str:
    from grounded_rag.verification import asked
    from grounded_rag.verification.on_question import question_kind

    kind = question_kind(question)
    if kind == "number" and asked.asks_money(question):
        return "money"
    return kind or ("yes/no" if asked.is_yes_no(question) else "other")


def _qa_items(limit: int | None) -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    """(set, language, items): question, answer, pid, title, text, group."""
    for folder in ("jsquad_ja", "jaquad_ja"):
        rows, passages = _squad(folder, limit)
        if rows:
            yield folder, "ja", [
                {"question": q["question"], "answer": q["answers"][0], "pid": q["gold_pid"],
                 "title": passages[q["gold_pid"]]["title"],
                 "text": passages[q["gold_pid"]]["body"],
                 "group": passages[q["gold_pid"]]["title"]} for q in rows]
    right = [r for r in _halueval(None) if r["label"] == 0][:limit]
    if right:
        yield "halueval_qa", "en", [
            {"question": r["question"], "answer": r["answer"], "pid": f"h:{r['example']}",
             "title": "", "text": r["knowledge"].strip(), "group": f"h:{r['example']}"}
            for r in right]


def _swap(i: int, items: list[dict[str, Any]]) -> int | None:
    """Another question whose answer is not this one's: same passage, same article, else next."""
    own = items[i]["answer"].lower()

    def fits(j: int) -> bool:
        other = items[j]["answer"].lower()
        return j != i and other not in own and own not in other

    for same in ("pid", "group"):
        for j, item in enumerate(items):
            if item[same] == items[i][same] and fits(j):
                return j
    return next((j for step in range(1, len(items)) if fits(j := (i + step) % len(items))),
                None)


def screen_off_question(limit: int | None) -> list[Row]:
    """Gold answers (``pass``) and swapped answers (``fire``) per set and question type."""
    from grounded_rag.verification import asked
    from grounded_rag.verification.on_question import _condition_unmet, off_question_findings

    t = Tally("off_question")
    for name, language, items in _qa_items(limit):
        for i, item in enumerate(items):
            qtype = _question_type(item["question"])
            gold = _cited(item["answer"], item["pid"], item["text"], item["question"])
            found = off_question_findings(item["question"], gold,
                                          [_evidence(item["pid"], item["text"], item["title"])],
                                          language)
            t.add(name, qtype, "pass", bool(found), f"{item['question']} -> {item['answer']}")
            j = _swap(i, items)
            if j is None:
                continue
            other = items[j]
            swapped = _cited(other["answer"], other["pid"], other["text"], other["question"])
            caught = off_question_findings(
                item["question"], swapped,
                [_evidence(other["pid"], other["text"], other["title"])], language)
            t.add(name, qtype, "fire", bool(caught), f"{item['question']} -> {other['answer']}")
    path = eval_path("expertqa_attribution", "claims.dev.jsonl")
    answers: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in read_jsonl(path) if path else []:
        if row.get("support") == "Complete":
            answers[(row["question"], row["model"])].append(row)
    for (question, _), rows in list(answers.items())[:limit]:
        if asked.condition_terms(question):
            statements = [{"text": r["claim"], "citations": [{"quote": e} for e in r["evidence"]]}
                          for r in rows]
            t.add("expertqa", "condition", "pass",
                  bool(_condition_unmet(question, statements)),  # type: ignore[arg-type]
                  question)
    return t.rows()


def screen_predicate(limit: int | None) -> list[Row]:
    """Yes/no questions over their own paragraph (``pass``) and another's (``fire``)."""
    from grounded_rag.verification import asked
    from grounded_rag.verification.on_question import predicate_absent

    t = Tally("predicate")
    rows = [r for r in _halueval(None) if not r["label"] and asked.is_yes_no(r["question"])]
    rows = rows[:limit] if limit else rows
    for n, row in enumerate(rows):
        for expect, text in (("pass", row["knowledge"]),
                             ("fire", rows[(n + 7) % len(rows)]["knowledge"])):
            hit = predicate_absent(row["question"], [_evidence("p#0", text)], "en")  # type: ignore[list-item]
            t.add("halueval_qa", "yes/no", expect, bool(hit), row["question"])
    return t.rows()


def screen_topic(limit: int | None) -> list[Row]:
    """A right Japanese answer citing its gold passage, called off the question by its topic."""
    from grounded_rag.verification.subjects import question_topic, topic_uncited

    t = Tally("topic")
    for folder in ("jsquad_ja", "jaquad_ja"):
        rows, passages = _squad(folder, limit)
        for q in rows:
            if not question_topic(q["question"]):
                continue
            gold = passages[q["gold_pid"]]
            statement = {"text": str(q["answers"][0]),
                         "citations": [{"source_id": gold["pid"], "quote": ""}]}
            source = {"source_id": gold["pid"], "title": gold.get("title", ""),
                      "text": gold["text"]}
            topic = topic_uncited(q["question"], [statement], [source])
            t.add(folder, "gold answer", "pass", bool(topic), f"{q['question']} (topic {topic})")
    return t.rows()


def screen_binding(limit: int | None) -> list[Row]:
    """True clauses of year-labelled series (``pass``) and values swapped between years."""
    from grounded_rag.verification.coverage import (
        _CLAUSE,
        _clauses,
        _quantities,
        cases_in,
        misbound_value,
    )
    from grounded_rag.verification.evidence import split_sentences

    def years(cases: frozenset[str]) -> list[str]:
        return sorted(c[len("year "):] for c in cases if c.startswith("year "))

    t = Tally("binding")
    for folder in ("jsquad_ja", "jaquad_ja"):
        path = eval_path(folder, "passages.jsonl")
        for passage in read_jsonl(path, limit) if path else []:
            sentences = [s.text for s in split_sentences(passage["text"].split(" [SEP] ")[-1])]
            for sentence in sentences:
                if not years(cases_in(sentence)):
                    continue
                for part in _CLAUSE.split(sentence):
                    if part and part.strip() and _quantities(part, False):
                        t.add(folder, "true clause", "pass",
                              bool(misbound_value(part, sentences, xlang=False)), part)
                labelled = [c for c in _clauses(sentence, False) if years(c.cases)]
                if len(labelled) < 2 or labelled[0].values[0].text == labelled[1].values[0].text:
                    continue
                claim = f"{years(labelled[0].cases)[0]}年には{labelled[1].values[0].text}であった"
                t.add(folder, "swapped year", "fire",
                      bool(misbound_value(claim, sentences, xlang=False)), claim)
    return t.rows()


_VALUE = re.compile(
    r"\d[\d,.]*(?:年\d+月\d+日|年\d+月|年代|年|月\d+日|月|日|万|億|千|円|人|%|歳|回|位|km2|km|m)?")
_DIGITS = re.compile(r"\d+")


def _numbers(text: str) -> set[str]:
    return {d.lstrip("0") or "0" for d in _DIGITS.findall(text.replace(",", ""))}


def screen_cloze(limit: int | None) -> list[Row]:
    """Bare values settled as supported without the model: gold (``settle``), wrong (``pass``)."""
    from grounded_rag.verification.cascade import cloze_sentence

    t = Tally("cloze")

    def settles(value: str, question: str, text: str) -> bool:
        return bool(cloze_sentence(value, question, [_evidence("p#0", text)]))

    for folder in ("jsquad_ja", "jaquad_ja"):
        rows, passages = _squad(folder, limit)
        by_passage: dict[str, list[dict]] = defaultdict(list)
        for q in rows:
            by_passage[q["gold_pid"]].append(q)
        for q in rows:
            text = passages[q["gold_pid"]]["body"]
            gold = next((a for a in q["answers"] if _DIGITS.search(a)), "")
            if not gold:
                continue
            own = set().union(*(_numbers(a) for a in q["answers"]))
            t.add(folder, "gold value", "settle", settles(gold, q["question"], text),
                  f"{q['question']} -> {gold}")
            for value in dict.fromkeys(m.group(0) for m in _VALUE.finditer(text)):
                if not _numbers(value) & own:
                    t.add(folder, "other value of the passage", "pass",
                          settles(value, q["question"], text), f"{q['question']} -> {value}")
            for other in by_passage[q["gold_pid"]]:
                value = next((a for a in other["answers"] if _DIGITS.search(a)), "")
                if other is not q and value and not _numbers(value) & own:
                    t.add(folder, "another question's value", "pass",
                          settles(value, q["question"], text), f"{q['question']} -> {value}")
    for row in _halueval(limit):
        if _DIGITS.search(row["answer"]) and len(row["answer"].split()) <= 5:
            t.add("halueval_qa", "hallucinated" if row["label"] else "right answer",
                  "pass" if row["label"] else "settle",
                  settles(row["answer"], row["question"], row["knowledge"]),
                  f"{row['question']} -> {row['answer']}")
    return t.rows()


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if len(value) >= 4 else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def screen_chinese(limit: int | None) -> list[Row]:
    """Japanese sentences of every Japanese set read as Chinese (each a false reading)."""
    from grounded_rag.lang import detect_language
    from grounded_rag.verification.evidence import split_sentences
    from grounded_rag.verification.on_question import reads_as_chinese

    t = Tally("chinese")
    seen: set[str] = set()
    for name in ("jsquad_ja", "jaquad_ja", "jhars_ja", "jnli_ja", "jsick_ja", "janli_ja",
                 "nomiracl_ja_en"):
        files = sorted((EVAL_DIR / name).glob("*.jsonl"))
        if not files:
            print(f"skip: {EVAL_DIR / name} has no data", file=sys.stderr)
        for path in files:
            for row in read_jsonl(path, limit):
                for value in _strings(row):
                    if detect_language(value) != "ja":
                        continue
                    for s in split_sentences(value):
                        if s.text not in seen:
                            seen.add(s.text)
                            t.add(name, "Japanese sentence", "pass", reads_as_chinese(s.text),
                                  s.text)
    return t.rows()


SCREENS: dict[str, Callable[[int | None], list[Row]]] = {
    "cues": screen_cues, "off_question": screen_off_question, "predicate": screen_predicate,
    "topic": screen_topic, "binding": screen_binding,
    "cloze": screen_cloze, "chinese": screen_chinese,
}


def print_rows(rows: list[Row], examples: bool) -> None:
    print(f"{'screen':<12} {'set':<22} {'case':<26} {'expect':<6} {'fired':>6} {'of':>6} "
          f"{'rate':>7}")
    for r in rows:
        rate = r["fired"] / r["n"] if r["n"] else 0.0
        print(f"{r['screen']:<12} {r['set'][:22]:<22} {r['case'][:26]:<26} {r['expect']:<6} "
              f"{r['fired']:>6} {r['n']:>6} {rate:>7.1%}")
        if examples and r["example"]:
            print(f"{'':<12}   e.g. {r['example']}")


# -- inventory -------------------------------------------------------------------------------


def load_results(path: Path) -> list[dict[str, Any]]:
    """The result lines of one run (a results.jsonl, or a directory holding one)."""
    if path.is_dir():  # an eval --out folder: results.jsonl, or a small-corpus run's items
        found = sorted(path.glob("results.jsonl")) or sorted(path.glob("*/*.items.jsonl"))
        if len(found) != 1:
            raise SystemExit(f"{path}: expected one results.jsonl or *.items.jsonl, found "
                             f"{[str(f) for f in found] or 'none'}")
        path = found[0]
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return [r for r in rows if "status" in r]


def _key(row: dict[str, Any]) -> str:
    return str(row.get("id") or row.get("question") or row.get("q") or "")


def outcome(row: dict[str, Any]) -> str:
    """right / wrong / refused, from a first-corpus grade or an eval line."""
    if "grade" in row:
        return str(row["grade"])
    answered = row["status"] == "answered"
    if not row.get("answerable", True):
        return "wrong" if answered else "right"
    if not answered:
        return "refused"
    return "right" if row.get("answer_match") else "wrong"


def verified(row: dict[str, Any]) -> bool:
    """Answered with every claim supported."""
    if "verified" in row:
        return bool(row["verified"])
    verdicts = row.get("verdicts") or []
    return row["status"] == "answered" and bool(verdicts) and all(
        v == "supported" for v in verdicts)


def summary(rows: list[dict[str, Any]]) -> Counter[str]:
    c: Counter[str] = Counter(outcome(r) for r in rows)
    c["wrong as verified"] = sum(outcome(r) == "wrong" and verified(r) for r in rows)
    return c


def inventory(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The rule table with firings and outcomes over ``runs`` (printed and returned)."""
    from grounded_rag.verification.rules import RULES

    rows = [r for run in runs for r in run]
    missing = sum("rules_fired" not in r for r in rows)
    print(f"{len(rows)} questions in {len(runs)} run(s)"
          + (f"; {missing} recorded no firings (run before the rules table)" if missing else ""))
    print(f"{'rule':<18} {'mechanism':<23} {'fired on':>8} {'right':>5} {'wrong':>5} "
          f"{'refused':>7}  written from")
    table = []
    retired = sorted({n for r in rows for n in (r.get("rules_fired") or {})} - set(RULES))
    for name, mechanism, origin in [
            *((n, rule.mechanism, rule.written_from) for n, rule in RULES.items()),
            *((n, "(retired)", "no longer in the table") for n in retired)]:
        hit = [r for r in rows if (r.get("rules_fired") or {}).get(name)]
        c = Counter(outcome(r) for r in hit)
        print(f"{name:<18} {mechanism:<23} {len(hit):>8} {c['right']:>5} {c['wrong']:>5} "
              f"{c['refused']:>7}  {origin}")
        table.append({"rule": name, "mechanism": mechanism, "fired": len(hit), **c})
    never = [t["rule"] for t in table if not t["fired"] and t["mechanism"] != "(retired)"]
    print(f"never fired on these runs: {', '.join(never) or '-'}")
    return table


def leave_out(base: list[dict[str, Any]], groups: list[tuple[list[str], list[dict[str, Any]]]]
              ) -> None:
    """Each switched-off group's outcomes against the base run's, question by question."""
    by_key = {_key(r): r for r in base}
    b = summary(base)
    print(f"base: right {b['right']} wrong {b['wrong']} (as verified {b['wrong as verified']})"
          f" refused {b['refused']} of {len(base)}")
    for names, rows in groups:
        a = summary(rows)
        fired_in_base = {_key(r) for r in base
                         if any((r.get("rules_fired") or {}).get(n) for n in names)}
        changed = [(k, by_key[k], r) for r in rows if (k := _key(r)) in by_key
                   and outcome(by_key[k]) != outcome(r)]
        explained = [c for c in changed if c[0] in fired_in_base]
        print(f"\nwithout {','.join(names)}: right {a['right']} ({a['right'] - b['right']:+d}) "
              f"wrong {a['wrong']} ({a['wrong'] - b['wrong']:+d}; as verified "
              f"{a['wrong as verified']}, {a['wrong as verified'] - b['wrong as verified']:+d}) "
              f"refused {a['refused']} ({a['refused'] - b['refused']:+d}); fired in base on "
              f"{len(fired_in_base)} question(s); outcome changed on {len(changed)}, "
              f"{len(explained)} of them where the group fired")
        for k, was, now in changed:
            mark = "" if k in fired_in_base else "  (group did not fire: noise)"
            print(f"  {outcome(was)} -> {outcome(now)}: {k[:90]}{mark}")


def inventory_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="screens.py inventory",
                                 description="the rule table over recorded runs")
    ap.add_argument("results", nargs="*", type=Path, help="result files (or eval --out dirs)")
    ap.add_argument("--base", type=Path, help="a run with every rule on")
    ap.add_argument("--without", action="append", default=[], metavar="NAMES=FILE",
                    help="a run with the comma-separated rules NAMES switched off")
    add_result_args(ap)
    args = ap.parse_args(argv)
    if args.without and not args.base:
        ap.error("--without needs --base")
    if not args.results and not args.base:
        ap.error("give result files, or --base with --without")
    paths = [*args.results, *([args.base] if args.base else [])]
    table = inventory([load_results(p) for p in paths])
    if args.base and args.without:
        groups = []
        for spec in args.without:
            names, sep, file = spec.partition("=")
            if not sep:
                ap.error(f"--without {spec!r}: expected NAMES=FILE")
            groups.append(([n for n in names.split(",") if n], load_results(Path(file))))
        print()
        leave_out(load_results(args.base), groups)
    write_result(args.json, "screens inventory", {"rules": table}, quick=args.quick)
    return 0


QUICK_LIMIT = 150
"""Items per set under ``--quick``: every screen's path runs, in well under a minute."""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["inventory"]:
        return inventory_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--screens", default=",".join(SCREENS), help="comma-separated screens")
    ap.add_argument("--limit", type=int, default=None, help="items per set (default: all)")
    ap.add_argument("--examples", action="store_true", help="print each row's first example")
    add_result_args(ap)
    args = ap.parse_args(argv)
    names = [n for n in args.screens.split(",") if n]
    unknown = [n for n in names if n not in SCREENS]
    if unknown:
        ap.error(f"unknown screen(s) {unknown}; choose from {', '.join(SCREENS)}")
    limit = args.limit or (QUICK_LIMIT if args.quick else None)
    rows: list[Row] = []
    seconds = {}
    for name in names:
        started = time.perf_counter()
        rows += SCREENS[name](limit)
        seconds[name] = round(time.perf_counter() - started, 1)
    if not rows:
        print(f"skip: no evaluation data under {EVAL_DIR}; nothing screened", file=sys.stderr)
    print_rows(rows, args.examples)
    print("seconds: " + ", ".join(f"{k} {v}" for k, v in seconds.items())
          + f"; items per set: {limit or 'all'}; no model")
    write_result(args.json, "screens", {"limit": limit, "seconds": seconds, "rows": rows},
                 quick=args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
