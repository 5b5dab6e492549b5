import pytest

from grounded_rag.verification.cues import altered_copy, check_claim
from grounded_rag.verification.values import kanji_to_digits


def test_seed_case_japanese_hours_contradicted():
    report = check_claim("バッテリーは24時間持続する", "バッテリーは最大10時間持続します")
    assert report.contradicted
    assert "10時間" in report.reason and "24時間" in report.reason
    assert report.evidence_quote == "バッテリーは最大10時間持続します"


def test_seed_case_english_hours_contradicted():
    report = check_claim("The battery lasts 24 hours.", "The battery lasts up to 10 hours.")
    assert report.contradicted
    assert "10 hours" in report.reason and "24 hours" in report.reason


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The battery lasts up to 10 hours.", "The battery lasts up to 10 hours."),
        ("バッテリーは１０時間持続する", "バッテリーは最大10時間持続します"),  # full-width digits
        ("バッテリーは十時間持続する", "バッテリーは最大10時間持続します"),  # kanji numerals
        ("The training takes 72 hours.", "The training takes 3 days."),  # unit conversion
        ("The contract takes effect on 2024-04-01.", "The contract takes effect on April 1, 2024."),
        ("Tokyo has 14 million people.", "Tokyo has 14 million people."),
        ("料金は1万5000円です。", "料金は15,000円です。"),
    ],
)
def test_consistent_values_are_not_contradicted(claim, evidence):
    assert not check_claim(claim, evidence).contradicted


@pytest.mark.parametrize(
    ("claim", "evidence", "needle"),
    [
        ("契約は2024年5月1日に発効する。", "契約は2024年4月1日に発効する。", "2024年4月1日"),
        ("消費税率は8%です。", "消費税率は10%です。", "10%"),
        ("The fee is $2 million.", "The fee is $1.5 million.", "$1.5 million"),
        ("He was born in 1985 in Paris.", "He was born in 1987 in Paris.", "1987"),
        ("日当は5千円です。", "日当は3,000円です。", "3,000円"),
    ],
)
def test_conflicting_values_are_contradicted(claim, evidence, needle):
    report = check_claim(claim, evidence)
    assert report.contradicted
    assert needle in report.reason


def test_value_is_compared_within_the_matching_sentence():
    evidence = "The battery lasts up to 10 hours. Charging takes 2 hours."
    assert check_claim("Charging takes 10 hours.", evidence).contradicted
    assert not check_claim("Charging takes 2 hours.", evidence).contradicted


def test_unrelated_sentence_with_same_unit_is_only_a_missing_cue():
    report = check_claim("The flight takes 10 hours.", "The meeting lasted 2 hours.")
    assert not report.contradicted
    assert [c.kind for c in report.cues] == ["quantity_missing", "words_missing"]
    assert report.cues[1].claim_text == "flight, takes"


def test_negation_flip_is_contradicted():
    report = check_claim(
        "Refunds are not available within 30 days.", "Refunds are available within 30 days."
    )
    assert report.contradicted
    assert report.cues[0].kind == "negation_mismatch"


def test_missing_entity_is_a_soft_cue():
    report = check_claim("The X300 was made by Panasonic.", "The X200 was made by Sony.")
    assert not report.contradicted
    assert {c.claim_text for c in report.cues} >= {"X300", "Panasonic"}


def test_katakana_entity_missing_japanese():
    report = check_claim("製品はパナソニックが製造した。", "製品はソニーが製造した。")
    assert any(c.kind == "entity_missing" and c.claim_text == "パナソニック" for c in report.cues)


def test_no_evidence_gives_no_cues():
    assert check_claim("Anything 5 hours.", "").cues == ()


def test_kanji_to_digits():
    assert kanji_to_digits("二十四時間") == "24時間"
    assert kanji_to_digits("三千五百円") == "3500円"
    assert kanji_to_digits("一日") == "1日"
    # 十分 is "enough", not ten minutes; twenty or thirty minutes still convert.
    assert kanji_to_digits("収入が不十分で、十分な休みもない") == "収入が不十分で、十分な休みもない"
    assert kanji_to_digits("二十分待つ") == "20分待つ"
    report = check_claim("家族の収入が不十分で働く", "親の収入が少ない。", language="ja")
    assert "quantity_missing" not in {c.kind for c in report.cues}


