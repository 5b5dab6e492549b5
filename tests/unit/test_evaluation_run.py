"""Evaluation harness end to end with fakes: verify and answer tasks, resume, reports, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grounded_rag.cli import main
from grounded_rag.evaluation import batching_check, run_eval
from grounded_rag.verification.base import ClaimToCheck, ClaimVerdict
from grounded_rag.verification.cascade import CascadeVerifier
from tests.fakes import ScriptedChatModel, ScriptedVerifier, answer, evidence


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def halueval(tmp_path: Path) -> Path:
    """Four QA pairs; the fake verifier flags answers containing 'wrong'."""
    knowledge = "The river flows through the old town and reaches the sea at the harbour."
    rows = [
        {"id": "a:right", "knowledge": knowledge, "question": "Where does the river end?",
         "answer": "at the harbour", "label": 0},
        {"id": "a:hallucinated", "knowledge": knowledge, "question": "Where does the river end?",
         "answer": "wrong lake", "label": 1},
        {"id": "b:right", "knowledge": knowledge, "question": "What does the river cross?",
         "answer": "wrong old town", "label": 0},  # a false alarm
        {"id": "b:hallucinated", "knowledge": knowledge, "question": "What does it cross?",
         "answer": "the mountains", "label": 1},  # a miss
    ]
    return write_jsonl(tmp_path / "halueval_qa" / "pairs.dev.jsonl", rows)


def wrong_rule(text: str) -> tuple[str, str]:
    return ("neutral", "not stated") if "wrong" in text else ("supported", "")


class CountingScripted(ScriptedVerifier):
    """Supported unless 'wrong'; optionally breaks on a given claim."""

    def __init__(self, interrupt_on: str = "") -> None:
        super().__init__(wrong_rule)
        self.interrupt_on = interrupt_on

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        if self.interrupt_on and any(self.interrupt_on in c["text"] for c in claims):
            raise KeyboardInterrupt
        return super().verify(claims, language=language)


def test_verify_task_metrics_match_hand_count(tmp_path: Path) -> None:
    fake = CountingScripted()
    report = run_eval(halueval(tmp_path), verifier=fake, out_dir=tmp_path / "out",
                      progress=False)
    m = report["metrics"]
    # gold H,F: a:hallucinated caught (tp), b:right false alarm (fp), b:hallucinated missed
    # (fn), a:right correct (tn).
    assert m["confusion"] == {"hallucinated": {"hallucinated": 1, "faithful": 1},
                              "faithful": {"hallucinated": 1, "faithful": 1}}
    assert m["balanced_accuracy"] == 0.5
    assert m["precision"] == 0.5 and m["recall"] == 0.5 and m["f1"] == 0.5
    assert m["auroc"] == 0.5  # fake support 0.95 / 0.1 -> scores follow the verdicts
    assert m["cost"]["verifier_calls_per_item"] == 1
    assert m["cost"]["model_calls_per_item"] == 1
    assert m["cost"]["claims"] == 4
    assert len(fake.calls) == 4
    assert report["n_evaluated"] == 4 and report["n_errors"] == 0
    targets = {t["metric"]: t for t in report["targets"]}
    assert targets["balanced_accuracy"]["met"] is False


def test_verify_task_in_sampled_mode_judges_only_the_sample(tmp_path: Path) -> None:
    fake = CountingScripted()
    report = run_eval(halueval(tmp_path), verifier=fake, out_dir=tmp_path / "out",
                      progress=False, settings={"verify_mode": "sampled",
                                                "verify_sample_rate": "0"})
    # None of the four answers carries a number, date, negation or name: nothing is judged,
    # every item passes (an unchecked claim passes in an answer too).
    assert fake.calls == []
    m = report["metrics"]
    assert m["cost"]["checked_claim_share"] == 0.0
    assert m["recall"] == 0.0 and m["true_negative_rate"] == 1.0
    assert report["settings"] == {"verify_mode": "sampled", "verify_sample_rate": 0.0}
    # A sampled run caches apart from a full one; a preset resolves like in the graph.
    full = run_eval(halueval(tmp_path), verifier=CountingScripted(), out_dir=tmp_path / "out",
                    progress=False, settings={"preset": "cost_optimized",
                                              "verify_sample_rate": 1})
    assert full["n_cached"] == 0 and full["metrics"]["cost"]["checked_claim_share"] == 1.0
    assert full["metrics"]["recall"] == 0.5
    again = run_eval(halueval(tmp_path), verifier=CountingScripted(), out_dir=tmp_path / "out",
                     progress=False, settings={"preset": "fast"})  # deferred = full verdicts
    assert again["n_cached"] == 0 and again["metrics"]["recall"] == 0.5


def test_three_way_and_sentence_level(tmp_path: Path) -> None:
    jnli = write_jsonl(tmp_path / "jnli" / "jnli.jsonl", [
        {"sentence_pair_id": "0", "sentence1": "猫が窓のそばで寝ている。",
         "sentence2": "猫が寝ている。", "label": "entailment"},
        {"sentence_pair_id": "1", "sentence1": "犬が公園を走っている。",
         "sentence2": "wrong 犬が泳いでいる。", "label": "contradiction"},
        {"sentence_pair_id": "2", "sentence1": "子供が本を読んでいる。",
         "sentence2": "wrong 子供が図書館にいる。", "label": "neutral"},
    ])
    report = run_eval(jnli, verifier=ScriptedVerifier(wrong_rule), out_dir=None, progress=False)
    m = report["metrics"]
    assert m["accuracy_3way"] == pytest.approx(0.6667)  # contradiction predicted neutral
    assert m["confusion_3way"]["contradicted"]["neutral"] == 1
    assert m["balanced_accuracy"] == 1.0
    jhars = write_jsonl(tmp_path / "jhars" / "r.jsonl", [
        {"id": "1:m", "question": "Q",
         "reference_text": "図書館は朝に開館します。本を借りられます。",
         "response": "x", "response_label": 1, "sentences": [
             {"sentence": "図書館は朝に開館します。", "hallucination_type": "No_hallucination"},
             {"sentence": "wrong 図書館にはプールがあります。",
              "hallucination_type": "Unverifiable"}]},
        {"id": "2:m", "question": "Q", "reference_text": "図書館は朝に開館します。",
         "response": "x", "response_label": 0, "sentences": [
             {"sentence": "図書館は朝に開館します。", "hallucination_type": "No_hallucination"}]},
    ])
    fake = ScriptedVerifier(wrong_rule)
    report = run_eval(jhars, verifier=fake, out_dir=None, progress=False)
    assert report["metrics"]["f1"] == 1.0
    sentence = report["metrics"]["sentence_level"]
    assert sentence["n"] == 3 and sentence["f1"] == 1.0
    assert fake.calls[0] == ["図書館は朝に開館します。", "wrong 図書館にはプールがあります。"]
    assert len(fake.calls) == 2  # one batched call per response


def test_resume_skips_done_items_and_survives_an_interrupt(tmp_path: Path) -> None:
    path = halueval(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_eval(path, verifier=CountingScripted(interrupt_on="the mountains"), out_dir=out,
                 progress=False, sample="head")
    cache_files = list((out / "cache").glob("*.jsonl"))
    assert len(cache_files) == 1
    assert len(cache_files[0].read_text().splitlines()) == 3  # done before the interrupt
    fake = CountingScripted()
    report = run_eval(path, verifier=fake, out_dir=out, progress=False, sample="head")
    assert len(fake.calls) == 1  # only the item that was interrupted
    assert report["n_cached"] == 3 and report["n_evaluated"] == 4
    again = CountingScripted()
    run_eval(path, verifier=again, out_dir=out, progress=False)
    assert again.calls == []
    fresh = CountingScripted()
    report = run_eval(path, verifier=fresh, out_dir=out, progress=False, resume=False)
    assert len(fresh.calls) == 4 and report["n_cached"] == 0


def test_errors_are_recorded_not_fatal(tmp_path: Path) -> None:
    class Broken(ScriptedVerifier):
        def verify(self, claims, *, language):  # type: ignore[no-untyped-def]
            if any("lake" in c["text"] for c in claims):
                raise RuntimeError("model crashed")
            return super().verify(claims, language=language)

    report = run_eval(halueval(tmp_path), verifier=Broken(wrong_rule), out_dir=tmp_path / "o",
                      progress=False)
    assert report["n_errors"] == 1 and report["n_evaluated"] == 3
    assert "model crashed" in report["errors"][0]["error"]


def test_reports_are_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = run_eval(halueval(tmp_path), verifier=CountingScripted(), out_dir=out,
                      progress=False, check_batching=True)
    files = report["files"]
    for key in ("json", "markdown", "chart", "summary_markdown", "summary_chart"):
        assert Path(files[key]).exists(), key
    assert Path(files["chart"]).read_bytes()[:4] == b"\x89PNG"
    saved = json.loads(Path(files["json"]).read_text())
    assert saved["metrics"]["balanced_accuracy"] == 0.5
    markdown = Path(files["markdown"]).read_text()
    assert "balanced_accuracy" in markdown and "HHEM-2.1-Open" in markdown
    assert "halueval_qa" in Path(files["summary_markdown"]).read_text()
    assert report["batching_check"]["constant"] is True


def test_batching_check_catches_per_claim_model_calls() -> None:
    batched = CascadeVerifier(ScriptedVerifier())
    check = batching_check(batched, sizes=(1, 3, 6))
    assert [r["model_calls"] for r in check["rows"]] == [1, 1, 1]
    assert check["constant"] is True

    class PerClaim:
        def __init__(self) -> None:
            self.inner = ScriptedVerifier()

        def verify(self, claims, *, language):  # type: ignore[no-untyped-def]
            return [self.inner.verify([c], language=language)[0] for c in claims]

    check = batching_check(PerClaim(), sizes=(1, 3, 6), language="ja")
    assert [r["model_calls"] for r in check["rows"]] == [1, 3, 6]
    assert check["constant"] is False


# -- answer task --------------------------------------------------------------------------

PASSAGES = [
    {"pid": "river:0", "title": "川", "text": "その川は古い町を流れ、港で海に注ぐ。"},
    {"pid": "tower:0", "title": "塔", "text": "時計塔は駅の前に立っている。"},
]


class AllDocs:
    """Returns every document as strong evidence (retrieval is not under test here)."""

    def __init__(self, docs: list[dict[str, str]], relevance: float = 0.9) -> None:
        self.docs = docs
        self.relevance = relevance

    def retrieve(self, query: str, k: int):  # type: ignore[no-untyped-def]
        return [evidence(f"{d['id']}#sec0", d["text"], relevance=self.relevance)
                for d in self.docs][:k]


def squad(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "jsquad_ja" / "passages.jsonl", PASSAGES)
    return write_jsonl(tmp_path / "jsquad_ja" / "questions.dev.jsonl", [
        {"id": "q1", "question": "川はどこで海に注ぐ?", "answers": ["港"], "gold_pid": "river:0",
         "is_impossible": False},
        {"id": "q2", "question": "時計塔はどこに立っている?", "answers": ["駅の前"],
         "gold_pid": "tower:0", "is_impossible": False},
    ])


def test_answer_task_on_a_squad_style_set(tmp_path: Path) -> None:
    generator = ScriptedChatModel(script={"CitedAnswer": [
        # q1: a phantom source first, then a revision with a real, verbatim citation.
        answer(("川は港で海に注ぐ。", "ghost#sec0")),
        answer(("川は港で海に注ぐ。", "river:0#sec0")),
        # q2: right first time (not a copy of the passage's sentence: the judge reads it).
        answer(("その時計塔は駅の前に立っている。", "tower:0#sec0")),
    ]})
    verifier = ScriptedVerifier()
    report = run_eval(squad(tmp_path), generator=generator, verifier=verifier,
                      retriever_factory=AllDocs, out_dir=tmp_path / "out", progress=False,
                      sample="head", settings={"extractor_model": "rules"})
    m = report["metrics"]
    assert report["task"] == "answer" and report["n_errors"] == 0, report["errors"]
    assert m["answer_rate"] == 1.0
    assert m["source_recall"] == 1.0
    assert m["cited_source_recall"] == 1.0
    assert m["answer_match_rate"] == 1.0
    assert m["phantom_citation_rate"] == pytest.approx(1 / 3, abs=1e-3)  # 1 of 3 citations
    assert m["regenerations_per_question"] == 0.5
    assert m["citation_precision"] == 1.0
    assert m["hallucination_rate"] == 0.0
    assert m["mean_grounding_score"] == 1.0
    assert m["abstention_precision"] is None  # nobody abstained
    assert set(m["latency_ms"]) >= {"retrieve", "generate", "verify_claims", "total"}
    assert m["cost"]["verifier_calls_per_verified_attempt"] == pytest.approx(1.0)
    assert m["cost"]["verifier_calls_per_answer"] == 1.5  # q1 verified twice
    # Every verified attempt is logged with its claims' verdicts and support scores.
    [cache] = (tmp_path / "out" / "cache").glob("*.jsonl")
    rows = [json.loads(line)["result"] for line in cache.read_text("utf-8").splitlines()]
    for row in rows:
        assert len(row["checks"]) == row["verifier_calls"]
        assert all(c["verdict"] == "supported" and c["support"] == 0.95
                   for attempt in row["checks"] for c in attempt)
    assert sorted(len(r["checks"]) for r in rows) == [1, 2]
    assert Path(report["files"]["chart"]).exists()
    # The final claims keep what they were judged against, for an audit by another judge.
    for row in rows:
        [claim] = row["final_claims"]
        assert claim["verdict"] == "supported" and claim["evidence"]
        assert claim["evidence"][0]["text"] and claim["evidence"][0]["source_id"]
        assert row["verification"] == "complete" and row["checked_claims"] == 1
    assert m["unchecked_claim_rate"] == 0.0


def test_answer_task_nomiracl_abstention_and_baselines(tmp_path: Path) -> None:
    rows = []
    for i, answerable in enumerate([True, False, False]):
        rows.append({
            "id": f"ja:{i}", "lang": "ja", "question": "塔はどこ?", "answerable": answerable,
            "passages": [{"docid": f"d{i}", "title": "塔", "text": "時計塔は駅の前に立っている。"}],
            "baseline_outputs": {"big-model": "Yes, answer is present.",
                                 "careful-model": "I don't know"},
        })
    path = write_jsonl(tmp_path / "nomiracl" / "nomiracl.dev.jsonl", rows)
    seen: list[list[str]] = []

    def factory(docs):  # type: ignore[no-untyped-def]
        seen.append([d["id"] for d in docs])
        # The unanswerable queries get weak evidence: the retrieval gate abstains.
        return AllDocs(docs, relevance=0.9 if docs[0]["id"] == "d0" else 0.0005)

    generator = ScriptedChatModel(script={"CitedAnswer": [
        answer(("時計塔は駅の前に立っている。", "d0#sec0"))]})
    report = run_eval(path, generator=generator, verifier=ScriptedVerifier(),
                      retriever_factory=factory, out_dir=None, progress=False,
                      settings={"extractor_model": "rules"})
    m = report["metrics"]
    assert seen == [["d0"], ["d1"], ["d2"]]  # each query's own passages
    assert m["abstention_rate_unanswerable"] == 1.0
    assert m["answer_rate_answerable"] == 1.0
    assert m["abstention_precision"] == 1.0
    assert m["abstain_reasons"] == {"retrieval_gate": 2}
    assert len(generator.calls_for("CitedAnswer")) == 1  # the gate calls no model
    base = m["baselines"]
    assert base["big-model"]["abstention_rate_unanswerable"] == 0.0
    assert base["careful-model"]["abstention_rate_unanswerable"] == 1.0
    assert base["grounded-rag (this run)"]["abstention_rate_unanswerable"] == 1.0
    assert {t["metric"]: t["met"] for t in report["targets"]} == {
        "abstention_rate_unanswerable": True, "answer_rate_answerable": True}


# -- CLI ----------------------------------------------------------------------------------


@pytest.fixture
def fake_default_verifier(monkeypatch: pytest.MonkeyPatch) -> ScriptedVerifier:
    """Route the CLI's default verifier to a fake (no local model in unit tests)."""
    import grounded_rag.models as models

    fake = CountingScripted()
    monkeypatch.setattr(models, "resolve_verifier", lambda v, g: CascadeVerifier(fake))
    return fake


