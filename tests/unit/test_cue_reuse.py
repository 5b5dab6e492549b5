"""The cascade and the judge's feature builder share the Japanese clause analysis."""

from __future__ import annotations

from grounded_rag.local.features import claim_input
from grounded_rag.verification import roles
from grounded_rag.verification.cascade import prepare_claim
from tests.fakes import evidence


def test_a_claim_is_analysed_once_for_the_cascade_and_the_features():
    claim = {"text": "男性がライダーを助けた。",
             "evidence": [evidence("doc#sec0", "ライダーが男性を助けた後、二人は店に入った。")]}
    roles.analyse.cache_clear()
    prepared = prepare_claim(claim, "ja")  # type: ignore[arg-type]
    first = roles.analyse.cache_info()
    assert first.misses >= 1
    if prepared.narrowed is not None:
        claim_input(prepared.narrowed, "ja")
    else:  # decided by a cue: the feature builder would not run; build it anyway
        claim_input(claim, "ja")  # type: ignore[arg-type]
    after = roles.analyse.cache_info()
    assert after.hits > first.hits  # the claim's analysis was reused, not recomputed
    assert after.misses == first.misses
