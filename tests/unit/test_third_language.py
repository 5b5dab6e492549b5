"""Questions in a language that is neither Japanese nor English are told apart when clear."""

from __future__ import annotations

import pytest

from grounded_rag.lang import third_language


@pytest.mark.parametrize(("question", "language"), [
    ("Quelle est la durée du contrat ?", "French"),
    ("Est-ce que la batterie est étanche ?", "French"),
    ("Wie hoch ist die Monatsgebühr?", "German"),
    ("Was ist das?", "German"),
    ("¿Cuál es la tarifa mensual?", "Spanish"),
    ("Qual é a taxa mensal?", "Portuguese"),
    ("Quanto costa il piano?", "Italian"),
    ("이 계약의 기간은 얼마입니까?", "Korean"),
    ("Какова ежемесячная плата?", "Russian or another Cyrillic-script language"),
    ("Ποια είναι η μηνιαία χρέωση;", "Greek"),
])
def test_a_clear_third_language_is_named(question: str, language: str) -> None:
    assert third_language(question) == language


@pytest.mark.parametrize("question", [
    "How long does the Aozora A1 battery last?",
    "Who wrote El amor en los tiempos del cólera?",  # a title: English words around it
    "Are Cardillac and La donna del lago both operas?",
    'Who composed the symphony "À Pátria", based on Portuguese folk music?',
    "Was the Aozora A1 released in 2020?",  # "was" is German too
    "本契約の有効期間はいつまでですか？",
    "コミンフォルムを指導していたのは？",
    "?",
    "",
    "Quanto custa o plano?",  # one function word is not clear enough: left to the loop
])
def test_english_japanese_and_unclear_questions_are_not_named(question: str) -> None:
    assert third_language(question) is None
