"""Small-corpus evaluation: collection builder, gate report and refusal attribution (synthetic)."""

from __future__ import annotations

import json

import pytest

from grounded_rag.evaluation._small_corpus import (
    CROSS,
    CROSS_OFF_TOPIC,
    DEV,
    HELDOUT,
    OFF_TOPIC,
    OTHER_TITLE,
    YES_NO,
    Sizes,
    Sources,
    build_small_corpus,
    question_form,
    sample_questions,
    split_of,
)
from grounded_rag.evaluation._small_corpus_gate import (
    cross_ratio,
    fit_threshold,
    gate_report,
    run_gate,
)
from grounded_rag.evaluation._small_corpus_loop import (
    loop_markdown,
    loop_record,
    loop_report,
    refusal_stage,
)


def _titles(n: int, split: str, prefix: str) -> list[str]:
    """Titles whose jsquad collection falls in ``split`` (the split is a fixed id hash)."""
    out, i = [], 0
    while len(out) < n:
        title = f"{prefix}{i}"
        if split_of(f"jsquad:{title}") == split:
            out.append(title)
        i += 1
    return out


def _sources() -> Sources:
    titles = _titles(3, DEV, "記事") + _titles(2, HELDOUT, "記事")
    passages, questions = [], []
    for t in titles:
        for s in range(4):
            passages.append({"pid": f"{t}:{s}", "title": t,
                             "text": f"{t} [SEP] {t}の第{s}節は項目{s}について述べる。"})
        for s in range(3):
            questions.append({"id": f"{t}q{s}", "question": f"{t}の第{s}節は何について述べるか。",
                              "answers": [f"項目{s}"], "gold_pid": f"{t}:{s}"})
    en_pairs = []
    for i in range(60):
        question = (f"Is Alpha{i} older than Beta{i}?" if i % 3 == 0
                    else f"Which city did Person{i} found?")
        en_pairs.append({"id": f"{i}:right", "example": i, "label": 0,
                         "knowledge": f"Person{i} founded City{i}. Alpha{i} predates Beta{i}.",
                         "question": question, "answer": "yes" if i % 3 == 0 else f"City{i}"})
        en_pairs.append({"id": f"{i}:hallucinated", "example": i, "label": 1,
                         "knowledge": f"Person{i} founded City{i}. Alpha{i} predates Beta{i}.",
                         "question": question, "answer": "wrong"})
    asked = {"ja": "話題外の質問{}はどれですか？", "en": "Off-topic {}?"}
    no_answer = [{"id": f"{lang}:{i}", "lang": lang, "answerable": False,
                  "question": asked[lang].format(i)} for lang in ("ja", "en") for i in range(12)]
    no_answer += [{"id": "ja:ok", "lang": "ja", "question": "答えのある質問？", "answerable": True}]
    xlang = [{"id": f"{titles[0]}q1", "question_en": "What does section 1 describe?",
              "gold_pid": f"{titles[0]}:1", "answers_en": ["item 1"], "file": "xlang_en_ja.dev"}]
    return Sources(ja_sets={"jsquad": (passages, questions)}, en_pairs=en_pairs,
                   no_answer=no_answer, xlang=xlang)


SIZES = Sizes(max_sections=3, answerable=2, other_title=2, off_topic=1, cross_off_topic=1,
              en_group=5, en_collections=6, mixed_en_docs=2)


def test_builder_collections_and_questions() -> None:
    data = build_small_corpus(_sources(), seed=1, sizes=SIZES)
    again = build_small_corpus(_sources(), seed=1, sizes=SIZES)
    assert [i.id for i in data.items] == [i.id for i in again.items]  # deterministic
    ids = [i.id for i in data.items]
    assert len(ids) == len(set(ids))
    ja = [c for c in data.collections.values() if c.source == "jsquad"]
    assert len(ja) == 5 and all(len(c.documents) <= SIZES.max_sections for c in ja)
    assert all("[SEP]" not in d["text"] for c in ja for d in c.documents)
    en = [c for c in data.collections.values() if c.source == "halueval"]
    assert len(en) == 6 and all(len(c.documents) == 5 for c in en)
    questions_of = {i.question: i.collection for i in data.items if i.answerable}
    for item in data.items:
        col = data.collections[item.collection]
        assert item.split == col.split
        doc_ids = {d["id"] for d in col.documents}
        if item.answerable:
            assert item.gold_doc_ids and set(item.gold_doc_ids) <= doc_ids
            assert item.answers
        else:
            assert not set(item.gold_doc_ids) & doc_ids
        if item.qtype == OTHER_TITLE:
            source = data.collections[questions_of[item.question]]
            assert source.id != col.id and source.split == col.split  # never across parts
        if item.qtype in (OFF_TOPIC, CROSS_OFF_TOPIC):
            assert "話題外" in item.question or "Off-topic" in item.question  # unanswerable only
            assert item.language == ("en" if item.qtype == CROSS_OFF_TOPIC else col.language
                                     if col.language != "mixed" else "en")
    kinds = {(i.language, i.group, i.answerable) for i in data.items}
    assert ("ja", "factoid", True) in kinds
    assert ("en", YES_NO, True) in kinds and ("en", "factoid", True) in kinds
    assert ("en", CROSS, True) in kinds and ("ja", OTHER_TITLE, False) in kinds
    assert ("en", f"{OTHER_TITLE}/{YES_NO}", False) in kinds
    cross = [i for i in data.items if i.qtype == CROSS]
    # the English renderings of the gold answer first, then the Japanese gold itself
    assert len(cross) == 1 and cross[0].answers == ["item 1", "項目1"]
    mixed = data.collections[cross[0].collection]
    assert any(d["id"].startswith("doc-") for d in mixed.documents)  # English distractors
    assert {i.split for i in data.items} == {DEV, HELDOUT}


