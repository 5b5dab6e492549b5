"""Prompts for splitting an answer into atomic, checkable claims."""

from __future__ import annotations

SYSTEM = {
    "en": (
        "Split each numbered statement into atomic claims: short, self-contained sentences "
        "that each state exactly one checkable fact (replace pronouns with what they refer "
        "to). Keep every number, date and condition. Do not add facts. Keep the claims in "
        "the statement's language."
    ),
    "ja": (
        "番号付きの各文を、検証可能な事実を一つだけ述べる短く自己完結した主張（アトミック"
        "クレーム）に分解してください。代名詞は指している語に置き換え、数値・日付・条件は"
        "すべて残し、事実を追加しないこと。主張は元の文と同じ日本語で書くこと（翻訳しない）。"
    ),
}

USER = {
    "en": "Statements:\n{statements}\n\nReturn the claims as JSON.",
    "ja": "文:\n{statements}\n\n主張をJSONで返してください。",
}
