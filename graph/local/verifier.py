"""Local verifier: a trained head over the local model's hidden states (or P(Yes) alone)."""

from __future__ import annotations

import math
import os
from typing import Literal

from grounded_rag.local.features import claim_input, lang_of, prompt_fingerprint
from grounded_rag.local.heads import JudgeHead
from grounded_rag.local.scorer import Reading, SupportScorer, sigmoid
from grounded_rag.prompts import local_verify
from grounded_rag.verification.base import ClaimToCheck, ClaimVerdict

DEFAULT_THRESHOLDS: dict[str, float] = {"en": 0.45, "ja": 0.45}
"""Support thresholds per language of the plain Yes/No scorer (``judge="logit"``). English:
calibrated on HaluEval-QA dev (``benchmarks/fit_judges.py verifier``). Japanese was 0.32 (JNLI
entailment vs not, 100 items); on 90 JNLI items in their natural label mix 0.45 gave 3-way
accuracy 0.78 against 0.73, and on JHARS the best threshold lay higher still, so both
languages now share 0.45."""

CLAIM_HEAD = "claim"
"""Name of the shipped claim head (``grounded_rag/local/heads/claim.npz`` + ``.json``)."""

Judge = Literal["head", "logit", "auto"]

AUTO_JUDGES: dict[str, Literal["head", "logit"]] = {"en": "head", "ja": "logit"}
"""What ``judge="auto"`` (the default with the bundled model) uses per claim language.

Chosen on the product's own kind of claims, held out of every fit: on JHARS (claims of
generated Japanese answers against their sources, 144 responses) the plain scorer reaches
response F1 0.270 against 0.136 for the claim head, so Japanese claims get the plain
scorer; on English answers to questions (HaluEval-QA, out of fold) the head is at least as
good (balanced accuracy 0.86 vs 0.85) and it also reads contradictions (JSICK-en 3-way 0.84
vs 0.76), so English claims keep the head (docs/judge.md).
"""


SHARED_PREFIX_ENV = "GROUNDED_RAG_JUDGE_PREFIX"
"""``off``: the plain judge reads every claim in its own prompt, never after the generator's
sources (the layout before 2026-12-03; for comparison)."""

SHARED_THRESHOLDS: dict[str, float] = {"ja": 0.50}
"""P(Yes) thresholds of the plain judge when it reads a claim after the generator's sources
block, per language; only these languages are read that way. Read there, P(Yes) runs a little
higher than in the judge's own prompt, so the threshold is calibrated apart: on 80 JSQuAD dev
questions (seeds 7 and 11 of ``git show e7fb647:benchmarks/judge_prefix_check.py``; per question
its right answer and another question's answer on the same passage), the point on a 0.02 grid
nearest the own prompt's at 0.45: right answers kept 71 vs 72 of 80, wrong ones refused 26 vs 29
(AUROC 0.74 / 0.69 per seed vs 0.70 / 0.75). The whole-loop checks on
other questions are in docs/judge.md."""


SHARED_MAX_CHARS = 66
"""Longer statements are read in the judge's own prompt even where the layout applies: 90% of
the statements the layout's threshold was calibrated on (the 160 of seeds 7 and 11, 25-110
characters, median 46) are at most this long, and on long abstractive sentences reading
after every source doubled the false alarms (docs/judge.md). Chosen from the calibration
set alone; JHARS, where it was then measured, was not used to set it."""


def shares_prefix(language: str) -> bool:
    """Whether the plain judge reads ``language`` claims after the generator's sources."""
    off = os.environ.get(SHARED_PREFIX_ENV, "").strip().lower() in ("off", "0", "false", "no")
    return not off and lang_of(language) in SHARED_THRESHOLDS


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def load_default_head(task: str, model: str | os.PathLike[str] | None = None) -> JudgeHead:
    """Load the shipped head for ``task``, checked against the model file and prompts.

    Raises:
        HeadError: missing or unreadable file; HeadMismatchError: another model or prompts.
    """
    from grounded_rag.local.assets import DEFAULT_MODEL_SHA256, parse_model_spec, sha256_file
    from grounded_rag.local.heads import load_head

    custom = parse_model_spec(model) if model is not None and str(model) != "local" else None
    sha = DEFAULT_MODEL_SHA256 if custom is None else sha256_file(custom)
    return load_head(task, model_sha256=sha, prompt_fingerprint=prompt_fingerprint(task))


class ShippedHead:
    """The lazily loaded, hash-checked head of a local judge (claims or answerability)."""

    head_task: str = CLAIM_HEAD
    """Which shipped head to load when none was given."""
    _head: JudgeHead | None = None
    _model_path: str | os.PathLike[str] | None = None

    @property
    def head(self) -> JudgeHead:
        """The head (loaded and checked against the model and prompts on first use)."""
        if self._head is None:
            self._head = load_default_head(self.head_task, self._model_path)
        return self._head


