"""The decision to write: stage scores combined once, handed to the generator as a threshold."""

from __future__ import annotations

import math
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda

from grounded_rag.local import LOCAL_LLM_TYPE
from grounded_rag.local.prompt_state import StateThreshold
from grounded_rag.schemas import CitedAnswer
from grounded_rag.verification.decision import Combiner, Decision, stage_features
from tests.fakes import ScriptedChatModel


def test_the_threshold_is_where_the_combined_score_reaches_the_cut():
    c = Combiner(weights={"generator": 0.5, "answerability": 1.0, "relevance": 2.0},
                 bias=-1.0, cut=0.5)
    feats = stage_features(generator=None, answerability=0.8, relevance=0.05, gate=0.01)
    t = c.generator_threshold(feats)
    at = -1.0 + 0.5 * t + math.log(0.8 / 0.2) + 2.0 * math.log10(5.0)
    assert at == pytest.approx(0.5, abs=1e-9)
    # a stronger answerability score lowers what the generator must reach
    assert c.generator_threshold(
        stage_features(generator=None, answerability=0.95, relevance=0.05, gate=0.01)) < t
    # an operating point that abstains more raises it
    assert c.generator_threshold(feats, shift=1.0) > t


def test_a_language_without_a_combiner_keeps_the_greedy_choice():
    d = Decision(combiners={"ja": Combiner(weights={"generator": 1.0}, bias=0.0, cut=-2.0)})
    assert d.generator_threshold("en", answerability=None, relevance=1.0, gate=1.0) is None
    assert d.generator_threshold("ja", answerability=None, relevance=1.0, gate=1.0) == -2.0


def test_a_combiner_that_ignores_the_generator_decides_on_the_rest():
    c = Combiner(weights={"generator": 0.0, "answerability": 1.0}, bias=0.0, cut=0.0)
    yes = c.generator_threshold(stage_features(generator=None, answerability=0.9,
                                               relevance=None, gate=None))
    no = c.generator_threshold(stage_features(generator=None, answerability=0.1,
                                              relevance=None, gate=None))
    assert yes < -10 and no > 10


class ScoredLocalModel(ScriptedChatModel):
    """A scripted stand-in for the local generator: it reports a log-odds for ``answerable``
    and, like ChatLocal, lets ``decide`` turn that score into the value it writes."""

    score: float = 0.0
    state_score: float | None = None
    """What the prompt-state head would read (None: no head for this model)."""
    decide: dict[str, Any] = {}

    @property
    def _llm_type(self) -> str:
        return LOCAL_LLM_TYPE

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        inner = super().with_structured_output(schema)

        def run(messages: Any) -> Any:
            reply = inner.invoke(messages)
            choices: dict[str, float] = {"answerable": self.score}
            if schema is CitedAnswer:
                threshold = self.decide.get("answerable")
                if isinstance(threshold, StateThreshold):  # as ChatLocal resolves it
                    if self.state_score is None:
                        threshold = threshold.fallback
                    else:
                        choices["prompt_state"] = self.state_score
                        threshold = threshold.rule(self.state_score)
                says = self.score >= (0.0 if threshold is None else threshold)
                reply = CitedAnswer(answerable=says,
                                    statements=reply.statements if says else [])
            raw = AIMessage("", response_metadata={"choices": choices})
            return ({"raw": raw, "parsed": reply, "parsing_error": None}
                    if kwargs.get("include_raw") else reply)

        return RunnableLambda(run)


def _graph(score: float, decision: Decision, monkeypatch):  # type: ignore[no-untyped-def]
    from grounded_rag.graph import build_graph
    from grounded_rag.nodes import write
    from tests.fakes import ScriptedVerifier, StaticRetriever

    monkeypatch.setattr(write, "DEFAULT_DECISION", decision)
    evidence = [{"source_id": "doc:a#sec0", "doc_id": "doc", "title": "Spec", "url": "",
                 "text": "The Aozora A1 battery lasts up to 10 hours.", "score": 1.0,
                 "relevance": 0.9}]
    model = ScoredLocalModel(score=score, script={"CitedAnswer": [
        {"answerable": True, "statements": [{"text": "The battery lasts up to 10 hours.",
                                             "citations": ["S1.1"]}]}]})
    return build_graph(retriever=StaticRetriever(evidence), generator=model,
                       verifier=ScriptedVerifier())


def test_a_hesitant_generator_writes_when_the_stages_scores_say_answer(monkeypatch):
    decision = Decision(combiners={"en": Combiner(weights={"generator": 1.0, "relevance": 1.0},
                                                  bias=0.0, cut=-1.0)})
    settings = {"configurable": {"answerability_check": "off", "extractor_model": "rules"}}
    out = _graph(-0.5, decision, monkeypatch).invoke(
        {"question": "How long does the battery last?"}, settings)
    assert out["status"] == "answered"
    assert out["stage_scores"]["generator"] == -0.5
    assert out["stage_scores"]["relevance"] > 1
    # Greedy (no combiner), the same score is a decline, and the finding says so.
    out = _graph(-0.5, Decision(), monkeypatch).invoke(
        {"question": "How long does the battery last?"}, settings)
    assert out["status"] == "abstained" and out["decided_by"] == "generator"


