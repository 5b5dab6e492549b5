"""Japanese decisive cues: a swap of who acts on whom (contradicted), a hedged clause
asserted as fact (neutral); both decided before any model call."""

from __future__ import annotations

import pytest

from grounded_rag.verification.cascade import prepare_claim
from grounded_rag.verification.cues import Cue, CueReport, check_claim
from grounded_rag.verification.hedges import hedged_clause
from grounded_rag.verification.roles import analyse, role_swap, swapped_roles
from tests.fakes import evidence


def _swap(claim: str, ev: str) -> bool:
    return any(c.kind == "role_swap" for c in check_claim(claim, ev, language="ja").cues)


@pytest.mark.parametrize(("claim", "ev"), [
    ("男性をライダーが助けた", "ライダーを男性が助けた。"),              # scrambled particles
    ("B社がA社を買収した", "A社がB社を買収した。"),
    ("B社はA社を買収した", "A社がB社を買収した。"),                    # は is the actor here
    ("男性がライダーに助けられた", "男性がライダーを助けた。"),          # passive, roles swapped
    ("学生が大人を押したことがわかった", "大人が学生を押したことがわかった。"),
    ("明らかに大人がテニス選手を追いかけている", "明らかに大人をテニス選手が追いかけている。"),
])
def test_a_swap_of_who_does_what_is_contradicted(claim, ev):
    report = check_claim(claim, ev, language="ja")
    assert report.contradicted and report.cues[0].kind == "role_swap"
    assert report.evidence_quote == ev and "入れ替わ" in report.reason


@pytest.mark.parametrize(("claim", "ev"), [
    ("ライダーを男性が助けた", "男性がライダーを助けた。"),              # same roles, other order
    ("ライダーが男性に助けられた", "男性がライダーを助けた。"),          # the passive of it
    ("A社はB社を買収した", "A社がB社を買収した。"),
    ("ライダーは男性が助けた", "男性がライダーを助けた。"),              # は as a topic
    ("社長が記者に述べられた", "社長が記者に述べた。"),                  # honorific られる
    # Relative clauses are not compared (JSICK: an entailed paraphrase).
    ("シャツを着ていない男性が馬に引かれている馬車を導いている",
     "シャツを着ていない男性が馬車を引いている馬を導いている。"),
    # One phrase changing its particle is a change of construction (JHARS, faithful).
    ("足場糸を引き終わると、今度は外側から内側へと横糸を引き始めます。",
     "足場糸が引き終わると、今度は外側から内側へと横糸を引き始める。"),
    # Places marked with に against a passive are not actors.
    ("上部には換気路、下部に排水路が設けられています。", "上部に換気路・下部に排水路を設ける。"),
])
def test_same_roles_or_unaligned_sentences_raise_no_cue(claim, ev):
    assert not _swap(claim, ev)


def test_a_sentence_that_agrees_with_the_claim_wins_over_one_that_swaps():
    ev = ["AがBを訪ねた。", "BがAを訪ねた。"]
    assert role_swap("BがAを訪ねた", ev) is None
    assert role_swap("BがAを訪ねた", ev[:1]) == ("AがBを訪ねた。", ["B", "A"])
    assert not _swap("BがAを訪ねた", "AがBを訪ねた。BがAを訪ねた。")


def test_analysis_reads_phrases_predicates_and_voice():
    clause = analyse("A社のCEOがB社を買収した")
    assert clause.phrases == (("A社のCEO", "が"), ("B社", "を"))
    assert clause.predicates == ("買収する",) and not clause.passive and not clause.relative
    assert analyse("テニス選手がホッケー選手に押された").passive
    assert analyse("女の子を押した男性が笑った").relative
    assert analyse("男性が大人を見ている").predicates == ("見る",)
    swapped = swapped_roles("テニス選手がホッケー選手を押した",
                            "テニス選手がホッケー選手に押された")
    assert swapped == ["テニス選手", "ホッケー選手"]


