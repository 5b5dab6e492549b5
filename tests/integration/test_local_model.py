"""The real offline model: structured output, support scoring and the local verifier."""

import pytest
from pydantic import BaseModel, Field

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module", autouse=True)
def _model():
    pytest.importorskip("llama_cpp", reason="needs the 'local' extra")
    from grounded_rag.local.assets import ModelAssetError, ensure_model

    try:
        ensure_model(progress=False)
    except ModelAssetError as exc:
        pytest.skip(str(exc))


def _ev(text):
    return {
        "source_id": "sheet#sec1",
        "doc_id": "sheet",
        "title": "Product sheet",
        "url": "",
        "text": text,
        "score": 1.0,
        "relevance": 1.0,
    }


class Capital(BaseModel):
    country: str = Field(description="country name")
    capital: str = Field(description="capital city")


def test_structured_output_small_schema():
    from grounded_rag.local import ChatLocal

    llm = ChatLocal(max_tokens=64)
    out = llm.with_structured_output(Capital).invoke("What is the capital of France?")
    assert isinstance(out, Capital)
    assert "paris" in out.capital.lower()
    raw = llm.with_structured_output(Capital, include_raw=True).invoke("Capital of Japan?")
    assert raw["parsing_error"] is None
    assert raw["raw"].usage_metadata["output_tokens"] > 0
    assert raw["raw"].response_metadata["finish_reason"] == "stop"


def test_structured_output_budget_exhausted_raises():
    from grounded_rag.local import ChatLocal, StructuredOutputError

    llm = ChatLocal(max_tokens=3, structured_retry_factor=1.5)
    with pytest.raises(StructuredOutputError, match="budget"):
        llm.with_structured_output(Capital).invoke("What is the capital of France?")


@pytest.mark.parametrize(
    ("language", "evidence", "good", "bad"),
    [
        (
            "en",
            "The X200 battery lasts up to 10 hours. It weighs 1.2 kg and ships in black.",
            "The X200 weighs 1.2 kg.",
            "The X200 is waterproof to 50 metres.",
        ),
        (
            "ja",
            "X200のバッテリーは最大10時間持続します。重さは1.2kgで、色は黒です。",
            "X200の色は黒である。",
            "X200は防水仕様である。",
        ),
    ],
)
def test_scorer_ranks_supported_above_unsupported(language, evidence, good, bad):
    from grounded_rag.local.scorer import SupportScorer

    scorer = SupportScorer()
    s_good, s_bad = scorer.score_many([(evidence, good), (evidence, bad)], language=language)
    assert s_good > s_bad
    assert scorer.stats.tokens_reused > 0  # the evidence prefix was reused


@pytest.mark.parametrize(
    ("language", "evidence", "claim", "values"),
    [
        ("ja", "バッテリーは最大10時間持続します。", "バッテリーは24時間持続する。", ("10", "24")),
        ("en", "The battery lasts up to 10 hours.", "The battery lasts 24 hours.", ("10", "24")),
    ],
)
def test_local_verifier_on_battery_case(language, evidence, claim, values):
    from grounded_rag.local import LocalVerifier
    from grounded_rag.verification.cascade import CascadeVerifier

    inner = LocalVerifier()
    plain = inner.verify([{"text": claim, "evidence": [_ev(evidence)]}], language=language)[0]
    assert plain["verdict"] != "supported"
    cascade = CascadeVerifier(inner)
    claims = [
        {"text": claim, "evidence": [_ev(evidence)]},
        {"text": evidence, "evidence": [_ev(evidence)]},
    ]
    wrong, right = cascade.verify(claims, language=language)
    assert wrong["verdict"] == "contradicted"
    assert all(v in wrong["reason"] for v in values)
    assert right["verdict"] == "supported"


def test_readme_answer_check_with_a_question():
    """The README's "check an answer you already have" example, on the real model."""
    from grounded_rag.models import resolve_verifier

    verifier = resolve_verifier("local", "")
    source = {"source_id": "bio#sec0", "doc_id": "bio", "title": "Bannister", "url": "",
              "text": "Roger Bannister was an English athlete, physician and academic.",
              "score": 1.0, "relevance": 1.0}
    question = "What other profession did Bannister have?"
    right, invented = verifier.verify(
        [{"text": "physician", "question": question, "evidence": [source]},
         {"text": "He was a famous lawyer.", "question": question, "evidence": [source]}],
        language="en",
    )
    assert right["verdict"] == "supported", right
    assert invented["verdict"] != "supported", invented
    assert invented["support"] < right["support"]


def test_hidden_states_shape_determinism_and_prefix_reuse():
    """One pass gives P(Yes) and hidden states; reusing the evidence prefix changes nothing."""
    import numpy as np

    from grounded_rag.local.probe import DEFAULT_LAYERS
    from grounded_rag.local.scorer import SupportScorer

    evidence = "The X200 battery lasts up to 10 hours. It weighs 1.2 kg and ships in black."
    pairs = [(evidence, "The X200 weighs 1.2 kg."), (evidence, "The X200 ships in black.")]
    fresh = SupportScorer(reuse_prefix=False)
    a = fresh.read_many(pairs, language="en")
    assert fresh.stats.tokens_reused == 0
    reused = SupportScorer()
    b = reused.read_many(pairs, language="en")
    assert reused.stats.tokens_reused > 0  # the second claim reused the evidence prefix
    for x, y in zip(a, b, strict=True):
        assert x.hidden.shape == (len(DEFAULT_LAYERS), 1536) and x.hidden.dtype == np.float32
        assert np.isfinite(x.hidden).all() and x.layers == DEFAULT_LAYERS
        # Same prompt, same states: KV reuse is a cache, not an approximation (to float noise).
        cos = float(x.hidden[-1] @ y.hidden[-1] / np.linalg.norm(x.hidden[-1])
                    / np.linalg.norm(y.hidden[-1]))
        assert cos > 0.999 and abs(x.p_yes - y.p_yes) < 0.05
    again = SupportScorer(reuse_prefix=False).read_many(pairs[:1], language="en")[0]
    assert np.array_equal(again.hidden, a[0].hidden)  # deterministic
    assert not np.allclose(a[0].hidden, a[1].hidden)  # different claims, different states


def test_an_over_long_pair_is_truncated_never_a_crash(monkeypatch):
    from grounded_rag.local import scorer as scoring
    from grounded_rag.local.probe import HiddenStateReader

    scorer = scoring.SupportScorer()
    rt = scorer._rt()
    # A 1k-token scoring context: the same cuts as the default 4k one, a quarter of the work.
    small = HiddenStateReader(rt, n_ctx=1024)
    monkeypatch.setitem(scoring._READERS, id(rt.llama), small)
    evidence = "The X200 battery lasts up to 10 hours. " * 1500  # ~15k tokens
    claim = "The X200 battery lasts up to 10 hours and " + "it is light " * 2000
    [reading] = scorer.read_many([(evidence, claim)], language="en")
    assert reading.truncated and 0.0 <= reading.p_yes <= 1.0
    assert small.n_ctx // 2 < reading.tokens < small.n_ctx
    [question] = scorer.read_questions([("You answer Yes or No.", "Is this long? " * 4000)])
    assert question.truncated