@pytest.mark.parametrize(
    ("claim", "sentence", "claim_span", "evidence_span"),
    [
        ("黒いTシャツを着た男性がバットを持って立っています。",
         "黒いTシャツを着た男性がテニスラケットを持って立っています。", "バット", "テニスラケット"),
        ("白いTシャツを着た男性がテニスラケットを持って立っています。",
         "黒いTシャツを着た男性がテニスラケットを持って立っています。", "白", "黒"),
        ("A woman is slicing an onion.", "A man is slicing an onion.", "woman", "man"),
    ],
)
def test_altered_copy_finds_the_swapped_words(claim, sentence, claim_span, evidence_span):
    found = altered_copy(claim, ["Unrelated text about trains.", sentence])
    assert found == (sentence, claim_span, evidence_span)
    report = check_claim(claim, sentence)
    cue = next(c for c in report.cues if c.kind == "altered_copy")
    assert not cue.decisive  # only the model's "not supported" makes it a contradiction
    assert claim_span in cue.detail and evidence_span in cue.detail


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        # Words added or left out are not a substitution.
        ("A man is slicing a large red onion in the kitchen.", "A man is slicing an onion."),
        # Another quote mark next to a word is not another word ('OK! vs "OK!).
        ("It is published by Northern & Shell, who also oversee 'OK!'",
         'It is published by Northern & Shell, who also oversee "OK!'),
        ("男性がテニスラケットを持って立っています。",
         "黒いTシャツを着た男性がテニスラケットを持って立っています。"),
        # A different sentence altogether is not a near copy.
        ("The reading room is on the second floor.", "A man is slicing an onion."),
        # Only a function word or kana ending changed.
        ("猫が机の上に座っている。", "猫が机の上に座っています。"),
    ],
)
def test_altered_copy_ignores_additions_omissions_and_other_sentences(claim, sentence):
    assert altered_copy(claim, [sentence]) is None


def test_cascade_calls_an_unsupported_altered_copy_contradicted():
    from grounded_rag.verification.base import ClaimToCheck
    from grounded_rag.verification.cascade import CascadeVerifier
    from tests.fakes import ScriptedVerifier, evidence

    source = [evidence("photo#sec0", "黒いTシャツを着た男性がテニスラケットを持って立っています。")]
    claims = [
        ClaimToCheck(text="黒いTシャツを着た男性がバットを持って立っています。", evidence=source),
        ClaimToCheck(text="男性が赤い帽子をかぶっています。", evidence=source),
    ]
    unsupported = CascadeVerifier(ScriptedVerifier(lambda text: ("neutral", "not stated")))
    altered, unrelated = unsupported.verify(claims, language="ja")
    assert altered["verdict"] == "contradicted"
    assert "バット" in altered["reason"] and "テニスラケット" in altered["reason"]
    assert unrelated["verdict"] == "neutral"
    # The cue never overrides the model's "supported" (paraphrases are near copies too).
    supported = CascadeVerifier(ScriptedVerifier())
    assert [v["verdict"] for v in supported.verify(claims, language="ja")] == ["supported"] * 2


def test_missing_words_reports_content_the_evidence_lacks():
    from grounded_rag.verification.cues import missing_words

    evidence_text = "James Mulgrew, known as Jimmy Cricket, starred in a comedy sketch show."
    assert missing_words("He starred in a popular variety show.", evidence_text) == [
        "popular", "variety"]
    # Inflections and shared five-letter prefixes count as present; function words never
    # count as content.
    assert missing_words("Mulgrew stars in sketches and comedies.", evidence_text) == []
    assert missing_words("Neither of them was known.", evidence_text) == []
    # Words the question already holds are given, not added by the answer.
    assert missing_words("the popular show", evidence_text, "Which popular show?") == []


def test_missing_words_leaves_japanese_compounds_to_the_model():
    from grounded_rag.verification.cues import missing_words

    source = "都庁の所在地は新宿区西新宿です。"
    assert missing_words("東京都庁はShinjukuにある。", source) == ["Shinjuku"]


