"""Whose statement it is: the claim's subject, its readings and its context across languages.

- Whose statement is it: an English claim that says of one thing what the evidence says of another.
- Japanese names written in Latin letters, compared with how a Japanese text reads.
- Cross-language context for the value cues: does a sentence speak of the claim's thing?
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from grounded_rag.retrieval.text_analysis import sudachi_tokenizer
from grounded_rag.verification.evidence import (
    STOP_WORDS,
    content_tokens,
    is_japanese,
    key_tokens,
    normalize,
)

# ------------------------------------------------------------------------------------------
# Whose statement is it: an English claim that says of one thing what the evidence says of another.
#
# "Capitol Technology University is a private Ivy League research university in Upper
# Manhattan" copies what the evidence says of *Columbia University*, and names a university the
# evidence describes elsewhere. Word overlap is high, both names occur in the evidence, and
# the 1.5B judge called such claims supported (0.94-0.96 on small-corpus questions that
# compare two things). This check reports a claim whose sentence
#
# - opens with a name N (capitalised words) and goes on with a predicate R that one evidence
#   sentence S holds almost whole (at least ``PREDICATE_COVER`` of R's content words);
# - where S opens with another name M and says nothing of N (no distinctive word of N in S);
# - while N is a thing the evidence talks about elsewhere (N in another sentence T), and no
#   sentence that names N also names M (so M is not another name of N: "Lady Gaga" in a
#   sentence that says she is Stefani Germanotta).
#
# A pronoun or a description ("He", "The city") opening S is never M: who it refers to is
# left to the judge.
#
# Japanese claims get the same rule (:func:`swapped_subject_ja`) with the topic or subject
# that opens a sentence (「速水堅曹は…」「工女たちが…」) as its name: a NoMIRACL answer
# 「速水 堅曹はフランスから製糸技術を学んだ」 stitched 速水堅曹 (named in another passage) onto
# 「工女たちは…フランス人教婦たちから製糸技術を学び」, and the judge called it supported (0.49).
# There the name is a run of kanji, katakana or Latin letters (with たち / ら) before は or が;
# a pronoun-like or time word (彼, 同社, 現在, 当時…) is never one, and the predicate is compared
# by its kanji and katakana bigrams (``key_tokens``).

PREDICATE_COVER = 0.85
"""Share of the predicate's content words the evidence sentence must hold."""
MIN_PREDICATE_WORDS = 4
"""A shorter predicate ("is a singer") matches too many sentences to say whose it is."""

_TOKEN = re.compile(r"[^\s,;:()\"']+")
_JOINED = re.compile(r"(?<=[A-Za-z]{2})\.(?=[A-Z][a-z])")
"""Sentences run together without a space ("... Washington, DC.Columbia University is")."""
_CONNECTORS = frozenset({"of", "de", "del", "la", "le", "von", "van", "der", "da", "di", "&"})
_NOT_NAMES = frozenset(
    "the a an this that these those it its he she they his her their there here in on at "
    "for if when as yes no both all each some many most one two three".split()
)

_NOT_A_NAME = re.compile(
    r"^(?:\w+ly|[A-Z][a-z]{0,2}|January|February|March|April|May|June|July|August|September"
    r"|October|November|December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)$")
"""One word that opens a sentence without naming anything: an adverb, a month, "St"."""


def leading_name(sentence: str) -> tuple[str, str]:
    """``(name, rest)``: the capitalised words that open ``sentence`` and what follows.

    ``("", sentence)`` when it opens with a pronoun, an article, "Yes," / "No," or a word in
    lower case.
    """
    words = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(sentence)]
    taken: list[tuple[str, int, int]] = []
    for word, start, end in words:
        bare = word.rstrip(".!?")
        if bare[:1].isupper() and any(ch.isalpha() for ch in bare):
            taken.append((bare, start, start + len(bare)))
            if bare != word or sentence[end:].lstrip()[:1] in (",", ";", ":", "("):
                break
        elif taken and bare.lower() in _CONNECTORS:
            taken.append((bare, start, end))
        else:
            break
    while taken and taken[-1][0].lower() in _CONNECTORS:
        taken.pop()
    if not taken or taken[0][0].lower() in _NOT_NAMES:
        return "", sentence
    if len(taken) == 1 and _NOT_A_NAME.search(taken[0][0]):
        return "", sentence  # "Originally, ...", "April 12", "St. Louis"
    return sentence[taken[0][1] : taken[-1][2]], sentence[taken[-1][2] :]


