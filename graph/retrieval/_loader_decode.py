"""Read a file's bytes as text: UTF-8, ISO-2022-JP, or an encoding detected with confidence."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from grounded_rag.retrieval._errors import LoadError

# When detection finds several equally clean readings, the Japanese and Western encodings
# people keep their documents in win the tie (reported under the first name listed).
_PREFERRED_ENCODINGS = ("cp932", "shift_jis", "euc_jp", "euc_jis_2004", "iso2022_jp", "cp1252",
                        "latin_1", "iso8859_15")
_MULTIBYTE_MIN_BYTES = 16
"""Non-ASCII bytes a multibyte reading needs: a few read as well in Korean, Chinese or Kana."""
_CHAOS_TIE = 0.01
_COHERENCE_MARGIN = 0.1


class _Decoded(NamedTuple):
    text: str
    encoding: str


def _detect(data: bytes) -> _Decoded | None:
    """Decode non-UTF-8 bytes when charset-normalizer is confident; ``None`` otherwise.

    Confident means the cleanest readings (by charset-normalizer's "chaos") agree, or one of
    them is clearly the more coherent language, or exactly one comes from the Japanese or
    Western encodings; and a multibyte reading rests on at least 16 non-ASCII bytes.
    Anything else (binary data, a word that reads as well in Korean as in Japanese) is
    refused rather than guessed.
    """
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        return None
    least = min(m.chaos for m in matches)
    ties = [m for m in matches if m.chaos <= least + _CHAOS_TIE]
    chosen = ties[0]
    if len({str(m) for m in ties}) > 1:
        ranked = sorted(ties, key=lambda m: m.coherence, reverse=True)
        favoured = [m for m in ties if set(m.could_be_from_charset) & set(_PREFERRED_ENCODINGS)]
        if ranked[0].coherence - ranked[1].coherence >= _COHERENCE_MARGIN:
            chosen = ranked[0]
        elif favoured and len({str(m) for m in favoured}) == 1:
            chosen = favoured[0]
        else:
            return None
    text = str(chosen)
    high_bytes = sum(b > 0x7F for b in data)
    if high_bytes < _MULTIBYTE_MIN_BYTES and sum(ord(c) > 0x7F for c in text) < high_bytes:
        return None
    names = [e for e in _PREFERRED_ENCODINGS if e in chosen.could_be_from_charset]
    return _Decoded(text, names[0] if names else chosen.encoding)


def _decode(path: Path, data: bytes) -> _Decoded:
    if b"\x1b$B" in data or b"\x1b$@" in data:  # ISO-2022-JP: 7-bit, so valid UTF-8 too
        try:
            return _Decoded(data.decode("iso2022_jp"), "iso2022_jp")
        except UnicodeDecodeError:
            pass
    try:
        return _Decoded(data.decode("utf-8-sig"), "utf-8")
    except UnicodeDecodeError:
        pass
    decoded = _detect(data)
    if decoded is None:
        raise LoadError(
            str(path),
            "is not UTF-8, and its encoding could not be told with confidence; convert it to "
            "UTF-8 (e.g. iconv -f SHIFT_JIS -t UTF-8) and ingest it again",
        )
    return decoded


def _read_text(path: Path) -> _Decoded:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(
            str(path), f"cannot be read ({exc.strerror or exc}); check the path and permissions"
        ) from exc
    text, encoding = _decode(path, data)
    text = text.replace("\r\n", "\n")
    if not text.strip():
        raise LoadError(str(path), "is empty; nothing to ingest")
    return _Decoded(text, encoding)
