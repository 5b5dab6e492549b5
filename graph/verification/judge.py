"""A chat-model judge: one structured call returns verdicts and reasons for all claims."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from grounded_rag._structured import StructuredOutputFailure, invoke_structured
from grounded_rag.prompts import judge as prompts
from grounded_rag.schemas import JudgedClaims
from grounded_rag.verification.base import ClaimToCheck, ClaimVerdict, statement_of

_SUPPORT = {"supported": 0.9, "neutral": 0.2, "contradicted": 0.05}
"""Support scores for a judge that gives labels, not probabilities."""


class ChatJudgeVerifier:
    """Batched three-way NLI by a chat model (OpenAI, Gemini, or any structured-output model)."""

    def __init__(self, model: BaseChatModel, *, max_evidence_chars: int = 4000) -> None:
        self.model = model
        self.max_evidence_chars = max_evidence_chars

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        """Judge all claims in one model call; claims it skips come back neutral."""
        if not claims:
            return []
        lang = language if language in prompts.SYSTEM else "en"
        blocks = []
        for index, claim in enumerate(claims):
            evidence = "\n".join(f"[{e['source_id']}] {e['text']}" for e in claim["evidence"])
            blocks.append(prompts.CLAIM_BLOCK.format(
                index=index, claim=statement_of(claim, lang),
                evidence=evidence[: self.max_evidence_chars]))
        messages = [
            SystemMessage(prompts.SYSTEM[lang]),
            HumanMessage(prompts.USER[lang].format(claims="\n\n".join(blocks))),
        ]
        try:
            reply = invoke_structured(self.model, JudgedClaims, messages)
        except StructuredOutputFailure as exc:
            reason = f"verifier reply unusable: {exc.errors[-1] if exc.errors else exc}"
            return [{"verdict": "neutral", "reason": reason, "evidence_quote": "", "support": 0.0}
                    for _ in claims]
        by_index = {v.claim: v for v in reply.verdicts if 0 <= v.claim < len(claims)}
        results: list[ClaimVerdict] = []
        for index in range(len(claims)):
            judged = by_index.get(index)
            if judged is None:
                results.append({"verdict": "neutral", "reason": "the verifier gave no verdict",
                                "evidence_quote": "", "support": 0.0})
                continue
            results.append({"verdict": judged.verdict, "reason": judged.reason,
                            "evidence_quote": judged.evidence_quote,
                            "support": _SUPPORT[judged.verdict]})
        return results
