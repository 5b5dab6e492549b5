"""Text of the ``off_question`` findings for answers that miss what a question asks."""

from __future__ import annotations

NOT_ADDRESSED = {
    "en": 'Statement "{text}" does not answer the question: no cited sentence speaks to what '
          'it asks ("{terms}"). If a source says it, answer with that and cite the sentence '
          "that says it; if no source says it, answer that the sources do not say.",
    "ja": "「{text}」は質問に答えていません"
          "（質問の「{terms}」について述べた文が引用にありません）。"
          "資料に書かれていればその文を出典にして答え、どの資料にも書かれていなければ"
          "資料からは確認できないと答えてください。",
}
"""Detail of an ``off_question`` finding for a yes/no question whose predicate is not addressed.

``{terms}`` lists the question's own words for what it asks (``carried, airplane, cabin``).
"""

CASE_NOT_ADDRESSED = {
    "en": 'Statement "{text}" does not answer the question: the question asks about a case '
          '("{terms}") that no cited sentence speaks to. If a source covers that case, answer '
          "from it and cite the sentence; if none does, answer that the sources do not say.",
    "ja": "「{text}」は質問に答えていません"
          "（質問の「{terms}」の場合について述べた文が引用にありません）。"
          "その場合について書かれた文が資料にあればその文を出典にして答え、なければ"
          "資料からは確認できないと答えてください。",
}
"""Detail of an ``off_question`` finding for an answer about another case than the one asked
(``{terms}``: the words of the question's condition)."""

TERMS_SEPARATOR = {"en": '", "', "ja": "」「"}
"""How the asked words are joined inside ``{terms}``."""

MONEY_REASON = {"en": "it gives no amount of money", "ja": "金額がありません"}
"""Reason for a "how much / いくら" question answered without an amount of money."""

MONEY_KIND = {"en": "amount of money", "ja": "金額"}
"""What a "how much / いくら" question asks for, in the revision prompt."""

WRONG_LANGUAGE = {
    "en": 'Statement "{text}" is not written in English, the language of the question. '
          "Write it in English; keep citing the same sentences (quotes stay in the source's "
          "language).",
    "ja": "「{text}」が質問の言語（日本語）で書かれていません。日本語で書き直してください。"
          "出典の文はそのまま引用してかまいません（引用は資料の言語のままです）。",
}
"""Detail of an ``answer_language`` finding: a statement not in the answer's language."""

UNTRANSLATED = (
    'Statement "{text}" leaves Japanese words in an English answer: {words}. Write them in '
    "English (a name may keep its Japanese in brackets after the English); keep citing the "
    "same sentences."
)
"""Detail of an ``answer_language`` finding: Japanese words left in an English statement."""

PREDICATE_ABSENT = {
    "en": 'No retrieved passage speaks to what the question asks ("{terms}"); the sources are '
          "about its subject only, so no model was called.",
    "ja": "質問が尋ねていること（「{terms}」）について述べた箇所が検索結果にありません"
          "（主題についての記述のみ）。モデルは呼び出していません。",
}
"""Detail of a ``predicate_absent`` finding: a yes/no question whose asked predicate no
retrieved passage names (abstained before any model call)."""
