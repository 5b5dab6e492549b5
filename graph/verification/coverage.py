"""Coverage and binding: what a claim names and states must be in the sentence it cites.

- Coverage and binding: what a claim names and states must be in the sentence it cites.
- What the evidence lacks: the claim's names and content words it does not contain.
- A value taken from the wrong case of a sentence that lists one value per case.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grounded_rag.types import Citation, Evidence
from grounded_rag.verification.evidence import (
    STOP_WORDS,
    content_tokens,
    is_japanese,
    key_tokens,
    normalize,
    overlap,
    split_sentences,
    stem,
)
from grounded_rag.verification.subjects import en_pattern
from grounded_rag.verification.values import (
    Quantity,
    extract_dates,
    extract_quantities,
    factor_of,
    glossed,
    number_in,
    prepare,
    same_value,
)

# ------------------------------------------------------------------------------------------
# Coverage and binding: what a claim names and states must be in the sentence it cites.
#
# A judge reads the whole cited section, where one line names the claim's thing and the next
# gives another thing's value. "E3 means the temperature sensor is faulty", citing the line
# ``E4: the temperature sensor is faulty``, reads as supported (support 0.99) although the
# sentence it cites is about E4; 「雑誌は1人10冊まで借りられる」 citing 「図書は1人10冊まで…」 is
# about books, not magazines. Every such error has one shape: something the claim is *about*
# is not in the sentence it cites.
#
# So before any judge, a claim's **anchors** are looked up in its **cited text**:
#
# - cited text: the sentences its quotes lie in (a quote widened to whole sentences of the
#   chunk), plus the chunk's heading (document title and section), which names what the
#   sentences below it speak of;
# - anchors, each a kind of thing that makes a statement about one case rather than another:
#   identifiers (a token of letters and digits: ``E3``, ``LX-3``), names (capitalised words
#   inside an English sentence, Latin-script words in a Japanese one), values (numbers with
#   units, dates: the typed readings of :mod:`grounded_rag.verification.values`, so 45万円 is
#   450,000 yen), and in Japanese the topic the claim opens with (the phrase before its first
#   は / が: 「雑誌は」, 「燃えないごみは」), read by its first part (雑誌 of 雑誌の貸出期間).
#
# An anchor the cited text does not hold leaves the claim ``neutral`` before any judge, and
# the finding names it, so the revision knows what to fix. A value the cited sentence gives
# otherwise (10 hours for 24 hours) is left to the value cues, which call it contradicted.
# What the question itself holds is the premise, not what the claim adds, so values the
# question gives are not required.
# Across languages only identifiers and values are looked up (a romaji name or an English
# word is not written in a Japanese sentence); a topic is looked up only in a Japanese
# sentence. A claim without located quotes is left to the citation checks.

_REASON = {
    "en": "The cited sentence does not name: {anchors}.",
    "ja": "引用した文に次の語がありません：{anchors}。",
}

_IDENTIFIER = re.compile(r"(?<![\w-])(?=[\w-]*[A-Za-z])(?=[\w-]*\d)[A-Za-z0-9][A-Za-z0-9-]*"
                         r"(?![\w-])", re.ASCII)
# A number glued to its unit ("10GB", "3h", "2nd") is a value, not an identifier.
_VALUE_TOKEN = re.compile(r"^\d+(?:[.,]\d+)?(?:[a-z]{1,3}|st|nd|rd|th)$", re.IGNORECASE)
_CAPITALISED = re.compile(r"(?<![\w'’-])[A-Z][a-zA-Z]+(?:[-'][A-Za-z]+)*(?![\w-])")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u30a0-\u30ff\u30fc]+")
_TOPIC = re.compile(r"^(.{1,30}?)(?:は|が)")
_TOPIC_SPLIT = re.compile(r"[のやと、,・]|および|及び|または|又は")
_DEMONSTRATIVE = re.compile(r"^(?:この|その|あの|本|当|同|各)")
_MARKER = re.compile(r"\[\d+\]")
_HIRAGANA = re.compile(r"[\u3040-\u309f]")

NAME_STOP = frozenset({
    "i", "a", "an", "the", "it", "its", "this", "that", "these", "those", "yes", "no", "if",
    "in", "on", "at", "for", "with", "when", "while", "each", "every", "all", "and", "or",
    "not", "he", "she", "they", "we", "you", "there", "however", "also", "both", "after",
    "before", "during", "january", "february", "march", "april", "may", "june", "july",
    "august", "september", "october", "november", "december", "monday", "tuesday",
    "wednesday", "thursday", "friday", "saturday", "sunday",
})
"""Capitalised words that name no case: function words (a statement's first word, the word
after a colon) and calendar words, which the value readings compare instead."""


def cited_text(citations: Sequence[Citation], evidence: Mapping[str, Evidence]) -> tuple[str, str]:
    """The sentences the citations' quotes lie in, and the cited chunks' headings."""
    sentences: list[str] = []
    headings: list[str] = []
    for citation in citations:
        chunk = evidence.get(citation.get("source_id", ""))
        quote = (citation.get("quote") or "").strip()
        if chunk is None or not quote:
            continue
        if chunk.get("title") and chunk["title"] not in headings:
            headings.append(chunk["title"])
        if chunk.get("section") and chunk["section"] not in headings:
            headings.append(chunk["section"])
        start, end = citation.get("start", -1), citation.get("end", -1)
        if start < 0 or end <= start:
            continue  # a quote not found in its chunk: the citation checks report it
        hits = [s.text for s in split_sentences(chunk["text"]) if s.start < end and start < s.end]
        if hits and all(h.lstrip().startswith("#") for h in hits):
            hits = [chunk["text"]]  # a heading line cites the section under it
        for text in hits or [quote]:
            if text not in sentences:
                sentences.append(text)
    return " ".join(sentences), " / ".join(headings)


def claim_uncovered(claim: Mapping[str, Any], evidence: Mapping[str, Evidence], *,
                    question: str = "") -> tuple[list[str], Citation | None]:
    """The anchors of ``claim`` its cited sentences lack, or the citation binding them.

    A quote points at a sentence, and the pointer can be off: a heading line, the sentence
    beside the one that holds the value, or another passage's line with the same figure (a
    model that cites only a chunk gets its closest sentence). When one sentence of the
    retrieved evidence holds every anchor and matches the claim's words at least as well as
    the cited ones, the claim is re-cited to it (``([], citation)``) and judged against it;
    a claim that is only a value is matched by the question's words instead. The
    neighbouring error-code line never qualifies: it matches the claim's words worse.
    ``([], None)``: covered as cited.
    """
    citations = claim.get("citations") or []
    text = str(claim.get("text", ""))
    sentences, heading = cited_text(citations, evidence)
    missing = uncovered(text, sentences, heading, question=question)
    if not missing:
        return [], None
    words = content_tokens(text)
    if not any(len(w) > 1 and not w[0].isdigit() for w in words):
        # A bare value ("4", 「2027年3月31日」) has no words of its own to find its sentence
        # by: the question's words stand in for them.
        words |= content_tokens(question)
    best: tuple[float, Citation] | None = None
    floor = overlap(words, sentences) if sentences.strip() else 0.0
    for chunk in evidence.values():
        own = " / ".join(h for h in (chunk.get("title", ""), chunk.get("section", "")) if h)
        for s in split_sentences(chunk["text"]):
            score = overlap(words, s.text)
            if s.text in sentences or score < floor or (best and score <= best[0]):
                continue
            if not uncovered(text, s.text, own, question=question):
                best = (score, Citation(source_id=chunk["source_id"], quote=s.text,
                                        start=s.start, end=s.end, match=1.0))
    if best is not None and best[0] > 0:
        return [], best[1]
    return missing, None


def uncovered(claim: str, sentences: str, heading: str, *, question: str = "") -> list[str]:
    """The anchors of ``claim`` its cited ``sentences`` and their ``heading`` lack.

    Empty when there are no cited sentences (the citation checks judge those).
    """
    if not sentences.strip():
        return []
    claim = _MARKER.sub("", unicodedata.normalize("NFKC", claim)).strip()
    sentences = unicodedata.normalize("NFKC", sentences)
    heading = unicodedata.normalize("NFKC", heading)
    cited = f"{sentences} {heading}"
    # Written in Japanese means hiragana (particles, endings): an English claim may spell a
    # Japanese name in katakana.
    claim_ja = bool(_HIRAGANA.search(claim))
    same_language = claim_ja == is_japanese(sentences)
    missing: list[str] = []
    for token in identifiers(claim):
        if _squash(token) not in _squash(cited) and token not in missing:
            missing.append(token)
    if same_language or claim_ja:
        # An English word in a Japanese claim (a product or plan name) is written so in the
        # source too; a capitalised English word is a name only in an English source.
        cited_words = {_word_key(w) for w in _LATIN_WORD.findall(cited)}
        for name in names(claim, japanese=claim_ja):
            if _word_key(name) not in cited_words and name not in missing:
                missing.append(name)
    # the digits of an identifier are part of its name, not a value
    bare = _IDENTIFIER.sub(" ", claim)
    missing += [v for v in _values_missing(bare, sentences, heading, question)
                if v not in missing]
    if claim_ja and is_japanese(sentences):
        part = topic(claim)
        if part and not _ja_found(part, cited):
            missing.append(part)
    return missing


def reason(missing: Sequence[str], language: str) -> str:
    """The finding's text for the anchors the cited sentence lacks."""
    lang = "ja" if language.startswith("ja") else "en"
    return _REASON[lang].format(anchors=("、" if lang == "ja" else ", ").join(missing))


