"""Citation integrity: sentence handles, phantom ids, quote drift, quotes from the wrong source.

- Sentence handles: the generator cites ``S2.3`` (passage 2, sentence 3); code copies the quote.
- Deterministic citation checks: phantom source ids, quote drift, quotes from the wrong source.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from grounded_rag.types import Citation, Claim, Evidence, Finding
from grounded_rag.verification.evidence import (
    Sentence,
    content_tokens,
    gives_orders,
    order_indices,
    overlap,
    split_sentences,
)
from grounded_rag.verification.on_question import has_kind, question_kind

# ------------------------------------------------------------------------------------------
# Sentence handles: the generator cites ``S2.3`` (passage 2, sentence 3); code copies the quote.
#
# The evidence is shown to the generator as numbered sentences. A statement cites the handles
# of the sentences that support it, and :func:`cite_handles` turns them into citations whose
# ``quote`` and ``start`` / ``end`` offsets are copied from the chunk, so a generated answer's
# quotes are verbatim by construction. A handle that names no shown sentence is kept as
# written (no quote, no offsets), and the citation check reports it as a ``phantom_source``.

_HANDLE = re.compile(
    r"^[\[【(（]?\s*[Ss]?\s*(\d+)\s*(?:[.．:：\-－]\s*(\d+))?\s*[\]】)）]?$"
)
_SENTENCE_HANDLE = re.compile(r"^S\d+\.\d+$")
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


@dataclass(frozen=True)
class Numbered:
    """One sentence shown to the generator under its handle."""

    handle: str
    """``S<passage>.<sentence>``, both 1-based; the sentence number counts every sentence of
    the chunk, so a handle stays the same whichever sentences are shown."""
    passage: int
    """Index (0-based) of the chunk in the evidence list."""
    number: int
    """Sentence number (1-based) within the chunk."""
    sentence: Sentence
    """The sentence with its offsets in the chunk text."""


@dataclass(frozen=True)
class SentenceView:
    """The numbered sentences shown to the generator, per passage, in document order."""

    passages: tuple[tuple[Numbered, ...], ...]
    """Shown sentences of each evidence chunk (empty when none of a chunk is shown)."""

    def by_handle(self) -> dict[str, Numbered]:
        """Every shown sentence by its handle."""
        return {n.handle: n for shown in self.passages for n in shown}

    def handles_of(self, citation: Citation, source_ids: Sequence[str]) -> list[str]:
        """The handles of the shown sentences a located citation covers (none when unlocated).

        Used to show a previous draft's citations to the generator the way it wrote them.
        """
        if citation.get("start", -1) < 0 or citation["source_id"] not in source_ids:
            return []
        passage = list(source_ids).index(citation["source_id"])
        if passage >= len(self.passages):
            return []
        start, end = citation["start"], citation["end"]
        return [n.handle for n in self.passages[passage]
                if n.sentence.start < end and n.sentence.end > start]


def sentence_handle(passage: int, number: int) -> str:
    """The handle of a chunk's sentence: ``S2.3`` for passage index 1, sentence 3."""
    return f"S{passage + 1}.{number}"


def number_sentences(
    evidence: Sequence[Evidence], shown: Collection[tuple[int, int]] | None = None
) -> SentenceView:
    """Number the sentences of every chunk; keep those in ``shown`` (all when None).

    ``shown`` holds (passage index, 1-based sentence number) pairs. A sentence that gives
    the model orders (:func:`~grounded_rag.verification.evidence.order_indices`) is never
    kept: the generator does not see it and cannot cite it.
    """
    passages: list[tuple[Numbered, ...]] = []
    for p, item in enumerate(evidence):
        sentences = split_sentences(item["text"], chunk=p)
        orders = order_indices(sentences, item["text"])
        keep = [
            Numbered(sentence_handle(p, i), p, i, s)
            for i, s in enumerate(sentences, start=1)
            if (shown is None or (p, i) in shown) and i - 1 not in orders
        ]
        passages.append(tuple(keep))
    return SentenceView(tuple(passages))


def estimate_tokens(text: str) -> int:
    """A model-independent token estimate: ~1 per CJK character, ~1 per 3 other characters.

    Close to the Qwen2.5 tokenizer on Japanese and English prose, and rather high than low.
    """
    cjk = len(_CJK.findall(text))
    return cjk + (len(text) - cjk + 2) // 3


LINE_TOKENS = 4
"""Tokens a shown sentence costs beyond its text (its handle and the line break)."""

