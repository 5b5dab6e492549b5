"""Deterministic cues: the contradictions and gaps the evidence shows without a judge.

- The cues' user-facing reason texts, per language (they also feed the revision prompt).
- Altered copies: a claim that repeats one evidence sentence with a word swapped.
- Deterministic cues: numbers, dates, names and negation that the evidence contradicts or lacks.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from grounded_rag.verification import rules
from grounded_rag.verification.coverage import _COMMON_CAPS as _COMMON_CAPS
from grounded_rag.verification.coverage import _LATIN, _entities, misbound_value, missing_words
from grounded_rag.verification.evidence import (
    content_tokens,
    is_japanese,
    normalize,
    overlap,
    split_sentences,
)
from grounded_rag.verification.polarity import _NEG_EN as _NEG_EN
from grounded_rag.verification.polarity import _NEG_JA as _NEG_JA
from grounded_rag.verification.polarity import (
    _fragment,
    _negated,
    _polarity_scope,
)
from grounded_rag.verification.subjects import (
    CrossContext,
    cross_context,
    proper_names,
    swapped_subject,
    swapped_subject_ja,
    unread_names,
)
from grounded_rag.verification.values import GLOSS as TAX_GLOSS
from grounded_rag.verification.values import (
    DateValue,
    Quantity,
    _clause_context,
    _gloss,
    _iso,
    extract_dates,
    extract_quantities,
    factor_of,
    number_in,
    prepare,
    same_value,
    strip_numbers,
    tax_mismatch,
)

# ------------------------------------------------------------------------------------------
# The cues' user-facing reason texts, per language (they also feed the revision prompt).

MESSAGES = {
    "en": {
        "quantity_mismatch": "The evidence says {ev}, not {cl}.",
        "date_mismatch": "The evidence gives the date {ev}, not {cl}.",
        "negation_mismatch": "The evidence says the opposite: \u201c{ev}\u201d",
        "quantity_missing": "The evidence does not mention {cl}.",
        "date_missing": "The evidence does not mention the date {cl}.",
        "entity_missing": "The evidence does not mention {cl}.",
        "words_missing": "The evidence does not mention: {cl}.",
        "altered_copy": "The claim follows the evidence \u201c{sentence}\u201d but has "
        "\u201c{cl}\u201d where the evidence says \u201c{ev}\u201d.",
        "tax_mismatch": "The evidence says {ev}, not {cl}: \u201c{sentence}\u201d",
        "subject_swap": "The evidence says this of {ev}, not of {cl}: \u201c{sentence}\u201d",
        "value_binding": "The evidence gives {cl} for {ev}, not for {case}; for {case} it "
        "gives {other}: \u201c{sentence}\u201d",
        "reading_missing": "The evidence names no {cl}: no word of it reads so.",
        "reading_names": "The names it gives read: {names}.",
    },
    "ja": {
        "quantity_mismatch": "根拠では「{ev}」であり、「{cl}」ではありません。",
        "date_mismatch": "根拠の日付は「{ev}」であり、「{cl}」ではありません。",
        "negation_mismatch": "根拠は逆のことを述べています:「{ev}」",
        "quantity_missing": "根拠には「{cl}」という記述がありません。",
        "date_missing": "根拠には「{cl}」という日付がありません。",
        "entity_missing": "根拠には「{cl}」が出てきません。",
        "words_missing": "根拠には次の語が出てきません: {cl}。",
        "altered_copy": "主張は根拠の「{sentence}」とほぼ同じ文ですが、根拠の「{ev}」が「{cl}」に"
        "変わっています。",
        "tax_mismatch": "根拠は「{ev}」であり、「{cl}」ではありません:「{sentence}」",
        "subject_swap": "根拠がこう述べているのは「{ev}」についてで、"
        "「{cl}」についてではありません:「{sentence}」",
        "value_binding": "根拠が「{cl}」とするのは「{ev}」についてで、「{case}」については"
        "「{other}」です:「{sentence}」",
        "reading_missing": "根拠には「{cl}」と読める語がありません。",
        "reading_names": "根拠の固有名詞の読み: {names}。",
    },
}


# ------------------------------------------------------------------------------------------
# Altered copies: a claim that repeats one evidence sentence with a word swapped.

ALTERED_COPY_SIMILARITY = 0.65
"""Similarity (difflib ratio) from which a claim counts as a rewrite of one evidence sentence."""

_CONTENT_CHAR = re.compile(r"[A-Za-z0-9\u3400-\u9fff\uf900-\ufaff\u30a0-\u30ff]")
_WORD = re.compile(r"\w+(?:['\-]\w+)*|[^\w\s]")
"""A word (apostrophes and hyphens only inside it: "don't", "e-mail") or one other mark, so
that a quote mark next to a word ('OK vs "OK) is a swapped mark, not a swapped word."""


def altered_copy(
    claim: str, sentences: Sequence[str], *, similarity: float = ALTERED_COPY_SIMILARITY
) -> tuple[str, str, str] | None:
    """Find an evidence sentence the claim copies closely but with a word swapped.

    Returns ``(sentence, claim span, evidence span)`` for the closest sentence when the two
    are at least ``similarity`` alike (characters for Japanese, words otherwise) and differ
    by a *substitution* of content (kanji, katakana, letters or digits on both sides), not
    only by words added or left out. Such a claim says something else about the very thing
    the sentence describes: when the model does not find it supported, the cascade reports
    it as contradicted, with the swapped words as the reason.
    """
    claim_n = normalize(claim).strip()
    if not claim_n or not sentences:
        return None
    japanese = is_japanese(claim_n)

    def units(text: str) -> list[str]:
        return list(text) if japanese else _WORD.findall(text)

    def keys(parts: list[str]) -> list[str]:
        return parts if japanese else [p.lower() for p in parts]

    claim_u = units(claim_n)
    best: tuple[float, str, list[str], difflib.SequenceMatcher[str]] | None = None
    for sentence in sentences:
        sent_u = units(normalize(sentence).strip())
        matcher = difflib.SequenceMatcher(None, keys(sent_u), keys(claim_u), autojunk=False)
        ratio = matcher.ratio()
        if best is None or ratio > best[0]:
            best = (ratio, sentence, sent_u, matcher)
    if best is None or best[0] < similarity:
        return None
    _, sentence, sent_u, matcher = best
    joiner = "" if japanese else " "
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        if japanese:
            i1, i2 = _widen(sent_u, i1, i2)
            j1, j2 = _widen(claim_u, j1, j2)
        ev_span = joiner.join(sent_u[i1:i2]).strip()
        cl_span = joiner.join(claim_u[j1:j2]).strip()
        if _is_content(ev_span, japanese) and _is_content(cl_span, japanese):
            return sentence.strip(), cl_span, ev_span
    return None


def _script(char: str) -> str:
    if "\u30a0" <= char <= "\u30ff":
        return "katakana"
    if "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff":
        return "kanji"
    if char.isascii() and char.isalnum():
        return "latin"
    return "other"


def _widen(chars: list[str], start: int, end: int) -> tuple[int, int]:
    """Grow a character span to whole runs of katakana, kanji or Latin at both ends."""
    if start < end:
        first, last = _script(chars[start]), _script(chars[end - 1])
        while start > 0 and first != "other" and _script(chars[start - 1]) == first:
            start -= 1
        while end < len(chars) and last != "other" and _script(chars[end]) == last:
            end += 1
    return start, end


def _is_content(span: str, japanese: bool) -> bool:
    if japanese:
        return bool(_CONTENT_CHAR.search(span))
    words = [w for w in span.split() if _CONTENT_CHAR.search(w)]
    return any(w.lower() not in _EN_FUNCTION for w in words)


_EN_FUNCTION = frozenset(
    "a an the of to in on at for and or but is are was were be been being it its this that "
    "these those with by as from has have had do does did will would can could may might "
    "there their they he she his her we our you your i".split()
)


# ------------------------------------------------------------------------------------------
# Deterministic cues: numbers, dates, names and negation that the evidence contradicts or lacks.
#
# ``check_claim`` judges every kind of cue against one shared reading of the evidence (sentence
# contexts, cross-language concepts, clause contexts). What the evidence lacks
# (``_cue_missing``), negation (``_cue_polarity``), the value cues' clauses and readings
# (``_cue_values``), value parsing, altered copies, swapped roles and hedges live in their own
# modules.

CueKind = Literal[
    "quantity_mismatch",
    "date_mismatch",
    "negation_mismatch",
    "quantity_missing",
    "date_missing",
    "entity_missing",
    "words_missing",
    "altered_copy",
    "tax_mismatch",
    "subject_swap",
    "value_binding",
    "reading_missing",
]

@dataclass(frozen=True)
class Cue:
    """One deterministic observation about a claim versus its evidence."""

    kind: CueKind
    """What was observed."""
    decisive: bool
    """True when the cue alone settles the verdict (``verdict``) without a model."""
    claim_text: str
    """The claim's span (number, date, name or the claim)."""
    evidence_text: str
    """The evidence's conflicting span ("" when the evidence lacks it)."""
    evidence_sentence: str
    """The evidence sentence the cue refers to ("" when none)."""
    detail: str
    """Human-readable explanation in the claim's language."""
    words: tuple[str, ...] = ()
    """``words_missing``: the claim's words that the evidence lacks."""
    verdict: Literal["contradicted", "neutral"] = "contradicted"
    """The verdict a decisive cue settles."""


@dataclass(frozen=True)
class CueReport:
    """All cues for one claim."""

    cues: tuple[Cue, ...] = field(default_factory=tuple)
    """Observed cues, decisive ones first."""

    @property
    def contradicted(self) -> bool:
        """True when a decisive cue says the evidence contradicts the claim."""
        return any(c.decisive and c.verdict == "contradicted" for c in self.cues)

    @property
    def decided(self) -> Literal["contradicted", "neutral"] | None:
        """The verdict the decisive cues settle (contradicted first), None when none do."""
        if self.contradicted:
            return "contradicted"
        return "neutral" if any(c.decisive for c in self.cues) else None

    @property
    def reason(self) -> str:
        """The cue details joined (decisive ones first), "" when there are none."""
        return " ".join(dict.fromkeys(c.detail for c in self.cues))

    @property
    def evidence_quote(self) -> str:
        """The evidence sentence of the first cue that names one."""
        return next((c.evidence_sentence for c in self.cues if c.evidence_sentence), "")



def check_claim(
    claim: str,
    evidence: str | Sequence[str],
    *,
    language: str | None = None,
    question: str = "",
    cited: int | None = None,
    asked: str = "",
) -> CueReport:
    """Compare the numbers, dates, names, words and negation of ``claim`` with ``evidence``.

    A *decisive* cue (same kind of quantity or date with a different value, in the evidence
    sentence that best matches the claim's wording, or for a claim that lists several values
    of one kind, the wording of the value's own clause; or a negation flip in a sentence that
    otherwise says the same; in Japanese, a swap of who acts on whom) marks the claim
    contradicted without a model, and a Japanese claim that copies a clause the evidence
    only hedges, reports or makes conditional is decided neutral. Other cues
    (something the evidence lacks) are hints for the model's verdict and its reason.

    Evidence sentences in the other language than the claim (an English answer citing a
    Japanese contract) are compared the same way, their values read in both notations
    (45万円 = 450,000 yen, 令和9年4月1日 = April 1, 2027, 2年 = 24 months) and "the same
    thing" judged by shared concepts (``xlang``) instead of shared words.

    ``question`` is the question the claim answers (the claim may be a bare answer such as
    "physician"): nothing the question itself mentions counts as missing, so the cues judge
    what the answer adds, not the question's premise. ``cited``: how many of the first
    ``evidence`` texts the claim cites; a romaji name it adds must read in those, unless
    ``asked`` (the answer's question, whatever the claim's form) names it too.
    """
    texts = [evidence] if isinstance(evidence, str) else list(evidence)
    lang = (language or ("ja" if is_japanese(claim) else "en"))[:2]
    given = prepare(question).lower() if question.strip() else ""
    msg = MESSAGES["ja" if lang == "ja" else "en"]
    sentences = [s.text for t in texts for s in split_sentences(t)]
    if not sentences:
        return CueReport()
    # Context = shared wording once numbers, units and dates are removed, so that "2 hours"
    # and "10 hours" in unrelated sentences do not look like the same statement.
    claim_tokens = content_tokens(strip_numbers(claim))
    sentence_tokens = [content_tokens(strip_numbers(s)) for s in sentences]
    context = [overlap(claim_tokens, tokens) for tokens in sentence_tokens]
    # Evidence in the other language shares no words with the claim: its values are read
    # with more notations (45万円, 令和9年, 2年) and judged by shared concepts instead.
    cross = cross_context(claim, sentences)
    xlang = cross is not None
    vctx = cross.widen(claim, context) if cross else context

    ev_dates: list[DateValue] = []
    ev_quantities: list[Quantity] = []
    for i, s in enumerate(sentences):
        dates, rest = extract_dates(prepare(s, xlang=xlang), i)
        ev_dates += dates
        ev_quantities += extract_quantities(rest, i, xlang=xlang)
    all_evidence = prepare(" ".join(sentences))
    cl_dates, cl_rest = extract_dates(prepare(claim, xlang=xlang))
    cl_quantities = extract_quantities(cl_rest, xlang=xlang)

    decisive: list[Cue] = []
    soft: list[Cue] = []
    dims = Counter(q.dim for q in cl_quantities)
    for q in cl_quantities:
        equal = [e for e in ev_quantities if e.dim == q.dim and same_value(e.value, q.value)]
        same_dim = [e for e in ev_quantities if e.dim == q.dim and q.dim != "number"]
        # A claim that lists several values of one kind ("全長3,400 mm以下、全幅1,480 mm以下")
        # matches each against its own sentence: each value is judged by the words of its
        # own clause, not by the sentence that best matches the whole claim.
        ctx = _clause_context(cl_rest, q.text, sentence_tokens, cross) if dims[q.dim] > 1 else vctx
        best_equal = max((ctx[e.sentence] for e in equal), default=-1.0)
        if same_dim:
            best = max(same_dim, key=lambda e: ctx[e.sentence])
            # The value may appear elsewhere in the evidence about something else: only a
            # clearly better-matching sentence with another value contradicts the claim.
            if ctx[best.sentence] > 0 and best_equal < 0.7 * ctx[best.sentence]:
                rivals = sorted({_gloss(e, lang, cross, e.sentence) for e in same_dim
                                 if e.sentence == best.sentence})
                decisive.append(
                    Cue(
                        "quantity_mismatch",
                        True,
                        q.text,
                        "、".join(rivals) if lang == "ja" else ", ".join(rivals),
                        sentences[best.sentence],
                        msg["quantity_mismatch"].format(ev=", ".join(rivals), cl=q.text),
                    )
                )
                continue
        if equal:
            continue
        if q.dim == "number" and number_in(q.value, ev_quantities):
            continue
        if q.dim != "number" and number_in(q.value / factor_of(q), ev_quantities):
            continue  # same number, different unit wording: leave it to the model
        if given and q.text.lower() in given:
            continue
        soft.append(
            Cue(
                "quantity_missing", False, q.text, "", "", msg["quantity_missing"].format(cl=q.text)
            )
        )

    for d in cl_dates:
        agreeing = [e for e in ev_dates if e.compatible(d) and e.shares_field(d)]
        if agreeing:
            continue
        # A year that names an event ("the 2004 Siebel Open") is compared with nothing.
        rival_dates = [e for e in ev_dates if e.shares_field(d) and not e.named]
        if rival_dates and not d.named:
            best_d = max(rival_dates, key=lambda e: vctx[e.sentence])
            if vctx[best_d.sentence] > 0:
                shown = best_d.text
                if cross and cross.crossing[best_d.sentence] and _iso(best_d) not in shown:
                    shown = f"{best_d.text} ({_iso(best_d)})"
                decisive.append(
                    Cue(
                        "date_mismatch",
                        True,
                        d.text,
                        best_d.text,
                        sentences[best_d.sentence],
                        msg["date_mismatch"].format(ev=shown, cl=d.text),
                    )
                )
                continue
        if given and d.text.lower() in given:
            continue
        soft.append(
            Cue("date_missing", False, d.text, "", "", msg["date_missing"].format(cl=d.text))
        )

    lowered = all_evidence.lower()
    # Evidence wholly in the other language spells names and words its own way: only a
    # name written alike in both (a model number; a Latin name in a Japanese claim) can be
    # missing from it, and an English claim's words are never in it.
    foreign = cross if cross is not None and cross.foreign else None
    missing_names = [
        name
        for name in _entities(prepare(claim))
        if name.lower() not in lowered and name.lower() not in given
        and not (foreign and not foreign.spelled_alike(name))
    ]
    for name in missing_names:
        soft.append(
            Cue("entity_missing", False, name, "", "", msg["entity_missing"].format(cl=name))
        )
    # A romaji name (Kyoto) in an English claim is compared with how the Japanese evidence
    # reads (京都 キョウト): the one name of an answer that the judge cannot read across.
    # Only the cited texts count; when they are all the evidence, its sentences are reused.
    scoped = (sentences if not cited or cited >= len(texts)
              else [s.text for t in texts[:cited] for s in split_sentences(t)])
    unread, read_from = _unread(claim, scoped, cross if scoped is sentences else None, lang,
                                f"{question} {asked}")
    if unread:
        listed, names = ", ".join(unread), ", ".join(proper_names(read_from))
        detail = msg["reading_missing"].format(cl=listed)
        if names:
            detail += " " + msg["reading_names"].format(names=names)
        decisive.append(Cue("reading_missing", True, listed, "", "", detail, verdict="neutral"))
    named = {w.lower() for name in missing_names for w in _LATIN.findall(name)}
    words = [w for w in missing_words(claim, sentences, question)
             if w.lower() not in named and not (foreign and not foreign.claim_japanese)]
    if words:
        listed = "、".join(words) if lang == "ja" else ", ".join(words)
        soft.append(Cue("words_missing", False, listed, "", "",
                        msg["words_missing"].format(cl=listed), tuple(words)))

    best_i = max(range(len(sentences)), key=lambda i: context[i])
    scope = _polarity_scope(claim, sentences[best_i], lang)
    claim_negated = _negated(claim, sentences[best_i])
    polar = not (question.strip() and _fragment(claim, lang)) or claim_negated
    ev_polarity = _negated(scope, claim)
    if polar and context[best_i] >= 0.5 and claim_negated != ev_polarity:
        cue = Cue(
            "negation_mismatch",
            context[best_i] >= 0.75,
            claim,
            sentences[best_i],
            sentences[best_i],
            msg["negation_mismatch"].format(ev=sentences[best_i]),
        )
        (decisive if cue.decisive else soft).append(cue)
    tax = tax_mismatch(claim, sentences, vctx)
    if tax is not None:
        i, cl_words, ev_words, ev_class = tax
        if lang != "ja" and not ev_words.isascii():  # 税別 for an English claim: glossed
            ev_words = f"{ev_words} ({TAX_GLOSS[ev_class]})"
        decisive.append(Cue("tax_mismatch", True, cl_words, ev_words, sentences[i],
                            msg["tax_mismatch"].format(ev=ev_words, cl=cl_words,
                                                       sentence=sentences[i])))
    swapped = (swapped_subject(claim, sentences) if lang != "ja"  # whose statement it is
               else swapped_subject_ja(claim, sentences))
    if swapped is not None:
        sentence, cl_name, ev_name = swapped
        decisive.append(Cue("subject_swap", True, cl_name, ev_name, sentence,
                            msg["subject_swap"].format(ev=ev_name, cl=cl_name,
                                                       sentence=sentence)))
    bound = misbound_value(claim, sentences, xlang=xlang) if not decisive else None
    if bound is not None:
        ev, case = "、".join(bound.value_cases), "、".join(bound.claim_cases)
        decisive.append(Cue("value_binding", True, bound.claim_value, ev, bound.sentence,
                            msg["value_binding"].format(cl=bound.claim_value, ev=ev, case=case,
                                                        other=bound.other_value,
                                                        sentence=bound.sentence)))
    altered = altered_copy(claim, sentences)
    if altered is not None:
        sentence, cl_span, ev_span = altered
        soft.append(
            Cue(
                "altered_copy",
                False,
                cl_span,
                ev_span,
                sentence,
                msg["altered_copy"].format(sentence=sentence, cl=cl_span, ev=ev_span),
            )
        )
    decisive = [c for c in decisive if rules.enabled(c.kind)]
    decisive.sort(key=lambda c: c.verdict != "contradicted")  # contradictions first
    return CueReport(tuple(decisive + soft))


def _unread(claim: str, sentences: list[str], cross: CrossContext | None, lang: str,
            question: str) -> tuple[list[str], str]:
    """Romaji names of an English claim its Japanese cited ``sentences`` never read as.

    Returns them with the sentences' text; ``cross`` is their cross-language context when
    already computed.
    """
    if lang != "en" or is_japanese(claim) or not sentences:
        return [], ""
    cross = cross or cross_context(claim, sentences)
    if cross is None or not cross.foreign:
        return [], ""
    text = " ".join(sentences)
    return unread_names(_entities(prepare(claim)), text, question), text