def test_the_decline_names_the_score_and_the_threshold(monkeypatch):
    decision = Decision(combiners={"en": Combiner(weights={"generator": 1.0}, bias=0.0,
                                                  cut=3.0)})
    out = _graph(1.5, decision, monkeypatch).invoke(
        {"question": "How long does the battery last?"},
        {"configurable": {"answerability_check": "off", "extractor_model": "rules"}})
    assert out["status"] == "abstained"
    detail = next(f["detail"] for f in out["findings"] if f["type"] == "generator_declined")
    assert "1.50" in detail and "3.00" in detail


def test_a_revision_of_a_written_draft_does_not_decide_again(monkeypatch):
    """The first draft's decision to write holds for its revision: the revision is asked to
    rewrite the answer (not to say whether there is one) and its ``answerable`` is decided
    ``true``, so a model that would decline the revision greedily still rewrites it."""
    from grounded_rag.graph import build_graph
    from grounded_rag.nodes import write
    from tests.fakes import ScriptedVerifier, StaticRetriever

    decision = Decision(combiners={"en": Combiner(weights={"generator": 1.0}, bias=0.0,
                                                  cut=-1.0)})
    monkeypatch.setattr(write, "DEFAULT_DECISION", decision)
    evidence = [{"source_id": "doc:a#sec0", "doc_id": "doc", "title": "Spec", "url": "",
                 "text": "The Aozora A1 battery lasts up to 10 hours.", "score": 1.0,
                 "relevance": 0.9}]
    # Greedy (threshold 0) the revision would be a decline: the score is -0.5 every time.
    model = ScoredLocalModel(score=-0.5, script={"CitedAnswer": [
        {"answerable": True, "statements": [{"text": "The battery lasts a full 24 hours.",
                                             "citations": ["S1.1"]}]},
        {"answerable": True, "statements": [{"text": "The battery lasts up to 10 hours.",
                                             "citations": ["S1.1"]}]}]})
    verifier = ScriptedVerifier(lambda text: ("contradicted", "24 vs 10") if "24" in text
                                else ("supported", ""))
    graph = build_graph(retriever=StaticRetriever(evidence), generator=model,
                        verifier=verifier)
    out = graph.invoke({"question": "How long does the battery last?"},
                       {"configurable": {"answerability_check": "off",
                                         "extractor_model": "rules", "max_retries": 1}})
    assert out["status"] == "answered" and out["attempts"] == 2
    assert "10 hours" in out["answer"]
    revision = model.calls_for("CitedAnswer")[1][-1].content
    assert "set answerable to false" not in revision
    assert "answer it again" in revision
    # The first draft's score is the one on record.
    assert out["stage_scores"]["generator"] == -0.5


def test_a_remote_generator_still_decides_its_revision():
    """Without the local decoder's scores nothing decides for the generator: the revision
    prompt keeps the instruction to decline when nothing supported remains."""
    from grounded_rag.graph import build_graph
    from tests.fakes import ScriptedVerifier, StaticRetriever

    evidence = [{"source_id": "doc:a#sec0", "doc_id": "doc", "title": "Spec", "url": "",
                 "text": "The Aozora A1 battery lasts up to 10 hours.", "score": 1.0,
                 "relevance": 0.9}]
    model = ScriptedChatModel(script={"CitedAnswer": [
        {"answerable": True, "statements": [{"text": "The battery lasts a full 24 hours.",
                                             "citations": ["S1.1"]}]},
        {"answerable": False, "statements": []}]})
    verifier = ScriptedVerifier(lambda text: ("contradicted", "24 vs 10"))
    graph = build_graph(retriever=StaticRetriever(evidence), generator=model,
                        verifier=verifier)
    out = graph.invoke({"question": "How long does the battery last?"},
                       {"configurable": {"answerability_check": "off",
                                         "extractor_model": "rules", "max_retries": 1}})
    assert out["status"] == "abstained"
    revision = model.calls_for("CitedAnswer")[1][-1].content
    assert "set answerable to false" in revision