HEADER_TOKENS = 12
"""Tokens a passage's header line costs (handle and title), estimated."""


def select_sentences(
    question: str,
    evidence: Sequence[Evidence],
    budget_tokens: int,
    *,
    neighbours: int = 1,
) -> set[tuple[int, int]] | None:
    """The (passage, sentence number) pairs to show the generator, within ``budget_tokens``.

    None (show everything) when the budget is 0 or everything fits. Otherwise sentences are
    taken best first by the share of the question's content words they contain, or for a
    passage in the other language by the embedder's score (``sentence_relevance``; a small
    bonus for a number or date when the question asks for one; earlier, better-retrieved
    passages win ties), each with ``neighbours`` sentences either side for context while
    the budget allows, else alone. The best sentence is always shown.
    """
    if budget_tokens <= 0:
        return None
    sentences, cost, whole = _costs(evidence)
    if not sentences or whole <= budget_tokens:
        return None
    passages = {p for p, _, _ in sentences}
    wanted = content_tokens(question)
    kind = question_kind(question)
    count = {p: sum(1 for q, _, _ in sentences if q == p) for p in passages}
    semantic = _semantic(evidence)

    def score(item: tuple[int, int, Sentence]) -> tuple[float, int, int]:
        p, i, s = item
        value = max(overlap(wanted, s.text), semantic.get((p, i), 0.0))
        if kind is not None and has_kind(s.text, kind):
            value += 0.15
        return (-value, p, i)

    chosen: set[tuple[int, int]] = set()
    used = 0
    for p, i, _ in sorted(sentences, key=score):
        group = [(p, j) for j in range(i - neighbours, i + neighbours + 1)
                 if 1 <= j <= count[p]]
        # The embedder ranks sentences less sharply than shared words do (its best one held
        # the answer for 46 of 71 small-corpus dev cross-language questions, its best three
        # for 60): its picks are shown alone, so that several fit where one with its
        # neighbours would take the budget (answer shown 59 -> 65 of 71; 57 before scores).
        alone = (p, i) in semantic
        for candidate in ([(p, i)],) if alone else (group, [(p, i)]):
            new = [key for key in candidate if key not in chosen]
            extra = sum(cost[key] for key in new)
            if new and not any(q == p for q, _ in chosen):
                extra += HEADER_TOKENS
            if used + extra <= budget_tokens:
                chosen.update(new)
                used += extra
                break
        if not chosen:  # not even the best sentence fits: show it anyway
            chosen.add((p, i))
            used += cost[(p, i)] + HEADER_TOKENS
        if used >= budget_tokens * 0.95:
            break
    return chosen


def cuts(evidence: Sequence[Evidence], budget_tokens: int) -> bool:
    """True when the view of ``evidence`` within ``budget_tokens`` leaves sentences out."""
    return budget_tokens > 0 and _costs(evidence)[2] > budget_tokens


def _costs(evidence: Sequence[Evidence]
           ) -> tuple[list[tuple[int, int, Sentence]], dict[tuple[int, int], int], int]:
    """Every (passage, number, sentence), each sentence's shown cost, and the whole view's."""
    sentences = [(p, i, s) for p, item in enumerate(evidence)
                 for i, s in enumerate(split_sentences(item["text"], chunk=p), start=1)]
    cost = {(p, i): estimate_tokens(s.text) + LINE_TOKENS for p, i, s in sentences}
    whole = sum(cost.values()) + HEADER_TOKENS * len({p for p, _, _ in sentences})
    return sentences, cost, whole


SEMANTIC_WEIGHT = 0.9
"""The embedder's best sentence of the other language ranks as a sentence holding 90% of the
question's words (so a same-language sentence that holds them all still comes first)."""


def _semantic(evidence: Sequence[Evidence]) -> dict[tuple[int, int], float]:
    """(passage, sentence number) -> the embedder's score, scaled to [0, SEMANTIC_WEIGHT].

    Read from ``sentence_relevance`` (``retrieval.sentence_scores``: passages in the other
    language than the question's). Cosine similarities of one embedder sit in a narrow band,
    so they are spread over the range from the worst to the best sentence scored.
    """
    raw = {(p, i): float(v) for p, item in enumerate(evidence)
           for i, v in enumerate(item.get("sentence_relevance") or (), start=1)}
    if not raw:
        return {}
    low, high = min(raw.values()), max(raw.values())
    span = high - low
    return {key: SEMANTIC_WEIGHT * ((v - low) / span if span > 0 else 1.0)
            for key, v in raw.items()}