_TITLES = frozenset(
    "mr mrs ms miss dr prof sir dame lady lord st saint president king queen prince "
    "princess general captain mayor senator judge".split())
"""Titles left out of a name's words ("Ms McGregor" is "Cate McGregor")."""


def _name_words(name: str) -> set[str]:
    return {w.lower().rstrip(".") for w in _TOKEN.findall(name)
            if w.lower() not in _CONNECTORS and w.lower() not in STOP_WORDS and len(w) > 1
            and w.lower().rstrip(".") not in _TITLES}


def _proper(name: str, texts: Sequence[str]) -> bool:
    """A name of several words, or one word the texts also capitalise inside a sentence.

    One capitalised word opening a sentence may be a common noun ("Grandmother had booked",
    "Statistical learning is") that a headline-style summary leaves without an article.
    """
    if len(_TOKEN.findall(name)) > 1:
        return True
    inside = re.compile(rf"[a-z0-9,;:] +{re.escape(name)}\b")
    return any(inside.search(t) for t in texts)


def _acronym(a: str, b: str) -> bool:
    """True when one name is the initials of the other ("SNHU", "Southern New Hampshire U.")."""
    for short, long in ((a, b), (b, a)):
        letters = short.replace(".", "")
        initials = "".join(w[0] for w in _TOKEN.findall(long) if w[:1].isupper())
        if len(letters) >= 2 and letters.isupper() and letters == initials:
            return True
    return False


def swapped_subject(claim: str, sentences: Sequence[str]) -> tuple[str, str, str] | None:
    """``(sentence, claim's name, sentence's name)`` when the claim swaps the subject.

    ``sentences`` are the evidence sentences (see the module docstring for the rule).
    """
    claim_n = normalize(claim).strip()
    if is_japanese(claim_n):
        return None
    name, rest = leading_name(claim_n)
    predicate = content_tokens(rest)
    if not name or len(predicate) < MIN_PREDICATE_WORDS:
        return None
    own = _name_words(name)
    if not own:
        return None
    pieces = [p for s in sentences for p in _JOINED.split(s)]
    normalized = [normalize(p) for p in pieces]
    scored = [(len(predicate & content_tokens(s)) / len(predicate), i)
              for i, s in enumerate(normalized)]
    cover, best = max(scored)
    if cover < PREDICATE_COVER:
        return None
    sentence = normalized[best]
    lowered = sentence.lower()
    other, _ = leading_name(sentence)
    theirs = _name_words(other)
    distinct = own - theirs
    if not other or not distinct or not (theirs - own) or _acronym(name, other):
        return None
    if not (_proper(name, [claim_n, *normalized]) and _proper(other, normalized)):
        return None
    if any(re.search(rf"\b{re.escape(w)}\b", lowered) for w in distinct):
        return None  # the sentence names the claim's subject too
    naming = [s.lower() for i, s in enumerate(normalized)
              if i != best and re.search(rf"\b{re.escape(name.lower())}\b", s.lower())]
    if not naming:
        return None  # the claim's subject is nothing else the evidence talks about
    if any(re.search(rf"\b{re.escape(w)}\b", t) for t in naming for w in theirs - own):
        return None  # a sentence names both: perhaps two names of one thing
    return pieces[best].strip(), name, other


_JA_TOPIC = re.compile(
    r"^[「『]?(?P<name>[\u3400-\u9fff\uf900-\ufaff\u30a0-\u30ffA-Za-z0-9・ー ]{2,30}?"
    r"(?:たち|ら)?)[」』]?(?:は|が)(?!ら)")
