"""Answer-or-abstain on a user's first corpus: three short documents, the real retriever.

The corpus in tests/data/small_corpus (a Japanese travel policy, a Japanese service contract,
an English product sheet) has the shape of the corpus people try first; each test is one
failure class seen there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grounded_rag import Context, build_graph
from grounded_rag.lang import third_language
from grounded_rag.retrieval.calibration import clears_gate
from tests.fakes import ScriptedChatModel, ScriptedVerifier, answer

CORPUS = Path(__file__).resolve().parents[1] / "data" / "small_corpus"


@pytest.fixture(scope="module")
def retriever():
    from grounded_rag.retrieval.embeddings import default_embeddings
    from grounded_rag.retrieval.memory import InMemoryRetriever

    docs = []
    for path in sorted(CORPUS.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        docs.append({"id": path.stem, "title": text.splitlines()[0].lstrip("# "), "text": text})
    return InMemoryRetriever(docs, embeddings=default_embeddings())


@pytest.mark.parametrize(("question", "section"), [
    # near word for word: 悪天候により航空便が欠航した場合、…追加の宿泊費は全額を支給する
    ("悪天候で飛行機が欠航した場合、追加の宿泊費はどれくらい支給されますか？",
     "travel-policy-ja#sec4"),
    ("業務委託契約はいつ終了しますか？", "service-contract-ja#sec4"),
    ("旅費精算書はいつまでに提出しなければなりませんか？", "travel-policy-ja#sec5"),
    ("Is the Aurora LX-3 waterproof?", "aurora-lx3-en#sec4"),
])
def test_an_answerable_question_reaches_the_model(retriever, question, section):
    hits = retriever.retrieve(question, 6)
    assert hits[0]["source_id"] == section
    assert clears_gate(hits, "ja" if section.endswith(("ja#sec4", "ja#sec5")) else "en",
                       None)[0]


@pytest.mark.parametrize(("question", "section"), [
    ("What is the maximum hotel cost per night for business trips in Tokyo?",
     "travel-policy-ja#sec3"),
    ("What is the monthly fee in the service contract?", "service-contract-ja#sec3"),
])
def test_a_japanese_section_that_answers_an_english_question_ranks_first(retriever, question,
                                                                         section):
    hits = retriever.retrieve(question, 6)
    assert hits[0]["source_id"] == section  # not an unrelated English section
    assert clears_gate(hits, "en", None)[0]


@pytest.mark.parametrize(("question", "language"), [
    ("社員食堂の営業時間は何時からですか？", "ja"),
    ("What is the capital of France?", "en"),
])
def test_nothing_in_the_store_is_about_it_abstains_before_any_model(retriever, question,
                                                                     language):
    model = ScriptedChatModel(script={"CitedAnswer": []})
    graph = build_graph(retriever=retriever, generator=model, extractor="rules",
                        verifier=ScriptedVerifier())
    out = graph.invoke({"question": question})
    assert out["status"] == "abstained" and out["decided_by"] == "retrieval"
    assert model.calls == [] and out["findings"][0]["type"] == "weak_evidence"
    assert not clears_gate(retriever.retrieve(question, 6), language, None)[0]


@pytest.mark.parametrize("question", ["Can the Aurora LX-3 be carried in an airplane cabin?",
                                      "Is the Aurora LX-3 waterproof?"])
def test_a_yes_no_question_about_what_no_document_says_abstains_before_any_model(
        retriever, question):
    model = ScriptedChatModel(script={"CitedAnswer": []})
    graph = build_graph(retriever=retriever, generator=model, extractor="rules",
                        verifier=ScriptedVerifier())
    out = graph.invoke({"question": question})
    assert out["status"] == "abstained" and out["decided_by"] == "retrieval"
    assert [f["type"] for f in out["findings"]] == ["predicate_absent"]
    assert model.calls == [] and out["answer"] == "The sources do not say."


@pytest.mark.parametrize("question", ["Is water damage covered by the warranty?",
                                      "出張の宿泊費は支給されますか？"])
def test_a_yes_no_question_whose_predicate_a_passage_names_reaches_the_model(
        retriever, question):
    reply = answer(("It is stated in the sources.", "aurora-lx3-en#sec4"))
    model = ScriptedChatModel(script={"CitedAnswer": [reply]})
    graph = build_graph(retriever=retriever, generator=model, extractor="rules",
                        verifier=ScriptedVerifier())
    out = graph.invoke({"question": question}, context=Context(max_retries=0))
    assert "predicate_absent" not in [f["type"] for f in out["findings"]]
    assert model.calls  # the generator was asked


def test_without_the_predicate_check_an_answer_that_ignores_the_question_abstains(retriever):
    unrelated = answer(
        ("The Aurora LX-3 carries a 24-month limited warranty.", "aurora-lx3-en#sec4"),
        ("A full charge powers a typical laptop for about 9 hours.", "aurora-lx3-en#sec3"))
    model = ScriptedChatModel(script={"CitedAnswer": [unrelated, unrelated]})
    verifier = ScriptedVerifier()  # every claim is true: only the question is missed
    graph = build_graph(retriever=retriever, generator=model, extractor="rules",
                        verifier=verifier)
    out = graph.invoke({"question": "Can the Aurora LX-3 be carried in an airplane cabin?"},
                       context=Context(max_retries=1, predicate_check=False))
    assert out["status"] == "abstained" and out["decided_by"] == "off_question"
    assert out["answer"] == "The sources do not say."


def _revised_once(retriever, question, wrong, right):
    """The loop over the corpus with a model that writes ``wrong``, then ``right``."""
    model = ScriptedChatModel(script={"CitedAnswer": [wrong, right]})
    judge = ScriptedVerifier()
    graph = build_graph(retriever=retriever, generator=model, extractor="rules",
                        verifier=judge)
    return graph.invoke({"question": question}, context=Context(max_retries=1)), judge


def test_an_english_figure_against_man_notation_is_caught_before_any_judge(retriever):
    wrong = answer(("The monthly fee is 45,000 yen (tax excluded).", "service-contract-ja#sec3"))
    right = answer(("The monthly fee is 450,000 yen (tax excluded).",
                    "service-contract-ja#sec3"))
    out, judge = _revised_once(retriever, "What is the monthly fee in the service contract?",
                               wrong, right)
    removed = {c["text"]: c for c in out["removed_claims"]}
    first = removed["The monthly fee is 45,000 yen (tax excluded)."]
    assert first["verdict"] == "contradicted" and "45万円" in first["reason"]
    # The cue decided it: the judge only ever saw the corrected claim.
    assert judge.calls == [["The monthly fee is 450,000 yen (tax excluded)."]]
    assert out["status"] == "answered" and "450,000 yen" in out["answer"]


def test_the_other_cases_value_is_caught_before_any_judge(retriever):
    # 1泊あたり東京都内は15,000円、その他の地域は12,000円: both values are "in the source"
    wrong = answer(("The hotel cap per night in Tokyo is 15,000 yen.", "travel-policy-ja#sec3"),
                   ("The hotel cap per night in Tokyo is 12,000 yen.", "travel-policy-ja#sec3"))
    right = answer(("The hotel cap per night in Tokyo is 15,000 yen.", "travel-policy-ja#sec3"))
    out, judge = _revised_once(retriever, "What is the maximum hotel cost per night in Tokyo?",
                               wrong, right)
    removed = {c["text"]: c for c in out["removed_claims"]}
    first = removed["The hotel cap per night in Tokyo is 12,000 yen."]
    assert first["verdict"] == "contradicted"
    assert "15,000円" in first["reason"] and "その他" in first["reason"]
    assert all("12,000" not in claim for call in judge.calls for claim in call)
    assert out["status"] == "answered" and "12,000" not in out["answer"]


@pytest.mark.parametrize("question", ["?", "それは？", "Quelle est la capitale de la France ?",
                                      "Wie hoch ist die Monatsgebühr?", "이 제품의 무게는?"])
def test_questions_without_content_or_in_a_third_language_get_a_clear_outcome(retriever,
                                                                             question):
    unrelated = answer(("The Aurora LX-3 weighs 410 grams.", "aurora-lx3-en#sec2"))
    model = ScriptedChatModel(script={"CitedAnswer": [unrelated, unrelated, unrelated]})
    graph = build_graph(retriever=retriever, generator=model, extractor="rules",
                        verifier=ScriptedVerifier())
    out = graph.invoke({"question": question})
    assert out["status"] == "abstained", out["answer"]
    assert out["decided_by"] and out["findings"]
    # nothing to look for, or a language the checks do not read: refused before the model
    expected = "no_content_words" if question in ("?", "それは？") else "unsupported_language"
    assert out["findings"][0]["type"] == expected and model.calls == []
    assert out["decided_by"] == "retrieval"


def test_a_third_language_question_is_answered_when_the_language_is_set(retriever) -> None:
    weight = answer(("The Aurora LX-3 weighs 410 grams.", "aurora-lx3-en#sec2"))
    model = ScriptedChatModel(script={"CitedAnswer": [weight, weight, weight]})
    graph = build_graph(retriever=retriever, generator=model, extractor="rules",
                        verifier=ScriptedVerifier())
    question = "Quel est le poids de la batterie Aurora LX-3 ?"
    assert third_language(question) == "French"
    out = graph.invoke({"question": question}, {"configurable": {"language": "en"}})
    assert "unsupported_language" not in {f["type"] for f in out["findings"]}
    assert model.calls


@pytest.fixture(scope="module")
def one_section():
    from grounded_rag.retrieval.embeddings import default_embeddings
    from grounded_rag.retrieval.memory import InMemoryRetriever

    text = ("# Aurora LX-3\n\nThe Aurora LX-3 power bank weighs 410 grams and holds "
            "20,000 mAh.\n")
    return InMemoryRetriever([{"id": "lx3", "title": "Aurora LX-3", "text": text}],
                             embeddings=default_embeddings())


@pytest.mark.parametrize(("question", "outcome", "finding"), [
    ("How much does the Aurora LX-3 weigh?", "answered", None),
    ("What is the capital of France?", "abstained", "weak_evidence"),
    ("Is the Aurora LX-3 waterproof?", "abstained", "predicate_absent"),
])
def test_a_store_with_one_section_gets_a_clear_outcome(one_section, question, outcome, finding):
    reply = answer(("The Aurora LX-3 weighs 410 grams.", "S1"))
    model = ScriptedChatModel(script={"CitedAnswer": [reply]})
    graph = build_graph(retriever=one_section, generator=model, extractor="rules",
                        verifier=ScriptedVerifier())
    out = graph.invoke({"question": question})
    assert out["status"] == outcome, out["findings"]
    if finding:  # refused before any model call, with the reason
        assert [f["type"] for f in out["findings"]] == [finding] and model.calls == []
    else:
        assert "410 grams" in out["answer"] and out["claims"][0]["verdict"] == "supported"
