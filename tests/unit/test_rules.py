"""The rule table: every switch is a known rule, switching one off stops it, firings count."""

from __future__ import annotations

import pytest

from grounded_rag.verification import rules
from grounded_rag.verification.cues import check_claim


def test_unknown_rule_names_are_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown rule"):
        rules.switch_off({"no_such_rule"})
    assert rules.unknown({"coverage", "nope"}) == ["nope"]
    assert all(r.mechanism and r.does and r.written_from for r in rules.RULES.values())


def test_a_switched_off_cue_decides_nothing_and_firings_are_counted() -> None:
    claim, evidence = "The kettle costs 30 dollars.", "The kettle costs 25 dollars."
    assert check_claim(claim, evidence).decided == "contradicted"
    rules.switch_off({"quantity_mismatch"})
    try:
        assert check_claim(claim, evidence).decided is None
    finally:
        rules._OFF.discard("quantity_mismatch")
    before = rules.counts()
    rules.fired("copy", 2)
    rules.fired("copy", 0)
    assert rules.since(before) == {"copy": 2}