"""A sentence opening with a name and its topic or subject particle (not 「…では」「…には」:
those end in で / に, outside the name's characters)."""
_JA_NOT_NAMES = re.compile(
    r"^(?:彼|彼女|彼ら|同|当|本|其|此|現在|当初|当時|今日|今回|以前|以後|以降|近年|最近|一方|実際|本来|"
    r"特に|後に|戦後|戦前|翌年|同年|前年|晩年|その後|これ|それ|あれ|[0-9一二三四五六七八九十]+年)")
"""Openers that refer back or set a time: who they mean is left to the judge."""
MIN_JA_PREDICATE = 4
"""Least kanji / katakana bigrams a Japanese predicate must hold to say whose it is."""


def _ja_topic(sentence: str) -> tuple[str, str]:
    """``(name, rest)`` of a Japanese sentence that opens with ``NAME は / が``; else ("", "")."""
    m = _JA_TOPIC.match(sentence)
    if m is None:
        return "", ""
    name = m.group("name").strip()
    if _JA_NOT_NAMES.match(name) or not key_tokens(name):
        return "", ""
    return name, sentence[m.end():]


def _same_head(a: str, b: str) -> bool:
    """True when two Japanese noun phrases end in the same character (their head noun)."""
    a, b = (re.sub(r"(?:たち|ら)$", "", x.replace(" ", "")) for x in (a, b))
    return bool(a and b) and (a[-1] == b[-1] or a in b or b in a)


def swapped_subject_ja(claim: str, sentences: Sequence[str]) -> tuple[str, str, str] | None:
    """:func:`swapped_subject` for a Japanese claim (see the module docstring)."""
    claim_n = normalize(claim).strip()
    name, rest = _ja_topic(claim_n)
    predicate = key_tokens(rest)
    if not name or len(predicate) < MIN_JA_PREDICATE:
        return None
    own = key_tokens(name)
    normalized = [normalize(s).strip() for s in sentences]
    tokens = [key_tokens(s) for s in normalized]
    cover, best = max((len(predicate & t) / len(predicate), i) for i, t in enumerate(tokens))
    if cover < PREDICATE_COVER:
        return None
    sentence = normalized[best]
    other, _ = _ja_topic(sentence)
    theirs = key_tokens(other)
    if not other or not (own - theirs) or not (theirs - own):
        return None
    if _same_head(name, other):
        return None  # 「党は」 for 日本共産党, 「製糸場は」 for 富岡製糸場: a description of it
    if own & tokens[best]:
        return None  # the sentence names the claim's subject too (or part of its name)
    naming = [t for i, t in enumerate(tokens) if i != best and own <= t]
    if not naming:
        return None  # the claim's subject is nothing else the evidence talks about
    if any(theirs & t for t in naming):
        return None  # a sentence names both: perhaps two names of one thing
    return sentences[best].strip(), name, other


_WH_KANJI = re.compile(r"[何誰]")
MIN_TOPIC_CHARS = 4
"""A shorter topic (母親, 人間, 出身地) is a common noun that sources write other ways."""


def question_topic(question: str) -> str:
    """The name a Japanese question is about (「速水 堅曹は…」), or "" (see :func:`_ja_topic`)."""
    text = normalize(question).strip()
    if not is_japanese(text):
        return ""
    name, _ = _ja_topic(text)
    if _WH_KANJI.search(name) or len(name.replace(" ", "")) < MIN_TOPIC_CHARS:
        return ""
    return name


