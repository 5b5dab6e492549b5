"""A value the sentence gives for another case than the claim names (``coverage.py``)."""

from __future__ import annotations

import pytest

from grounded_rag.verification.coverage import cases_in, misbound_value
from grounded_rag.verification.cues import check_claim

HOTEL = ("国内出張の宿泊費は、1泊あたり東京都内は15,000円、"
         "その他の地域は12,000円を上限として実費を支給する。")
FARES = "Admission is 1,200 yen for adults and 600 yen for children; members enter free."


@pytest.mark.parametrize(("claim", "value", "other"), [
    ("The maximum hotel cost per night in Tokyo is 12,000 yen.", "12,000 yen", "15,000円"),
    ("東京都内の宿泊費の上限は12,000円です。", "12,000円", "15,000円"),
    ("In other regions the cap is 15,000 yen.", "15,000 yen", "12,000円"),
    ("The cap is 12,000 yen in Tokyo, while it is 15,000 yen elsewhere.", "12,000 yen",
     "15,000円"),
])
def test_a_value_of_the_other_case_is_caught(claim, value, other):
    found = misbound_value(claim, [HOTEL], xlang=claim.isascii())
    assert found is not None
    assert found.claim_value == value and found.other_value.startswith(other)
    report = check_claim(claim, [HOTEL])
    assert report.decided == "contradicted"
    assert [c.kind for c in report.cues][0] == "value_binding"


@pytest.mark.parametrize("claim", [
    "The maximum hotel cost per night in Tokyo is 15,000 yen.",
    "東京都内の宿泊費の上限は15,000円です。",
    "その他の地域の宿泊費の上限は12,000円です。",
    "宿泊費の上限は12,000円です。",  # names no case: incomplete, not contradicted
    "The cap is 15,000 yen in Tokyo and 12,000 yen in other regions.",
    "The cap is 15,000 yen in Tokyo, and 12,000 yen in other regions.",
])
def test_a_value_of_its_own_case_or_of_no_case_is_not_flagged(claim):
    assert misbound_value(claim, [HOTEL], xlang=claim.isascii()) is None
    assert check_claim(claim, [HOTEL]).decided is None


def test_same_language_english_cases():
    assert misbound_value("Children pay 1,200 yen.", [FARES], xlang=False) is not None
    assert misbound_value("Children pay 600 yen.", [FARES], xlang=False) is None
    assert misbound_value("Adults pay 1,200 yen.", [FARES], xlang=False) is None


def test_an_opening_clause_without_a_value_speaks_for_every_case():
    # 国内 opens the sentence: "domestic" is not the Tokyo clause's own case
    assert misbound_value("Domestic trips in other regions are capped at 12,000 yen.", [HOTEL],
                          xlang=True) is None
    assert misbound_value("国内出張の宿泊費の上限は12,000円です。", [HOTEL], xlang=False) is None


def test_a_value_in_two_clauses_or_a_sentence_of_one_case_is_not_judged():
    twice = "東京都内は15,000円、大阪市内は15,000円、その他の地域は12,000円とする。"
    assert misbound_value("大阪の上限は15,000円です。", [twice], xlang=False) is None
    single = "東京都内の宿泊費の上限は15,000円とする。"
    assert misbound_value("その他の地域の上限は15,000円です。", [single], xlang=False) is None


def test_cases_are_read_in_both_languages_and_non_members_apart():
    assert cases_in("非会員は500円") == {"nonmember"}
    assert cases_in("Non-members pay 500 yen") == {"nonmember"}
    assert cases_in("会員は300円") == {"member"}
    assert cases_in("東京都内") == {"tokyo"}  # not 京都
    assert cases_in("京都市内") == {"kyoto"}
    assert cases_in("weekends in Osaka") == {"weekend", "osaka"}


SERIES = ("日本における組み込みソフトウェア技術者数は、2004年に14.9万人、2005年17.5万人、"
          "2006年19.3万人、2007年23.5万人と推計された。")


def test_a_value_of_another_year_of_a_series_is_caught():
    found = misbound_value("2007年には19.3万人と推計された", [SERIES], xlang=False)
    assert found is not None
    assert (found.claim_value, found.claim_cases, found.value_cases, found.other_value) == (
        "19.3万人", ("2007年",), ("2006年",), "23.5万人")
    assert check_claim("2007年には19.3万人と推計された", [SERIES]).decided == "contradicted"
    # the year's own value, or a year the series does not hold, is not flagged
    assert misbound_value("2007年には23.5万人と推計された", [SERIES], xlang=False) is None
    assert misbound_value("2008年には19.3万人と推計された", [SERIES], xlang=False) is None


def test_a_year_inside_a_date_or_a_decade_labels_no_case():
    assert cases_in("2016年7月に首都で") == frozenset()
    assert cases_in("1990年代の売上") == frozenset()
    assert cases_in("2005年17.5万人") == frozenset({"year 2005"})
    assert cases_in("sales in 2007") == frozenset({"year 2007"})
