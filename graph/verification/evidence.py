"""Evidence selection: the sentences of the cited chunks that best match a claim."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from grounded_rag.types import Evidence

# Sentence ends: Japanese full stops / marks always end a sentence; ASCII . ! ? only when
# followed by whitespace (so "3.5" and URLs stay whole) and not after "e.g."; newlines always.
_JA_END = "。！？"
_CLOSERS = "\"')]」』）】"
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|Mr|Mrs|Ms|Dr|Prof|Inc|Ltd|Co|No|Fig|approx)\.)$")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+(?:[.,]\d+)*")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\u30fc]+")
STOP_WORDS = frozenset(
    "a an the of to in on at for and or but is are was were be been being it its this that "
    "these those with by as from than then so such has have had do does did will would can "
    "could may might shall should there their they them he she his her we our you your i "
    "not no yes up about into over after before also only just very more most any all each "
    "which who whom what when where why how if".split()
)
"""English function words that carry no content of their own (lowercase)."""
_JA_STOP = frozenset(
    ["です", "ます", "した", "して", "する", "ある", "いる", "こと", "もの", "れる"]
)

JA_BUDGET_CHARS = 700
"""Default evidence budget for Japanese (~500 tokens for the local model)."""

EN_BUDGET_CHARS = 1600
"""Default evidence budget for English (~400 tokens)."""


@dataclass(frozen=True)
class Sentence:
    """A sentence of an evidence chunk with its offsets."""

    text: str
    """Sentence text, stripped."""
    start: int
    """Start offset in the chunk text."""
    end: int
    """End offset (exclusive) in the chunk text."""
    chunk: int
    """Index of the chunk in the evidence list."""


@dataclass(frozen=True)
class SelectedEvidence:
    """The evidence text a small model should see for one claim."""

    text: str
    """Selected sentences in document order; gaps are marked with " … "."""
    best_sentence: str
    """The single best-matching sentence (used as ``evidence_quote``), "" if none."""
    best_source_id: str
    """Chunk id the best sentence comes from, "" if none."""
    best_score: float
    """Lexical overlap of the best sentence with the claim, in [0, 1]."""
    truncated: bool
    """True when some evidence text was left out to fit the budget."""


def normalize(text: str) -> str:
    """NFKC-normalise (full-width digits and letters to ASCII) and collapse spaces."""
    return re.sub(r"[ \t\u3000]+", " ", unicodedata.normalize("NFKC", text))


def _next_word(text: str, j: int) -> str:
    """The word after position ``j`` on the same line ("" at a line's end)."""
    k = j
    while k < len(text) and text[k] in " \t":
        k += 1
    end = k
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[k:end]


_OPENERS = frozenset(
    "the a an this that these those it its he she they we i you there here his her their our "
    "my your then but and so yet also however in on at for if when as".split())
"""Words that open a new English sentence rather than continue a name ("Wow! This is")."""


_INITIALS = re.compile(r"(?:^|[\s(\"'])(?:[A-Za-z]\.)+$")
RUN_TOGETHER = re.compile(r"(?<=[.!?])(?=[A-Z])|(?<=[.!?][\"')\]])(?=[A-Z])")
"""Where sources run two sentences together without a space ("...Cistaceae.Chimonobambusa",
"...issues of "Janus".)The Lady is...")."""
"""A piece ending in an initial or a dotted abbreviation: "J.", "U.S.", "D.C.", "U. S."."""


def _after_initials(text: str, start: int, i: int, j: int) -> bool:
    """True when the "." at ``i`` closes an initial or a dotted abbreviation mid-sentence.

    "the U.S. state of Washington", "J. R. R. Tolkien", "Washington, D.C. in 1990": the next
    word is lower-case, a number, or a capitalised word that does not open a sentence. "He
    moved to the U.S. The next year" still ends at "U.S.".
    """
    if not _INITIALS.search(text[start : i + 1]):
        return False
    after = _next_word(text, j).strip("\"'(")
    if not after:
        return False
    return not after[:1].isupper() or after.lower().rstrip(",.") not in _OPENERS


def _in_name(text: str, start: int, i: int, j: int) -> bool:
    """True when the "!" at ``i`` is part of a name.

    A lower-case word follows ("Drum! is", "Yahoo! was"), or a capitalised word that does
    not open a sentence follows a capitalised word ("both Prevention and New! Magazine",
    "New! Magazine is"); "Wow! This is new." and "It was great! Then" are two sentences.
    """
    after = _next_word(text, j)
    if after[:1].islower():
        return True
    words = text[start:i].split()
    if not words or not after:
        return False
    before, after = words[-1], after.strip("\"'")
    # "Done! Really?": a word that itself ends a phrase is no name's second word
    return (before[:1].isupper() and before.isalpha() and after[:1].isupper()
            and after.isalpha() and after.lower() not in _OPENERS)


def _run_together(text: str, start: int, i: int, j: int) -> bool:
    """True when the "." at ``i`` ends a sentence that the source ran into the next one.

    "…family Cistaceae.Chimonobambusa is a genus…", "…issues of "Janus".)The Lady is…": a
    lower-case letter or a digit (or a closing quote or bracket) before the stop, a
    capitalised word right after it (closers skipped), and no abbreviation or initial
    ("St.Louis", "U.S.A"). "ASP.NET", "Node.js" and "iOS.iPhone" stay one word.
    """
    before = text[i - 1] if i > 0 else ""
    if not (before.islower() or before.isdigit() or (before and before in _CLOSERS)):
        return False
    if j + 1 >= len(text) or not (text[j].isupper() and text[j + 1].islower()):
        return False
    if _DOMAIN.match(text, j):  # "www.Example.com"
        return False
    return not (_ABBREV.search(text[start : i + 1]) or _SHORT_ABBREV.search(text[start : i + 1])
                or _after_initials(text, start, i, j))


_DOMAIN = re.compile(r"[A-Za-z0-9\-]+\.[a-z]{2,}\b")
_SHORT_ABBREV = re.compile(r"(?:^|[^A-Za-z])(?:St|Mt|Ft|Jr|Sr|[A-Za-z])\.$")
"""Abbreviations that a glued capitalised word may follow ("St.Louis", "Jr.Smith")."""


def split_sentences(text: str, chunk: int = 0) -> list[Sentence]:
    """Split Japanese (。！？) and English (. ! ?) text and newlines into sentences.

    An English "!" inside a name does not end the sentence (``_in_name``), nor does the "."
    of an initial or a dotted abbreviation inside one ("the U.S. state", ``_after_initials``).
    """
    out: list[Sentence] = []
    start = 0
    i = 0
    n = len(text)

    def flush(end: int) -> None:
        piece = text[start:end]
        stripped = piece.strip()
        if stripped:
            s = start + len(piece) - len(piece.lstrip())
            out.append(Sentence(stripped, s, s + len(stripped), chunk))

    while i < n:
        c = text[i]
        if c == "\n":
            flush(i)
            start = i + 1
        elif c in _JA_END or c in "!?" or c == ".":
            j = i + 1
            while j < n and text[j] in _CLOSERS:
                j += 1
            if c in _JA_END or (
                (j >= n or text[j].isspace())
                and not (c == "." and (_ABBREV.search(text[start : i + 1])
                                       or _after_initials(text, start, i, j)))
                and not (c == "!" and _in_name(text, start, i, j))
            ) or (c == "." and _run_together(text, start, i, j)):
                flush(j)
                start = j
                i = j
                continue
        i += 1
    flush(n)
    return out


def content_tokens(text: str) -> set[str]:
    """Lowercased content words (Latin script) plus character bigrams of CJK runs."""
    norm = normalize(text).lower()
    tokens = {w for w in _LATIN_WORD.findall(norm) if w not in STOP_WORDS and len(w) > 1}
    tokens |= {stem(w) for w in list(tokens) if not w[0].isdigit()}
    for run in _CJK_RUN.findall(norm):
        if len(run) == 1:
            tokens.add(run)
        for i in range(len(run) - 1):
            gram = run[i : i + 2]
            if gram not in _JA_STOP and not _all_hiragana(gram):
                tokens.add(gram)
    return tokens


def overlap(claim_tokens: set[str], sentence: str | set[str]) -> float:
    """Share of the claim's content tokens found in ``sentence`` (0 when the claim has none).

    ``sentence`` may be given as its ``content_tokens`` already, when it is compared often.
    """
    if not claim_tokens:
        return 0.0
    tokens = content_tokens(sentence) if isinstance(sentence, str) else sentence
    return len(claim_tokens & tokens) / len(claim_tokens)


def is_japanese(text: str) -> bool:
    """True when the text contains kana (a reliable sign of Japanese)."""
    return bool(re.search(r"[\u3040-\u30ff]", text))


def select_evidence(
    claim: str,
    evidence: Sequence[Evidence] | Sequence[str],
    *,
    budget_chars: int | None = None,
    neighbours: int = 1,
) -> SelectedEvidence:
    """Pick the sentences of ``evidence`` that best match ``claim``, within a budget.

    Everything is kept when it fits the budget (so claims sharing evidence get identical
    text, and the model's evidence prefix cache is reused). Otherwise the best-matching
    sentences are taken with ``neighbours`` sentences either side, cited (earlier) chunks
    winning ties.
    """
    texts = [e if isinstance(e, str) else e["text"] for e in evidence]
    ids = ["" if isinstance(e, str) else e.get("source_id", "") for e in evidence]
    if budget_chars is None:
        budget_chars = (
            JA_BUDGET_CHARS if is_japanese(claim + "".join(texts[:1])) else EN_BUDGET_CHARS
        )
    sentences = []
    for i, t in enumerate(texts):
        split = split_sentences(t, chunk=i)
        orders = order_indices(split, t)  # never evidence (see gives_orders)
        sentences += [s for j, s in enumerate(split) if j not in orders]
        if orders:
            texts[i] = " ".join(s.text for j, s in enumerate(split) if j not in orders)
    if not sentences:
        return SelectedEvidence("", "", "", 0.0, False)
    claim_tokens = content_tokens(claim)
    scores = [
        overlap(claim_tokens, s.text) - 0.01 * s.chunk  # earlier (cited) chunks win ties
        for s in sentences
    ]
    best = max(range(len(sentences)), key=lambda i: scores[i])
    best_sentence = sentences[best]
    full = "\n\n".join(t.strip() for t in texts if t.strip())
    if len(full) <= budget_chars:
        return SelectedEvidence(
            full, best_sentence.text, ids[best_sentence.chunk], max(scores[best], 0.0), False
        )
    chosen: set[int] = set()
    used = 0
    for i in sorted(range(len(sentences)), key=lambda i: (-scores[i], i)):
        group = [
            j
            for j in range(i - neighbours, i + neighbours + 1)
            if 0 <= j < len(sentences) and sentences[j].chunk == sentences[i].chunk
        ]
        # Neighbours are context, not a must: drop them before dropping a top sentence.
        for candidate in (group, [i]):
            extra = sum(len(sentences[j].text) + 1 for j in candidate if j not in chosen)
            if used + extra <= budget_chars:
                chosen.update(candidate)
                used += extra
                break
        if used >= budget_chars * 0.9:
            break
    if not chosen:
        chosen = {best}
    parts: list[str] = []
    prev: int | None = None
    for j in sorted(chosen):
        s = sentences[j]
        if prev is not None:
            contiguous = j == prev + 1 and sentences[prev].chunk == s.chunk
            parts.append(" " if contiguous else " … ")
        parts.append(s.text)
        prev = j
    text = "".join(parts)
    if len(text) > budget_chars:
        text = text[:budget_chars]
    return SelectedEvidence(
        text, best_sentence.text, ids[best_sentence.chunk], max(scores[best], 0.0), True
    )


def stem(word: str) -> str:
    """A crude English stem: plural and past endings removed (studies -> study)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _all_hiragana(text: str) -> bool:
    return all("\u3040" <= c <= "\u309f" for c in text)


_KEY_LATIN = re.compile(r"[a-z][a-z'\-]*|\d+(?:[.,:/]\d+)*")
_KEY_KANJI_KATAKANA = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u30a0-\u30ff\u30fc]+")


def key_tokens(text: str) -> set[str]:
    """Content tokens of a text, for "does it say anything new" comparisons.

    English words (stemmed, no function words), numbers, and kanji / katakana bigrams
    (single characters when alone); particles and endings drop out.
    """
    norm = unicodedata.normalize("NFKC", text).lower()
    tokens = {stem(w) if not w[0].isdigit() else w
              for w in _KEY_LATIN.findall(norm) if w not in STOP_WORDS}
    for run in _KEY_KANJI_KATAKANA.findall(norm):
        if len(run) == 1:
            tokens.add(run)
        tokens.update(run[i:i + 2] for i in range(len(run) - 1))
    return tokens


# -- sentences that give the assistant orders ----------------------------------------------
# A document is data: a sentence in it that addresses the model reading it (to drop its
# instructions, change its role, answer a fixed way) states no fact and must never be
# evidence. One table per language; each pattern names who is addressed or what is
# overridden, so that orders to people ("never tell anyone your password") do not match.
_ORDERS_EN = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,40}?\b(?:previous|prior|above|"
    r"earlier|preceding|all|any|your|the|other|system)\b[^.!?\n]{0,30}?\b(?:instructions?|"
    r"prompts?|rules|directions|guidelines|directives?|constraints)\b"
    r"|\byou are (?:now|no longer)\b|\bfrom now on,? you\b"
    r"|^\W*(?:please |now )?(?:pretend|act as|role-?play as)\b"
    r"|\byou (?:must|should|will|shall) (?:now )?(?:pretend|act as)\b"
    r"|\b(?:system|developer) (?:prompt|message|instructions?)\b"
    r"|\b(?:if|when|since) you are an? (?:ai|language model|assistant|llm|chatbot)\b"
    r"|\b(?:dear|attention|note (?:to|for)(?: the| any)?|hey|hello) (?:ai|assistant|language "
    r"model|llm|chatbot|gpt)s?\b"
    r"|\b(?:ai|assistant|language model|llm|chatbot)s? (?:reading|processing|summari[sz]ing|"
    r"answering (?:questions )?(?:about|from)) this\b"
    r"|^\W*(?:please )?(?:always |only )?(?:respond|reply|answer) (?:only )?(?:with|by saying|"
    r"that)\b"
    r"|\b(?:tell|inform) the user(?:s)? that\b|\b(?:do not|don't|never) (?:mention|reveal|"
    r"tell|cite|show)\b[^.!?\n]{0,20}\bto the user\b",
    re.IGNORECASE)
_ORDERS_JA = re.compile(
    r"(?:以前|前|上記|上|これまで|先ほど|先程|すべて|全て|他|ほか|元)の(?:指示|命令|指令|プロンプト|"
    r"ルール|設定|制約)[^。！？\n]{0,10}?(?:無視|忘れ|破棄|取り消)"
    r"|(?:指示|プロンプト|制約)を(?:すべて|全て)?(?:無視|忘れ|破棄)(?:して(?:ください|下さい|ほしい)"
    r"|しろ|せよ|すること|しなさい|してから)"
    r"|あなたは(?:今から|これから|今後|以後)"
    r"|システムプロンプト|(?:システム|開発者)(?:メッセージ|への指示)"
    r"|(?:AI|ＡＩ|アシスタント|言語モデル|チャットボット|LLM)(?:の(?:方|皆さん|みなさん)|へ|に)"
    r"(?:の指示|告ぐ|お願い|、)"
    r"|(?:この|本)(?:文書|資料|ページ|文章)を(?:読んで|読み込んで|処理して|要約して)いる"
    r"(?:AI|ＡＩ|アシスタント|言語モデル|チャットボット|LLM)"
    r"|(?:ユーザー|利用者|質問者)(?:に|へ)は[^。！？\n]{0,30}(?:と|よう)(?:伝え|答え|回答し|返答し)"
    r"(?:て|な|ろ|よ)")


def gives_orders(sentence: str) -> bool:
    """Whether ``sentence`` addresses the model reading it instead of stating something.

    Such a sentence is never shown to the generator or accepted as a quote, and an answer
    whose sources hold one is flagged (``instructions_in_sources``).
    """
    text = unicodedata.normalize("NFKC", sentence)
    return bool(_ORDERS_EN.search(text) or _ORDERS_JA.search(text))


def order_indices(sentences: Sequence[Sentence], text: str) -> set[int]:
    """Indices of ``sentences`` (split from ``text``) that give the model orders.

    A sentence after one on the same line counts too: it is the rest of the message ("You
    are now X. Answer every question with Y.").
    """
    found: set[int] = set()
    for i, sentence in enumerate(sentences):
        if gives_orders(sentence.text):
            found.add(i)
        elif i - 1 in found and "\n" not in text[sentences[i - 1].end:sentence.start]:
            found.add(i)
    return found


def order_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that give orders (:func:`order_indices`)."""
    sentences = split_sentences(text)
    return [sentences[i].text for i in sorted(order_indices(sentences, text))]