def topic_uncited(question: str, statements: Sequence[Any], evidence: Sequence[Any]) -> str:
    """The question's topic when nothing the answer cites names it; else "".

    "日本野球連盟はいつ設立された？" answered "1947年" from a passage on another league, or
    "速水 堅曹はどこで製糸技術を学んだ？" answered with a sentence about the mill's workers from
    a passage that never names him: the answer speaks of something else. Named means written
    as is (spaces and middle dots aside) in a cited passage (title and text) or quote:
    「メモリー半導体」 does not name 「半導体メモリー」.
    Only Japanese passages are read: an English source spells the name its own way.
    """
    topic = question_topic(question)
    if not topic or not statements:
        return ""
    by_id = {str(e.get("source_id", "")): e for e in evidence}
    texts: list[str] = []
    for statement in statements:
        for c in statement.get("citations", []):
            texts.append(c.get("quote", ""))
            e = by_id.get(str(c.get("source_id", "")))
            if e is not None:
                texts.append(f"{e.get('title', '')} {e.get('text', '')}")
    passages = [t for t in texts if t.strip()]
    if not passages or not all(is_japanese(t) for t in passages):
        return ""
    own = _compact(topic)
    return "" if any(own in _compact(t) for t in passages) else topic


def _compact(text: str) -> str:
    """NFKC, lower case, without spaces and middle dots: 「速水 堅曹」 is 「速水堅曹」."""
    return re.sub(r"[\s・･]", "", normalize(text).lower())


# ------------------------------------------------------------------------------------------
# Japanese names written in Latin letters, compared with how a Japanese text reads.
#
# An English claim cited to a Japanese sentence spells the sentence's names in romaji
# ("Shiojiri" for 塩尻, "Kadokawa" for 門川). The value cues compare numbers and dates across
# languages, but a name the claim adds ("Masao Takasago was the mayor of Kyoto") could not be
# compared with 「長野県塩尻市で初の党員市長（高砂政郎）が誕生した」 at all, and the small judge
# called that claim supported. Sudachi gives each word of the sentence its reading (キョウト,
# シオジリ); both sides are brought to one loose spelling (Hepburn or Kunrei, long vowels
# written or not, voiced or not: rendaku turns 門川 into カドガワ where the name is Kadokawa)
# and the claim's name must occur in the sentence's reading.
#
# Only words that parse wholly as romaji syllables are names this can judge; "Prefecture",
# "Paris" or "COVID" are not.

_SYLLABLES = re.compile(
    # Hepburn syllables only (no "di", "ti", "si", "hu", "ye", "v"): English words that happen
    # to alternate consonants and vowels ("Radio", "Suave", "Hungarian") do not parse.
    r"^(?:[aiueo]|(?:[kgnmrbp]|sh|ch|j)[aiueo]|h[aieo]|(?:[kgnmrbph]y|sh|ch|j)[auo]"
    r"|[sz][aueo]|[td][aeo]|tsu|fu|w[ao]|y[auo]|n(?![aiueoy])|m(?=[bp])"
    r"|([kgsztdbhpcfj])(?=\1|ch))+$"
)
_ENGLISH = frozenset("japan japanese nippon nihon korea korean china chinese".split())
"""Names that parse as romaji but are English words for what a Japanese text writes in kanji."""
MIN_LETTERS = 5
"""Shorter words parse as romaji by chance too often ("Nine", "Sea", "Bei")."""
_KANA_ROWS = (
    ("アイウエオ", "a i u e o"),
    ("カキクケコ", "ka ki ku ke ko"),
    ("ガギグゲゴ", "ga gi gu ge go"),
    ("サシスセソ", "sa shi su se so"),
    ("ザジズゼゾ", "za ji zu ze zo"),
    ("タチツテト", "ta chi tsu te to"),
    ("ダヂヅデド", "da ji zu de do"),
    ("ナニヌネノ", "na ni nu ne no"),
    ("ハヒフヘホ", "ha hi fu he ho"),
    ("バビブベボ", "ba bi bu be bo"),
    ("パピプペポ", "pa pi pu pe po"),
    ("マミムメモ", "ma mi mu me mo"),
    ("ヤユヨ", "ya yu yo"),
    ("ラリルレロ", "ra ri ru re ro"),
    ("ワヲン", "wa o n"),
)
_KANA_ROMAJI = {kana: romaji for row, spelled in _KANA_ROWS
                for kana, romaji in zip(row, spelled.split(), strict=True)}
