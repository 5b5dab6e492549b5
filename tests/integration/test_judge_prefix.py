"""The real model: the plain judge reads claims after the generator's own evaluated prompt."""

import pytest

from tests.integration.test_speculative import _runtime

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def _model():
    _runtime()  # loads the model, or skips naming what is missing


SOURCE = ("X200のバッテリーは最大10時間持続します。重さは1.2kgで、色は黒です。"
          "保証期間は購入日から2年間です。")


def _evidence():
    return [{"source_id": "sheet#sec1", "doc_id": "sheet", "title": "製品仕様", "url": "",
             "text": SOURCE, "score": 1.0, "relevance": 1.0}]


def test_after_the_draft_only_the_claim_is_evaluated_and_the_reading_matches_a_fresh_one(
        monkeypatch):
    from grounded_rag.context import Context
    from grounded_rag.local.runtime import render_chat
    from grounded_rag.local.scorer import SupportScorer
    from grounded_rag.nodes.write import answer_messages, evidence_view
    from grounded_rag.prompts import generate
    from grounded_rag.verification.citations import render_view

    question = "X200の保証期間は？"
    evidence = _evidence()
    sources = render_view(evidence_view(question, evidence, Context().evidence_tokens),
                          evidence, header=generate.SOURCE_HEADER)
    scorer = SupportScorer()
    rt = scorer._rt()
    system, user = answer_messages(question, sources, "ja")
    draft = render_chat(rt, [{"role": "system", "content": system.content},
                             {"role": "user", "content": user.content}])
    claims = [(sources, "X200の保証期間は購入日から2年間である。"),
              (sources, "X200は防水仕様である。")]
    with rt.lock:
        # From an empty context, whatever ran before: KV computed in other batch splits
        # (a system prompt restored on its own, then the rest) rounds differently, and moved
        # this margin by 0.14 after the generator-choice tests (the kernels' noise is up to
        # ~0.5, tests/integration/test_speculative.py).
        rt.llama.reset()
        rt.eval_prompt(draft)  # what the generator's first draft leaves in the context
    shared = scorer.read_after_sources(claims, language="ja")
    assert all(r is not None for r in shared)
    # The system message and the sources block were not evaluated again.
    block = len(render_chat(rt, [{"role": "system", "content": system.content},
                                 {"role": "user",
                                  "content": generate.SOURCES_BLOCK["ja"].format(
                                      sources=sources)}])) - 8  # the turn's closing tokens
    assert scorer.stats.reused_tokens >= 2 * block
    assert scorer.stats.prompt_tokens < sum(r.tokens for r in shared) - 2 * block + 16
    # A cold context gives the same readings: re-use changes the cost, not the verdict.
    with rt.lock:
        rt.llama.reset()
    cold = scorer.read_after_sources(claims[:1], language="ja")
    assert cold[0] is not None and shared[0] is not None
    assert abs(cold[0].margin - shared[0].margin) < 0.05
    assert shared[0].p_yes > shared[1].p_yes  # the stated warranty above the invented claim


def test_the_local_verifier_decides_japanese_claims_after_the_sources(monkeypatch):
    from grounded_rag.local import LocalVerifier
    from grounded_rag.local.verifier import SHARED_PREFIX_ENV

    monkeypatch.delenv(SHARED_PREFIX_ENV, raising=False)
    verifier = LocalVerifier()
    sources = ("[S1] 製品仕様\nS1.1 X200のバッテリーは最大10時間持続します。\n"
               "S1.2 重さは1.2kgで、色は黒です。")
    good, bad = verifier.verify(
        [{"text": "X200の重さは1.2kgである。", "evidence": _evidence(), "sources": sources},
         {"text": "X200は防水仕様である。", "evidence": _evidence(), "sources": sources}],
        language="ja")
    assert verifier.scorer.stats.model_calls == 2
    assert good["support"] > bad["support"]
    assert bad["verdict"] != "supported"
