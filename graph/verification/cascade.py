"""Cascade verifier: deterministic cues and settled cases first, the model for the rest.

- A bare value that fills the one gap a source sentence leaves in the question.
- Cascade verifier: deterministic cues first, the model only for what stays undecided.
- A chat-model judge: one structured call returns verdicts and reasons for all claims.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grounded_rag.prompts import judge as prompts
from grounded_rag.types import Evidence
from grounded_rag.verification import rules
from grounded_rag.verification.asked import gap_fillers
from grounded_rag.verification.base import ClaimToCheck, ClaimVerdict, Verifier, statement_of
from grounded_rag.verification.cues import CueReport, check_claim
from grounded_rag.verification.evidence import (
    SelectedEvidence,
    content_tokens,
    normalize,
    select_evidence,
    split_sentences,
)
from grounded_rag.verification.on_question import question_kind

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

# ------------------------------------------------------------------------------------------
# A bare value that fills the one gap a source sentence leaves in the question.
#
# Reading-comprehension questions are often a source sentence with its value taken out:
# 「2016年7月に…首都ジュバの住民に多数の犠牲者が出た際には、…」
# asked as 「…首都ジュバの住民に多数の犠牲者が出た年は」. The bare answer "2016年7月",
# judged with the question by the 1.5B model, scored 0.44 against 0.45 and the answer
# was refused. When one evidence sentence holds the value word for word, holds (nearly)
# all of the question's content, and names no other number
# that the question does not name too, there is nothing left for the value to be mixed up
# with: the claim is supported without the model (``judge`` ``"cloze"``). A sentence with a
# second candidate ("…迅速解(Q)と速報解(R)…", two dates) leaves the choice to the model, and
# so do names (a sentence naming two people says nothing about which one is asked for).

CLOZE_COVERAGE = 0.8
"""Share of the question's content tokens the sentence must hold."""

CLOZE_MIN_TOKENS = 3
"""A question with fewer content tokens than this says too little to pin a sentence down."""

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_VALUE_TAIL = frozenset("0123456789,.:年月日時分秒")
"""What may follow the answer in the same value: "2016年" answers the year of "2016年7月".
Not a dash or a slash: "2016" of "2016-2017" is one end of a range."""
_COUNTER = re.compile(r"(?<=何)[\u3400-\u9fffA-Za-z%]")
"""The counter a Japanese question asks with: 年 of 何年, 名 of 何名, 条 of 第何条."""
_ASKED_UNIT = re.compile(
    r"(年月日|年|月|日)(?:は|が)(?:いつ|何)?(?:か|ですか|でしょうか)?[?？。]?\s*$")
"""「…犠牲者が出た年は」: the question's last word names the value's unit."""
_ASKS_TWO = re.compile(r"いつ|何")
_QUESTION_WORDS = re.compile(r"何|幾|誰|どこ|どれ|いつ|いくつ|いくら|どの"
                             r"|^(?:year|date|day|month|time|many|much|long|old)s?$")
"""Question words: their bigrams ("何年", "何人") are never in the source sentence, nor is
the "year" of "in what year"."""


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def _key(text: str) -> str:
    return "".join(normalize(text).lower().split()).rstrip("。．.!！")


def _question_tokens(question: str) -> set[str]:
    tokens = content_tokens(question)
    return {t for t in tokens if not _QUESTION_WORDS.search(t)}


def _occurrences(key: str, answer_key: str) -> list[int]:
    """Where ``answer_key`` starts in ``key``, not inside a longer number ("2" of "2007")."""
    out, at = [], key.find(answer_key)
    while at >= 0:
        end = at + len(answer_key)
        if not (at and (key[at - 1].isdigit() or (key[at - 1] in ".," and answer_key[0].isdigit()))
                ) and not (answer_key[-1].isdigit() and end < len(key) and key[end].isdigit()):
            out.append(at)
        at = key.find(answer_key, at + 1)
    return out


