"""Judge heads: file format, hash checks, and how the local judges use a head (fake scorer)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from grounded_rag.local.answerability import LocalAnswerabilityJudge
from grounded_rag.local.features import CLAIM_EXTRAS, prompt_fingerprint
from grounded_rag.local.heads import Classifier, HeadError, HeadMismatchError, JudgeHead, load_head
from grounded_rag.local.scorer import Reading
from grounded_rag.local.verifier import LocalVerifier
from tests.fakes import evidence

LAYERS = (14, 18, -1)
N_EMBD = 8


def _reading(signal: float, contra: float = 0.0, *, truncated: bool = False) -> Reading:
    hidden = np.zeros((len(LAYERS), N_EMBD), dtype=np.float32)
    hidden[1, 0] = signal  # layer 18, unit 0: "supported"
    hidden[1, 1] = contra  # layer 18, unit 1: "contradicted"
    return Reading(p_yes=0.5, margin=0.0, hidden=hidden, layers=LAYERS, tokens=10,
                   truncated=truncated)


class ScriptedScorer:
    """Returns a reading per claim from keywords: 'OK' supported, 'NOT' contradicted."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []
        self.questions: list[tuple[str, str]] = []

    def read_many(self, pairs, *, language="en"):
        self.pairs.extend(pairs)
        return [_reading(3.0 if "OK" in claim else -3.0, 3.0 if "NOT" in claim else -3.0,
                         truncated="LONG" in claim) for _, claim in pairs]

    def read_questions(self, prompts):
        self.questions.extend(prompts)
        return [_reading(3.0 if "1901" in user.split("Question:")[0] else -3.0)
                for _, user in prompts]


def _linear(unit: int, dim: int) -> Classifier:
    w = np.zeros(dim, dtype=np.float32)
    w[unit] = 2.0
    return Classifier(w1=None, b1=None, w2=w, b2=0.0)


def _claim_head() -> JudgeHead:
    dim = N_EMBD + len(CLAIM_EXTRAS) + 1
    return JudgeHead(
        task="claim", layers=(18,), extras=CLAIM_EXTRAS, use_margin=True,
        mean=np.zeros(dim, dtype=np.float32), std=np.ones(dim, dtype=np.float32),
        classifiers={"support": _linear(0, dim), "contradiction": _linear(1, dim)},
        thresholds={"support": 0.5, "contradiction": 0.5},
        meta={"model_sha256": "abc", "prompt_fingerprint": prompt_fingerprint("claim")},
    )


EVIDENCE = [evidence("doc#sec0", "The museum opened in 1901. It is closed on Mondays.")]


def test_head_verdicts_are_three_way_with_reasons_naming_the_evidence():
    scorer = ScriptedScorer()
    verifier = LocalVerifier(scorer=scorer, head=_claim_head())  # type: ignore[arg-type]
    verdicts = verifier.verify(
        [{"text": "OK the museum opened in 1901.", "evidence": EVIDENCE},
         {"text": "NOT the museum opened in 1950.", "evidence": EVIDENCE},
         {"text": "The museum has a cafe LONG.", "evidence": EVIDENCE},
         {"text": "No evidence here.", "evidence": []}],
        language="en",
    )
    assert [v["verdict"] for v in verdicts] == ["supported", "contradicted", "neutral", "neutral"]
    assert verdicts[0]["support"] > 0.99 and verdicts[0]["judge"] == "head"
    assert "opened in 1901" in verdicts[1]["reason"]  # the deciding evidence sentence
    assert verdicts[1]["evidence_quote"] == "The museum opened in 1901."
    assert verdicts[2]["truncated"] is True and "truncated" not in verdicts[0]
    assert verdicts[3]["support"] == 0.0
    assert len(scorer.pairs) == 3  # no model call for a claim without evidence


def test_logit_judge_is_the_plain_threshold_on_p_yes():
    class PYes(ScriptedScorer):
        def read_many(self, pairs, *, language="en"):
            return [Reading(p_yes=0.6 if "OK" in c else 0.2, margin=0.0,
                            hidden=np.zeros((1, 1)), layers=(18,), tokens=1, truncated=False)
                    for _, c in pairs]

    verifier = LocalVerifier(scorer=PYes(), judge="logit")  # type: ignore[arg-type]
    verdicts = verifier.verify([{"text": "OK", "evidence": EVIDENCE},
                                {"text": "NOT", "evidence": EVIDENCE}], language="en")
    assert [v["verdict"] for v in verdicts] == ["supported", "neutral"]
    assert verdicts[0]["judge"] == "logit"
    with pytest.raises(ValueError, match="judge must be"):
        LocalVerifier(scorer=PYes(), judge="magic")  # type: ignore[arg-type]