_KANA_ROMAJI["ヴ"] = "vu"
_SMALL_Y = {"ャ": "a", "ュ": "u", "ョ": "o"}
_SMALL_VOWEL = {"ァ": "a", "ィ": "i", "ゥ": "u", "ェ": "e", "ォ": "o"}


def is_romaji(word: str) -> bool:
    """True when ``word`` (Latin letters, ``MIN_LETTERS`` or more) parses wholly as romaji."""
    low = _plain(word)
    return (len(low) >= MIN_LETTERS and low.isalpha() and low.isascii() and low not in _ENGLISH
            and bool(_SYLLABLES.match(low)))


def kana_to_romaji(kana: str) -> str:
    """Katakana (a Sudachi reading) in Hepburn-like romaji; other characters dropped."""
    out: list[str] = []
    double = False
    for ch in unicodedata.normalize("NFKC", kana):
        if ch == "ッ":
            double = True
            continue
        if ch in _SMALL_Y and out:
            prev = out.pop()
            stem = prev[:-1]
            out.append((stem if stem in ("sh", "ch", "j") else stem + "y") + _SMALL_Y[ch])
        elif ch in _SMALL_VOWEL:  # ヴィ vi, ティ ti, ファ fa: the vowel replaces the last one
            prev = out.pop() if out else ""
            out.append(prev[:-1] + _SMALL_VOWEL[ch])
        elif ch == "ー" and out:
            out.append(out[-1][-1])
        elif ch in _KANA_ROMAJI:
            syllable = _KANA_ROMAJI[ch]
            if double and syllable[0] not in "aeiou":
                syllable = syllable[0] + syllable
            out.append(syllable)
        else:
            out.append(" ")
        double = False
    return "".join(out)


def loose(text: str) -> str:
    """One spelling for romaji variants: Hepburn/Kunrei, long vowels, voicing, double letters."""
    s = _plain(text)
    for a, b in (("tch", "tt"), ("sh", "s"), ("ch", "t"), ("ts", "t"), ("j", "z"), ("f", "h"),
                 ("g", "k"), ("z", "s"), ("d", "t"), ("b", "h"), ("p", "h"), ("v", "h"),
                 ("mh", "nh"), ("ou", "o"), ("oo", "o"), ("uu", "u"),
                 ("aa", "a"), ("ii", "i"), ("ee", "e")):
        s = s.replace(a, b)
    return re.sub(r"([a-z])\1+", r"\1", s)


def _plain(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("'", "")


@lru_cache(maxsize=512)
def reading(text: str) -> str:
    """The loose romaji reading of a Japanese text, words run together, spaces between runs."""
    parts = []
    for surface, kana, _ in _morphemes(text):
        if surface.isascii():
            parts.append(" " + _plain(surface) + " ")
        else:
            parts.append(kana_to_romaji(kana))
    return " ".join(loose(run) for run in "".join(parts).split())


_PIECE_CHARS = 4000
"""Sudachi refuses inputs over 49,149 bytes: longer texts are read in pieces of this many
characters (at most 3 bytes each), cut after a sentence end where there is one."""


@lru_cache(maxsize=512)
def _morphemes(text: str) -> tuple[tuple[str, str, bool], ...]:
    """(surface, reading, is a proper noun) of each word of ``text``, one Sudachi pass a text.

    Read in pieces that Sudachi accepts.
    """
    tokenizer = sudachi_tokenizer()
    out: list[tuple[str, str, bool]] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + _PIECE_CHARS)
        if end < len(text):
            cut = max(text.rfind(mark, start, end) for mark in "。\n.")
            end = cut + 1 if cut > start else end
        out += [(m.surface(), m.reading_form(), m.part_of_speech()[1] == "固有名詞")
                for m in tokenizer.tokenize(text[start:end])]
        start = end
    return tuple(out)


def name_in_reading(name: str, text: str) -> bool:
    """True when the romaji ``name`` occurs in ``text``'s reading (or its Latin letters)."""
    key = loose(name)
    return bool(key) and (key in reading(text).replace(" ", "") or key in loose(text))