def identifiers(text: str) -> list[str]:
    """Codes and model names: tokens of Latin letters and digits (``E3``, ``LX-3``)."""
    norm = unicodedata.normalize("NFKC", text)
    out = []
    for m in _IDENTIFIER.finditer(norm):
        token = m.group(0).strip("-")
        if token and not _VALUE_TOKEN.match(token) and token not in out:
            out.append(token)
    return out


def names(text: str, *, japanese: bool) -> list[str]:
    """Names a claim gives.

    Latin-script words in Japanese text; in English, capitalised words that do not open the
    sentence or follow a colon.
    """
    norm = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    if japanese:
        for m in _LATIN_WORD.finditer(norm):
            w = m.group(0)
            unit = norm[:m.start()].rstrip()[-1:].isdigit()  # 5 GB: a unit, read as a value
            if len(w) > 1 and not unit and not any(c.isdigit() for c in w) and w not in out:
                out.append(w)
        return out
    for m in _CAPITALISED.finditer(norm):
        before = norm[:m.start()].rstrip()
        if not before or before[-1] in ".:;!?\"'“(":
            continue
        word = m.group(0)
        if word.lower() not in NAME_STOP and word not in out:
            out.append(word)
    return out


def topic(claim: str) -> str:
    """The first part of what a Japanese claim is about: 雑誌 of 「雑誌の貸出期間は…」."""
    m = _TOPIC.match(claim.strip())
    if not m:
        return ""
    phrase = _DEMONSTRATIVE.sub("", m.group(1))
    for part in _TOPIC_SPLIT.split(phrase):
        part = part.strip()
        if _CJK_RUN.search(part) and len("".join(_CJK_RUN.findall(part))) >= 2:
            return part
        if part:
            return ""  # opens with a Latin word or kana only: the names check reads it
    return ""