def cloze_sentence(answer: str, question: str, evidence: Sequence[Evidence]) -> str:
    """The evidence sentence the bare ``answer`` fills the question's gap in, or ``""``.

    Only a question that asks for a number or a date (``question_kind``, or a last word
    naming the unit: 「…出た年は」) and an answer holding a number that the question does not
    name qualify; a counter the question asks with (何年, 何名, 第何条, 「年は」) must be in the
    answer, and a question asking two values (「いつからいつまで」) needs two numbers. The
    sentence must contain the answer verbatim (NFKC, spacing aside; not inside a longer
    number), at least :data:`CLOZE_COVERAGE` of the question's content tokens (and
    :data:`CLOZE_MIN_TOKENS` of them), and no number outside the answer's own value (the
    answer may be its start: "2016年" of "2016年7月") that the question does not name.

    Any bare answer (a name, a term) also qualifies when it is, word for word, what fills a
    Japanese question's gap in an evidence sentence (``asked.gap_fillers``: the text around
    the question word runs on into the answer there).
    """
    answer_key = _key(answer)
    for filler, filled in gap_fillers(question, evidence):
        if _key(filler) == answer_key:
            return filled  # 「油田」 where the question has 「何」 (graph/verification/gap.py)
    asked_numbers = _numbers(normalize(question))
    plain_question = normalize(question)
    unit = _ASKED_UNIT.search(plain_question)
    if not _numbers(answer_key) - asked_numbers or (
            unit is None and question_kind(question) is None):
        return ""
    counters = _COUNTER.findall(plain_question) + (list(unit.group(1)) if unit else [])
    if any(counter not in answer_key for counter in counters):
        return ""
    if len(_ASKS_TWO.findall(plain_question)) > 1 and len(_numbers(answer_key)) < 2:
        return ""  # 「いつからいつまで」: one end is not the answer
    asked = _question_tokens(question)
    if len(asked) < CLOZE_MIN_TOKENS:
        return ""
    for e in evidence:
        for sentence in split_sentences(e["text"]):
            key = _key(sentence.text)
            starts = _occurrences(key, answer_key)
            if not starts:
                continue
            tokens = content_tokens(sentence.text)
            if len(asked & tokens) < CLOZE_COVERAGE * len(asked):
                continue
            for at in starts:
                end = at + len(answer_key)
                while end < len(key) and key[end] in _VALUE_TAIL:
                    end += 1  # "2016年" of "2016年7月": the rest of the same date
                if _numbers(key[:at] + " " + key[end:]) <= asked_numbers:
                    return sentence.text
    return ""


# ------------------------------------------------------------------------------------------
# Cascade verifier: deterministic cues first, the model only for what stays undecided.

_NO_EVIDENCE = {
    "en": "No evidence was provided for this claim.",
    "ja": "この主張には根拠が示されていません。",
}
_MISSING_KINDS = frozenset({"quantity_missing", "date_missing"})
# Soft cues that turn a claim the model did not find supported into a contradiction: a
# negation flip, or a near-copy of an evidence sentence with a word swapped.
_CONTRADICTING_KINDS = frozenset({"negation_mismatch", "altered_copy"})

UNSEEN_WORDS_BELOW: float | None = 0.7
"""A "supported" score below this is overruled when the claim adds one or two content words
(at most ``UNSEEN_WORDS_MAX``) that neither the evidence nor the question contains
(``words_missing``): an otherwise grounded claim with a detail slipped in. None turns it off.
Chosen by re-deciding cached dev scores: HaluEval-QA 100, balanced accuracy 0.78 -> 0.85
(any value from 0.7 up); ExpertQA 30, 0.72 -> 0.77; HaluEval summaries 16, 0.625 unchanged
at 0.7 but 0.5625 at 0.8. A confident score stands, since paraphrase brings new words too.
The price is synonyms in short sentences: on JSICK it overruled 3 of 20 English
entailments ("pot" for "kettle"); 0.55 would have spared them at a cost on HaluEval."""

UNSEEN_WORDS_MAX = 2
"""More unseen words than this mean a paraphrase, where word matching proves nothing."""


