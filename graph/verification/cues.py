"""Deterministic cues: numbers, dates, names and negation that the evidence contradicts or lacks."""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from grounded_rag.verification.evidence import (
    STOP_WORDS,
    content_tokens,
    is_japanese,
    normalize,
    overlap,
    split_sentences,
    stem,
)
from grounded_rag.verification.hedges import hedged_clause
from grounded_rag.verification.roles import role_swap
from grounded_rag.verification.values import (
    DateValue,
    Quantity,
    extract_dates,
    extract_quantities,
    factor_of,
    number_in,
    prepare,
    same_value,
    strip_numbers,
)

CueKind = Literal[
    "quantity_mismatch",
    "date_mismatch",
    "negation_mismatch",
    "quantity_missing",
    "date_missing",
    "entity_missing",
    "words_missing",
    "altered_copy",
    "role_swap",
    "hedged",
]

# User-facing reason texts (they also feed the revision prompt).
_MSG = {
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
        "role_swap": "The claim swaps who does what: the evidence says \u201c{ev}\u201d "
        "({cl}).",
        "hedged": "The evidence does not state this as a fact (\u201c{cl}\u201d): "
        "\u201c{ev}\u201d",
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
        "role_swap": "主張は動作の主体と対象が入れ替わっています。根拠では「{ev}」です（{cl}）。",
        "hedged": "根拠はこれを事実として述べていません（「{cl}」）:「{ev}」",
    },
}

_NEG_EN = re.compile(
    r"\b(?:not|never|no|none|nobody|nothing|neither|nor|cannot|without)\b|n't\b", re.IGNORECASE
)
# まず (first), 必ず (always), 絶えず (constantly), とりあえず (for now) end in ず but are
# not negations; nor are かもしれない / かもしれません (may be) and に違いない (must be).
_NEG_JA = re.compile(
    r"(?<![少危切幼])(?<!しれ)(?<!違い)ない|(?<!しれ)ません|なかった|(?<![ま必])(?<!あえ)(?<!絶え)ず(?=[、。にもとして]|$)"
    r"|無い|無し|なし(?![で])|不可"
)
_ENTITY_EN = re.compile(r"\b(?:[A-Z][a-zA-Z0-9]*(?:[-'][A-Za-z0-9]+)*|[A-Za-z]+\d+[A-Za-z0-9]*)\b")
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]{3,}")
_OPENERS = frozenset("\"'\u201c\u2018(")
_COMMON_CAPS = frozenset(
    "I The A An This That These Those It In On At For And But Or If When "
    "He She They We You My Our Their His Her Its Yes No "
    "What Which Who Whom Whose Where Why How Is Are Was Were Do Does Did Can Could".split()
)


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
    """The verdict a decisive cue settles (``hedged``: neutral, the rest contradicted)."""


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


def _negated(text: str) -> bool:
    count = len(_NEG_JA.findall(text)) + len(_NEG_EN.findall(text))
    return count % 2 == 1


def _entities(claim: str) -> list[str]:
    found: list[str] = []
    for sentence in split_sentences(claim):
        for m in _ENTITY_EN.finditer(sentence.text):
            word = m.group(0)
            initial = m.start() == 0 or sentence.text[: m.start()].rstrip()[-1:] in _OPENERS
            if initial and not any(c.isdigit() for c in word) and word[1:].islower():
                continue  # sentence- or quote-initial capital: not evidence of a name
            if word in _COMMON_CAPS or word.isdigit():
                continue
            found.append(word)
        found.extend(_KATAKANA.findall(sentence.text))
    return list(dict.fromkeys(found))


