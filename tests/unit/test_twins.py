"""One sentence copied onto two subjects in one answer (``verification.twins``)."""

from __future__ import annotations

from grounded_rag.verification.modes import judge_claims
from grounded_rag.verification.twins import twin_subjects
from tests.fakes import ScriptedVerifier, evidence

ALBUMS = 'He also has two solo albums: "The Great Divide" (2005) and "Proof of Life" (2013).'


BJORK = "Björk embarked on a solo career in 1993 with albums such as Debut (1993)."


def _claim(text: str, quote: str, source: str = "doc#sec0") -> dict:
    return {"text": text, "citations": [{"source_id": source, "quote": quote}]}


def _pair(quote: str, *, second_quote: str | None = None, second_source: str = "doc#sec0"
          ) -> list[dict]:
    return [_claim("Scott Stapp has two solo albums: 'The Great Divide' (2005) and 'Proof of "
                   "Life' (2013).", quote),
            _claim("Björk has two solo albums: 'The Great Divide' (2005) and 'Proof of Life' "
                   "(2013).", quote if second_quote is None else second_quote, second_source)]


def test_a_sentence_that_names_neither_subject_decides_both_twins():
    reasons = twin_subjects(_pair(ALBUMS), "en")  # type: ignore[arg-type]
    assert set(reasons) == {0, 1}
    assert "Björk has two solo albums" in reasons[0]


def test_a_sentence_that_names_one_subject_decides_the_other_only():
    named = "Scott Stapp also has two solo albums: The Great Divide (2005) and Proof of Life."
    assert set(twin_subjects(_pair(named), "en")) == {1}  # type: ignore[arg-type]
    both = "Both Scott Stapp and Björk have two solo albums: The Great Divide (2005) and more."
    assert twin_subjects(_pair(both), "en") == {}  # type: ignore[arg-type]


def test_the_sentence_that_says_the_shared_thing_decides_not_the_quote():
    # The second twin cites the section's sentence that names Björk; the sentence that gives
    # the two albums names neither subject.
    section = evidence("doc#sec0", f"{ALBUMS} {BJORK}")
    claims = _pair(ALBUMS, second_quote=BJORK)
    assert set(twin_subjects(claims, "en", [section])) == {0, 1}  # type: ignore[arg-type]


def test_other_sources_paraphrases_and_unlike_statements_are_not_twins():
    claims = _pair(ALBUMS, second_quote=BJORK, second_source="other#sec0")
    assert twin_subjects(claims, "en") == {}  # type: ignore[arg-type]
    quote = "The show is held at the Flamingo Las Vegas every summer."
    paraphrases = [_claim("The show takes place at the Flamingo Las Vegas every summer.", quote),
                   _claim("The show is held at the Flamingo Las Vegas every summer.", quote)]
    assert twin_subjects(paraphrases, "en") == {}  # type: ignore[arg-type]
    unlike = [_claim("Scott Stapp has two solo albums.", ALBUMS),
              _claim("The Great Divide was released in 2005 on a major label.", ALBUMS)]
    assert twin_subjects(unlike, "en") == {}  # type: ignore[arg-type]


def test_japanese_twins():
    quote = "大阪市内の宿泊費の上限は13,000円とする。"
    claims = [_claim("大阪市内の宿泊費の上限は13,000円です。", quote),
              _claim("名古屋市内の宿泊費の上限は13,000円です。", quote)]
    reasons = twin_subjects(claims, "ja")  # type: ignore[arg-type]
    assert list(reasons) == [1] and "大阪市内" in reasons[1]


def test_twins_are_decided_before_the_judge_and_reported_as_unsupported():
    claims = _pair(ALBUMS) + [_claim("Björk embarked on a solo career in 1993.",
                                     "Björk embarked on a solo career in 1993.")]
    judge = ScriptedVerifier()
    findings = judge_claims(claims, [0, 1, 2], [evidence("doc#sec0", ALBUMS)],  # type: ignore[arg-type]
                            judge, execution="batch", language="en")
    assert judge.calls == [["Björk embarked on a solo career in 1993."]]
    assert [c["verdict"] for c in claims] == ["neutral", "neutral", "supported"]
    assert [f["claim_index"] for f in findings if f["type"] == "unsupported"] == [0, 1]