def test_check_claim_with_a_question_judges_only_what_the_answer_adds():
    knowledge = "Close At Hand is an EP by James McCartney. He was born on 12 September 1977."
    question = "James McCartney, who released an EP in 2010, was born on which date?"
    alone = check_claim("12 September 1977", knowledge, language="en", question=question)
    assert not alone.cues  # "2010" is the question's, not the answer's
    added = check_claim("He was born in a small Scottish village.", knowledge, language="en",
                        question=question)
    kinds = {c.kind for c in added.cues}
    assert "words_missing" in kinds and "entity_missing" in kinds
    assert "village" in added.reason and "Scottish" in added.reason
    assert "2010" not in added.reason


class _FixedSupport:
    """A model stage that calls every claim supported with one fixed score."""

    def __init__(self, support: float) -> None:
        self.support = support
        self.seen: list[str] = []

    def verify(self, claims, *, language):
        from grounded_rag.verification.base import statement_of

        self.seen += [statement_of(c, language) for c in claims]
        return [{"verdict": "supported", "reason": "", "evidence_quote": "",
                 "support": self.support} for _ in claims]


def test_cascade_overrules_a_weak_supported_score_when_the_claim_adds_unseen_words():
    from grounded_rag.verification.base import ClaimToCheck
    from grounded_rag.verification.cascade import CascadeVerifier
    from tests.fakes import evidence

    source = [evidence("bio#sec0", "Jimmy Cricket starred in a comedy sketch show on ITV.")]
    adds = ClaimToCheck(text="Jimmy Cricket starred in a popular variety show.", evidence=source)
    copies = ClaimToCheck(text="Jimmy Cricket starred in a sketch show.", evidence=source)
    weak = CascadeVerifier(_FixedSupport(0.6), unseen_words_below=0.8)
    added, copied = weak.verify([adds, copies], language="en")
    assert added["verdict"] == "neutral"
    assert "popular" in added["reason"] and "variety" in added["reason"]
    assert copied["verdict"] == "supported"
    # A confident score stands (paraphrase uses new words too), and None turns it off.
    assert CascadeVerifier(_FixedSupport(0.9), unseen_words_below=0.8).verify(
        [adds], language="en")[0]["verdict"] == "supported"
    assert CascadeVerifier(_FixedSupport(0.6), unseen_words_below=None).verify(
        [adds], language="en")[0]["verdict"] == "supported"
    # with_inner keeps the setting.
    assert weak.with_inner(_FixedSupport(0.6)).unseen_words_below == 0.8


def test_an_answer_is_judged_with_its_question():
    from grounded_rag.verification.base import ClaimToCheck, statement_of
    from grounded_rag.verification.cascade import CascadeVerifier
    from tests.fakes import evidence

    source = [evidence("k#sec0", "Roger Bannister was an athlete, physician and academic.")]
    claim = ClaimToCheck(text="physician", evidence=source,
                         question="What other profession did Bannister have?")
    assert statement_of(claim, "en") == (
        'The answer to the question "What other profession did Bannister have?" is: physician')
    assert statement_of(ClaimToCheck(text="医師", evidence=source, question="職業は?"), "ja") == (
        "質問「職業は?」の答えは「医師」である。")
    stage = _FixedSupport(0.6)
    verdict = CascadeVerifier(stage, unseen_words_below=0.8).verify([claim], language="en")[0]
    assert stage.seen == [statement_of(claim, "en")]  # the model stage reads both
    assert verdict["verdict"] == "supported"  # "profession" is the question's word


def test_a_claim_with_many_unseen_words_is_a_paraphrase_and_keeps_its_score():
    from grounded_rag.verification.base import ClaimToCheck
    from grounded_rag.verification.cascade import CascadeVerifier
    from tests.fakes import evidence

    source = [evidence("bio#sec0", "Jimmy Cricket starred in a comedy sketch show on ITV.")]
    reworded = ClaimToCheck(text="Jimmy Cricket was the lead performer of a televised comedy.",
                            evidence=source)
    verdict = CascadeVerifier(_FixedSupport(0.6), unseen_words_below=0.8).verify(
        [reworded], language="en")[0]
    assert verdict["verdict"] == "supported"