def test_question_form_and_sampling() -> None:
    assert question_form("Are both A and B plants?", "en") == YES_NO
    assert question_form("Which island is larger?", "en") == "factoid"
    assert question_form("東京は首都ですか", "ja") == "factoid"
    data = build_small_corpus(_sources(), seed=0, sizes=SIZES)
    part = data.part(DEV)
    picked = sample_questions(part, 5, seed=3)
    assert len(picked) == 5 and picked == sample_questions(part, 5, seed=3)
    assert len({(i.language, i.group) for i in picked}) == 5  # one per row first
    assert {i.language for i in sample_questions(part, 2, seed=0)} == {"ja", "en"}


def _ev(doc: str, text: str, relevance: float) -> dict[str, object]:
    return {"doc_id": doc, "source_id": f"{doc}#sec0", "text": text, "relevance": relevance}


class _FakeRetriever:
    """Fixed results per (collection, question): the same question is asked of several."""

    def __init__(self, table: dict[tuple[str, str], list[dict[str, object]]],
                 docs: list[dict[str, str]], data) -> None:
        self.table = table
        self.collection = next(c.id for c in data.collections.values() if c.documents is docs)

    def retrieve(self, query: str, k: int) -> list[dict[str, object]]:
        return self.table[(self.collection, query)][:k]


def test_gate_records_threshold_fit_and_report(tmp_path) -> None:
    data = build_small_corpus(_sources(), seed=0, sizes=SIZES)
    table: dict[tuple[str, str], list[dict[str, object]]] = {}
    for n, item in enumerate(data.items):
        text = "日本語の節" if item.language == "ja" else "An English section."
        gold = item.gold_doc_ids[0] if item.gold_doc_ids else "x"
        rel = 0.2 + 0.01 * (n % 50) if item.answerable else 0.05
        other = "無関係な節" if item.language == "ja" else "Unrelated English text."
        table[(item.collection, item.question)] = [_ev("other", other, 0.1),
                                                   _ev(gold, text, rel)]
        if item.qtype == CROSS:  # only Japanese evidence matches: cosine-only, low relevance
            table[(item.collection, item.question)] = [_ev("doc-1", "Unrelated English text.", 0.1),
                                    _ev(gold, "日本語の答え", 0.05)]
    records, timings = run_gate(data.part(DEV), data.collections, top_k=6, threshold=0.26,
                                factory=lambda docs: _FakeRetriever(table, docs, data),
                                progress=False)
    assert set(timings) == {"build_s", "query_s"}
    cross = [r for r in records if r["type"] == CROSS]
    assert cross and all(r["same_language_above_gold"] and r["gold_rank"] == 2 for r in cross)
    # 0.05 of Japanese evidence for an English question clears the other-language gate
    assert all(r["kept"] and r["gate_score"] == pytest.approx(0.05 / cross_ratio(), abs=1e-3)
               for r in cross)
    ja = [r for r in records if r["language"] == "ja" and r["answerable"]]
    assert all(r["gold_rank"] == 2 and r["kept"] == (r["best_relevance"] >= 0.26) for r in ja)
    report = gate_report({DEV: records}, threshold=0.26, top_k=6)
    assert report["gate_score_mismatches"] == 0
    fitted = report["fitted"]["ja"]
    ja_scores = [r["gate_score"] for r in ja]
    assert fitted == min(ja_scores)  # fewer than 50 questions: 98% keeps every one
    rows = {(r["language"], r["type"]): r for r in report["splits"][DEV]["rows"]}
    assert rows[("ja", "factoid")]["kept_fitted"] == 1.0
    assert rows[("ja", "factoid")]["recall_at_1"] == 0.0
    assert rows[("ja", "factoid")]["recall_at_6"] == 1.0
    assert rows[("ja", OTHER_TITLE)]["kept_current"] == 0.0
    summary = report["splits"][DEV]["summary"]["ja"]
    assert summary["let_through_fitted"] == 0.0 and summary["auroc"] == 1.0
    # "An English section." names no yes/no question's predicate: the second pre-model check
    yes_no = [r for r in records if r["type"] == "yes-no"]
    assert yes_no and all(r["predicate_absent"] for r in yes_no)
    assert not any(r["predicate_absent"] for r in records if r["type"] == "factoid")
    en = [r for r in records if r["language"] == "en" and r["answerable"]]
    assert report["splits"][DEV]["summary"]["en"]["predicate_absent_answerable"] == \
        pytest.approx(sum(r["kept"] and r["predicate_absent"] for r in en) / len(en), abs=1e-4)


