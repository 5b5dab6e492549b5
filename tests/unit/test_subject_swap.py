"""A claim that says of one named thing what the evidence says of another is contradicted."""

from grounded_rag.verification.cues import check_claim
from grounded_rag.verification.subjects import (
    leading_name,
    swapped_subject,
    swapped_subject_ja,
)

# A small-corpus comparison question's collection: two paragraphs run together, as given.
UNIVERSITIES = (
    "Capitol Technology University (formerly Capitol College) is a private, nonprofit, "
    "nonsectarian, regionally-accredited university northeast of Washington, DC.Columbia "
    "University (Columbia; officially Columbia University in the City of New York), "
    "established in 1754, is a private Ivy League research university in Upper Manhattan, "
    "New York City, often cited as one of the world's most prestigious universities."
)


def test_the_predicate_of_another_named_thing_is_a_decisive_contradiction():
    claim = ("Capitol Technology University is a private Ivy League research university in "
             "Upper Manhattan, New York City.")
    report = check_claim(claim, [UNIVERSITIES], language="en")
    assert report.decided == "contradicted"
    cue = next(c for c in report.cues if c.kind == "subject_swap")
    assert (cue.claim_text, cue.evidence_text) == (
        "Capitol Technology University", "Columbia University")
    assert "Columbia University" in report.reason


def test_the_right_subject_and_other_names_of_it_are_left_alone():
    right = ("Columbia University is a private Ivy League research university in Upper "
             "Manhattan, New York City.")
    assert swapped_subject(right, [UNIVERSITIES]) is None
    assert check_claim(right, [UNIVERSITIES], language="en").decided is None
    # an acronym, a surname with a title, a sentence naming both: one thing, two names
    assert swapped_subject(
        "SNHU is a private nonprofit coeducational nonsectarian university.",
        ["Southern New Hampshire University is a private nonprofit coeducational "
         "nonsectarian university.", "Students call it SNHU in Manchester."]) is None
    assert swapped_subject(
        "Cate McGregor is a Group Captain in the Royal Australian Air Force.",
        ["Ms McGregor is a Group Captain in the Royal Australian Air Force.",
         "Cate McGregor spoke on Monday."]) is None
    assert swapped_subject(
        "Lady Gaga is an American singer, songwriter and actress from New York.",
        ["Stefani Germanotta is an American singer, songwriter and actress from New York.",
         "Lady Gaga is the stage name of Stefani Germanotta."]) is None
    # without the sentence that ties the two names, it is another person
    assert swapped_subject(
        "Lady Gaga is an American singer, songwriter and actress from New York.",
        ["Stefani Germanotta is an American singer, songwriter and actress from New York.",
         "Lady Gaga performed in Tokyo."]) is not None


def test_a_pronoun_or_a_headline_noun_is_no_name():
    # "He" may well be the claim's subject: that is the judge's to read
    assert swapped_subject(
        "Björk has two solo albums: The Great Divide (2005) and Proof of Life (2013).",
        ["He also has two solo albums: The Great Divide (2005) and Proof of Life (2013).",
         "Björk embarked on a solo career in 1993."]) is None
    assert swapped_subject(
        "Grandmother had booked a final trip with her husband to Sharm El Sheikh.",
        ["Jane Bacon had booked a final trip with her husband to Sharm El Sheikh.",
         "The grandmother was 60."]) is None
    assert leading_name("Originally, the band played") == ("", "Originally, the band played")
    assert leading_name("St. Louis Cardinals won")[0] == ""
    assert leading_name("Columbia University (Columbia; officially")[0] == "Columbia University"


# Two passages of a small collection: what the weavers learned, and who the founder was.
WEAVERS = [
    "職人たちはフランスから招いた技師たちから織物の技術を学び、数年後には各地の工場で"
    "指導に当たった。工場は1875年に操業を始めた。",
    "山田 太郎は前橋で最初の織物工場を開いた実業家である。のちに東京の商社の社長を務めた。",
]


def test_a_japanese_claim_that_stitches_one_subject_onto_anothers_predicate():
    claim = "山田 太郎はフランスから織物の技術を学んだ"
    report = check_claim(claim, WEAVERS, language="ja",
                         question="山田 太郎はどこで織物の技術を学んだ？")
    assert report.decided == "contradicted"
    cue = next(c for c in report.cues if c.kind == "subject_swap")
    assert (cue.claim_text, cue.evidence_text) == ("山田 太郎", "職人たち")
    assert "職人たち" in report.reason


def test_a_japanese_claim_about_the_right_subject_or_a_description_of_it_is_left_alone():
    sentences = [s for text in WEAVERS for s in text.split("。") if s]
    # the sentence's own subject
    assert swapped_subject_ja("職人たちはフランスから織物の技術を学んだ", sentences) is None
    # a pronoun, a reference back, a time word: who they mean is the judge's to read
    for opener in ("彼は", "同氏は", "当時は"):
        other = [opener + "フランスから招いた技師たちから織物の技術を学んだ。", WEAVERS[1]]
        assert swapped_subject_ja("山田 太郎はフランスから織物の技術を学んだ", other) is None
    # the same head noun: 「党は」 describes 市民改革党
    party = ["党は政党助成金の受け取りを拒否している唯一の党である。",
             "市民改革党は1990年に結成された。"]
    assert swapped_subject_ja("市民改革党は政党助成金の受け取りを拒否している", party) is None
    # a sentence that names both: perhaps two names of one person
    both = [WEAVERS[0], "山田 太郎は職人たちを率いた。"]
    assert swapped_subject_ja("山田 太郎はフランスから織物の技術を学んだ", both) is None
    # the claim's subject is named nowhere else: nothing says whose it is
    assert swapped_subject_ja("山田 太郎はフランスから織物の技術を学んだ", [WEAVERS[0]]) is None
    # too short a predicate to say whose it is
    assert swapped_subject_ja("山田 太郎は学んだ", sentences) is None