def _ja_found(part: str, cited: str) -> bool:
    """Whether the topic part is in the cited text, whole or by half its bigrams.

    育児中 is found in 育児または介護を行う従業員.
    """
    if part in cited:
        return True
    grams = {run[i:i + 2] for run in _CJK_RUN.findall(part) for i in range(len(run) - 1)}
    grams |= {run for run in _CJK_RUN.findall(part) if len(run) == 1}
    if not grams:
        return True
    return sum(g in cited for g in grams) / len(grams) >= 0.5


def _values_missing(claim: str, sentences: str, heading: str, question: str) -> list[str]:
    xlang = is_japanese(claim) != is_japanese(sentences)
    cited = prepare(f"{sentences} {heading}", xlang=xlang)
    ev_dates, rest = extract_dates(cited)
    ev_quantities = extract_quantities(rest, xlang=xlang)
    asked = prepare(question, xlang=xlang).lower() if question.strip() else ""
    cl_dates, cl_rest = extract_dates(prepare(claim, xlang=xlang))
    missing = []
    for q in extract_quantities(cl_rest, xlang=xlang):
        if any(e.dim == q.dim and same_value(e.value, q.value) for e in ev_quantities):
            continue
        if q.dim == "number" and number_in(q.value, ev_quantities):
            continue
        if q.dim != "number" and number_in(q.value / factor_of(q), ev_quantities):
            continue  # the same number in another unit wording: the value cues compare them
        if asked and q.text.lower() in asked:
            continue
        if q.dim != "number" and any(e.dim == q.dim for e in ev_quantities):
            continue  # another value of its kind: the value cues call that a contradiction
        missing.append(q.text)
    for d in cl_dates:
        if any(e.compatible(d) and e.shares_field(d) for e in ev_dates):
            continue
        if any(e.shares_field(d) for e in ev_dates):
            continue  # another date: the value cues call that a contradiction
        if asked and d.text.lower() in asked:
            continue
        missing.append(d.text)
    return missing


