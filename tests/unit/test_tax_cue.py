"""Tax status (before tax, tax included, tax-exempt) compared across languages by a cue."""

from __future__ import annotations

import pytest

from grounded_rag.verification.cues import check_claim
from grounded_rag.verification.values import tax_classes

FEE_JA = "委託料は月額45万円（税別）とし、毎月末日締め翌月末日までに支払う。"
FEE_EN = "The monthly fee is $12 plus tax, billed on the first day of each month."


@pytest.mark.parametrize(("text", "classes"), [
    ("月額45万円（税別）", {"excluded"}),
    ("税抜価格 5,000円", {"excluded"}),
    ("5,500円（税込）", {"included"}),
    ("この手当は非課税です。", {"exempt"}),
    ("450,000 yen, excluding tax", {"excluded"}),
    ("$12 plus tax", {"excluded"}),
    ("prices include tax? No: tax not included", {"excluded"}),
    ("12 dollars including consumption tax", {"included"}),
    ("tax-free", {"exempt"}),
    ("exempt from sales tax", {"exempt"}),
    ("税込5,500円（税別5,000円）", {"included", "excluded"}),
    ("The tax office is open on Mondays.", set()),
    ("課税される", set()),  # taxable: not one of the three
])
def test_tax_classes(text, classes):
    assert set(tax_classes(text)) == classes


def test_tax_free_for_a_fee_before_tax_is_contradicted_across_languages():
    """The first corpus's fee question came back "450,000 yen (tax-free)", verified."""
    report = check_claim("The monthly fee in the service contract is 450,000 yen (tax-free).",
                         FEE_JA, language="en")
    assert report.decided == "contradicted"
    cue = next(c for c in report.cues if c.kind == "tax_mismatch")
    assert "税別 (excluding tax)" in cue.detail and "tax-free" in cue.detail


@pytest.mark.parametrize(("claim", "evidence", "language"), [
    ("委託料は月額45万円（税込）です。", FEE_JA, "ja"),
    ("The fee is 12 dollars including tax.", FEE_EN, "en"),
    ("The fee is $12, tax-exempt.", FEE_EN, "en"),
])
def test_another_tax_status_is_contradicted(claim, evidence, language):
    report = check_claim(claim, evidence, language=language)
    assert report.decided == "contradicted"
    assert any(c.kind == "tax_mismatch" for c in report.cues)


@pytest.mark.parametrize(("claim", "evidence", "language"), [
    ("The monthly fee is 450,000 yen, excluding tax.", FEE_JA, "en"),
    ("委託料は月額45万円（税抜）です。", FEE_JA, "ja"),
    ("The fee is $12 before tax.", FEE_EN, "en"),
    ("The fee is 12 dollars.", FEE_EN, "en"),  # no tax status stated: nothing to compare
    ("The fee is 5,000 yen before tax.", "税込5,500円（税別5,000円）の手数料。", "en"),
    # The tax status of something the claim is not about does not count.
    ("The power bank is sold tax-free at airports.",
     "The Aurora LX-3 weighs 410 grams. Batteries are shipped separately.", "en"),
])
def test_the_same_or_no_tax_status_is_not_a_tax_mismatch(claim, evidence, language):
    report = check_claim(claim, evidence, language=language)
    assert not any(c.kind == "tax_mismatch" for c in report.cues)