def render_view(view: SentenceView, evidence: Sequence[Evidence], *, header: str) -> str:
    """The evidence as the generator sees it: a header per passage, then one handle a line.

    ``header`` is a format string with ``source_id`` (the passage handle, ``S2``) and
    ``title``. Left-out sentences between shown ones are marked with a ``…`` line.
    """
    blocks: list[str] = []
    for p, shown in enumerate(view.passages):
        if not shown:
            continue
        lines = [header.format(source_id=f"S{p + 1}", title=evidence[p].get("title", ""))]
        previous = 0
        for n in shown:
            if previous and n.number != previous + 1:
                lines.append("…")
            lines.append(f"{n.handle} {n.sentence.text}")
            previous = n.number
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def parse_handle(text: str) -> tuple[int, int | None] | None:
    """Read ``S2.3`` / ``[S2.3]`` / ``2.3`` / ``S2`` as (passage, sentence or None), 1-based."""
    match = _HANDLE.match(text.strip())
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)) if match.group(2) else None


def is_sentence_handle(text: str) -> bool:
    """True for a canonical sentence handle such as ``S2.3``."""
    return bool(_SENTENCE_HANDLE.match(text))


def cite_handles(
    handles: Sequence[str],
    view: SentenceView,
    evidence: Sequence[Evidence],
    statement: str,
) -> list[Citation]:
    """Turn the handles a statement cites into citations copied from the chunks.

    - ``S2.3`` names a shown sentence: its text and offsets are copied (``match`` 1.0).
      Adjacent sentences of one chunk (``S2.3``, ``S2.4``) become one citation spanning both.
    - ``S2`` (or the chunk's real id) names a passage: its shown sentence that shares the most
      content words with the statement is cited (the first one on a tie).
    - ``S2.9`` where passage 2 was shown but not its sentence 9 is read as ``S2`` when one
      of the passage's shown sentences shares a content word with the statement: the model
      copied a shown sentence and misnumbered it (the judge then checks the statement
      against the sentence cited). A first draft's wrong number otherwise cost the whole
      answer: the 1.5B model repeats it in every revision.
    - Anything else (a sentence of a passage not shown or sharing no word with the statement,
      a passage out of range) is kept as written with no quote and offsets -1: the citation
      check reports it as a ``phantom_source``.
    - A statement that copies one shown sentence (:data:`COPY_SHARE` of its content words)
      while the shown sentences it cites hold less than :data:`CITED_SHARE` of them cites
      the copied sentence instead (a phantom handle stays a phantom): the model took the
      sentence from one passage and wrote another's number ("Theo van Gogh … was a Dutch
      film director" citing a passage about Edward Teller).
    """
    ids = [e["source_id"] for e in evidence]
    chosen: list[Numbered] = []
    phantoms: list[str] = []
    shown = view.by_handle()
    claim_tokens = content_tokens(statement)
    for raw in handles:
        text = raw.strip()
        if not text:
            continue
        parsed = parse_handle(text)
        passage: int | None = None
        if text in ids:
            passage = ids.index(text)
        elif parsed is not None and parsed[1] is not None:
            found = shown.get(sentence_handle(parsed[0] - 1, parsed[1]))
            if found is None:  # misnumbered: a shown sentence sharing its words, if any
                score, found = _closest_shown(view, parsed[0] - 1, claim_tokens)
                found = found if score > 0 else None
            if found is None:
                phantoms.append(sentence_handle(parsed[0] - 1, parsed[1]))
            elif found not in chosen:
                chosen.append(found)
            continue
        elif parsed is not None and 1 <= parsed[0] <= len(view.passages):
            passage = parsed[0] - 1
        best = None if passage is None else _closest_shown(view, passage, claim_tokens)[1]
        if best is None:
            phantoms.append(text)
            continue
        if best not in chosen:
            chosen.append(best)
    copied = _copied_elsewhere(view, claim_tokens, chosen) if chosen and not phantoms else None
    if copied is not None:  # the model copied it and wrote another passage's number
        chosen = [copied]
    citations: list[Citation] = []
    for group in _runs(chosen):
        first, last = group[0].sentence, group[-1].sentence
        source = evidence[group[0].passage]
        citations.append({"source_id": source["source_id"],
                          "quote": source["text"][first.start:last.end],
                          "start": first.start, "end": last.end, "match": 1.0})
    for phantom in dict.fromkeys(phantoms):
        citations.append({"source_id": phantom, "quote": "", "start": -1, "end": -1})
    return citations


