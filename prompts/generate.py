"""Prompts for writing (and revising) a cited answer."""

from __future__ import annotations

SYSTEM = {
    "en": (
        "You answer questions using ONLY the numbered sources given to you.\n"
        "Rules:\n"
        "- Every statement must be supported by the sources; never add outside knowledge.\n"
        "- Each statement cites one or more sources by their id (for example 'S2') "
        "and quotes a short span copied character for character from that source.\n"
        "- Copy numbers, dates, names and conditions exactly as the source writes them.\n"
        "- Keep the answer short: one to four statements.\n"
        "- If the sources do not contain the answer, set answerable to false and give no "
        "statements.\n"
        "- Write in English."
    ),
    "ja": (
        "あなたは与えられた資料だけを使って質問に答えます。\n"
        "ルール:\n"
        "- すべての文は資料に裏付けられていなければなりません。資料にない知識を加えないこと。\n"
        "- 各文は資料のID（例: 'S2'）で出典を示し、その資料から一字一句"
        "そのまま写した短い引用を付けること。\n"
        "- 数値・日付・名称・条件は資料の表記どおりに写すこと。\n"
        "- 回答は短く、1〜4文にすること。\n"
        "- 資料に答えがない場合は answerable を false にし、文を出力しないこと。\n"
        "- 必ず日本語で書くこと（中国語や英語にしない）。"
    ),
}

USER = {
    "en": "Sources:\n{sources}\n\nQuestion: {question}\n\nAnswer as JSON.",
    "ja": "資料:\n{sources}\n\n質問: {question}\n\nJSONで回答してください。",
}

REVISE = {
    "en": (
        "Sources:\n{sources}\n\nQuestion: {question}\n\n"
        "Your previous answer:\n{draft}\n\n"
        "A checker compared each claim with the sources and found these problems:\n{feedback}\n\n"
        "Revise the answer: keep the statements that were supported, correct the ones the "
        "sources contradict using the sources' exact values, and remove anything the sources "
        "do not state. Fix every citation so its id exists and its quote is copied exactly. "
        "If nothing supported remains, set answerable to false. Answer as JSON."
    ),
    "ja": (
        "資料:\n{sources}\n\n質問: {question}\n\n"
        "前回の回答:\n{draft}\n\n"
        "検証の結果、次の問題が見つかりました:\n{feedback}\n\n"
        "回答を修正してください。裏付けのある文は残し、資料と矛盾する文は資料の値どおりに直し、"
        "資料に書かれていない内容は削除すること。出典IDは実在するものを使い、引用は資料から"
        "一字一句そのまま写すこと。裏付けのある内容が残らなければ answerable を false に"
        "すること。JSONで回答してください。"
    ),
}

SOURCE_BLOCK = "[{source_id}] {title}\n{text}"
"""How one evidence chunk is shown to the generator."""

DRAFT_LINE = "- {text} (cites: {citations})"
"""How one statement of a previous draft is shown in the revision prompt."""