def check_claim(
    claim: str,
    evidence: str | Sequence[str],
    *,
    language: str | None = None,
    question: str = "",
) -> CueReport:
    """Compare the numbers, dates, names, words and negation of ``claim`` with ``evidence``.

    A *decisive* cue (same kind of quantity or date with a different value, in the evidence
    sentence that best matches the claim's wording, or for a claim that lists several values
    of one kind, the wording of the value's own clause; or a negation flip in a sentence that
    otherwise says the same; in Japanese, a swap of who acts on whom) marks the claim
    contradicted without a model, and a Japanese claim that copies a clause the evidence
    only hedges, reports or makes conditional is decided neutral. Other cues
    (something the evidence lacks) are hints for the model's verdict and its reason.

    ``question`` is the question the claim answers (the claim may be a bare answer such as
    "physician"): nothing the question itself mentions counts as missing, so the cues judge
    what the answer adds, not the question's premise.
    """
    texts = [evidence] if isinstance(evidence, str) else list(evidence)
    lang = (language or ("ja" if is_japanese(claim) else "en"))[:2]
    given = prepare(question).lower() if question.strip() else ""
    msg = _MSG["ja" if lang == "ja" else "en"]
    sentences = [s.text for t in texts for s in split_sentences(t)]
    if not sentences:
        return CueReport()
    # Context = shared wording once numbers, units and dates are removed, so that "2 hours"
    # and "10 hours" in unrelated sentences do not look like the same statement.
    claim_tokens = content_tokens(strip_numbers(claim))
    sentence_tokens = [content_tokens(strip_numbers(s)) for s in sentences]
    context = [overlap(claim_tokens, tokens) for tokens in sentence_tokens]

    ev_dates: list[DateValue] = []
    ev_quantities: list[Quantity] = []
    for i, s in enumerate(sentences):
        dates, rest = extract_dates(prepare(s), i)
        ev_dates += dates
        ev_quantities += extract_quantities(rest, i)
    all_evidence = prepare(" ".join(sentences))
    cl_dates, cl_rest = extract_dates(prepare(claim))
    cl_quantities = extract_quantities(cl_rest)

    decisive: list[Cue] = []
    soft: list[Cue] = []
    dims = Counter(q.dim for q in cl_quantities)
    for q in cl_quantities:
        equal = [e for e in ev_quantities if e.dim == q.dim and same_value(e.value, q.value)]
        same_dim = [e for e in ev_quantities if e.dim == q.dim and q.dim != "number"]
        # A claim that lists several values of one kind ("全長3,400 mm以下、全幅1,480 mm以下")
        # matches each against its own sentence: each value is judged by the words of its
        # own clause, not by the sentence that best matches the whole claim.
        ctx = _clause_context(cl_rest, q.text, sentence_tokens) if dims[q.dim] > 1 else context
        best_equal = max((ctx[e.sentence] for e in equal), default=-1.0)
        if same_dim:
            best = max(same_dim, key=lambda e: ctx[e.sentence])
            # The value may appear elsewhere in the evidence about something else: only a
            # clearly better-matching sentence with another value contradicts the claim.
            if ctx[best.sentence] > 0 and best_equal < 0.7 * ctx[best.sentence]:
                rivals = sorted({e.text for e in same_dim if e.sentence == best.sentence})
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
        if any(e.compatible(d) and e.shares_field(d) for e in ev_dates):
            continue
        rivals = [e for e in ev_dates if e.shares_field(d)]
        if rivals:
            best_d = max(rivals, key=lambda e: context[e.sentence])
            if context[best_d.sentence] > 0:
                decisive.append(
                    Cue(
                        "date_mismatch",
                        True,
                        d.text,
                        best_d.text,
                        sentences[best_d.sentence],
                        msg["date_mismatch"].format(ev=best_d.text, cl=d.text),
                    )
                )
                continue
        if given and d.text.lower() in given:
            continue
        soft.append(
            Cue("date_missing", False, d.text, "", "", msg["date_missing"].format(cl=d.text))
        )

    lowered = all_evidence.lower()
    missing_names = [
        name
        for name in _entities(prepare(claim))
        if name.lower() not in lowered and name.lower() not in given
    ]
    for name in missing_names:
        soft.append(
            Cue("entity_missing", False, name, "", "", msg["entity_missing"].format(cl=name))
        )
    named = {w.lower() for name in missing_names for w in _LATIN.findall(name)}
    words = [w for w in missing_words(claim, sentences, question) if w.lower() not in named]
    if words:
        listed = "、".join(words) if lang == "ja" else ", ".join(words)
        soft.append(
            Cue(
                "words_missing",
                False,
                listed,
                "",
                "",
                msg["words_missing"].format(cl=listed),
                tuple(words),
            )
        )

    best_i = max(range(len(sentences)), key=lambda i: context[i])
    polar = not (question.strip() and _fragment(claim, lang)) or _negated(claim)
    ev_polarity = _negated(_polarity_scope(claim, sentences[best_i], lang))
    if polar and context[best_i] >= 0.5 and _negated(claim) != ev_polarity:
        cue = Cue(
            "negation_mismatch",
            context[best_i] >= 0.75,
            claim,
            sentences[best_i],
            sentences[best_i],
            msg["negation_mismatch"].format(ev=sentences[best_i]),
        )
        (decisive if cue.decisive else soft).append(cue)
    if lang == "ja":
        swap = role_swap(claim, sentences)  # word overlap misses it: the particles moved
        if swap is not None:
            sentence, phrases = swap
            listed = "、".join(phrases)
            decisive.append(Cue("role_swap", True, listed, sentence, sentence,
                                msg["role_swap"].format(ev=sentence, cl=listed)))
        hedge = hedged_clause(claim, sentences)
        if hedge is not None:
            sentence, marker = hedge
            decisive.append(Cue("hedged", True, marker, sentence, sentence,
                                msg["hedged"].format(ev=sentence, cl=marker),
                                verdict="neutral"))
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
    decisive.sort(key=lambda c: c.verdict != "contradicted")  # contradictions first
    return CueReport(tuple(decisive + soft))


_LATIN = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_PREFIX = 5  # words this long or longer match on their first five letters (found/founder)
# Words that carry no content of their own beyond the shared stop list (negation has its
# own cue; "neither ... nor" says nothing the evidence must contain).
_UNSEEN_SKIP = frozenset(
    "neither nor never either both also too yet still though although however while since "
    "because until unless whether other another own same such much many some few well "
    "indeed actually really instead rather".split()
)