def test_a_custom_model_gets_the_plain_scorer_unless_a_head_is_asked_for():
    assert LocalVerifier("local:/models/other.gguf", scorer=ScriptedScorer()).judge == "logit"  # type: ignore[arg-type]
    assert LocalVerifier(scorer=ScriptedScorer()).judge == "auto"  # type: ignore[arg-type]


def test_the_default_judge_reads_english_with_the_head_and_japanese_with_p_yes():
    """Per language, the judge that measured best on generated answers (docs/judge.md)."""

    class Both(ScriptedScorer):
        def read_many(self, pairs, *, language="en"):
            return [Reading(p_yes=0.6 if "OK" in c else 0.2, margin=0.0,
                            hidden=_reading(3.0 if "OK" in c else -3.0,
                                            3.0 if "NOT" in c else -3.0).hidden,
                            layers=LAYERS, tokens=1, truncated=False)
                    for _, c in pairs]

    verifier = LocalVerifier(scorer=Both(), head=_claim_head())  # type: ignore[arg-type]
    assert verifier.judge == "auto"
    claims = [{"text": "OK 1901.", "evidence": EVIDENCE},
              {"text": "NOT 1950.", "evidence": EVIDENCE}]
    en = verifier.verify(claims, language="en")
    ja = verifier.verify(claims, language="ja")
    assert [v["judge"] for v in en] == ["head", "head"]
    assert [v["verdict"] for v in en] == ["supported", "contradicted"]
    assert [v["judge"] for v in ja] == ["logit", "logit"]
    assert [v["verdict"] for v in ja] == ["supported", "neutral"]  # P(Yes) reads no contradiction
    assert verifier.threshold_for("ja") == 0.45 and verifier.threshold_for("en") == 0.5


def test_answerability_head_scores_each_top_passage():
    dim = N_EMBD + 5 + 1
    head = JudgeHead(
        task="answerable", layers=(18,),
        extras=("is_ja", "best_overlap", "coverage", "log_question_chars", "log_passage_chars"),
        use_margin=True, mean=np.zeros(dim, dtype=np.float32), std=np.ones(dim, dtype=np.float32),
        classifiers={"answerable": _linear(0, dim)}, thresholds={"en": 0.6, "ja": 0.7}, meta={},
    )
    scorer = ScriptedScorer()
    judge = LocalAnswerabilityJudge(scorer=scorer, head=head, passages=2)  # type: ignore[arg-type]
    passages = [evidence("a#sec0", "Tickets cost 12 euros.", title="Tickets"),
                evidence("b#sec0", "The museum opened in 1901.", title="History"),
                evidence("c#sec0", "The museum opened in 1901.", title="Not read")]
    result = judge.assess("When did the museum open?", passages, language="en")
    assert result["answerable"] and result["threshold"] == 0.6
    assert result["passages"][0]["source_id"] == "b#sec0" and len(scorer.questions) == 2
    # English is checked too: the head carries a threshold per language.
    assert judge.covers("en") and judge.covers("ja")
    assert not judge.assess("When?", passages[:1], language="en")["answerable"]


def test_head_files_round_trip_and_refuse_other_models_or_prompts(tmp_path):
    head = _claim_head()
    head.save(tmp_path / "claim.npz")
    loaded = load_head(tmp_path / "claim.npz", model_sha256="abc",
                       prompt_fingerprint=prompt_fingerprint("claim"))
    row = np.arange(N_EMBD + len(CLAIM_EXTRAS) + 1, dtype=np.float32) / 10
    assert np.allclose(loaded.proba("support", row), head.proba("support", row), atol=1e-3)
    assert loaded.thresholds == head.thresholds and loaded.layers == (18,)
    with pytest.raises(HeadMismatchError, match="sha256 abc.*running model's is other"):
        load_head(tmp_path / "claim.npz", model_sha256="other")
    with pytest.raises(HeadMismatchError, match="prompt fingerprint"):
        load_head(tmp_path / "claim.npz", prompt_fingerprint="0000")
    with pytest.raises(HeadError, match="missing.*train-judge"):
        load_head(tmp_path / "nothing.npz")
    spec = json.loads((tmp_path / "claim.json").read_text())
    spec["format"] = 99
    (tmp_path / "claim.json").write_text(json.dumps(spec))
    with pytest.raises(HeadError, match="format 99"):
        load_head(tmp_path / "claim.npz")


