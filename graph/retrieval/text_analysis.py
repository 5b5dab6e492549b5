"""BM25 tokenization for mixed Japanese / English text.

Japanese runs go through Sudachi (mode A: short units match more query forms; the
normalized form folds spelling variants) with particles, auxiliaries and symbols dropped;
Latin runs are lower-cased, stop-word filtered and Snowball-stemmed (PyStemmer).
Sudachi was chosen over fugashi + unidic-lite by measurement (see
``benchmarks/retrieval_bench.py --tokenizers``): faster to index, smaller install, and
equal or better recall on JSQuAD.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

JA_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆ヵヶー]+")
"""A run of kana and kanji (with 々 〆 ヵ ヶ ー)."""
_LATIN_WORD = re.compile(r"[a-z0-9]+(?:[.'][a-z0-9]+)*")
_SUDACHI_MAX_CHARS = 4000  # Sudachi rejects inputs over ~49 KB; stay far below it.

ENGLISH_STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)
_JA_DROP_POS = frozenset({"助詞", "助動詞", "補助記号", "空白", "記号", "代名詞"})
_JA_DROP_LEMMAS = frozenset(
    {"為る", "する", "居る", "いる", "有る", "ある", "成る", "なる", "事", "こと", "物", "もの"}
)


class _Sudachi(threading.local):
    """One Sudachi tokenizer per thread (the Rust object is not shareable across threads)."""

    tokenizer: Any = None


_sudachi = _Sudachi()


def _sudachi_tokenizer() -> Any:
    if _sudachi.tokenizer is None:
        from sudachipy import Dictionary, SplitMode

        _sudachi.tokenizer = Dictionary().tokenizer(mode=SplitMode.A)
    return _sudachi.tokenizer


def sudachi_tokenizer() -> Any:
    """This thread's Sudachi tokenizer (split mode A, the core dictionary)."""
    return _sudachi_tokenizer()


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def has_japanese(text: str) -> bool:
    """True when ``text`` contains kana or kanji."""
    return JA_RUN.search(text) is not None


def is_japanese_text(text: str, share: float = 0.2) -> bool:
    """True when at least ``share`` of the non-space characters are kana or kanji.

    Tells a Japanese passage from an English one that quotes a Japanese name.
    """
    sample = "".join(text[:2000].split())
    if not sample:
        return False
    ja = sum(len(m.group()) for m in JA_RUN.finditer(sample))
    return ja >= share * len(sample)


def _japanese_tokens(run: str, out: list[str]) -> None:
    tok = _sudachi_tokenizer()
    for start in range(0, len(run), _SUDACHI_MAX_CHARS):
        for m in tok.tokenize(run[start : start + _SUDACHI_MAX_CHARS]):
            pos = m.part_of_speech()
            if pos[0] in _JA_DROP_POS or pos[1] == "非自立可能":
                continue
            form = m.normalized_form()
            if form in _JA_DROP_LEMMAS:
                continue
            out.append(form)


def _latin_tokens(text: str, out: list[str]) -> None:
    words = [w for w in _LATIN_WORD.findall(text) if w not in ENGLISH_STOPWORDS]
    if words:
        out.extend(_stemmer().stemWords(words))


def tokenize(text: str) -> list[str]:
    """Tokenize mixed-language text into BM25 terms (order kept, duplicates kept)."""
    text = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    pos = 0
    for m in JA_RUN.finditer(text):
        if m.start() > pos:
            _latin_tokens(text[pos : m.start()], out)
        _japanese_tokens(m.group(), out)
        pos = m.end()
    if pos < len(text):
        _latin_tokens(text[pos:], out)
    return out


def tokenize_many(texts: Iterable[str]) -> list[list[str]]:
    """Tokenize several texts."""
    return [tokenize(t) for t in texts]
