"""Language detection and sentence/clause splitting for Japanese and English."""

from __future__ import annotations

import re
from typing import Literal

from grounded_rag.verification.evidence import STOP_WORDS
from grounded_rag.verification.evidence import split_sentences as split_with_offsets

_JA_CHARS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")
_HIRAGANA = re.compile(r"[\u3040-\u309f]")
# "[2]", "[1, 3]" and the generator's source handles "[S2]", "【S1, S3】".
_CITATION_MARK = re.compile(r"\s*[\[【][Ss]?\d+(?:[,、\s]*[Ss]?\d+)*[\]】]")


def detect_language(text: str) -> Literal["ja", "en"]:
    """Return ``ja`` when the text is mostly Japanese script, else ``en``.

    Hiragana (particles, inflections) marks Japanese at once; katakana alone does not, so an
    English question quoting a code or a name written in katakana ("What, like 13-ユ-30**45,
    is given to licensed operators?") stays English unless Japanese script is 30% of it.
    """
    if not text:
        return "en"
    if _HIRAGANA.search(text):
        return "ja"
    letters = sum(ch.isalpha() for ch in text) or 1
    return "ja" if len(_JA_CHARS.findall(text)) / letters > 0.3 else "en"


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """Split text into sentences (Japanese on 。！？, English on . ! ?, and newlines).

    One splitter serves the whole package: this returns the texts of
    ``grounded_rag.verification.evidence.split_sentences`` (which also keeps offsets and
    knows English abbreviations). ``language`` is accepted for callers that know it; the
    splitter handles mixed text either way.
    """
    return [s.text for s in split_with_offsets(text)]


def strip_markers(text: str) -> str:
    """Remove ``[n]`` citation markers and ``[Sn]`` source handles from text."""
    return _CITATION_MARK.sub("", text).strip()


# Letters of scripts other than Latin and Japanese, by the language a question in them is in.
_SCRIPTS = (
    ("Korean", re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")),
    ("Russian or another Cyrillic-script language", re.compile(r"[\u0400-\u04ff]")),
    ("Greek", re.compile(r"[\u0370-\u03ff]")),
    ("Arabic", re.compile(r"[\u0600-\u06ff\u0750-\u077f]")),
    ("Hebrew", re.compile(r"[\u0590-\u05ff]")),
    ("Hindi or another Devanagari-script language", re.compile(r"[\u0900-\u097f]")),
    ("Thai", re.compile(r"[\u0e00-\u0e7f]")),
)
# Function words of other Latin-script languages that are no English word (so "die", "was",
# "do", "no", "come", "son", "la", "de" are left out: English has them, or names do).
_FUNCTION_WORDS = {
    "French": frozenset("le les des du est une quelle quel quels quelles combien pourquoi "
                        "comment où sont dans avec pour qui que qu c'est cette ces au aux "
                        "et ne pas il elle nous vous leur quand".split()),
    "German": frozenset("der das ist und nicht ein eine einen einem wer warum wann wo welche "
                        "welcher welches wie sind mit für auf den dem im zum zur hat wird "
                        "viel viele".split()),
    "Spanish": frozenset("el los las es qué cuál cuáles cuándo cuánto cuánta cuántos dónde "
                         "cómo por para una del son está están se su sus y lo al quién".split()),
    "Portuguese": frozenset("os é qual quais quando quanto quanta onde não uma são em da dos "
                            "das na ao pelo pela quem porque como".split()),
    "Italian": frozenset("il gli è qual quale quali quando quanto dove perché sono della "
                         "delle dei degli nel nella che chi una ha".split()),
}
_SHARED_WORDS = frozenset("a i an as in no do on so was will die me".split())
"""English function words that other languages write too (French "a", German "in", "was")."""
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»|'[^']*'")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def third_language(text: str) -> str | None:
    """The language of a question that is neither Japanese nor English, when it is clear.

    A script of its own (Hangul, Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai) for most
    of its letters; or, in Latin script, at least two function words of one other language
    (French, German, Spanish, Portuguese, Italian) outside quotes and no English one
    ("Quelle est la durée du contrat ?"). An English question that names a foreign title
    ("Who wrote El amor en los tiempos del cólera?") has English function words and stays
    English. Chinese is not told apart from Japanese kanji: None.
    """
    if detect_language(text) == "ja":
        return None
    letters = sum(ch.isalpha() for ch in text)
    if not letters:
        return None
    for name, script in _SCRIPTS:
        if len(script.findall(text)) / letters > 0.5:
            return name
    words = [w.lower() for w in _WORD.findall(_QUOTED.sub(" ", text))]
    english = sum(1 for w in words if w in STOP_WORDS and w not in _SHARED_WORDS)
    best, count = None, 0
    for name, vocabulary in _FUNCTION_WORDS.items():
        found = sum(1 for w in words if w in vocabulary)
        if found > count:
            best, count = name, found
    return best if count >= 2 and not english else None