def test_a_bare_answer_has_no_polarity_to_flip():
    evidence_text = "Juan Carlos Ferrero is a retired professional tennis player who is not active."
    question = "Juan Carlos Ferrero and Stan Wawrinka are both what?"
    bare = check_claim("professional tennis player", evidence_text, language="en",
                       question=question)
    assert not bare.contradicted and "negation_mismatch" not in {c.kind for c in bare.cues}
    # A sentence, or an answer that negates something itself, is still checked.
    sentence = check_claim("Ferrero is a professional tennis player who is active.",
                           evidence_text, language="en", question=question)
    assert sentence.contradicted
    negated = check_claim("not a tennis player", "Ferrero is a professional tennis player.",
                          language="en", question=question)
    assert "negation_mismatch" in {c.kind for c in negated.cues}


def test_negation_in_another_clause_does_not_flip_a_copied_fragment():
    sentence = ("このウイルスに感染すると、ライズが出来ず、精神はモンスターとして仮想現実の中に"
                "とどまり、いずれは死に至る。")
    for fragment in ("精神はモンスターとして仮想現実の中にとどまり", "いずれは死に至る",
                     "ライズが出来ず"):
        assert not check_claim(fragment, sentence, language="ja").cues, fragment
    # A fragment cut just before the negation still differs from the source.
    assert "negation_mismatch" in {c.kind for c in check_claim(
        "ライズが出来", sentence, language="ja").cues}
    assert "negation_mismatch" in {c.kind for c in check_claim(
        "感染するとライズが出来る", "感染すると、ライズが出来ない。", language="ja").cues}
    english = "Refunds are not available after 30 days, and exchanges are free."
    assert not check_claim("exchanges are free", english, language="en").cues
    assert "negation_mismatch" in {c.kind for c in check_claim(
        "available after 30 days", english, language="en").cues}
    assert check_claim("Refunds are available after 30 days", english,
                       language="en").contradicted


@pytest.mark.parametrize("adverb", ["まず", "必ず", "絶えず", "とりあえず"])
def test_adverbs_ending_in_zu_are_not_negations(adverb):
    evidence = "申請書を提出し、上長の承認を受ける。"
    claim = f"{adverb}、申請書を提出し、上長の承認を受けます。"
    report = check_claim(claim, evidence, language="ja")
    assert "negation_mismatch" not in {c.kind for c in report.cues}
    # A real negation in the same place still flips the claim.
    negated = check_claim("申請書を提出せず、上長の承認を受けます。", evidence, language="ja")
    assert "negation_mismatch" in {c.kind for c in negated.cues}


def test_a_paraphrase_of_one_clause_keeps_that_clauses_polarity():
    sentence = ("純粋な硫酸は、水蒸気との親和性が高いため自然界には存在せず、"
                "空気中の水蒸気を容易に吸収する吸湿性がある。")
    paraphrase = "硫酸は空気中の水蒸気を容易に吸収する吸湿性を持っている。"
    assert "negation_mismatch" not in {
        c.kind for c in check_claim(paraphrase, sentence, language="ja").cues}
    # Restating the negated clause without its negation is still caught.
    flipped = check_claim("硫酸は水蒸気との親和性が高いため自然界に存在する。", sentence,
                          language="ja")
    assert "negation_mismatch" in {c.kind for c in flipped.cues}


def test_each_listed_value_is_matched_against_its_own_line():
    evidence = ("軽自動車の規格は次のとおり。\n全長 3,400 mm 以下\n全幅 1,480 mm 以下\n"
                "全高 2,000 mm 以下\n軽自動車の規格で定められた全幅1,480 mmを超える輸入車は、"
                "小型車として登録される。")
    listed = "軽自動車は全長3,400 mm以下、全幅1,480 mm以下、全高2,000 mm以下と定められています。"
    assert not check_claim(listed, evidence, language="ja").contradicted
    wrong = "軽自動車は全長3,600 mm以下、全幅1,480 mm以下、全高2,000 mm以下と定められています。"
    report = check_claim(wrong, evidence, language="ja")
    assert report.contradicted and "3,600 mm" in report.reason
    # In English too, and a value that belongs to another statement is still caught.
    survey = ("Nearly half of women (47 per cent) said they had suffered from a mental illness, "
              "compared to 33 per cent of men. Overall, 47 per cent of women and 40 per cent of "
              "men regret their career.")
    swapped = "Nearly half of women (47%) suffered from a mental illness compared to 40% of men."
    assert check_claim(swapped, survey, language="en").contradicted


