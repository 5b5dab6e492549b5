"""Prompts for the local support scorer: evidence first, claim last, a Yes/No question."""

# The evidence block comes before the claim so that llama.cpp can reuse the evaluated
# evidence prefix (its KV cache) for every claim checked against the same evidence.
# The answer words stay "Yes" / "No" in both languages: the scorer reads the logits of
# those tokens, and the Japanese prompt asks for them explicitly.

SYSTEM_EN = (
    "You are a strict fact checker. You decide whether a claim is fully supported by the "
    "evidence alone, without using outside knowledge. Answer with one word: Yes or No."
)
"""System message (English)."""

USER_EN = (
    "Evidence:\n{evidence}\n\n"
    "Claim: {claim}\n\n"
    "Is the claim fully supported by the evidence? Answer Yes or No."
)
"""User message (English); ``{evidence}`` must stay before ``{claim}``."""

SYSTEM_JA = (
    "あなたは厳格なファクトチェッカーです。主張が根拠の文章だけで完全に裏付けられているかを、"
    "外部の知識を使わずに判定します。Yes か No の一語で答えてください。"
)
"""System message (Japanese)."""

USER_JA = (
    "根拠:\n{evidence}\n\n"
    "主張: {claim}\n\n"
    "この主張は根拠によって完全に裏付けられていますか? Yes か No で答えてください。"
)
"""User message (Japanese); ``{evidence}`` must stay before ``{claim}``."""

AFTER_SOURCES_EN = (
    "Now check, do not answer. Without outside knowledge, decide strictly whether the "
    "following claim is fully supported by what the sources above state.\n\n"
    "Claim: {claim}\n\n"
    "Is it supported? Answer with one word, Yes or No, not JSON."
)
"""The judge's question when it reads a claim after the generator's own sources block (the
prompt's evaluated prefix is reused): the system message and ``Sources:`` block are the
generator's, this text replaces the question (English)."""

AFTER_SOURCES_JA = (
    "以上の資料について、回答ではなく検証をします。外部の知識を使わず、次の主張が上の資料の"
    "記述だけで完全に裏付けられているかを厳格に判定してください。\n\n"
    "主張: {claim}\n\n"
    "裏付けられていますか? JSONではなく、Yes か No の一語で答えてください。"
)
"""The judge's question after the generator's sources block (Japanese)."""

QA_CLAIM_EN = 'The answer to the question "{question}" is: {answer}'
"""Turns a question and an answer into one checkable claim (English)."""

QA_CLAIM_JA = "質問「{question}」の答えは「{answer}」である。"
"""Turns a question and an answer into one checkable claim (Japanese)."""

REASON_UNSUPPORTED_EN = "The evidence does not state that {claim}"
"""Deterministic reason for a claim the scorer did not find supported (English)."""

REASON_UNSUPPORTED_JA = "根拠には「{claim}」という記述がありません。"
"""Deterministic reason for a claim the scorer did not find supported (Japanese)."""

REASON_CONTRADICTED_EN = 'The evidence says otherwise: "{evidence}"'
"""Reason for a claim the trained judge found contradicted (English)."""

REASON_CONTRADICTED_JA = "根拠の記述と食い違います:「{evidence}」"
"""Reason for a claim the trained judge found contradicted (Japanese)."""

REASON_NO_EVIDENCE_EN = "No evidence was provided for this claim."
"""Reason when a claim comes without any evidence text (English)."""

REASON_NO_EVIDENCE_JA = "この主張には根拠が示されていません。"
"""Reason when a claim comes without any evidence text (Japanese)."""


ANSWERABLE_SYSTEM_EN = (
    "You are a careful reader. You judge only from the document, never from outside "
    "knowledge. Answer with one word: Yes or No."
)
"""System message of the answerability probe (English)."""

ANSWERABLE_USER_EN = (
    "Document:\n{passage}\n\n"
    "Question: {question}\n\n"
    "Does the document contain the answer to the question? Answer Yes or No."
)
"""User message of the answerability probe (English): one retrieved passage, the question."""

ANSWERABLE_SYSTEM_JA = (
    "あなたは注意深い読み手です。外部の知識を使わず、文書だけから判断します。"
    "Yes か No の一語で答えてください。"
)
"""System message of the answerability probe (Japanese)."""

ANSWERABLE_USER_JA = (
    "文書:\n{passage}\n\n"
    "質問: {question}\n\n"
    "この文書には質問の答えが書かれていますか? Yes か No で答えてください。"
)
"""User message of the answerability probe (Japanese)."""


def qa_claim_for_language(language: str) -> str:
    """Return the template that reads a question and its answer as one claim."""
    return QA_CLAIM_JA if language.lower().startswith("ja") else QA_CLAIM_EN


def answerable_for_language(language: str) -> tuple[str, str]:
    """Return (system, user) templates of the answerability probe for ``language``."""
    if language.lower().startswith("ja"):
        return ANSWERABLE_SYSTEM_JA, ANSWERABLE_USER_JA
    return ANSWERABLE_SYSTEM_EN, ANSWERABLE_USER_EN


def for_language(language: str) -> tuple[str, str]:
    """Return (system, user) templates for ``language`` ("ja" or anything else = English)."""
    if language.lower().startswith("ja"):
        return SYSTEM_JA, USER_JA
    return SYSTEM_EN, USER_EN


def after_sources_for_language(language: str) -> str:
    """The judge's question that follows the generator's sources block, for ``language``."""
    return AFTER_SOURCES_JA if language.lower().startswith("ja") else AFTER_SOURCES_EN
