"""Values compared across languages: an English claim against Japanese evidence and back,
decided by the deterministic cues before any model."""

from __future__ import annotations

import pytest

from grounded_rag.verification.base import ClaimToCheck, ClaimVerdict
from grounded_rag.verification.cascade import CascadeVerifier
from grounded_rag.verification.cues import check_claim
from grounded_rag.verification.subjects import concepts, written_in_japanese
from grounded_rag.verification.values import extract_quantities, prepare
from tests.fakes import evidence

FEE_JA = "委託料は月額45万円（税別）とし、毎月末日までに支払うものとする。"
START_JA = "本契約は2027年4月1日から開始する。"


def _value_cues(claim: str, ev: str | list[str], language: str = "en") -> list[str]:
    return [c.kind for c in check_claim(claim, ev, language=language).cues
            if c.kind in ("quantity_mismatch", "date_mismatch")]


def test_english_fee_read_as_a_tenth_of_the_japanese_amount_is_contradicted():
    report = check_claim("The monthly fee is 45,000 yen (tax excluded).", FEE_JA, language="en")
    assert report.decided == "contradicted"
    assert report.cues[0].kind == "quantity_mismatch"
    # Both values named, the Japanese one read out in the claim's language.
    assert "45万円 (450,000 yen)" in report.reason and "45,000 yen" in report.reason
    assert report.evidence_quote == FEE_JA


@pytest.mark.parametrize("claim", [
    "The monthly fee is 450,000 yen (tax excluded).",
    "The monthly fee is ¥450,000 before tax.",
    "The monthly fee is JPY 450,000.",
    "The monthly fee is 450 thousand yen.",
    "The monthly fee is 0.45 million yen.",
])
def test_the_same_fee_in_another_notation_is_not_flagged(claim):
    report = check_claim(claim, FEE_JA, language="en")
    assert report.decided is None
    assert not _value_cues(claim, FEE_JA)
    assert "quantity_missing" not in {c.kind for c in report.cues}


@pytest.mark.parametrize(("claim", "ev"), [
    ("The monthly fee is 450,000 yen.", "委託料は月額４５万円とする。"),  # full-width digits
    ("The monthly fee is 450,000 yen.", "委託料は月額四十五万円とする。"),  # kanji numerals
    ("The monthly fee is 450,000 yen.", "委託料は月額45万0000円とする。"),
    ("Revenue was 1.2 billion yen.", "売上高は12億円だった。"),
    ("Revenue was 120 million yen.", "売上高は1億2000万円だった。"),
    ("The budget is 3 million yen.", "予算は3百万円です。"),
    ("The budget is 45,000 yen.", "予算は4万5千円です。"),
    ("The late payment interest is 14.6%.", "遅延損害金の利率は年14.6パーセントとする。"),
])
def test_notations_that_agree(claim, ev):
    assert check_claim(claim, ev, language="en").decided is None


@pytest.mark.parametrize(("claim", "ev", "needle"), [
    ("The monthly fee is 4.5 million yen.", FEE_JA, "450,000 yen"),
    ("Revenue was 1.2 billion yen.", "売上高は1億2000万円だった。", "120,000,000 yen"),
    ("The late payment interest is 5%.", "遅延損害金の利率は年14.6パーセントとする。", "14.6%"),
])
def test_notations_that_disagree(claim, ev, needle):
    report = check_claim(claim, ev, language="en")
    assert report.decided == "contradicted"
    assert needle in report.reason


@pytest.mark.parametrize("claim", [
    "The contract starts on April 1, 2027.",
    "The contract starts on 1 April 2027.",
    "The contract starts on 2027-04-01.",
])
def test_the_same_date_in_english_is_not_flagged(claim):
    for ev in (START_JA, "本契約は令和9年4月1日から開始する。",
               "本契約は令和九年四月一日から開始する。"):
        assert check_claim(claim, ev, language="en").decided is None


def test_another_year_is_contradicted():
    report = check_claim("The contract starts on April 1, 2027.",
                         "本契約は2026年4月1日から開始する。", language="en")
    assert report.decided == "contradicted"
    assert report.cues[0].kind == "date_mismatch"
    assert "2026年4月1日" in report.reason and "April 1, 2027" in report.reason


@pytest.mark.parametrize(("claim", "ev"), [
    ("Notice must be given 60 days in advance.", "解約する場合は60日前までに通知する。"),
    ("The contract term is 3 months.", "契約期間は3か月とする。"),
    ("Support is provided for up to 10 hours.", "サポートは最大10時間まで提供する。"),
    ("The contract term is 2 years.", "契約期間は2年とする。"),
    ("The contract term is 24 months.", "契約期間は2年とする。"),
    ("The contract term is 2 years.", "契約期間は２４か月とする。"),
])
def test_durations_that_agree(claim, ev):
    assert check_claim(claim, ev, language="en").decided is None