COPY_SHARE = 0.9
"""Share of a statement's content words one shown sentence must hold to count as copied."""
CITED_SHARE = 0.25
"""Below this share in every cited sentence, the citation is taken for a misnumbered one."""
COPY_MIN_TOKENS = 5


def _copied_elsewhere(view: SentenceView, claim_tokens: set[str],
                      chosen: Sequence[Numbered]) -> Numbered | None:
    """The one shown sentence the statement copies, when what it cites does not hold it."""
    if len(claim_tokens) < COPY_MIN_TOKENS or any(
            overlap(claim_tokens, n.sentence.text) >= CITED_SHARE for n in chosen):
        return None
    copies = [n for sentences in view.passages for n in sentences
              if overlap(claim_tokens, n.sentence.text) >= COPY_SHARE]
    return copies[0] if len(copies) == 1 else None


def _closest_shown(view: SentenceView, passage: int,
                   claim_tokens: set[str]) -> tuple[float, Numbered | None]:
    """(share, sentence): the shown sentence of ``passage`` sharing most of ``claim_tokens``.

    The first one on a tie; (0, None) when the passage is out of range or shows nothing.
    """
    if not 0 <= passage < len(view.passages) or not view.passages[passage]:
        return 0.0, None
    best = max(view.passages[passage],
               key=lambda n: (overlap(claim_tokens, n.sentence.text), -n.number))
    return overlap(claim_tokens, best.sentence.text), best


def _runs(chosen: list[Numbered]) -> list[list[Numbered]]:
    """Group cited sentences into runs of consecutive numbers within one chunk.

    Chunks come in the order they were first cited.
    """
    order = list(dict.fromkeys(n.passage for n in chosen))
    runs: list[list[Numbered]] = []
    for passage in order:
        numbers = sorted((n for n in chosen if n.passage == passage), key=lambda n: n.number)
        for n in numbers:
            if runs and runs[-1][-1].passage == passage and n.number == runs[-1][-1].number + 1:
                runs[-1].append(n)
            else:
                runs.append([n])
    return runs


# ------------------------------------------------------------------------------------------
# Deterministic citation checks: phantom source ids, quote drift, quotes from the wrong source.

_QUOTE_TRIM = " \t\n\"'“”‘’「」『』…."
_PUNCT_FOLD = str.maketrans({"，": ",", "、": ",", "。": ".", "．": ".", "：": ":", "；": ";",
                             "（": "(", "）": ")", "“": '"', "”": '"', "’": "'", "‘": "'",
                             "－": "-", "―": "-", "—": "-", "–": "-", "〜": "~", "～": "~"})


@dataclass(frozen=True)
class Located:
    """Where a quote was found in a text."""

    start: int
    """Start offset in the original text (-1 when not found)."""
    end: int
    """End offset (exclusive) in the original text (-1 when not found)."""
    similarity: float
    """1.0 verbatim, slightly below 1 when equal after normalising, lower when fuzzy."""


NOT_FOUND = Located(-1, -1, 0.0)


def _normalise(text: str) -> tuple[str, list[int]]:
    """NFKC, fold punctuation and case, drop white space; keep a map to original offsets."""
    chars: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        folded = unicodedata.normalize("NFKC", ch).translate(_PUNCT_FOLD).casefold()
        for out in folded:
            if out.isspace():
                continue
            chars.append(out)
            index.append(i)
    return "".join(chars), index


def locate_quote(quote: str, text: str) -> Located:
    """Find ``quote`` in ``text``: verbatim first, then normalised, then fuzzy."""
    quote = quote.strip(_QUOTE_TRIM) or quote.strip()
    if not quote or not text:
        return NOT_FOUND
    pos = text.find(quote)
    if pos >= 0:
        return Located(pos, pos + len(quote), 1.0)
    norm_quote, _ = _normalise(quote)
    norm_text, index = _normalise(text)
    if not norm_quote or not norm_text:
        return NOT_FOUND
    pos = norm_text.find(norm_quote)
    if pos >= 0:
        return Located(index[pos], index[pos + len(norm_quote) - 1] + 1, 0.99)
    align = fuzz.partial_ratio_alignment(norm_quote, norm_text)
    if align is None or align.dest_end <= align.dest_start:
        return NOT_FOUND
    similarity = round(align.score / 100.0, 4)
    # Penalise a quote much longer than what matched (partial_ratio favours the short side).
    coverage = min(1.0, (align.dest_end - align.dest_start) / max(1, len(norm_quote)))
    similarity = round(similarity * coverage, 4)
    return Located(index[align.dest_start], index[align.dest_end - 1] + 1, similarity)


