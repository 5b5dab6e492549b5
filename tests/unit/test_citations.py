"""Deterministic citation checks and answer-level scores."""

from __future__ import annotations

from grounded_rag.verification.citations import check_citations, locate_quote
from grounded_rag.verification.decision import confidence_score, grounding_score
from tests.fakes import evidence as ev

JA = "製品Aのバッテリーは最大10時間持続します。充電時間は2時間です。"
EN = "The battery lasts up to 10 hours on a single charge. Charging takes 2 hours."


def test_verbatim_quote_has_exact_offsets():
    found = locate_quote("最大10時間持続します", JA)
    assert (found.start, found.end, found.similarity) == (10, 21, 1.0)
    assert JA[found.start:found.end] == "最大10時間持続します"


def test_whitespace_width_and_punctuation_drift_is_normalised():
    found = locate_quote("最大 １０ 時間持続します。", JA)
    assert found.similarity == 0.99
    assert JA[found.start:found.end] == "最大10時間持続します。"
    found = locate_quote('"the BATTERY lasts up to  10 hours"', EN)
    assert EN[found.start:found.end] == "The battery lasts up to 10 hours"


def test_fuzzy_quote_scores_below_one_and_unrelated_scores_low():
    close = locate_quote("battery lasts for 10 hours", EN)
    assert 0.8 < close.similarity < 0.99
    assert "10 hours" in EN[close.start:close.end]
    assert locate_quote("completely unrelated words here", EN).similarity < 0.6
    assert locate_quote("", EN).start == -1


def test_check_citations_findings():
    evidence = [ev("a#sec1", EN), ev("b#sec1", "Refunds are issued within 30 days.")]
    statements = [
        {"text": "ok", "citations": [{"source_id": "a#sec1", "quote": "Charging takes 2 hours",
                                      "start": -1, "end": -1}]},
        {"text": "phantom", "citations": [{"source_id": "zzz#sec1", "quote": "x", "start": -1,
                                           "end": -1}]},
        {"text": "wrong source", "citations": [{"source_id": "b#sec1",
                                                "quote": "lasts up to 10 hours", "start": -1,
                                                "end": -1}]},
        {"text": "invented quote", "citations": [{"source_id": "a#sec1",
                                                  "quote": "waterproof to 50 metres", "start": -1,
                                                  "end": -1}]},
        {"text": "uncited", "citations": []},
    ]
    checked, findings = check_citations(statements, evidence, threshold=0.85)
    got = {(f["type"], f["severity"], f["claim_index"]) for f in findings}
    assert got == {("phantom_source", "critical", 1), ("quote_in_other_source", "major", 2),
                   ("quote_not_found", "major", 3), ("uncited_statement", "major", 4)}
    first = checked[0]["citations"][0]
    assert EN[first["start"]:first["end"]] == "Charging takes 2 hours"
    assert checked[3]["citations"][0]["start"] == -1


def _claim(text, verdict, match=1.0, support=None):
    claim = {"text": text, "verdict": verdict,
             "citations": [{"source_id": "a", "quote": "q", "start": 0 if match else -1,
                            "end": 1, "match": match}]}
    if support is not None:
        claim["support"] = support
    return claim


def test_grounding_score_is_length_weighted_share_of_supported_located_claims():
    claims = [_claim("x" * 30, "supported"), _claim("y" * 10, "neutral")]
    assert grounding_score(claims) == 0.75
    assert grounding_score([_claim("x" * 10, "supported", match=0.5)]) == 0.0
    assert grounding_score([]) == 0.0


def test_confidence_uses_weakest_claim_and_penalises_revisions():
    evidence = [ev("a", "t", relevance=1.0)]
    strong = [_claim("a", "supported", support=0.9), _claim("b", "supported", support=0.95)]
    assert confidence_score(strong, evidence, regenerations=0) == 0.9
    assert confidence_score(strong, evidence, regenerations=1) == 0.81
    weak = [*strong, _claim("c", "supported", support=0.3)]
    assert confidence_score(weak, evidence, regenerations=0) == 0.3
    assert confidence_score([], evidence, regenerations=0) == 0.0