def missing_words(claim: str, evidence: str | Sequence[str], question: str = "") -> list[str]:
    """Content words of ``claim`` that neither the evidence nor the question contains.

    Latin-script words are compared after lowercasing, on the word, its plural/past stem, or
    (for words of five letters or more) its first five letters, so "produced" finds
    "producer". Function words and numbers are skipped (numbers have their own cues).
    Japanese text is not split into words here: kanji compounds are paraphrased too freely
    (実施 for 行う) for a missing compound to mean much (JHARS: more false alarms than
    catches); katakana names have ``entity_missing``. Returns the claim's own spellings, in
    order, without repeats.
    """
    texts = [evidence] if isinstance(evidence, str) else list(evidence)
    known = normalize(" ".join([*texts, question])).lower()
    vocab = {w for w in _LATIN.findall(known)}
    forms = {f for w in vocab for f in _forms(w)}
    prefixes = {w[:_PREFIX] for w in vocab if len(w) >= _PREFIX}
    out: list[str] = []
    body = normalize(claim)
    for word in _LATIN.findall(body):
        low = word.lower().strip("'-")
        if len(low) < 3 or low in STOP_WORDS or low in _UNSEEN_SKIP:
            continue
        if _forms(low) & forms:
            continue
        if len(low) >= _PREFIX and low[:_PREFIX] in prefixes:
            continue
        out.append(word)
    return list(dict.fromkeys(out))


def _polarity_scope(claim: str, sentence: str, language: str) -> str:
    """The part of ``sentence`` whose negation bears on ``claim``.

    When the claim is copied verbatim from the sentence (claims split from a long sentence
    are clause fragments: 「精神は仮想現実の中にとどまり」 out of 「ライズが出来ず、精神は…」),
    only the copied span counts, widened by the negation that may follow it in Japanese
    (出来|ず) or precede it in English (not| available): a negation in another clause of the
    sentence says nothing about this one. Otherwise the whole sentence counts.
    """
    body = claim.strip().rstrip("。.!?！？")
    at = sentence.find(body) if body else -1
    if at < 0:
        return _related_clauses(claim, sentence) if language == "ja" else sentence
    end = at + len(body)
    if language == "ja":
        return sentence[at : end + 4]
    before = sentence[:at].split()[-1:]
    after = sentence[end:].split()[:1]
    return " ".join([*before, body, *after])


_JA_CLAUSE_END = re.compile(r"(?<=[、，])")
# Clause breaks for a listed value: 、 ， ; , (not a thousands separator), and the topic
# particle は after a noun, which sets the subject apart from what is said of it.
_CLAUSE_SPLIT = re.compile(r"[、，;；]|,(?!\d)|(?<=[\u3400-\u9fff\u30a0-\u30ff])は")


def _clause_context(claim: str, value: str, sentence_tokens: list[set[str]]) -> list[float]:
    """Context of each sentence as seen from the claim clause that holds ``value``.

    ``sentence_tokens`` are the sentences' content tokens with numbers removed.
    """
    clause = next((c for c in _CLAUSE_SPLIT.split(claim) if value in c), claim)
    tokens = content_tokens(strip_numbers(clause)) or content_tokens(strip_numbers(claim))
    return [overlap(tokens, sentence) for sentence in sentence_tokens]


def _related_clauses(claim: str, sentence: str) -> str:
    """The clauses of a Japanese ``sentence`` that a paraphrasing ``claim`` draws on.

    Long Japanese sentences chain clauses with 、 (「自然界には存在せず、水蒸気を吸収する
    吸湿性がある」); a claim that restates one clause keeps that clause's polarity, not the
    sentence's. A clause counts when at least half of its content tokens are in the claim;
    when none does, the whole sentence counts.
    """
    clauses = [c for c in _JA_CLAUSE_END.split(sentence) if c.strip()]
    if len(clauses) < 2:
        return sentence
    claim_tokens = content_tokens(claim)
    related = [c for c in clauses if (tokens := content_tokens(c))
               and len(tokens & claim_tokens) / len(tokens) >= 0.5]
    return "".join(related) if related else sentence


def _fragment(answer: str, language: str) -> bool:
    """True for a bare answer ("professional tennis player") rather than a sentence.

    A fragment has no polarity of its own, so a negation elsewhere in the evidence sentence
    says nothing about it.
    """
    text = answer.strip()
    if not text or text[-1] in ".!?。！？":
        return False
    return len(text) <= 15 if language == "ja" else len(text.split()) <= 5


def _forms(word: str) -> set[str]:
    """The word, its stem, and the stem without a doubled final consonant (starred -> star)."""
    base = stem(word)
    out = {word, base}
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiou":
        out.add(base[:-1])
    return out

ALTERED_COPY_SIMILARITY = 0.65
"""Similarity (difflib ratio) from which a claim counts as a rewrite of one evidence sentence."""

_CONTENT_CHAR = re.compile(r"[A-Za-z0-9\u3400-\u9fff\uf900-\ufaff\u30a0-\u30ff]")
_WORD = re.compile(r"[\w'\-]+|[^\w\s]")


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