_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


def unread_names(names: list[str], evidence: str, question: str = "") -> list[str]:
    """The romaji words of ``names`` that no word of the Japanese ``evidence`` reads as.

    ``names`` are a claim's names (``coverage._entities``); words the ``question`` also
    has are its premise, not what the answer adds, and are never missing. Words that do not
    parse as romaji are not judged.
    """
    asked = {loose(w) for w in _LATIN_WORD.findall(question)}
    out = [w for name in names for w in _LATIN_WORD.findall(name)
           if is_romaji(w) and loose(w) not in asked and not name_in_reading(w, evidence)]
    return list(dict.fromkeys(out))


def proper_names(text: str, limit: int = 6) -> list[str]:
    """The proper nouns of a Japanese ``text`` as romaji ("Shiojiri"), in order, at most ``limit``.

    Shown with a ``reading_missing`` finding, so that a revision can name what the source
    does name.
    """
    out: list[str] = []
    for surface, kana, proper in _morphemes(text):
        if not proper or surface.isascii():
            continue
        spelled = re.sub(r"ou|oo", "o", kana_to_romaji(kana).strip()).replace("uu", "u")
        if spelled and spelled.isascii() and spelled.capitalize() not in out:
            out.append(spelled.capitalize())
        if len(out) >= limit:
            break
    return out


# ------------------------------------------------------------------------------------------
# Cross-language context for the value cues: does a sentence speak of the claim's thing?
#
# The same-language cues judge "the same thing" by the words a claim and an evidence sentence
# share once numbers are removed. An English claim shares no words with a Japanese sentence,
# so across languages the words are first mapped to a small set of language-neutral concepts
# (fee, monthly, tax, contract, term, notice, start...), the things that values in answers are
# usually about. The context of a sentence is then the share of the claim's concepts that the
# sentence also names, read like the word overlap it stands in for: 0 means nothing in common,
# and a value there never contradicts the claim.

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")