def _squash(text: str) -> str:
    return re.sub(r"[\s-]", "", text).lower()


def _word_key(word: str) -> str:
    return stem(word.lower()).rstrip("e")[:6]


_ASKING_WORDS = frozenset(
    "what when where who whom whose which why how much many long often far old large big "
    "kind type sort way happen happens happened mean means meant tell me about describe "
    "explain list name give show say says said know".split())
"""English words that say how a question asks, not what it is about."""
_ASKING_JA = re.compile(r"何|なに|なん|いつ|どこ|誰|だれ|どなた|いくら|いくつ|どの|どう|なぜ|どれ")


def focus_uncited(question: str, statements: Sequence[Mapping[str, object]],
                  evidence: Sequence[Evidence]) -> list[str]:
    """The question's focus words when no sentence the answer cites holds any of them.

    "How often should the Brio K2 be descaled?" answered with the warranty sentence of the
    same manual: the product's name is in every section, the question's own word
    (*descaled*) in none of what was cited. Focus words are the question's content words
    (:func:`key_tokens`: English stems, kanji / katakana bigrams) less the words that ask
    (how, often, 何, いつ …) and the words of the cited documents' titles, which every
    section shares. One of them in a cited sentence or its section heading is enough (a
    paraphrase keeps one word of the question more often than not); none means the answer
    speaks of something else. Read in one language only: an English question over Japanese
    sentences shares no words with them. For questions that ask for a thing (what, when,
    何, いつ …); a yes/no question's predicate is :mod:`asked`'s.
    """
    ja = is_japanese(question)
    by_id = {e["source_id"]: e for e in evidence}
    sentences: list[str] = []
    sections: list[str] = []
    titles: list[str] = []
    for statement in statements:
        cites = statement.get("citations") or []
        assert isinstance(cites, list)
        text, _ = cited_text(cites, by_id)
        if not text.strip():
            continue
        if is_japanese(text) != ja:
            return []
        sentences.append(text)
        for c in cites:
            chunk = by_id.get(c.get("source_id", ""))
            if chunk is None:
                continue
            title, _, heading = chunk.get("title", "").partition(" — ")
            titles.append(title)
            sections += [heading, chunk.get("section", "")]
    if not sentences:
        return []
    asked = _MARKER.sub("", _ASKING_JA.sub(" ", question) if ja else question)
    title_keys = {_focus_key(t) for t in key_tokens(" ".join(titles))}
    focus = [t for t in sorted(key_tokens(asked))
             if not t[0].isdigit() and (ja or len(t) > 1)  # "k" of "K2" names nothing alone
             and t not in _ASKING_WORDS and _focus_key(t) not in title_keys]
    cited = " ".join(sentences + sections)
    # E3 in "what does E3 mean": the most specific focus. A code the cited documents'
    # titles hold (the product's model number) is in every section and picks out none.
    in_titles = _squash(" ".join(titles))
    codes = [c for c in identifiers(question) if _squash(c) not in in_titles]
    if codes and any(_squash(c) in _squash(cited) for c in codes):
        return []
    # An identifier the question names that nothing cited holds ("E6" of a manual listing
    # E1-E5): the answer is about another thing, whatever other word of the question its
    # section shares.
    if codes:
        return codes
    if not focus:
        return []
    if ja:  # 塔 is written in 時計塔, whose bigrams do not hold it alone
        compact = unicodedata.normalize("NFKC", cited).lower()
        return [] if any(t in compact for t in focus) else focus
    cited_keys = {_focus_key(t) for t in key_tokens(cited)}
    return [] if any(_focus_key(t) in cited_keys for t in focus) else focus