def test_english_claims_and_the_cascade_use_it_before_any_model():
    assert not any(c.kind == "role_swap" for c in
                   check_claim("The rider helped the man", "The man helped the rider.",
                               language="en").cues)
    prepared = prepare_claim({"text": "男性をライダーが助けた",
                              "evidence": [evidence("d#sec0", "ライダーを男性が助けた。")]}, "ja")
    assert prepared.verdict is not None and prepared.verdict["verdict"] == "contradicted"
    assert prepared.narrowed is None  # decided without the model


@pytest.mark.parametrize(("claim", "ev", "marker"), [
    ("男性が女性を蹴った", "もしかしたら男性が女性を蹴った。", "もしかしたら"),
    ("カップルが老人を見ている", "カップルが老人を見ているらしい。", "らしい"),
    ("子供が会社員を助けた", "男性が男の子に合図を送ったか、子供が会社員を助けた。", "か"),
    ("男性が男の子に合図を送った", "男性が男の子に合図を送ったか、子供が会社員を助けた。", "か"),
    ("子供が女の子を見ている", "もし男の子が走っている場合、子供が女の子を見ているだろう。",
     "だろう"),
    ("会社員がサーファーを見つめている", "会社員がサーファーを見つめている場合、子供が走る。",
     "場合"),
    ("ライダーが歩いている", "ライダーが歩いているという疑いがある。", "という疑いがある"),
])
def test_a_clause_the_evidence_only_hedges_is_decided_neutral(claim, ev, marker):
    report = check_claim(claim, ev, language="ja")
    assert report.decided == "neutral" and not report.contradicted
    cue = report.cues[0]
    assert cue.kind == "hedged" and cue.claim_text == marker and cue.evidence_sentence == ev
    prepared = prepare_claim({"text": claim, "evidence": [evidence("d#sec0", ev)]}, "ja")
    assert prepared.verdict is not None and prepared.verdict["verdict"] == "neutral"
    assert prepared.verdict["evidence_quote"] == ev and marker in prepared.verdict["reason"]


@pytest.mark.parametrize(("claim", "ev"), [
    ("男性が女性を蹴った", "明らかに男性が女性を蹴った。"),             # factive adverb
    ("男性が女性を蹴った", "男性が女性を蹴ったことがわかった。"),       # factive verb
    ("男性が女性を蹴った", "男性が女性を蹴ったかもしれない。男性が女性を蹴った。"),
    ("男性が女性を蹴った", "男性が女性を強く蹴ったかもしれない。"),    # not word for word
    ("男性が女性を蹴った", "男性が女性を蹴ったに違いない。"),          # must have: no negation
    ("蹴った", "もしかしたら蹴った。"),                                 # too short to tell
    ("大人はライダーを指さしている",
     "スノーボーダーが女性に飛びかかったが、大人はライダーを指さしている。"),
    # The consequent of a plain condition: a fair answer to a question about that case.
    ("30日前までに通知が必要です", "契約を解除する場合、30日前までに通知が必要です。"),
])
def test_plain_factive_or_paraphrased_clauses_are_left_to_the_judge(claim, ev):
    assert check_claim(claim, ev, language="ja").decided is None


def test_hedges_need_a_verbatim_clause_and_contradictions_come_first():
    assert hedged_clause("男性が女性を蹴った。", ["もしかしたら男性が女性を蹴った。"]) == (
        "もしかしたら男性が女性を蹴った。", "もしかしたら")
    assert hedged_clause("男性が女性を蹴った", []) is None
    both = CueReport((Cue("role_swap", True, "", "", "", "swap"),
                      Cue("hedged", True, "", "", "", "hedge", verdict="neutral")))
    assert both.decided == "contradicted" and both.contradicted
    hedge_only = CueReport((Cue("hedged", True, "", "", "", "hedge", verdict="neutral"),))
    assert hedge_only.decided == "neutral" and not hedge_only.contradicted
    assert CueReport().decided is None