class LocalVerifier(ShippedHead):
    """Implements the ``Verifier`` protocol with the offline model.

    ``judge="auto"`` (the default with the bundled model) picks per language
    (:data:`AUTO_JUDGES`). ``judge="head"``: one forward pass per claim gives
    P(Yes) and the model's hidden states; a small trained head (``grounded_rag.local.heads``)
    reads them, with a few model-free features, and returns supported / contradicted /
    neutral. ``judge="logit"``: the older two-way scorer, ``supported`` when P(Yes) reaches
    the language's threshold, otherwise ``neutral`` (contradictions then come from the
    cascade's deterministic cues only). Claims that share evidence reuse its KV cache.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        threshold: float | None = None,
        *,
        thresholds: dict[str, float] | None = None,
        reuse_prefix: bool = True,
        scorer: SupportScorer | None = None,
        judge: Judge | None = None,
        head: JudgeHead | None = None,
    ) -> None:
        self.thresholds = dict(thresholds or DEFAULT_THRESHOLDS)
        if threshold is not None:
            self.thresholds = {lang: threshold for lang in ("en", "ja")}
        self.scorer = scorer or SupportScorer(model=model_path, reuse_prefix=reuse_prefix)
        if judge is None:
            # Heads are trained for the bundled model; another GGUF gets the plain scorer
            # unless a head is asked for (and then its hash is checked).
            judge = "auto" if head is not None or model_path in (None, "local") else "logit"
        if judge not in ("head", "logit", "auto"):
            raise ValueError(f"judge must be 'head', 'logit' or 'auto', not {judge!r}")
        self.judge: Judge = judge
        self._head = head
        self._model_path = model_path

    def judge_for(self, language: str) -> Literal["head", "logit"]:
        """The judge that reads claims in ``language``."""
        if self.judge == "auto":
            return AUTO_JUDGES.get(lang_of(language), "head")
        return self.judge

    def threshold_for(self, language: str) -> float:
        """Return the support threshold used for ``language``."""
        if self.judge_for(language) == "head":
            return self.head.thresholds["support"]
        return self.thresholds.get(lang_of(language), self.thresholds.get("en", 0.5))

    def verify(self, claims: list[ClaimToCheck], *, language: str) -> list[ClaimVerdict]:
        """Return one verdict per claim, in order (one scoring pass for the whole batch)."""
        lang = lang_of(language)
        judge = self.judge_for(lang)
        head = self.head if judge == "head" else None
        inputs = [claim_input(c, lang) for c in claims]
        todo = [i for i, inp in enumerate(inputs) if inp.selected.text]
        by_index: dict[int, Reading] = {}
        shift = 0.0
        if head is None and shares_prefix(lang):
            # Report support on the own prompt's scale: the layout's calibrated threshold
            # falls on the default one, so a threshold given by the caller moves both alike.
            shift = _logit(SHARED_THRESHOLDS[lang]) - _logit(DEFAULT_THRESHOLDS[lang])
            after = [i for i in todo if claims[i].get("sources")
                     and len(inputs[i].statement) <= SHARED_MAX_CHARS]
            if after:
                read = self.scorer.read_after_sources(
                    [(claims[i]["sources"], inputs[i].statement) for i in after], language=lang)
                by_index.update((i, r) for i, r in zip(after, read, strict=True)
                                if r is not None)
        after_sources = set(by_index)
        rest = [i for i in todo if i not in by_index]
        readings = self.scorer.read_many(
            [(inputs[i].selected.text, inputs[i].statement) for i in rest], language=lang
        ) if rest else []
        by_index.update(zip(rest, readings, strict=True))
        out: list[ClaimVerdict] = []
        for i, inp in enumerate(inputs):
            reading = by_index.get(i)
            if reading is None:
                out.append(ClaimVerdict(verdict="neutral", reason=_no_evidence(lang),
                                        evidence_quote="", support=0.0))
                continue
            quote = inp.selected.best_sentence
            if head is None:
                support = (sigmoid(reading.margin - shift) if i in after_sources
                           else reading.p_yes)
                contradicted = False
                supported = support >= self.threshold_for(lang)
            else:
                row = head.inputs(reading.hidden, reading.layers, reading.margin, inp.extras)
                support = float(head.proba("support", row)[0])
                supported = support >= head.thresholds["support"]
                contradicted = (not supported and "contradiction" in head.classifiers
                                and float(head.proba("contradiction", row)[0])
                                >= head.thresholds["contradiction"])
            if supported:
                verdict = ClaimVerdict(verdict="supported", reason="", evidence_quote=quote,
                                       support=support)
            elif contradicted:
                verdict = ClaimVerdict(verdict="contradicted",
                                       reason=contradicted_reason(quote, lang),
                                       evidence_quote=quote, support=support)
            else:
                verdict = ClaimVerdict(verdict="neutral",
                                       reason=unsupported_reason(inp.statement, lang),
                                       evidence_quote=quote, support=support)
            verdict["judge"] = judge
            if reading.truncated:
                verdict["truncated"] = True
            out.append(verdict)
        return out


def _no_evidence(lang: str) -> str:
    if lang == "ja":
        return local_verify.REASON_NO_EVIDENCE_JA
    return local_verify.REASON_NO_EVIDENCE_EN


def contradicted_reason(evidence_sentence: str, language: str) -> str:
    """Reason for a claim the judge found contradicted, naming the deciding sentence."""
    sentence = evidence_sentence.strip()
    if lang_of(language) == "ja":
        return local_verify.REASON_CONTRADICTED_JA.format(evidence=sentence)
    return local_verify.REASON_CONTRADICTED_EN.format(evidence=sentence)


def unsupported_reason(claim: str, language: str) -> str:
    """Deterministic reason for a claim the evidence does not support."""
    text = claim.strip()
    if lang_of(language) == "ja":
        return local_verify.REASON_UNSUPPORTED_JA.format(claim=text.rstrip("。"))
    body = (
        text[:1].lower() + text[1:]
        if text[:2].istitle() or text[:1].isupper() and text[1:2].islower()
        else text
    )
    return local_verify.REASON_UNSUPPORTED_EN.format(claim=body.rstrip(".")) + "."