def test_a_year_in_an_event_name_is_not_a_date_to_compare():
    # "the 2004 Siebel Open" names a tournament; the birth date in the evidence is no rival
    evidence = "Andre Kirk Agassi (born April 29, 1970) is an American former tennis player."
    report = check_claim("Andre Agassi was the defending champion of the 2004 Siebel Open.",
                         evidence)
    assert not any(c.kind == "date_mismatch" for c in report.cues), report.cues
    # a year that dates something is still compared
    assert check_claim("Andre Agassi was born in 1971.", evidence).contradicted
    assert check_claim("In 1971 Agassi was born.", evidence).contradicted


def test_a_year_that_names_the_evidence_event_agrees_with_the_same_year():
    evidence = ("The 1982 Georgia Bulldogs football team represented the University of "
                "Georgia. Vincent Joseph Dooley (born September 4, 1932) was the head coach.")
    report = check_claim("The head coach of the Georgia Bulldogs in 1982 was Vince Dooley.",
                         evidence)
    assert not any(c.kind == "date_mismatch" for c in report.cues), report.cues


def test_a_decade_agrees_with_itself_and_contradicts_another_decade():
    """A year inside the decade the evidence gives is left to the judge (no cue decides)."""
    ja = ["パンチを用いて母型を作り、それを何度も再利用する技術は1470年代に生まれたとされる。"]
    assert check_claim("The technique of reusing matrices was born in 1470.", ja).decided is None
    assert check_claim("The technique was born in the 1470s.", ja).decided is None
    assert check_claim("母型の技術は1470年代に生まれた。", ja).decided is None
    assert check_claim("母型の技術は1480年代に生まれた。", ja).decided == "contradicted"
    en = ["The technique was born in the 1470s. Its inventor was born in 1472."]
    assert check_claim("The technique was born in the 1480s.", en).decided == "contradicted"
    assert check_claim("Its inventor was born in 1472.", en).decided is None


def test_an_abbreviated_money_magnitude_is_the_same_amount_and_metres_stay_metres():
    from grounded_rag.verification.values import extract_quantities

    ev = ["Policies include a £2.5billion NHS fund and a £6million signing."]
    for claim in ("Labour promises a £2.5bn NHS fund.", "The £6m signing made one start."):
        assert not [c for c in check_claim(claim, ev).cues if c.decisive], claim
    wrong = check_claim("Labour promises a £3.5bn NHS fund.", ev)
    assert any(c.kind == "quantity_mismatch" and c.decisive for c in wrong.cues)
    assert [q.value for q in extract_quantities("a wall 6m tall")] == [6.0]


@pytest.mark.parametrize("claim, evidence, opposite", [
    ("Paul Doyle moved his family into an £820,000 home in Altrincham.",
     "Paul Doyle moved his family into an £820,000 home in Altrincham, despite having never "
     "worked.", False),
    ("MOD Pizza is a franchise, but Zpizza isn't.",
     "MOD Pizza is a franchise, but Zpizza is a franchise too.", True),
    ("二人の女の子が笑っていて、他の女の子たちは彼女たちを見ている",
     "二人の女の子が息もつけないほど笑っていて、他の女の子たちは彼女たちを見ている", False),
    ("一人の女性と三人の男性が写真のためにポーズをとっている",
     "一人の女性と三人の男性が写真のために動かずにポーズをとっている", False),
    ("皿の上にロールケーキやフォークなどが置かれていない。",
     "皿の上にロールケーキやフォークなどが置かれています。", True),
    ("男性がギターを弾いている", "ギターを弾いている男性は一人もいない", True),
])
def test_a_negation_counts_only_when_what_it_negates_is_on_the_other_side(
        claim, evidence, opposite):
    report = check_claim(claim, [evidence])
    assert any(c.kind == "negation_mismatch" for c in report.cues) is opposite


def test_a_negation_through_a_formal_noun_negates_the_verb_before_it():
    claim = "これらの保証期間は目安であり、実際の製品寿命を保証するものではありません。"
    evidence = "保証期間が設定されているが、実際の製品寿命を保証する物ではない。"
    assert not any(c.kind == "negation_mismatch" for c in check_claim(claim, [evidence]).cues)