def check_citations(
    statements: list[Claim], evidence: list[Evidence], *, threshold: float
) -> tuple[list[Claim], list[Finding]]:
    """Locate every quote in its cited source and report what does not hold.

    A citation whose offsets already point at its quote (one copied from a sentence handle)
    is kept as an exact match; any other quote (review edits, answers verified from outside)
    is located verbatim, then normalised, then fuzzy.

    Returns the statements with citation offsets filled in, and findings whose
    ``claim_index`` is the statement index.
    """
    by_id = {item["source_id"]: item for item in evidence}
    findings: list[Finding] = []
    checked: list[Claim] = []
    for s_index, statement in enumerate(statements):
        citations: list[Citation] = []
        if not statement.get("citations"):
            findings.append(
                {"type": "uncited_statement", "severity": "major", "claim_index": s_index,
                 "detail": f'"{statement["text"]}" cites no source.'}
            )
        for cite in statement.get("citations", []):
            source_id, quote = cite["source_id"].strip(), cite["quote"]
            source = by_id.get(source_id)
            if source is None:
                if is_sentence_handle(source_id):
                    detail = (f"Cited sentence {source_id!r} is not among the numbered "
                              "sentences shown.")
                else:
                    elsewhere = _best_other(quote, evidence, exclude=None, threshold=threshold)
                    hint = f" The quote appears in {elsewhere[0]}." if elsewhere else ""
                    detail = (f"Cited source id {source_id!r} is not among the retrieved "
                              f"sources.{hint}")
                findings.append({"type": "phantom_source", "severity": "critical",
                                 "claim_index": s_index, "detail": detail})
                citations.append({"source_id": source_id, "quote": quote, "start": -1, "end": -1,
                                  "match": 0.0})
                continue
            if gives_orders(quote):  # a document's order to the model is no evidence
                findings.append({"type": "quotes_an_order", "severity": "critical",
                                 "claim_index": s_index,
                                 "detail": f"The quote from {source_id} addresses the model "
                                 "reading it (an instruction in the document), so it cannot "
                                 "support a statement."})
                citations.append({"source_id": source_id, "quote": quote, "start": -1,
                                  "end": -1, "match": 0.0})
                continue
            start, end = cite.get("start", -1), cite.get("end", -1)
            if quote and 0 <= start < end and source["text"][start:end] == quote:
                # Copied from the chunk (a sentence handle): verbatim by construction.
                citations.append({"source_id": source_id, "quote": quote, "start": start,
                                  "end": end, "match": 1.0})
                continue
            found = locate_quote(quote, source["text"])
            if found.similarity >= threshold:
                if found.similarity < 0.99:
                    findings.append(
                        {"type": "quote_drift", "severity": "minor", "claim_index": s_index,
                         "detail": f"Quote differs slightly from {source_id} "
                         f"(similarity {found.similarity:.2f}); offsets point at the closest span."}
                    )
                citations.append({"source_id": source_id, "quote": quote, "start": found.start,
                                  "end": found.end, "match": found.similarity})
                continue
            elsewhere = _best_other(quote, evidence, exclude=source_id, threshold=threshold)
            if elsewhere:
                other_id, other = elsewhere
                findings.append(
                    {"type": "quote_in_other_source", "severity": "major", "claim_index": s_index,
                     "detail": f"Quote is not in {source_id} but in {other_id} "
                     f"(similarity {other.similarity:.2f})."}
                )
            else:
                findings.append(
                    {"type": "quote_not_found", "severity": "major", "claim_index": s_index,
                     "detail": f'Quote "{quote[:80]}" was not found in {source_id} '
                     f"(best similarity {found.similarity:.2f})."}
                )
            citations.append({"source_id": source_id, "quote": quote, "start": -1, "end": -1,
                              "match": found.similarity})
        checked.append({**statement, "citations": citations})
    return checked, findings


def _best_other(
    quote: str, evidence: list[Evidence], *, exclude: str | None, threshold: float
) -> tuple[str, Located] | None:
    best: tuple[str, Located] | None = None
    for item in evidence:
        if item["source_id"] == exclude:
            continue
        found = locate_quote(quote, item["text"])
        better = best is None or found.similarity > best[1].similarity
        if found.similarity >= threshold and better:
            best = (item["source_id"], found)
    return best