@pytest.mark.parametrize(("claim", "ev", "needle"), [
    ("The contract term is 24 months.", "契約期間は12か月とする。", "12か月 (12 months)"),
    ("Notice must be given 30 days in advance.", "解約する場合は60日前までに通知する。", "60日"),
    ("The contract term is 3 years.", "契約期間は2年とする。", "2年 (2 years)"),
])
def test_durations_that_disagree(claim, ev, needle):
    report = check_claim(claim, ev, language="en")
    assert report.decided == "contradicted"
    assert needle in report.reason


def test_japanese_claim_against_english_evidence():
    ev = "The monthly fee is 450,000 yen, excluding tax. The contract starts on April 1, 2026."
    assert check_claim("委託料は月額45万円（税別）です。", ev, language="ja").decided is None
    fee = check_claim("委託料は月額4.5万円です。", ev, language="ja")
    assert fee.decided == "contradicted"
    assert "4.5万円" in fee.reason and "450,000 yen (450,000円)" in fee.reason
    assert check_claim("契約は2026年4月1日に開始する。", ev, language="ja").decided is None
    date = check_claim("契約は2027年4月1日に開始する。", ev, language="ja")
    assert date.decided == "contradicted" and "April 1, 2026" in date.reason
    term = check_claim("契約期間は12か月です。", "The contract term is 24 months.", language="ja")
    assert term.decided == "contradicted" and "24 months" in term.reason


def test_a_value_about_another_thing_is_not_a_contradiction():
    # Nothing in common but the unit: the evidence does not say what the claim is about.
    report = check_claim("The warranty lasts 2 years.", "納期は発注から30日とする。", language="en")
    assert report.decided is None
    assert [c.kind for c in report.cues] == ["quantity_missing"]


def test_the_best_matching_sentence_decides_across_languages():
    ev = "初期費用は10万円とする。委託料は月額45万円とする。"
    assert check_claim("The monthly fee is 450,000 yen.", ev, language="en").decided is None
    report = check_claim("The monthly fee is 100,000 yen.", ev, language="en")
    assert report.decided == "contradicted" and "45万円" in report.reason


def test_words_are_not_reported_missing_from_evidence_in_the_other_language():
    report = check_claim("The monthly fee is 450,000 yen.", FEE_JA, language="en")
    assert not {c.kind for c in report.cues} & {"words_missing", "entity_missing"}
    # A model number is written alike in both languages, so it can be missing.
    report = check_claim("The X300 costs 450,000 yen.", "X200の価格は45万円です。", language="en")
    assert [c.claim_text for c in report.cues if c.kind == "entity_missing"] == ["X300"]


def test_same_language_reading_is_unchanged():
    # Only the cross-language reading takes 2年 as a duration; same-language pairs keep the
    # old reading (a bare number), so their cues, and the judge features, do not move.
    assert [q.dim for q in extract_quantities(prepare("契約期間は2年"))] == ["number"]
    assert [q.dim for q in extract_quantities(prepare("契約期間は2年"), xlang=True)] == ["time"]
    assert prepare("令和9年") == "令和9年"
    assert prepare("令和9年", xlang=True) == "2027年"


def test_language_and_concepts():
    assert written_in_japanese("委託料月額45万円（税別）")  # no kana, still Japanese
    assert written_in_japanese("本製品はMicrosoft Azure上で動作する。")
    assert not written_in_japanese("The fee for 東京 is 450,000 yen.")
    assert not written_in_japanese("Pocari Sweat (ポカリスエット, Pokari Suetto) is a Japanese "
                                   "sports drink made by Otsuka Pharmaceutical.")
    assert {"fee", "monthly", "tax"} <= concepts("The monthly fee is 45,000 yen (tax excluded).")
    assert {"fee", "monthly", "tax"} <= concepts(FEE_JA)
    assert "fee" not in concepts("I feel the feet are fine.")


class _FailingJudge:
    """A model stage that must not be reached."""

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        raise AssertionError(f"the model was asked about {[c['text'] for c in claims]}")


def test_the_cascade_decides_without_a_model_call():
    claim = ClaimToCheck(text="The monthly fee is 45,000 yen (tax excluded).",
                         evidence=[evidence("contract#1", FEE_JA)])
    [verdict] = CascadeVerifier(_FailingJudge()).verify([claim], language="en")
    assert verdict["verdict"] == "contradicted"
    assert "45万円" in verdict["reason"] and "45,000 yen" in verdict["reason"]
    assert verdict["evidence_quote"] == FEE_JA