class CascadeVerifier:
    """Wraps a model verifier; deterministic checks may decide a claim before the model.

    1. Evidence selection: the best sentences of the cited chunks (and their neighbours),
       so long passages fit a small model.
    2. Cues: a number, date or negation that the evidence contradicts, or (Japanese) a
       swap of who acts on whom, decides ``contradicted`` without the model; a claim that
       copies an evidence clause the evidence only hedges, reports or makes conditional
       decides ``neutral``.
    3. The inner verifier judges the rest in one call. An unsupported claim with a negation
       cue, or one that copies an evidence sentence with a word swapped (``altered_copy``),
       becomes ``contradicted``; cue details are put in front of the model's reason. A
       claim the model only weakly supports (below ``unseen_words_below``) that adds one or
       two content words the evidence never uses (``words_missing``) becomes ``neutral``.
       With ``strict_missing``, a number or date absent from the evidence also vetoes a
       ``supported`` verdict.

    The two soft overrides (negation / altered copy -> contradicted, unseen words ->
    neutral) were written for the plain P(Yes) scorer. A trained head reads the same cues as
    inputs and learned its own use of them, so by default (``soft_rules=None``) they apply
    only to verdicts that do not come from a head; ``True`` / ``False`` force them on / off.
    """

    def __init__(
        self,
        inner: Verifier,
        *,
        strict_missing: bool = False,
        unseen_words_below: float | None = UNSEEN_WORDS_BELOW,
        soft_rules: bool | None = None,
    ) -> None:
        self.inner = inner
        self.strict_missing = strict_missing
        self.unseen_words_below = unseen_words_below
        self.soft_rules = soft_rules
        self.calls = 0
        """Calls of ``verify`` so far (for cost reporting)."""
        self.claims_seen = 0
        """Claims given to ``verify`` so far."""
        self._count_lock = threading.Lock()

    def with_inner(self, inner: Verifier) -> CascadeVerifier:
        """The same cascade around another model stage, with fresh counters."""
        return CascadeVerifier(
            inner,
            strict_missing=self.strict_missing,
            unseen_words_below=self.unseen_words_below,
            soft_rules=self.soft_rules,
        )

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        """Verify claims; the inner verifier is called at most once, for undecided claims."""
        with self._count_lock:
            self.calls += 1
            self.claims_seen += len(claims)
        lang = "ja" if (language or "").lower().startswith("ja") else "en"
        results: list[ClaimVerdict | None] = [None] * len(claims)
        pending: list[tuple[int, SelectedEvidence, CueReport]] = []
        for i, claim in enumerate(claims):
            step = prepare_claim(claim, lang)
            if step.verdict is not None:
                results[i] = step.verdict
                continue
            pending.append((i, step.selected, step.report))
        if pending:
            inner_claims = [_narrowed(claims[i], sel) for i, sel, _ in pending]
            verdicts = self.inner.verify(inner_claims, language=language)
            for (i, sel, report), verdict in zip(pending, verdicts, strict=True):
                results[i] = self._merge(verdict, sel, report)
        return [r for r in results if r is not None]

    def _merge(
        self, verdict: ClaimVerdict, selected: SelectedEvidence, report: CueReport
    ) -> ClaimVerdict:
        merged = ClaimVerdict(**verdict)
        if not merged["evidence_quote"]:
            merged["evidence_quote"] = selected.best_sentence
        kinds = {c.kind for c in report.cues}
        soft = self.soft_rules if self.soft_rules is not None else merged.get("judge") != "head"
        if merged["verdict"] == "supported":
            if self.strict_missing and kinds & _MISSING_KINDS:
                merged["verdict"] = "neutral"
                merged["reason"] = report.reason
            elif soft and self._adds_unseen_words(report, float(merged.get("support", 1.0))):
                merged["verdict"] = "neutral"
                merged["reason"] = report.reason
            return merged
        if soft and kinds & _CONTRADICTING_KINDS:
            merged["verdict"] = "contradicted"
        if report.reason:
            merged["reason"] = f"{report.reason} {merged['reason']}".strip()
        return merged

    def _adds_unseen_words(self, report: CueReport, support: float) -> bool:
        if self.unseen_words_below is None or support >= self.unseen_words_below:
            return False
        return any(
            c.kind == "words_missing" and 0 < len(c.words) <= UNSEEN_WORDS_MAX
            for c in report.cues
        )


@dataclass(frozen=True)
class PreparedClaim:
    """A claim after the cascade's deterministic stage."""

    selected: SelectedEvidence
    """The evidence sentences chosen for the claim."""
    report: CueReport
    """The deterministic cues."""
    verdict: ClaimVerdict | None
    """Set when the deterministic stage decided the claim (no evidence, a decisive cue)."""
    narrowed: ClaimToCheck | None
    """What the model stage reads when the claim is still open."""


