"""Prompts for writing (and revising) a cited answer."""

from __future__ import annotations

SYSTEM = {
    "en": (
        "You answer questions using ONLY the sources given to you. Every source sentence "
        "has a handle: S2.3 is sentence 3 of source S2.\n"
        "Rules:\n"
        "- Every statement must be supported by the sources; never add outside knowledge.\n"
        "- Each statement cites the handles of the sentences that support it (for example "
        "['S2.3'] or ['S1.2', 'S1.3']); do not copy the sentences.\n"
        "- Answer the question itself: give the number, date, name or condition it asks for, "
        "written exactly as the source writes it; never answer with just a heading.\n"
        "- Keep the answer short: one to four statements.\n"
        "- If the sources do not contain the answer, set answerable to false and give no "
        "statements.\n"
        "- Write in English."
    ),
    "ja": (
        "あなたは与えられた資料だけを使って質問に答えます。資料の各文には番号があり、"
        "S2.3 は資料S2の3番目の文です。\n"
        "ルール:\n"
        "- すべての文は資料に裏付けられていなければなりません。資料にない知識を加えないこと。\n"
        "- 各文は、根拠となる資料の文の番号（例: ['S2.3'] や ['S1.2', 'S1.3']）を出典として"
        "示すこと。資料の文を写す必要はありません。\n"
        "- 質問そのものに答えること。問われている数値・日付・名称・条件を資料の表記どおりに書き、"
        "見出しだけで答えないこと。\n"
        "- 回答は短く、1〜4文にすること。\n"
        "- 資料に答えがない場合は answerable を false にし、文を出力しないこと。\n"
        "- 必ず日本語で書くこと（中国語や英語にしない）。"
    ),
}

USER = {
    "en": "Sources:\n{sources}\n\nQuestion: {question}\n\nAnswer as JSON.",
    "ja": "資料:\n{sources}\n\n質問: {question}\n\nJSONで回答してください。",
}

SOURCES_BLOCK = {
    "en": "Sources:\n{sources}\n\n",
    "ja": "資料:\n{sources}\n\n",
}
"""How ``USER`` and ``REVISE`` begin: the system message and this block are the prompt prefix
that the local claim judge shares with the generator (its evaluated KV cache is reused)."""

REVISE = {
    "en": (
        "Sources:\n{sources}\n\nQuestion: {question}\n\n"
        "Your previous answer:\n{draft}\n\n"
        "A checker compared each claim with the sources and found these problems:\n{feedback}\n\n"
        "Revise the answer: keep the statements that were supported, correct the ones the "
        "sources contradict using the sources' exact values, and remove anything the sources "
        "do not state. Cite only sentence handles shown above (such as S2.3). "
        "{closing}"
    ),
    "ja": (
        "資料:\n{sources}\n\n質問: {question}\n\n"
        "前回の回答:\n{draft}\n\n"
        "検証の結果、次の問題が見つかりました:\n{feedback}\n\n"
        "回答を修正してください。裏付けのある文は残し、資料と矛盾する文は資料の値どおりに直し、"
        "資料に書かれていない内容は削除すること。出典には上に示した文の番号（S2.3 など）だけを"
        "使うこと。{closing}"
    ),
}

REVISE_CLOSING = {
    "en": "If nothing supported remains, set answerable to false. Answer as JSON.",
    "ja": "裏付けのある内容が残らなければ answerable を false にすること。JSONで回答してください。",
}
"""The revision's last instruction when the generator still decides whether to answer."""

REVISE_CLOSING_DECIDED = {
    "en": ("The sources answer the question: answer it again, stating only what the cited "
           "sentences say, in their own words and values, each statement a full sentence "
           "(not a bare value). Answer as JSON."),
    "ja": ("資料には質問の答えがあります。引用する文に書かれていることだけを、資料の言葉と値の"
           "まま、値だけでなく主語のある一文にして、もう一度答えること。JSONで回答してください。"),
}
"""The revision's last instruction once the decision to write was made (the first draft):
a revision then rewrites the answer and does not decide again whether there is one."""

SOURCE_HEADER = "[{source_id}] {title}"
"""The line above a passage's numbered sentences (``source_id`` is its handle, ``S2``)."""

DRAFT_LINE = "- {text} (cites: {citations})"
"""How one statement of a previous draft is shown in the revision prompt."""
