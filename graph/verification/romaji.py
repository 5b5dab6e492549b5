"""Japanese names written in Latin letters, compared with how a Japanese text reads.

An English claim cited to a Japanese sentence spells the sentence's names in romaji
("Shiojiri" for 塩尻, "Kadokawa" for 門川). The value cues compare numbers and dates across
languages, but a name the claim adds ("Masao Takasago was the mayor of Kyoto") could not be
compared with 「長野県塩尻市で初の党員市長（高砂政郎）が誕生した」 at all, and the small judge
called that claim supported. Sudachi gives each word of the sentence its reading (キョウト,
シオジリ); both sides are brought to one loose spelling (Hepburn or Kunrei, long vowels
written or not, voiced or not: rendaku turns 門川 into カドガワ where the name is Kadokawa)
and the claim's name must occur in the sentence's reading.

Only words that parse wholly as romaji syllables are names this can judge; "Prefecture",
"Paris" or "COVID" are not.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from grounded_rag.retrieval.text_analysis import sudachi_tokenizer

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

    ``names`` are a claim's names (``_cue_missing._entities``); words the ``question`` also
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
