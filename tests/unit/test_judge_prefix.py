"""The plain Japanese judge reads claims after the generator's sources block (fake scorer)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from grounded_rag.context import Context
from grounded_rag.local.scorer import Reading
from grounded_rag.local.verifier import (
    SHARED_MAX_CHARS,
    SHARED_PREFIX_ENV,
    SHARED_THRESHOLDS,
    LocalVerifier,
)
from grounded_rag.nodes import verify as verify_node
from grounded_rag.nodes.write import answer_messages, evidence_view
from grounded_rag.prompts import generate
from grounded_rag.verification.cascade import CascadeVerifier
from grounded_rag.verification.citations import render_view
from grounded_rag.verification.modes import judge_claims
from tests.fakes import evidence

EVIDENCE = [evidence("doc#sec0", "博物館は1901年に開館した。月曜日は休館である。")]
SOURCES = "[S1] doc\nS1.1 博物館は1901年に開館した。"


def _reading(p_yes: float) -> Reading:
    margin = math.log(p_yes / (1 - p_yes))
    return Reading(p_yes=p_yes, margin=margin, hidden=np.zeros((0, 0), dtype=np.float32),
                   layers=(), tokens=1, truncated=False)


class TwoWayScorer:
    """P(Yes) from a number in the claim; records which layout read each claim."""

    def __init__(self, *, unfit: bool = False) -> None:
        self.own: list[str] = []
        self.after: list[tuple[str, str]] = []
        self.unfit = unfit

    @staticmethod
    def _p(claim: str) -> float:
        return float(claim.split("P=")[1].split()[0])

    def read_many(self, pairs, *, language="en"):
        self.own.extend(claim for _, claim in pairs)
        return [_reading(self._p(claim)) for _, claim in pairs]

    def read_after_sources(self, pairs, *, language="en"):
        self.after.extend(pairs)
        return [None if self.unfit else _reading(self._p(claim)) for _, claim in pairs]


def _claims(*ps: float, sources: str = SOURCES) -> list[dict]:
    return [{"text": f"博物館は開館した P={p} 。", "evidence": EVIDENCE, "sources": sources}
            for p in ps]


def test_japanese_claims_are_read_after_the_sources_at_their_own_threshold(monkeypatch):
    monkeypatch.delenv(SHARED_PREFIX_ENV, raising=False)
    scorer = TwoWayScorer()
    verifier = LocalVerifier(scorer=scorer, judge="logit")  # type: ignore[arg-type]
    cut = SHARED_THRESHOLDS["ja"]
    verdicts = verifier.verify(_claims(cut + 0.01, cut - 0.01, 0.46), language="ja")  # type: ignore[arg-type]
    assert [s for s, _ in scorer.after] == [SOURCES] * 3 and scorer.own == []
    # Above the layout's own threshold: supported; below it (even above 0.45): not.
    assert [v["verdict"] for v in verdicts] == ["supported", "neutral", "neutral"]
    # Support is reported on the own prompt's scale: the fitted threshold maps to 0.45.
    assert verdicts[0]["support"] > 0.45 > verdicts[1]["support"]
    assert all(v["judge"] == "logit" for v in verdicts)
    # A stricter threshold given by the caller is stricter here too.
    strict = LocalVerifier(scorer=TwoWayScorer(), judge="logit",  # type: ignore[arg-type]
                           threshold=0.6)
    verdict = strict.verify(_claims(cut + 0.01), language="ja")[0]  # type: ignore[arg-type]
    assert verdict["verdict"] == "neutral"


def test_own_prompt_when_switched_off_without_sources_in_english_or_when_it_does_not_fit(
        monkeypatch):
    monkeypatch.setenv(SHARED_PREFIX_ENV, "off")
    scorer = TwoWayScorer()
    verifier = LocalVerifier(scorer=scorer, judge="logit")  # type: ignore[arg-type]
    verdicts = verifier.verify(_claims(0.46), language="ja")  # type: ignore[arg-type]
    assert scorer.after == [] and len(scorer.own) == 1
    assert verdicts[0]["verdict"] == "supported"  # the own prompt's threshold, 0.45

    monkeypatch.delenv(SHARED_PREFIX_ENV)
    scorer = TwoWayScorer()
    verifier = LocalVerifier(scorer=scorer, judge="logit")  # type: ignore[arg-type]
    verifier.verify(_claims(0.6, sources=""), language="ja")  # type: ignore[arg-type]
    verifier.verify(_claims(0.6), language="en")  # type: ignore[arg-type]
    assert scorer.after == [] and len(scorer.own) == 2

    scorer = TwoWayScorer(unfit=True)  # the prompt would not fit the context
    verifier = LocalVerifier(scorer=scorer, judge="logit")  # type: ignore[arg-type]
    verdicts = verifier.verify(_claims(0.46), language="ja")  # type: ignore[arg-type]
    assert len(scorer.after) == 1 and len(scorer.own) == 1
    assert verdicts[0]["verdict"] == "supported" and verdicts[0]["support"] == 0.46


def test_a_statement_longer_than_the_calibrated_ones_is_read_in_its_own_prompt(monkeypatch):
    monkeypatch.delenv(SHARED_PREFIX_ENV, raising=False)
    scorer = TwoWayScorer()
    verifier = LocalVerifier(scorer=scorer, judge="logit")  # type: ignore[arg-type]
    short, long = _claims(0.46, 0.46)
    long["text"] = "博物館は" + "とても" * 30 + "古い時代に開館した P=0.46 。"
    assert len(short["text"]) <= SHARED_MAX_CHARS < len(long["text"])
    verdicts = verifier.verify([short, long], language="ja")  # type: ignore[list-item]
    assert [c for _, c in scorer.after] == [short["text"]] and scorer.own == [long["text"]]
    # Each at its own layout's threshold: 0.46 is short of 0.50 after the sources only.
    assert [v["verdict"] for v in verdicts] == ["neutral", "supported"]


class Recording:
    """A verifier that supports every claim and keeps what it was handed."""

    def __init__(self, seen: list[dict]) -> None:
        self.seen = seen

    def verify(self, claims, *, language):
        self.seen.extend(claims)
        return [{"verdict": "supported", "reason": "", "evidence_quote": "", "support": 0.9}
                for _ in claims]


def test_the_sources_reach_the_judge_through_the_cascade():
    seen: list[dict] = []

    claims = [{"text": "博物館には庭園がある。", "citations": [{"source_id": "doc#sec0",
                                                               "quote": ""}]}]
    judge_claims(claims, [0], EVIDENCE, CascadeVerifier(Recording(seen)),  # type: ignore[arg-type]
                 execution="batch", language="ja", sources=SOURCES)
    assert [c.get("sources") for c in seen] == [SOURCES]


def test_the_verify_node_hands_over_the_first_drafts_sources_only_for_the_local_generator():
    seen: list[dict] = []

    question = "博物館はいつ開館した？"
    state = {"question": question, "evidence": EVIDENCE, "language": "ja",
             "claims": [{"text": "博物館は1901年に開館した。",
                         "citations": [{"source_id": "doc#sec0", "quote": ""}]}]}
    settings = Context()
    view = evidence_view(question, EVIDENCE, settings.evidence_tokens)
    expected = render_view(view, EVIDENCE, header=generate.SOURCE_HEADER)
    for local, wanted in ((True, expected), (False, None)):
        seen.clear()
        parts = SimpleNamespace(judge=lambda _s: Recording(seen),
                                generator_is_local=lambda _s, local=local: local)
        verify_node._judge(state["claims"], [0], state, parts, settings)  # type: ignore[arg-type]
        assert seen[0].get("sources") == wanted
    # ... and that block is the one the first draft's prompt holds.
    user = answer_messages(question, expected, "ja")[1].content
    assert user.startswith(generate.SOURCES_BLOCK["ja"].format(sources=expected))


def test_every_generator_prompt_begins_with_the_shared_sources_block():
    for lang in ("en", "ja"):
        head = generate.SOURCES_BLOCK[lang].format(sources="X")
        assert generate.USER[lang].format(sources="X", question="Q").startswith(head)
        assert generate.REVISE[lang].format(sources="X", question="Q", draft="D", feedback="F",
                                            closing="C").startswith(head)


def test_the_verify_evaluation_hands_the_judge_the_sources_block_an_answer_would_have():
    from grounded_rag.evaluation._datasets import EvalItem
    from grounded_rag.evaluation._verify import InstrumentedVerifier, sources_block, verify_item

    seen: list[dict] = []

    item = EvalItem(id="1", subset="ja", language="ja", claims=["博物館は1901年に開館した。"],
                    sources=[{"id": "doc#sec0", "title": "doc",
                              "text": "博物館は1901年に開館した。月曜日は休館である。"}],
                    question="博物館はいつ開館した？")
    verify_item(item, InstrumentedVerifier(Recording(seen)))  # type: ignore[arg-type]
    block = seen[0]["sources"]
    assert "S1.1" in block and "1901年" in block
    assert block == sources_block(item.question, seen[0]["evidence"])