def _focus_key(token: str) -> str:
    """A Latin stem's first five letters, a final e aside.

    descal / descale, monthly / month, cod / code.
    """
    return token.rstrip("e")[:5] if token.isascii() else token


# ------------------------------------------------------------------------------------------
# What the evidence lacks: the claim's names and content words it does not contain.

_ENTITY_EN = re.compile(r"\b(?:[A-Z][a-zA-Z0-9]*(?:[-'][A-Za-z0-9]+)*|[A-Za-z]+\d+[A-Za-z0-9]*)\b")
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]{3,}")
_OPENERS = frozenset("\"'\u201c\u2018(")
_COMMON_CAPS = frozenset(
    "I The A An This That These Those It In On At For And But Or If When "
    "He She They We You My Our Their His Her Its Yes No "
    "What Which Who Whom Whose Where Why How Is Are Was Were Do Does Did Can Could".split()
)


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


def _forms(word: str) -> set[str]:
    """The word, its stem, and the stem without a doubled final consonant (starred -> star)."""
    base = stem(word)
    out = {word, base}
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiou":
        out.add(base[:-1])
    return out


# ------------------------------------------------------------------------------------------
# A value taken from the wrong case of a sentence that lists one value per case.
#
# Policies and price lists give one value per case in a single sentence: 「1泊あたり東京都内は
# 15,000円、その他の地域は12,000円を上限とする」. Every value of such a sentence is "in the
# evidence", so the value cues find no mismatch when an answer says "In Tokyo the cap is
# 12,000 yen". This check reads the sentence as clauses, each holding one value and the cases
# (qualifiers) it names, and flags a claim that names the case of one clause but states the
# value of another.
#
# Only a small vocabulary of cases counts (places, other / elsewhere, domestic / overseas,
# weekday / weekend, adult / child, member / non-member..., and the year that labels a value
# of a yearly series: 「2006年19.3万人、2007年23.5万人」 read as "2007年には19.3万人"), matched in
# English and Japanese alike, so that an English claim is compared with a Japanese sentence
# too. The check is built to miss rather than to fire falsely: a clause that opens the
# sentence without a value ("国内出張の宿泊費は、") speaks for every case; a claim clause that
# names the value's own case is never flagged; and the value's clause must name a case of its
# own.