def test_cli_eval_json(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                       fake_default_verifier: ScriptedVerifier) -> None:
    out = tmp_path / "out"
    code = main(["eval", str(halueval(tmp_path)), "--limit", "2", "--json", "--out", str(out),
                 "--no-progress"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dataset"] == "halueval_qa" and report["n_evaluated"] == 2
    assert report["model"] == "local"
    assert "balanced_accuracy" in report["metrics"]
    assert len(fake_default_verifier.calls) == 2
    code = main(["eval", str(halueval(tmp_path)), "--limit", "2", "--out", str(out),
                 "--no-progress"])
    text = capsys.readouterr().out
    assert code == 0 and "2 cached" in text and "target balanced accuracy" in text
    assert len(fake_default_verifier.calls) == 2  # the rerun reused the cache


def test_cli_eval_missing_data_is_a_clear_skip(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", str(tmp_path / "absent.jsonl"), "--no-progress"])
    assert code == 2
    assert "GROUNDED_RAG_EVAL_DIR" in capsys.readouterr().err


def test_cli_rejects_a_task_the_set_lacks(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          fake_default_verifier: ScriptedVerifier) -> None:
    code = main(["eval", str(halueval(tmp_path)), "--task", "answer", "--out",
                 str(tmp_path / "o"), "--no-progress"])
    assert code == 2
    assert "supports --task verify" in capsys.readouterr().err


def test_a_yes_no_gold_is_a_verdict_not_two_letters_anywhere():
    from grounded_rag.evaluation._answer import contains_answer

    assert contains_answer("No. Lysichiton is a genus in the family Araceae[1].", ["no"])
    assert contains_answer("Yes, both are operas[1].", ["yes"])
    assert contains_answer("They differ[1]. No, they are not the same.", ["no"])
    # "no" inside another word once spaces are folded: "November", "North", "and now"
    assert not contains_answer("Theo van Gogh (23 July 1957 - 2 November 2004) was Dutch[1].",
                               ["no"])
    assert not contains_answer("Lake Yojoa is in Honduras, in North America[1].", ["no"])
    assert not contains_answer("There is no such airport[1].", ["no"])
    assert not contains_answer("Yes. They are the same[1].", ["no"])
    # other golds are still found with spaces and case folded
    assert contains_answer("Casey Kasem hosted the awards[1].", ["casey  kasem"])


def test_a_full_name_with_a_quoted_nickname_is_found_as_the_name_it_goes_by():
    from grounded_rag.evaluation._answer import contains_answer

    gold = ['Kemal Amin "Casey" Kasem']
    assert contains_answer("Casey Kasem hosted the American Video Awards in 1983[1].", gold)
    assert contains_answer("Kemal Amin \u201cCasey\u201d Kasem hosted them[1].",
                           ["Kemal Amin \u201cCasey\u201d Kasem"])
    assert not contains_answer("Casey Jones hosted them[1].", gold)
    assert not contains_answer("Kemal hosted them[1].", gold)