def prepare_claim(claim: ClaimToCheck, language: str) -> PreparedClaim:
    """The cascade's model-free stage for one claim (``language``: ``ja`` or ``en``).

    Training code calls this too, so a judge head learns from exactly what it will read.
    """
    lang = "ja" if (language or "").lower().startswith("ja") else "en"
    evidence = claim["evidence"]
    selected = select_evidence(statement_of(claim, lang), evidence)
    if not selected.text:
        verdict = ClaimVerdict(
            verdict="neutral", reason=_NO_EVIDENCE[lang], evidence_quote="", support=0.0
        )
        return PreparedClaim(selected, CueReport(), verdict, None)
    report = check_claim(
        claim["text"],
        [e["text"] for e in evidence],
        language=lang,
        question=claim.get("question", ""),
        cited=claim.get("cited"),
        asked=claim.get("asked", ""),
    )
    if report.decided is not None:
        for kind in dict.fromkeys(c.kind for c in report.cues if c.decisive):
            rules.fired(kind)
        verdict = ClaimVerdict(
            verdict=report.decided,
            reason=report.reason,
            evidence_quote=report.evidence_quote or selected.best_sentence,
            support=0.0,
        )
        return PreparedClaim(selected, report, verdict, None)
    copied = copied_sentence(claim["text"], evidence) if rules.enabled("copy") else ""
    if copied:
        rules.fired("copy")
        # A sentence of the source, word for word: it says what the source says.
        verdict = ClaimVerdict(verdict="supported", reason="", evidence_quote=copied,
                               support=1.0, judge="copy")
        return PreparedClaim(selected, report, verdict, None)
    filled = cloze_sentence(claim["text"], claim["question"], evidence) if claim.get(
        "question") and rules.enabled("cloze") else ""
    if filled:
        rules.fired("cloze")
        # A bare value that fills the one gap a source sentence leaves in the question.
        verdict = ClaimVerdict(verdict="supported", reason="", evidence_quote=filled,
                               support=1.0, judge="cloze")
        return PreparedClaim(selected, report, verdict, None)
    return PreparedClaim(selected, report, None, _narrowed(claim, selected))


COPY_MIN_CHARS = 12
"""Shorter sentences ("はい。", "Yes.") are never taken as copies: the model judges them."""


def copied_sentence(text: str, evidence: list[Evidence]) -> str:
    """The evidence sentence ``text`` repeats whole (NFKC, spacing and the final stop aside).

    Empty when there is none or the claim is shorter than ``COPY_MIN_CHARS``. A claim that
    is a whole source sentence is entailed by it, so the cascade settles it without the
    model; a fragment of one (a clause cut from its condition) is still judged.
    """
    key = _copy_key(text)
    if len(key) < COPY_MIN_CHARS:
        return ""
    for e in evidence:
        for sentence in split_sentences(e["text"]):
            if _copy_key(sentence.text) == key:
                return sentence.text
    return ""


def _copy_key(text: str) -> str:
    return " ".join(normalize(text).split()).rstrip("。．.!！ ")


def _narrowed(claim: ClaimToCheck, selected: SelectedEvidence) -> ClaimToCheck:
    """The claim with its evidence cut to the selected sentences (question, sources kept)."""
    narrowed = ClaimToCheck(text=claim["text"], evidence=[_as_evidence(claim, selected)])
    if claim.get("question"):
        narrowed["question"] = claim["question"]
    if claim.get("sources"):
        narrowed["sources"] = claim["sources"]
    return narrowed


def _as_evidence(claim: ClaimToCheck, selected: SelectedEvidence) -> Evidence:
    first = claim["evidence"][0]
    return Evidence(
        source_id=selected.best_source_id or first["source_id"],
        doc_id=first["doc_id"],
        title=first["title"],
        url=first["url"],
        text=selected.text,
        score=first["score"],
        relevance=first["relevance"],
    )


# ------------------------------------------------------------------------------------------
# A chat-model judge: one structured call returns verdicts and reasons for all claims.

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
        # LangChain loads only when a chat-model judge is used, not with the cascade
        from langchain_core.messages import HumanMessage, SystemMessage

        from grounded_rag._structured import StructuredOutputFailure, invoke_structured
        from grounded_rag.schemas import JudgedClaims

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
