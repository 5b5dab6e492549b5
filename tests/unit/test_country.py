"""A country the claim names against the other country its evidence sentence names."""

from __future__ import annotations

from grounded_rag.verification.cues import check_claim

LADY = ["The Lady is Britain's longest-running weekly women's magazine.",
        "Janus was a magazine about cartoons."]


def test_a_country_the_evidence_sentence_gives_otherwise_contradicts_the_claim() -> None:
    report = check_claim("The Lady was published in the US.", LADY, language="en",
                         question="Are Janus and The Lady both published in the US?")
    assert report.decided == "contradicted"
    cue = next(c for c in report.cues if c.kind == "country_mismatch")
    assert (cue.claim_text, cue.evidence_text) == ("US", "UK")
    assert cue.evidence_sentence == LADY[0] and "UK" in cue.detail and "US" in cue.detail


def test_the_same_country_anywhere_in_the_evidence_is_no_contradiction() -> None:
    report = check_claim("The Lady is a British magazine.", LADY, language="en")
    assert "country_mismatch" not in {c.kind for c in report.cues}
    for other in ("Its owners later moved its offices to the United States.",
                  "Janus was an American magazine."):  # anywhere in the evidence: no cue
        report = check_claim("The Lady was published in the US.", [LADY[0], other],
                             language="en")
        assert "country_mismatch" not in {c.kind for c in report.cues}


def test_a_premise_of_the_question_a_language_or_two_countries_apart_decide_nothing() -> None:
    # "American" is the question's premise, not something the answer adds
    premise = check_claim("Southern New Hampshire University is an American university.",
                          ["Southern New Hampshire University awards degrees to Kepler "
                           "graduates in Rwanda."], language="en",
                          question="What American university awards degrees in Rwanda?")
    # "English" is a language here
    language = check_claim("The magazine is published in English.",
                           ["The magazine is published in the United States."], language="en",
                           question="What language is the magazine published in?")
    # a sentence that names two countries apart gives no one country
    apart = check_claim("The film is a Spanish film.",
                        ["The film is an American film by a British director."],
                        language="en")
    for report in (premise, language, apart):
        assert "country_mismatch" not in {c.kind for c in report.cues}


def test_an_unrelated_sentence_does_not_speak_for_the_claim() -> None:
    report = check_claim("Rick Sebak made the documentary in Canada.",
                         ["The harbour of Marseille is the largest in France."], language="en")
    assert "country_mismatch" not in {c.kind for c in report.cues}


def test_a_negated_claim_is_left_to_the_judge() -> None:
    report = check_claim("The actress is not British.",
                         ["The actress is an American actress and dancer."], language="en")
    assert "country_mismatch" not in {c.kind for c in report.cues}
    plain = check_claim("The actress is British.",
                        ["The actress is an American actress and dancer."], language="en")
    assert plain.decided == "contradicted"


def test_sentences_run_together_are_read_apart_and_a_language_label_names_no_country() -> None:
    merged = ("Janus was a fanzine edited in Madison, Wisconsin (early program books doubled "
              "as issues of \"Janus\".)The Lady is Britain's longest-running weekly women's "
              "magazine.")
    janus = check_claim("Janus was published in the US.", [merged], language="en",
                        question="Are Janus and The Lady both published in the US?")
    assert "country_mismatch" not in {c.kind for c in janus.cues}
    lady = check_claim("The Lady was published in the US.", [merged], language="en",
                       question="Are Janus and The Lady both published in the US?")
    cue = next(c for c in lady.cues if c.kind == "country_mismatch")
    assert cue.evidence_sentence.startswith("The Lady is Britain's")
    label = check_claim("Yuriy Norshteyn is an animator from Ukraine.",
                        ["Yuriy Norshteyn (Russian: Юрий Норштейн) is an animator."],
                        language="en")
    assert "country_mismatch" not in {c.kind for c in label.cues}


def _prepared(text: str, cited: str, others: list[str], question: str):
    from grounded_rag.verification.cascade import prepare_claim
    from grounded_rag.verification.modes import claim_to_check

    evidence = [{"source_id": f"doc-{n}#0", "doc_id": f"doc-{n}", "title": "", "url": "",
                 "text": t, "score": 1.0, "relevance": 1.0} for n, t in enumerate([cited, *others])]
    claim = {"text": text, "citations": [{"source_id": "doc-0#0", "quote": cited}]}
    return prepare_claim(claim_to_check(claim, evidence, question), "en")


def test_in_the_loop_only_the_cited_passage_counts_and_the_question_is_the_premise() -> None:
    american = "Janus was an American science fiction fanzine."
    lady = _prepared("The Lady was published in the US.", LADY[0], [american],
                     "Are Janus and The Lady both published in the US?")
    assert lady.verdict is not None and lady.verdict["verdict"] == "contradicted"
    assert "UK" in lady.verdict["reason"]
    # a sentence claim of a wh-question: the question's "American" is its premise
    premise = _prepared("Southern New Hampshire University is an American university.",
                        "Southern New Hampshire University awards degrees to graduates in "
                        "Rwanda.", [], "What American university awards degrees in Rwanda?")
    assert "country_mismatch" not in {c.kind for c in premise.report.cues}
