"""A claim that is a whole source sentence is settled without the model judge."""

from grounded_rag.verification.base import ClaimToCheck
from grounded_rag.verification.cascade import CascadeVerifier
from tests.fakes import ScriptedVerifier, evidence

SOURCE = [evidence("policy#sec5", "対象は社員。出張者は、帰着後１４日以内に"
                   "旅費精算書を提出しなければならない。期限を過ぎた場合は上長の承認を要する。")]


def test_a_whole_source_sentence_is_supported_without_the_model():
    judge = ScriptedVerifier(lambda text: ("neutral", "not stated"))
    cascade = CascadeVerifier(judge)
    # full-width digits and the final stop aside, word for word
    copy = ClaimToCheck(text="出張者は、帰着後14日以内に旅費精算書を提出しなければならない",
                        evidence=SOURCE)
    [verdict] = cascade.verify([copy], language="ja")
    assert verdict["verdict"] == "supported" and verdict["support"] == 1.0
    # the quote is the source's own sentence, as written there
    assert verdict["judge"] == "copy" and "帰着後１４日以内" in verdict["evidence_quote"]
    assert judge.calls == []


def test_fragments_paraphrases_and_short_sentences_still_go_to_the_model():
    judge = ScriptedVerifier(lambda text: ("neutral", "not stated"))
    cascade = CascadeVerifier(judge)
    claims = [
        # a clause cut from its sentence: the rest may qualify it
        ClaimToCheck(text="旅費精算書を提出しなければならない", evidence=SOURCE),
        ClaimToCheck(text="出張者は帰着後14日以内に精算書を出す", evidence=SOURCE),
        ClaimToCheck(text="対象は社員", evidence=SOURCE),  # whole, but under COPY_MIN_CHARS
    ]
    verdicts = cascade.verify(claims, language="ja")
    assert judge.calls == [[c["text"] for c in claims]]
    assert not any(v.get("judge") == "copy" or v["verdict"] == "supported" for v in verdicts)


def test_a_copy_with_a_contradicting_value_is_still_decided_by_the_cue():
    cascade = CascadeVerifier(ScriptedVerifier())
    source = [evidence("spec#sec2", "The battery lasts up to 10 hours. It weighs 410 grams.")]
    [verdict] = cascade.verify([ClaimToCheck(text="The battery lasts up to 12 hours.",
                                             evidence=source)], language="en")
    assert verdict["verdict"] == "contradicted"