def test_fit_threshold_keeps_98_percent() -> None:
    scores = [i / 100 for i in range(100)]
    t = fit_threshold(scores)
    assert t == 0.02 and sum(s >= t for s in scores) == 98
    assert fit_threshold([]) is None


def _result(status: str, findings: list[str], attempts: int, *, reason: str = "",
            match: bool | None = None, verdicts: list[str] | None = None,
            drafted: list[bool] | None = None) -> dict[str, object]:
    return {"status": status, "findings": findings, "attempts": attempts,
            "abstain_reason": reason, "answer_match": match, "verdicts": verdicts or [],
            "drafts": [{"answer_match": d} for d in drafted or []]}


def test_refusal_attribution_and_loop_report() -> None:
    assert refusal_stage(_result("answered", [], 1)) is None
    assert refusal_stage(_result("abstained", ["weak_evidence"], 0)) == "weak_evidence"
    assert refusal_stage(_result("abstained", ["predicate_absent"], 0)) == "predicate_absent"
    assert refusal_stage(_result("abstained", ["no_answer_in_sources"], 0)) == \
        "no_answer_in_sources"
    assert refusal_stage(_result("abstained", [], 1, reason="generator_declined")) == \
        "generator_declined"
    assert refusal_stage(_result("abstained", ["off_question"], 3)) == "off_question"
    assert refusal_stage(_result("abstained", [], 3, verdicts=["neutral"])) == \
        "claims_failed_verification"
    assert refusal_stage(_result("abstained", ["phantom_source"], 1)) == "citation_check"

    data = build_small_corpus(_sources(), seed=0, sizes=SIZES)
    ja_yes = [i for i in data.items if i.language == "ja" and i.answerable][:4]
    en_no = [i for i in data.items if i.language == "en" and i.qtype == OTHER_TITLE][:2]
    results = [
        _result("answered", [], 1, match=True),
        _result("answered", [], 1, match=False, drafted=[False]),
        _result("abstained", ["weak_evidence"], 0),
        _result("abstained", ["off_question"], 2, drafted=[True, False]),
    ]
    records = [loop_record(i, r) for i, r in zip(ja_yes, results, strict=True)]
    records += [loop_record(en_no[0], _result("answered", ["off_question"], 2)),
                loop_record(en_no[1], _result("abstained", ["weak_evidence"], 0))]
    report = loop_report(records, model="fake")
    assert report["false_refusals_by_stage"] == {"weak_evidence": 1, "off_question": 1}
    assert report["unanswerable_answered"] == 1
    rows = {(r["language"], r["type"]): r for r in report["rows"]}
    ja_row = rows[("ja", "factoid")]
    assert ja_row["answered"] == 0.5 and ja_row["answered_with_expected_fact"] == 0.25
    assert ja_row["refused_by"] == {"weak_evidence": 1, "off_question": 1}
    # the off-question refusal had the fact in its first draft; the wrong answer never did
    assert ja_row["fact_drafted_lost"] == 1
    assert "| fact drafted, lost |" in loop_markdown(report)
    other = [r for (lang, kind), r in rows.items() if lang == "en" and kind.startswith(OTHER_TITLE)]
    assert sum(r["n"] for r in other) == 2
    assert sum(r["off_question_delivered"] * r["n"] for r in other) == 1
    assert sum(r["abstained"] * r["n"] for r in other) == 1


def test_run_small_corpus_gate_writes_reports(tmp_path) -> None:
    from grounded_rag.evaluation._small_corpus_run import run_small_corpus

    data = build_small_corpus(_sources(), seed=0, sizes=SIZES)
    table = {(i.collection, i.question): [_ev(i.gold_doc_ids[0] if i.gold_doc_ids else "x",
                              "日本語" if i.language == "ja" else "English text.",
                              0.5 if i.answerable else 0.1)] for i in data.items}
    report = run_small_corpus(mode="gate", split=HELDOUT, data=data, out_dir=tmp_path,
                              factory=lambda docs: _FakeRetriever(table, docs, data),
                              progress=False)
    assert list(report["splits"]) == [HELDOUT]  # dev measured for the fit, not shown
    assert report["fitted"]["ja"] == 0.5
    assert report["splits"][HELDOUT]["summary"]["ja"]["let_through_fitted"] == 0.0
    saved = json.loads((tmp_path / "small-corpus" / "gate-heldout.json").read_text())
    assert saved["splits"][HELDOUT]["n"] == len(data.part(HELDOUT))
    assert "| ja | factoid |" in (tmp_path / "small-corpus" / "gate-heldout.md").read_text()