# case: (English words matched at a word start, a stem unless it ends in "$"; Japanese
# spellings as regular expressions). Non-members are matched before members and their
# words removed, so that 非会員 does not also name members.
_CASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "nonmember": (("non-member", "nonmember", "non member"), ("非会員", "一般会員以外")),
    "member": (("member",), ("会員",)),
    "other": (("other", "elsewhere", "rest of", "remaining", "all others"),
              ("その他", "それ以外", "他の地域", "ほかの地域", "上記以外")),
    "domestic": (("domestic", "within japan", "inside japan"), ("国内",)),
    "overseas": (("overseas", "abroad", "international", "foreign"), ("海外", "国外", "外国")),
    "weekday": (("weekday",), ("平日",)),
    "weekend": (("weekend", "holiday", "saturday", "sunday"), ("休日", "土日", "祝日", "土曜",
                                                               "日曜")),
    "adult": (("adult",), ("大人", "成人")),
    "child": (("child", "children$", "kid", "minor$", "minors$"), ("子供", "子ども", "小人",
                                                                  "児童", "未成年")),
    "student": (("student",), ("学生", "生徒")),
    "senior": (("senior", "elderly"), ("シニア", "高齢")),
    "individual": (("individual", "personal"), ("個人",)),
    "corporate": (("corporate", "corporation", "company", "companies$"), ("法人", "企業")),
    "executive": (("executive", "director", "officer", "manager"), ("役員", "管理職")),
    "first": (("first year$", "first-year", "initial"), ("初年度", "初回", "初期")),
    "urban": (("urban", "city center", "metropolitan"), ("都市部", "都心", "首都圏")),
    "rural": (("rural", "regional"), ("地方", "郊外")),
}
_PLACES = (
    ("tokyo", "東京"), ("osaka", "大阪"), ("kyoto", "(?<!東)京都"), ("hokkaido", "北海道"),
    ("okinawa", "沖縄"), ("nagoya", "名古屋"), ("aichi", "愛知"), ("fukuoka", "福岡"),
    ("yokohama", "横浜"), ("kanagawa", "神奈川"), ("kobe", "神戸"), ("hyogo", "兵庫"),
    ("sapporo", "札幌"), ("sendai", "仙台"), ("hiroshima", "広島"), ("chiba", "千葉"),
    ("saitama", "埼玉"), ("kawasaki", "川崎"), ("kyushu", "九州"), ("kanto", "関東"),
    ("kansai", "関西"), ("tohoku", "東北"), ("shikoku", "四国"), ("nara", "奈良"),
    ("niigata", "新潟"), ("shizuoka", "静岡"), ("okayama", "岡山"), ("kumamoto", "熊本"),
    ("kagoshima", "鹿児島"), ("nagano", "長野"), ("nagasaki", "長崎"), ("kanazawa", "金沢"),
)
for _en, _ja in _PLACES:
    _CASES[_en] = ((_en + "$",), (_ja,))


_PATTERNS = {
    case: re.compile("|".join(p for p in (en_pattern(en).pattern, "|".join(ja)) if p),
                     re.IGNORECASE)
    for case, (en, ja) in _CASES.items()
}
_ORDER = ("nonmember",) + tuple(c for c in _CASES if c != "nonmember")
"""Non-members first: their words are removed before members are looked for."""

# Clause breaks: 、 ， ; ； and a comma that is not a thousands separator; in English also
# "and", "while", "whereas" and "but".
_CLAUSE = re.compile(r"[、，;；]|,(?!\d{3})|\b(?:and|while|whereas|but)\b", re.IGNORECASE)


# A year that labels a value in a yearly series: 「2006年19.3万人、2007年23.5万人」, "in 2007".
# Not a year inside a full date (2016年7月): such a clause tells when, not which case.
_YEAR = re.compile(r"(?<![\d.,])((?:1[5-9]|20)\d\d)\s*年(?!\s*\d{1,2}\s*月|代|間|度)"
                   r"|\b(?:in|for|of|by)\s+((?:1[5-9]|20)\d\d)\b(?![\d,.]|\s*[-/])",
                   re.IGNORECASE)
_YEAR_CASE = "year "


def cases_in(text: str) -> frozenset[str]:
    """The cases (``_CASES``, and a year labelling a value: ``year 2007``) ``text`` names."""
    found: set[str] = set()
    rest = text
    for case in _ORDER:
        if _PATTERNS[case].search(rest):
            found.add(case)
            rest = _PATTERNS[case].sub(" ", rest)
    found.update(_YEAR_CASE + (m.group(1) or m.group(2)) for m in _YEAR.finditer(text))
    return frozenset(found)