def test_an_answer_about_another_case_is_drafted_again_without_its_sentences(monkeypatch):
    """A written draft whose every statement answers another case than the one asked is
    not shown to the model again (it copies what it is shown): the next draft is written
    from the first-draft prompt over the sentences left, the cited ones taken out."""
    from grounded_rag.graph import build_graph
    from grounded_rag.nodes import write
    from tests.fakes import ScriptedVerifier, StaticRetriever, evidence

    monkeypatch.setattr(write, "DEFAULT_DECISION", Decision(combiners={"ja": Combiner(
        weights={"generator": 1.0}, bias=0.0, cut=-1.0)}))
    hotel = evidence("travel#sec2", "宿泊費は1泊あたり12,000円を上限として実費を支給する。",
                     title="出張旅費規程")
    storm = evidence("travel#sec3", "悪天候により航空便が欠航した場合、追加の宿泊費は全額を"
                     "支給する。", title="出張旅費規程")
    model = ScoredLocalModel(score=1.0, script={"CitedAnswer": [
        {"answerable": True, "statements": [
            {"text": "宿泊費は1泊12,000円を上限として支給されます。", "citations": ["S1.1"]}]},
        {"answerable": True, "statements": [
            {"text": "欠航した場合の追加の宿泊費は全額支給されます。", "citations": ["S2.1"]}]}]})
    graph = build_graph(retriever=StaticRetriever([hotel, storm]), generator=model,
                        verifier=ScriptedVerifier())
    out = graph.invoke({"question": "悪天候で飛行機が欠航した場合、追加の宿泊費はどれくらい"
                                    "支給されますか？"},
                       {"configurable": {"answerability_check": "off",
                                         "extractor_model": "rules", "max_retries": 1}})
    assert out["status"] == "answered" and "全額" in out["answer"]
    first, second = (m[-1].content for m in model.calls_for("CitedAnswer"))
    assert "S1.1 宿泊費は1泊あたり12,000円" in first
    assert "S1.1" not in second and "S2.1 悪天候により" in second
    assert "前回の回答" not in second


def test_an_answerability_score_the_combiner_reads_is_a_feature_not_a_veto(monkeypatch):
    """With ``answerability_check="auto"`` and the local generator, a language whose
    combiner reads the answerability head runs the pass, records its score and lets the
    combiner decide: a low score raises the generator's threshold instead of refusing."""
    from grounded_rag.graph import build_graph
    from grounded_rag.nodes import answerability as answerability_node
    from grounded_rag.nodes import write
    from tests.fakes import ScriptedVerifier, StaticRetriever
    from tests.unit.test_graph import FixedJudge

    decision = Decision(
        combiners={"en": Combiner(weights={"generator": 1.0, "answerability": 1.0},
                                  bias=0.0, cut=0.0)},
        uses_answerability={"en": True})
    monkeypatch.setattr(write, "DEFAULT_DECISION", decision)
    monkeypatch.setattr(answerability_node, "DEFAULT_DECISION", decision)
    evidence = [{"source_id": "doc:a#sec0", "doc_id": "doc", "title": "Spec", "url": "",
                 "text": "The Aozora A1 battery lasts up to 10 hours.", "score": 1.0,
                 "relevance": 0.9}]
    reply = {"answerable": True, "statements": [{"text": "The battery lasts up to 10 hours.",
                                                 "citations": ["S1.1"]}]}
    settings = {"configurable": {"extractor_model": "rules"}}

    def run(generator_score: float, answerability: float) -> dict[str, Any]:
        judge = FixedJudge({"doc:a#sec0": answerability}, threshold=0.5)
        model = ScoredLocalModel(score=generator_score, script={"CitedAnswer": [reply]})
        graph = build_graph(retriever=StaticRetriever(evidence), generator=model,
                            verifier=ScriptedVerifier(), answerability=judge)
        out = graph.invoke({"question": "How long does the battery last?"}, settings)
        assert len(judge.calls) == 1 and len(model.calls_for("CitedAnswer")) == 1
        assert out["stage_scores"]["answerability"] == answerability
        return out

    # Below the head's own threshold (0.5) but a confident generator: written.
    out = run(3.0, 0.2)  # logit(0.2) = -1.39; 3.0 - 1.39 >= 0
    assert out["status"] == "answered"
    assert not any(f["type"] == "no_answer_in_sources" for f in out["findings"])
    # The same head score with a hesitant generator: the combiner declines.
    out = run(1.0, 0.2)
    assert out["status"] == "abstained"
    assert any(f["type"] == "generator_declined" for f in out["findings"])
    # A combiner that does not read the head: the pass is skipped.
    monkeypatch.setattr(answerability_node, "DEFAULT_DECISION",
                        Decision(combiners=decision.combiners))
    judge = FixedJudge({}, threshold=0.5)
    model = ScoredLocalModel(score=3.0, script={"CitedAnswer": [reply]})
    graph = build_graph(retriever=StaticRetriever(evidence), generator=model,
                        verifier=ScriptedVerifier(), answerability=judge)
    out = graph.invoke({"question": "How long does the battery last?"}, settings)
    assert judge.calls == [] and out["status"] == "answered"