# concept: (English words, each matched from a word start: a stem unless it ends in "$",
# which asks for the whole word; Japanese spellings, matched anywhere). Connectives that
# follow any value (から, まで, from, by) are left out: they would tie every sentence to
# every claim.
_CONCEPTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "fee": (("fee$", "fees$", "price", "cost", "charge", "rent", "fare$", "fares$", "tuition",
             "commission", "remuneration"),
            ("料金", "委託料", "利用料", "使用料", "手数料", "報酬", "費用", "代金", "価格", "値段",
             "賃料", "家賃", "対価", "料は", "料を", "料が", "費は", "費を")),
    "salary": (("salary", "salaries", "wage"),
               ("給与", "給料", "賃金", "月給", "年収", "年俸", "時給", "日給")),
    "monthly": (("monthly", "per month", "a month$", "each month", "every month"),
                ("月額", "毎月", "月々", "月当たり", "月あたり", "月給")),
    "annual": (("annual", "yearly", "per year", "a year$", "each year", "every year"),
               ("年額", "毎年", "年間", "年あたり", "年当たり", "年収", "年俸", "年率")),
    "daily": (("daily", "per day", "a day$", "each day", "every day"),
              ("日額", "毎日", "日あたり", "日当たり", "日当", "日給")),
    "hourly": (("hourly", "per hour", "an hour$"), ("時給", "時間あたり", "時間当たり")),
    "tax": (("tax", "vat$"), ("税",)),
    "contract": (("contract", "agreement"), ("契約",)),
    "term": (("term$", "terms$", "period", "duration", "valid"), ("期間", "有効")),
    "notice": (("notice", "notif", "in advance"), ("通知", "予告", "申し出", "申出", "前まで")),
    "termination": (("terminat", "cancel", "rescin"),
                    ("解約", "解除", "キャンセル", "取消", "取り消")),
    "renewal": (("renew", "extend", "extension"), ("更新", "延長")),
    "start": (("start", "begin", "began$", "begun$", "commenc", "effective"),
              ("開始", "発効", "効力", "始ま", "始め", "施行")),
    "end": (("end$", "ends$", "ended$", "ending$", "expir", "until$"), ("満了", "終了", "期限")),
    "payment": (("payment", "paid$", "payable", "pay$", "pays$", "settle"),
                ("支払", "払い", "振込", "振り込", "入金")),
    "deadline": (("due$", "deadline", "within$", "no later than"),
                 ("期日", "期限", "以内", "締切", "締め切")),
    "delivery": (("deliver", "ship", "lead time"),
                 ("納品", "納期", "配送", "納入", "引渡", "引き渡", "発送", "出荷")),
    "warranty": (("warrant", "guarantee"), ("保証",)),
    "penalty": (("penalt", "late$", "delay", "overdue", "liquidated"),
                ("違約", "遅延", "延滞", "罰金", "損害金")),
    "interest": (("interest",), ("利息", "利子", "金利", "利率")),
    "deposit": (("deposit", "security deposit"), ("保証金", "敷金", "預託", "手付", "預り金")),
    "discount": (("discount", "rebate"), ("割引", "値引")),
    "refund": (("refund", "reimburse"), ("返金", "返還", "払い戻", "払戻")),
    "trial": (("trial", "free$"), ("試用", "トライアル", "無料", "無償")),
    "work": (("overtime", "working hours", "labor", "labour", "shift$"),
             ("勤務", "労働", "残業", "就業")),
    "staff": (("employee", "staff", "worker", "personnel", "people$", "person$", "persons$"),
              ("従業員", "社員", "職員", "人員", "人数")),
    "user": (("user", "customer", "client", "subscriber", "member"),
             ("利用者", "ユーザー", "顧客", "加入者", "会員")),
    "battery": (("battery", "batteries"), ("バッテリー", "電池")),
    "charging": (("charging", "recharg"), ("充電",)),
    "weight": (("weigh",), ("重量", "重さ", "質量")),
    "size": (("length", "long$", "width", "wide$", "height", "tall$", "size", "dimension"),
             ("長さ", "全長", "幅", "高さ", "全高", "寸法", "サイズ")),
    "capacity": (("capacity", "storage"), ("容量", "定員")),
    "speed": (("speed", "fast$"), ("速度", "速さ")),
    "population": (("population", "resident", "inhabitant"), ("人口", "住民")),
    "age": (("age$", "aged$", "old$"), ("年齢", "歳")),
    "revenue": (("revenue", "sales$", "turnover"), ("売上", "売り上げ", "収益", "営業収入")),
    "profit": (("profit", "income", "earnings$"), ("利益", "所得", "収入")),
    "budget": (("budget",), ("予算",)),
    "capital": (("capital",), ("資本",)),
    "rate": (("rate$", "rates$", "ratio", "percent", "share$", "proportion"), ("率", "割合")),
    "increase": (("increase", "grow", "rise$", "rose$", "risen$", "raise"),
                 ("増加", "増え", "増額", "成長", "上昇", "値上")),
    "decrease": (("decrease", "decline", "drop", "fall$", "falls$", "fell$", "reduc", "cut$",
                  "cuts$"), ("減少", "減っ", "減額", "低下", "値下", "削減")),
    "founded": (("founded$", "founding$", "founder", "establish", "incorporat"),
                ("設立", "創業", "創立", "創設")),
    "born": (("born$", "birth"), ("生まれ", "誕生", "出生")),
    "died": (("died$", "death", "passed away"), ("死去", "死亡", "逝去")),
    "launch": (("launch", "release", "open", "introduc", "debut"),
               ("開業", "開設", "開館", "発売", "公開", "リリース", "開店", "導入")),
    "retention": (("retain", "retention", "keep", "kept$", "stored$", "store$", "archiv"),
                  ("保存", "保管", "保持")),
    "meeting": (("meeting", "conference"), ("会議", "会合", "打ち合わせ", "打合せ")),
    "support": (("support", "maintenance"), ("サポート", "保守", "支援")),
    "maximum": (("maximum", "max$", "up to$", "at most$", "limit", "cap$"),
                ("最大", "上限", "限度", "以下", "以内")),
    "minimum": (("minimum", "at least$", "no less"), ("最低", "以上", "下限")),
    "invoice": (("invoice", "bill$", "billing", "billed$"), ("請求",)),
    "report": (("report",), ("報告",)),
    "install": (("install", "initial", "setup$", "set-up", "onboarding"),
                ("初期", "導入", "設置", "初回")),
    "plan": (("plan$", "plans$", "tier$", "edition"), ("プラン", "コース")),
    "train": (("train$", "trains$", "railway", "station"), ("電車", "列車", "鉄道", "駅")),
    "distance": (("distance", "away$", "far$"), ("距離",)),
    "temperature": (("temperature", "degree"), ("温度", "気温")),
    "attendance": (("visitor", "attend", "spectator", "audience"),
                   ("来場", "入場", "観客", "参加")),
}