def _quantities(text: str, xlang: bool) -> list[Quantity]:
    _dates, rest = extract_dates(prepare(text, xlang=xlang))
    return [q for q in extract_quantities(rest, xlang=xlang) if q.dim != "number"]


@dataclass(frozen=True)
class _Clause:
    text: str
    values: tuple[Quantity, ...]
    cases: frozenset[str]


def _clauses(sentence: str, xlang: bool) -> list[_Clause]:
    """The sentence's clauses with values; a valueless clause joins the next one.

    A valueless clause that opens the sentence speaks for every case and is dropped.
    """
    out: list[_Clause] = []
    pending = ""
    for part in _CLAUSE.split(sentence):
        if not part.strip():
            continue
        values = _quantities(part, xlang)
        if not values:
            pending = f"{pending} {part}" if out else ""
            continue
        text = f"{pending} {part}".strip()
        out.append(_Clause(text, tuple(values), cases_in(text)))
        pending = ""
    return out


@dataclass(frozen=True)
class Misbound:
    """A claim value that the sentence gives for another case than the claim names."""

    sentence: str
    claim_value: str
    claim_cases: tuple[str, ...]
    """The claim's words that name the other clause's case (as written in the claim)."""
    value_cases: tuple[str, ...]
    """The sentence's words naming the case that the value belongs to."""
    other_value: str
    """The value the sentence gives for the claim's case."""


def _spelled(case: str, text: str, *, gloss: bool = False) -> str:
    """How ``text`` writes ``case``; with ``gloss``, a Japanese spelling gets the English."""
    if case.startswith(_YEAR_CASE):
        year = case[len(_YEAR_CASE):]
        m = next((y for y in _YEAR.finditer(text) if year in (y.group(1), y.group(2))), None)
        return m.group(0).strip() if m else year
    m = _PATTERNS[case].search(text)
    spelled = m.group(0) if m else case
    return f"{spelled} ({case})" if gloss and not spelled.isascii() else spelled


def _holds(values: Sequence[Quantity], q: Quantity) -> bool:
    """Whether ``values`` give ``q``'s value (same kind, same amount)."""
    return any(v.dim == q.dim and same_value(v.value, q.value) for v in values)


def misbound_value(claim: str, sentences: Sequence[str], *, xlang: bool) -> Misbound | None:
    """The first claim value given by ``sentences`` for another case than the claim's, if any.

    ``xlang``: the claim and the sentences are in different languages (values are read in
    both notations, 45万円 = 450,000 yen).
    """
    claim_values = _quantities(claim, xlang)
    if not claim_values:
        return None
    claim_parts = [p for p in _CLAUSE.split(claim) if p.strip()]
    part_values = [_quantities(p, xlang) for p in claim_parts]
    read = [_clauses(sentence, xlang) for sentence in sentences]
    for q in claim_values:
        own = [text for text, values in zip(claim_parts, part_values, strict=True)
               if _holds(values, q)]
        named = cases_in(own[0] if len(own) == 1 and len(claim_values) > 1 else claim)
        if not named:
            continue
        for sentence, all_clauses in zip(sentences, read, strict=True):
            clauses = [c for c in all_clauses if any(v.dim == q.dim for v in c.values)]
            if len(clauses) < 2:
                continue
            holding = [c for c in clauses if _holds(c.values, q)]
            if len(holding) != 1 or not holding[0].cases or holding[0].cases & named:
                continue
            home = holding[0]
            rivals = [c for c in clauses if c is not home and (c.cases - home.cases) & named
                      and not _holds(c.values, q)]
            if not rivals:
                continue
            rival = rivals[0]
            shared = sorted((rival.cases - home.cases) & named)
            other = next(v for v in rival.values if v.dim == q.dim)
            gloss = claim.isascii()  # an English claim reads the Japanese sentence's words
            return Misbound(
                sentence=sentence,
                claim_value=q.text,
                claim_cases=tuple(_spelled(c, claim) for c in shared),
                value_cases=tuple(_spelled(c, home.text, gloss=gloss) for c in sorted(home.cases)),
                other_value=glossed(other, "en") if gloss else other.text,
            )
    return None
