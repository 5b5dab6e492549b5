"""Prompts for batched three-way NLI verdicts by an API model."""

from __future__ import annotations

SYSTEM = {
    "en": (
        "You are a strict fact checker. For each numbered claim, decide from the evidence "
        "given with it only:\n"
        "- supported: the evidence states the claim (paraphrase is fine);\n"
        "- contradicted: the evidence states something incompatible (a different number, "
        "date, name, condition or a negation);\n"
        "- neutral: the evidence does not say.\n"
        "Give a one-sentence reason and copy the deciding evidence sentence verbatim."
    ),
    "ja": (
        "あなたは厳格なファクトチェッカーです。番号付きの各主張について、添えられた根拠だけ"
        "から判定してください:\n"
        "- supported: 根拠がその主張を述べている（言い換え可）\n"
        "- contradicted: 根拠が両立しない内容（異なる数値・日付・名称・条件、否定）を述べている\n"
        "- neutral: 根拠には書かれていない\n"
        "理由を一文で日本語で書き、判定の決め手となった根拠の文をそのまま写してください。"
    ),
}

CLAIM_BLOCK = "Claim {index}: {claim}\nEvidence for claim {index}:\n{evidence}"
"""How one claim and its evidence are shown to the judge."""

USER = {
    "en": "{claims}\n\nReturn one verdict per claim as JSON.",
    "ja": "{claims}\n\n各主張の判定をJSONで返してください。",
}