def en_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """English words matched from a word start: a stem, or the whole word when it ends in "$"."""
    parts = [re.escape(w[:-1]) + r"\b" if w.endswith("$") else re.escape(w) for w in words]
    return re.compile(r"\b(?:" + "|".join(parts) + ")")


_EN_PATTERNS = {name: en_pattern(en) for name, (en, _) in _CONCEPTS.items()}


def written_in_japanese(text: str) -> bool:
    """True for Japanese text: kana or kanji make up most of it.

    A kana or kanji character counts as three Latin letters (about one English word's worth
    per two characters), so a Japanese sentence naming "Microsoft Azure" stays Japanese and
    an English one glossing a name in katakana (Pocari Sweat (ポカリスエット)) stays English.
    """
    return 3 * len(_CJK.findall(text)) >= max(1, len(_LATIN.findall(text)))


def concepts(text: str) -> frozenset[str]:
    """The concepts ``text`` names, in either language."""
    norm = normalize(text).lower()
    found = {name for name, (_, ja) in _CONCEPTS.items() if any(w in norm for w in ja)}
    if _LATIN.search(norm):
        found |= {name for name, pattern in _EN_PATTERNS.items() if pattern.search(norm)}
    return frozenset(found)


def concept_overlap(claim: frozenset[str], sentence: frozenset[str]) -> float:
    """Share of the claim's concepts the sentence names too (0 when the claim names none)."""
    return len(claim & sentence) / len(claim) if claim else 0.0


@dataclass(frozen=True)
class CrossContext:
    """Which evidence sentences are in the other language than the claim, and their concepts."""

    crossing: tuple[bool, ...]
    """Per sentence: True when it is not in the claim's language."""
    concepts: tuple[frozenset[str], ...]
    """Per sentence: the concepts it names."""
    claim_japanese: bool
    """True when the claim is written in Japanese."""

    @property
    def foreign(self) -> bool:
        """True when no evidence sentence is in the claim's language."""
        return all(self.crossing)

    def spelled_alike(self, name: str) -> bool:
        """True for a name written the same in both languages.

        That is one with a digit (X300), or a Latin-script name in a Japanese claim (English
        evidence writes it so too).
        """
        if any(c.isdigit() for c in name):
            return True
        return self.claim_japanese and bool(_LATIN.search(name)) and not _CJK.search(name)

    def widen(self, text: str, context: Sequence[float]) -> list[float]:
        """``context`` with each crossing sentence scored by ``text``'s concepts it names."""
        mine = concepts(text)
        return [
            max(c, concept_overlap(mine, named)) if crossing else c
            for c, crossing, named in zip(context, self.crossing, self.concepts, strict=True)
        ]


def cross_context(claim: str, sentences: Sequence[str]) -> CrossContext | None:
    """The cross-language view of ``sentences`` for ``claim``; None when all share its language."""
    japanese = written_in_japanese(claim)
    crossing = tuple(written_in_japanese(s) != japanese for s in sentences)
    if not any(crossing):
        return None
    return CrossContext(crossing, tuple(concepts(s) for s in sentences), japanese)