def test_head_inputs_follow_the_recipe_and_complain_about_missing_layers():
    head = _claim_head()
    reading = _reading(1.0)
    row = head.inputs(reading.hidden, reading.layers, 2.5, {"coverage": 0.25})
    assert row.shape == (N_EMBD + len(CLAIM_EXTRAS) + 1,)
    assert row[0] == 1.0 and row[-1] == 2.5
    assert row[N_EMBD + CLAIM_EXTRAS.index("coverage")] == 0.25
    with pytest.raises(HeadError, match="no hidden state for layers"):
        head.inputs(reading.hidden[:1], (14,), 0.0, {})


def test_prompt_fingerprint_changes_with_the_prompt(monkeypatch):
    from grounded_rag.prompts import local_verify

    before = prompt_fingerprint("claim")
    assert before == prompt_fingerprint("claim")
    monkeypatch.setattr(local_verify, "USER_EN", local_verify.USER_EN + " ")
    assert prompt_fingerprint("claim") != before
    assert prompt_fingerprint("answerable") != before


def test_the_shipped_answerability_head_leaves_english_unchecked():
    from grounded_rag.local.answerability import SHIPPED_HEAD_UNCHECKED, LocalAnswerabilityJudge

    judge = LocalAnswerabilityJudge(scorer=object(), judge="head")  # the shipped head
    assert "en" in SHIPPED_HEAD_UNCHECKED
    assert not judge.covers("en") and judge.covers("ja")
    result = judge.assess("Does it last 24 hours?", [], language="en")
    assert result["answerable"] and result["passages"] == []  # no model call


def _answerable_head(threshold: float) -> JudgeHead:
    dim = N_EMBD + 5 + 1
    return JudgeHead(
        task="answerable", layers=(18,),
        extras=("is_ja", "best_overlap", "coverage", "log_question_chars", "log_passage_chars"),
        use_margin=True, mean=np.zeros(dim, dtype=np.float32), std=np.ones(dim, dtype=np.float32),
        classifiers={"answerable": _linear(0, dim)},
        thresholds={"en": threshold, "ja": threshold}, meta={},
    )


def test_fold_heads_route_each_question_to_the_head_that_never_saw_it(tmp_path):
    from grounded_rag.training.folds import FoldedAnswerabilityJudge, write_fold_index

    _answerable_head(0.6).save(tmp_path / "fold0.npz")
    _answerable_head(0.9).save(tmp_path / "all.npz")
    write_fold_index(tmp_path, {0: "fold0.npz"}, {"いつ開館しましたか？": 0}, "all.npz", "d1")
    folded = FoldedAnswerabilityJudge.from_dir(tmp_path)
    scripted = ScriptedScorer()
    for j in [*folded.judges.values(), folded.fallback]:
        j.scorer = scripted  # type: ignore[assignment]
    passages = [evidence("b#sec0", "The museum opened in 1901.", title="History")]
    # As with the shipped head, English is left unchecked: no model call.
    assert not folded.covers("en") and folded.covers("ja")
    assert folded.assess("When?", passages, language="en")["passages"] == []
    seen = folded.assess(" いつ開館しましたか？ ", passages, language="ja")
    other = folded.assess("別の質問", passages, language="ja")
    assert seen["threshold"] == 0.6 and other["threshold"] == 0.9
    assert folded.routed == {"fold": 1, "fallback": 2} and folded.model_label == "folded:d1"
    checked = FoldedAnswerabilityJudge.from_dir(tmp_path, unchecked=())
    assert checked.covers("en")
    with pytest.raises(ValueError, match="answerable-folds.json not found"):
        FoldedAnswerabilityJudge.from_dir(tmp_path / "missing")


def test_the_shipped_answerability_head_decides_japanese_at_the_small_corpus_threshold():
    from grounded_rag.local.answerability import SHIPPED_HEAD_THRESHOLDS

    judge = LocalAnswerabilityJudge(scorer=object(), judge="head")  # type: ignore[arg-type]
    assert judge.threshold_for("ja") == SHIPPED_HEAD_THRESHOLDS["ja"] == 0.40
    assert judge.head.thresholds["ja"] != 0.40  # the fitted value is replaced, not edited
    assert judge.threshold_for("en") is None  # English stays unchecked
    custom = LocalAnswerabilityJudge(scorer=object(), head=judge.head)  # type: ignore[arg-type]
    assert custom.threshold_for("ja") == judge.head.thresholds["ja"]  # a given head's own
