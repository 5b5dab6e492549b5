"""Text of findings fed back to the generator, of abstentions, and of progress messages."""

from __future__ import annotations

ABSTAIN = {"ja": "資料からは確認できません。", "en": "The sources do not say."}
"""The abstention answer, in the question's language."""

CLAIM_FINDING = {
    "en": '- Claim "{claim}": {verdict}. {reason}{evidence}',
    "ja": "- 主張「{claim}」: {verdict}。{reason}{evidence}",
}
EVIDENCE_SUFFIX = {"en": ' The source says: "{quote}"', "ja": " 資料の記載: 「{quote}」"}
VERDICT_NAMES = {
    "en": {"supported": "supported", "contradicted": "contradicted by the sources",
           "neutral": "not stated in the sources"},
    "ja": {"supported": "裏付けあり", "contradicted": "資料と矛盾", "neutral": "資料に記載なし"},
}
GENERAL_FINDING = {"en": "- {detail}", "ja": "- {detail}"}

OFF_QUESTION = {
    "en": 'Statement "{text}" does not answer the question: {reason}. Answer with the {kind} '
          "the question asks for, as the source writes it, and cite the sentence that says it.",
    "ja": "「{text}」は質問に答えていません（{reason}）。"
          "質問が求める{kind}を資料の表記どおりに書き、それが書かれている文を出典にしてください。",
}
"""Detail of an ``off_question`` finding (it goes into the revision prompt)."""
GAP_HINT = {
    "ja": "- 資料の文「{sentence}」で、質問の「{word}」にあたるのは「{filler}」です。",
}
"""A revision hint when the question is a source sentence with its answer taken out
(``verification.asked``; Japanese questions only)."""
OFF_QUESTION_REASONS = {
    "en": {"heading": "it only repeats a heading of the source",
           "question": "it only repeats the question",
           "asks": "it is a question, not an answer",
           "gap": "the source writes {filler} for what the question asks",
           "topic": "the sources it cites never name {topic}, what the question asks about",
           "source": "the passages it cites are not about the question",
           "focus": "no sentence it cites says anything about {focus}, what the question asks",
           "number": "it gives no number", "date": "it gives no date",
           "count": "its only figures are dates, not the count asked for"},
    "ja": {"heading": "資料の見出しを繰り返しているだけです",
           "question": "質問を繰り返しているだけです",
           "asks": "答えではなく問いになっています",
           "gap": "資料で質問の尋ねている語にあたるのは「{filler}」です",
           "topic": "出典の資料は質問の対象である「{topic}」について述べていません",
           "source": "出典の資料は質問の内容について述べたものではありません",
           "focus": "引用した文はいずれも質問の「{focus}」について述べていません",
           "number": "数値がありません", "date": "日付がありません",
           "count": "数値は日付だけで、問われている数がありません"},
}
OFF_QUESTION_KINDS = {
    "en": {"number": "number", "date": "date", "answer": "fact"},
    "ja": {"number": "数値", "date": "日付", "answer": "内容"},
}

PROGRESS = {
    "retrieving": {"en": "retrieving evidence", "ja": "資料を検索中"},
    "assessing": {"en": "checking that the sources answer the question",
                  "ja": "資料に答えがあるかを確認中"},
    "generating": {"en": "writing a cited answer", "ja": "引用付きの回答を作成中"},
    "checking": {"en": "checking citations", "ja": "引用を確認中"},
    "extracting": {"en": "extracting claims", "ja": "主張を抽出中"},
    "verifying": {"en": "verifying {n} claims", "ja": "{n}件の主張を検証中"},
    "revising": {"en": "revising, attempt {attempt} of {total}",
                 "ja": "修正中（{attempt}/{total}回目）"},
    "abstaining": {"en": "abstaining", "ja": "回答を控えます"},
    "finalizing": {"en": "finalizing", "ja": "回答を確定中"},
    "reviewing": {"en": "waiting for human review", "ja": "人手によるレビュー待ち"},
}
