"""Typed values: numbers with units, money and its tax status, dates, read across languages.

- Numbers with units, calendar dates and kanji numerals, for the deterministic cues.
- Whether a price includes tax, excludes it, or has none: compared across languages.
- Value cue helpers: a listed value's own clause, and values read in the claim's language.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from grounded_rag.verification.evidence import content_tokens, normalize, overlap
from grounded_rag.verification.subjects import CrossContext

# ------------------------------------------------------------------------------------------
# Numbers with units, calendar dates and kanji numerals, for the deterministic cues.
#
# ``extract_quantities`` and ``extract_dates`` read values out of text already run through
# ``prepare`` (NFKC, kanji numerals in front of a unit as digits, 1万5000 as 15000);
# ``strip_numbers`` removes them, so that sentences can be compared on their other words.
#
# ``xlang=True`` (a claim and evidence in different languages) reads more notation: compound
# multipliers (1億2000万, 4万5千, 3百万, 兆, 450k), kanji numerals before 万/億/年/月,
# Japanese era years (令和9年 = 2027年), a bare 2年 as two years, and currency codes in front
# (JPY 450,000). Same-language text is read exactly as without it, so the cues (and the
# features a trained judge head reads from them) do not move for same-language pairs.

# (canonical unit, dimension, factor to the dimension's base unit)
_UNIT_TABLE: list[tuple[tuple[str, ...], str, str, float]] = [
    (("時間", "hours", "hour", "hrs", "hr", "h"), "hour", "time", 1.0),
    (("分間", "分", "minutes", "minute", "mins", "min"), "minute", "time", 1 / 60),
    (("秒間", "秒", "seconds", "second", "secs", "sec", "s"), "second", "time", 1 / 3600),
    (("日間", "日", "days", "day"), "day", "time", 24.0),
    (("週間", "weeks", "week"), "week", "time", 168.0),
    (
        (
            "か月間",
            "ヶ月間",
            "カ月間",
            "ヵ月間",
            "か月",
            "ヶ月",
            "カ月",
            "ヵ月",
            "箇月",
            "months",
            "month",
        ),
        "month",
        "time",
        730.0,
    ),
    (("年間", "years", "year", "yrs"), "year", "time", 8760.0),
    (("%", "％", "パーセント", "percent", "per cent"), "%", "percent", 1.0),
    (("割",), "割", "percent", 10.0),
    (("円", "yen", "jpy"), "JPY", "JPY", 1.0),
    (("ドル", "dollars", "dollar", "usd"), "USD", "USD", 1.0),
    (("ユーロ", "euros", "euro", "eur"), "EUR", "EUR", 1.0),
    (("ポンド", "pounds", "gbp"), "GBP", "GBP", 1.0),
    (("km", "キロメートル", "kilometers", "kilometres"), "km", "length", 1000.0),
    (("cm", "センチ", "centimeters", "centimetres"), "cm", "length", 0.01),
    (("mm", "ミリ", "millimeters", "millimetres"), "mm", "length", 0.001),
    (("m", "メートル", "meters", "metres"), "m", "length", 1.0),
    (("kg", "キロ", "キログラム", "kilograms", "kilogram"), "kg", "mass", 1000.0),
    (("g", "グラム", "grams", "gram"), "g", "mass", 1.0),
    (("tb",), "TB", "bytes", 1e12),
    (("gb", "ギガバイト"), "GB", "bytes", 1e9),
    (("mb", "メガバイト"), "MB", "bytes", 1e6),
    (("mah",), "mAh", "charge", 1.0),
    (("kw",), "kW", "power", 1000.0),
    (("w", "ワット", "watts", "watt"), "W", "power", 1.0),
    (("v", "ボルト", "volts", "volt"), "V", "voltage", 1.0),
    (("℃", "°c", "度"), "°C", "temperature", 1.0),
    (("歳", "才", "years old"), "歳", "age", 1.0),
    (
        ("人", "名", "people", "persons", "employees", "staff", "members", "users"),
        "people",
        "people",
        1.0,
    ),
    (("回", "times"), "times", "times", 1.0),
    (("倍",), "倍", "ratio", 1.0),
]
_CURRENCY_PREFIX = {"$": "USD", "¥": "JPY", "€": "EUR", "£": "GBP",
                    "jpy": "JPY", "usd": "USD", "us$": "USD", "eur": "EUR", "gbp": "GBP"}
_MULTIPLIER = {"万": 1e4, "億": 1e8, "千": 1e3, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_MULTIPLIER_X = {**_MULTIPLIER, "兆": 1e12, "百": 1e2, "十": 10.0, "trillion": 1e12, "k": 1e3}

_UNIT_LOOKUP = {
    alias: (canon, dim, factor) for aliases, canon, dim, factor in _UNIT_TABLE for alias in aliases
}
_UNIT_ALT = "|".join(sorted((re.escape(a) for a in _UNIT_LOOKUP), key=len, reverse=True))
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_QUANTITY = re.compile(
    rf"(?:(?P<cur>[$¥€£])\s?|(?<![A-Za-z\d.,]))(?P<a>{_NUM})(?:\s?(?:-|–|〜|～|~|to|から)\s?(?P<b>{_NUM}))?"
    rf"\s?(?P<mult>万|億|千|thousand\b|million\b|billion\b)?"
    rf"\s?(?P<unit>{_UNIT_ALT})?(?![A-Za-z])",
    re.IGNORECASE,
)
# Across languages: currency codes in front, compound multipliers (百万, 千万), and a bare
# 年 after a number of years (2年, not 2年生 / 2年目 / 2年度); a four-digit year is a date.
_QUANTITY_X = re.compile(
    rf"(?:(?P<cur>[$¥€£]|\b(?:JPY|USD|US\$|EUR|GBP))\s?|(?<![A-Za-z\d.,]))(?P<a>{_NUM})"
    rf"(?:\s?(?:-|–|〜|～|~|to|から)\s?(?P<b>{_NUM}))?"
    rf"\s?(?P<mult>[十百千]?[兆億万]|千|百|thousand\b|million\b|billion\b|trillion\b|k\b)?"
    rf"\s?(?P<unit>{_UNIT_ALT}|年(?![生目度代]))?(?![A-Za-z])",
    re.IGNORECASE,
)
_YEAR_UNIT = ("year", "time", 8760.0)
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august "
        "september october november december".split()
    )
}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE_PATTERNS = [
    # a decade: 1470年代, the 1470s, the 1970's (before the bare year, which would take 1470)
    re.compile(r"(?P<y>\d{3}0)(?P<dec>年代)|\b(?P<y2>1\d{2}0|20\d0)(?P<dec2>'?s)\b"),
    re.compile(r"(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})"),
    re.compile(r"(?:(?P<y>\d{4})年)?(?P<m>\d{1,2})月(?P<d>\d{1,2})日"),
    re.compile(r"(?P<y>\d{4})年(?:(?P<m>\d{1,2})月)?(?!間)"),
    re.compile(
        rf"\b(?P<mn>{_MONTH_ALT})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?\b",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<mn>{_MONTH_ALT})\.?(?:,?\s+(?P<y>\d{{4}}))?\b",
        re.IGNORECASE,
    ),
    re.compile(rf"\b(?P<mn>{_MONTH_ALT})\.?,?\s+(?P<y>\d{{4}})\b", re.IGNORECASE),
    re.compile(r"(?<![\d.,$¥€£])\b(?P<y>1[5-9]\d\d|20\d\d)\b(?![.,]?\d)(?!\s?(?:%|年間|years?\b))"),
    # an earlier year only where English dates it: "born in 1470", "since 1066"
    re.compile(r"(?:(?<=\bin )|(?<=\bsince )|(?<=\buntil )|(?<=\bfrom ))(?P<y>1[0-4]\d\d)\b"
               r"(?![.,]?\d)(?!\s?(?:%|years?\b|[a-z]))"),
]
_NAMED_YEAR = re.compile(r"(?<=[Tt]he )\d{4}\s+[A-Z]")
"""A bare year that opens a name: "the 2004 Siebel Open", "The 1982 Georgia Bulldogs"."""
_KANJI_DIGITS = {
    "〇": 0,
    "零": 0,
    "一": 1,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_KANJI_NUM = re.compile(
    r"(?<![\d.,])[〇零一二三四五六七八九十百千]+(?=(?:時間|日間|日|分|秒|か月|ヶ月|カ月|年間|週間|円|人|名|回|件|個|台|歳|倍|割|パーセント))"
)
_KANJI_NUM_X = re.compile(
    r"(?<![\d.,])[〇零一二三四五六七八九十百千]+(?=(?:時間|日間|日|分|秒|か月|ヶ月|カ月|年間|週間|円|人|名|回|件|個|台|歳|倍|割|パーセント|年|月|万|億|兆))"
)
_ERA = {"明治": 1868, "大正": 1912, "昭和": 1926, "平成": 1989, "令和": 2019}
_ERA_YEAR = re.compile(r"(明治|大正|昭和|平成|令和)\s?(元|\d{1,2})年")
# 1億2000万, 4万5千, 3百万, 2千万: digits each followed by a multiplier, read as one number.
_JA_COMPOUND = re.compile(
    r"(?<![\d.,])(?:\d+(?:\.\d+)?(?:[十百千][兆億万]?|[兆億万]))+(?:\d+(?![\d.,]))?"
)
_JA_GROUP = re.compile(r"(\d+(?:\.\d+)?)([十百千]?)([兆億万]?)")
_SMALL = {"十": 10, "百": 100, "千": 1000}
_BIG = {"兆": 1e12, "億": 1e8, "万": 1e4}


@dataclass(frozen=True)
class Quantity:
    """A number with its unit, normalised to the dimension's base unit."""

    value: float
    """Value in the base unit of ``dim`` (hours, percent, yen...)."""
    dim: str
    """Dimension: ``time``, ``percent``, ``JPY``..., or ``number`` when unitless."""
    text: str
    """The matched text, for messages."""
    sentence: int = -1
    """Index of the sentence it came from (evidence only)."""


@dataclass(frozen=True)
class DateValue:
    """A (partial) calendar date."""

    year: int | None
    """Year, if given."""
    month: int | None
    """Month, if given."""
    day: int | None
    """Day, if given."""
    text: str
    """The matched text."""
    sentence: int = -1
    """Index of the sentence it came from (evidence only)."""
    named: bool = False
    """A bare year that opens a name ("the 2004 Siebel Open"): it dates the thing named,
    so it agrees with the same year elsewhere but is no rival to another date."""
    decade: bool = False
    """A decade ("1470年代", "the 1470s"): ``year`` is its first year."""

    def compatible(self, other: DateValue) -> bool:
        """True when no field given by both differs (a decade holds each of its years)."""
        if (self.decade or other.decade) and self.year is not None and other.year is not None:
            return self.year // 10 == other.year // 10
        pairs = ((self.year, other.year), (self.month, other.month), (self.day, other.day))
        return all(a is None or b is None or a == b for a, b in pairs)

    def shares_field(self, other: DateValue) -> bool:
        """True when at least one field is given by both."""
        pairs = ((self.year, other.year), (self.month, other.month), (self.day, other.day))
        return any(a is not None and b is not None for a, b in pairs)


def kanji_to_digits(text: str, *, xlang: bool = False) -> str:
    """Rewrite kanji numerals in front of a unit as digits (二十四時間 -> 24時間).

    十分 alone is the word "enough" (不十分, 十分な), not ten minutes, and stays as it is.
    With ``xlang`` also in front of 年, 月, 万, 億 and 兆 (四十五万円 -> 45万円).
    """
    def digits(m: re.Match[str]) -> str:
        if m.group(0) == "十" and m.string.startswith("分", m.end()):
            return m.group(0)
        return str(_kanji_value(m.group(0)))

    return (_KANJI_NUM_X if xlang else _KANJI_NUM).sub(digits, text)


def _compound(m: re.Match[str]) -> str:
    """1億2000万 -> 120000000; a single plain group (45万, 5千) is left to the multiplier."""
    groups = _JA_GROUP.findall(m.group(0))
    if len(groups) < 2 and not (groups and groups[0][1] and groups[0][2]):
        return m.group(0)
    total, section = 0.0, 0.0
    for num, small, big in groups:
        section += float(num) * _SMALL.get(small, 1)
        if big:
            total, section = total + section * _BIG[big], 0.0
    value = total + section
    return f"{value:,.0f}" if value == int(value) else f"{value:,}"


def _era(m: re.Match[str]) -> str:
    year = 1 if m[2] == "元" else int(m[2])
    return f"{_ERA[m[1]] + year - 1}年"


def _kanji_value(s: str) -> int:
    total, current = 0, 0
    for ch in s:
        if ch in _KANJI_DIGITS:
            current = (
                current * 10 + _KANJI_DIGITS[ch] if current and not total else _KANJI_DIGITS[ch]
            )
        else:
            unit = {"十": 10, "百": 100, "千": 1000}[ch]
            total += (current or 1) * unit
            current = 0
    return total + current


def prepare(text: str, *, xlang: bool = False) -> str:
    """NFKC-normalised text with kanji numerals as digits and 1万5000 as 15000.

    With ``xlang`` also era years as Western years and compound multipliers as one number.
    """
    text = kanji_to_digits(normalize(text), xlang=xlang)
    if xlang:
        text = _JA_COMPOUND.sub(_compound, _ERA_YEAR.sub(_era, text))
    # 1万5000円 -> 15000円
    return re.sub(r"(\d+)万(\d{1,4})(?=\D|$)", lambda m: str(int(m[1]) * 10000 + int(m[2])), text)


def extract_dates(text: str, sentence: int = -1) -> tuple[list[DateValue], str]:
    """Find dates; return them and the text with the dates blanked out."""
    found: list[DateValue] = []
    chars = list(text)
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer("".join(chars)):
            g = m.groupdict()
            month = (
                int(g["m"]) if g.get("m") else _MONTHS.get((g.get("mn") or "").lower().rstrip("."))
            )
            day = int(g["d"]) if g.get("d") else None
            year = int(g.get("y") or g.get("y2") or 0) or None
            decade = bool(g.get("dec") or g.get("dec2"))
            if month is not None and not 1 <= month <= 12 or day is not None and not 1 <= day <= 31:
                continue
            named = (month is None and day is None
                     and _NAMED_YEAR.match(m.string, m.start()) is not None)
            found.append(DateValue(year, month, day, m.group(0).strip(), sentence, named,
                                   decade))
            for i in range(m.start(), m.end()):
                chars[i] = " "
    return found, "".join(chars)


_MONEY_ABBREVIATION = re.compile(rf"(?P<amount>[$¥€£]\s?(?:{_NUM}))\s?(?P<abbr>bn|mn|m|k)\b",
                                 re.IGNORECASE)
"""An amount with its magnitude abbreviated (£6m, $2.5bn, €40k): after a currency sign only,
where "m" cannot be metres."""
_ABBREVIATED = {"bn": "billion", "mn": "million", "m": "million", "k": "thousand"}


def extract_quantities(text: str, sentence: int = -1, *, xlang: bool = False) -> list[Quantity]:
    """Find numbers with units (and bare numbers) in text already stripped of dates."""
    out: list[Quantity] = []
    text = _MONEY_ABBREVIATION.sub(
        lambda m: f"{m['amount']} {_ABBREVIATED[m['abbr'].lower()]}", text)
    for m in (_QUANTITY_X if xlang else _QUANTITY).finditer(text):
        dim, factor = _unit(m)
        mult = _mult(m)
        for raw in (m["a"], m["b"]):
            if raw is None:
                continue
            value = float(raw.replace(",", "")) * mult * factor
            out.append(Quantity(value, dim, m.group(0).strip(), sentence))
    return out


def _unit(m: re.Match[str]) -> tuple[str, float]:
    """Dimension and factor to its base unit of a quantity match."""
    unit_raw = (m["unit"] or "").lower()
    if m["cur"]:
        return _CURRENCY_PREFIX[m["cur"].lower()], 1.0
    if unit_raw == "年":
        return _YEAR_UNIT[1], _YEAR_UNIT[2]
    if unit_raw:
        return _UNIT_LOOKUP[unit_raw][1], _UNIT_LOOKUP[unit_raw][2]
    return "number", 1.0


def _mult(m: re.Match[str]) -> float:
    word = (m["mult"] or "").lower()
    if len(word) == 2 and word[0] in "十百千":  # 百万 = 100 x 万
        return _MULTIPLIER_X[word[0]] * _MULTIPLIER_X[word[1]]
    return _MULTIPLIER_X.get(word, 1.0)


def same_value(a: float, b: float) -> bool:
    """True when two values are equal up to float rounding."""
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def number_in(value: float, quantities: Sequence[Quantity]) -> bool:
    """True when ``value`` is the written number of one of ``quantities``, whatever unit."""
    return any(same_value(value, e.value / factor_of(e)) for e in quantities)


def factor_of(q: Quantity) -> float:
    """The factor from the written number to the base unit (re-parsed from its text)."""
    # The cross-language pattern reads every same-language match the same way, and the
    # notation only it reads (2年, 百万, JPY 5) too.
    m = _QUANTITY_X.search(q.text)
    if not m:
        return 1.0
    return _unit(m)[1] * _mult(m)


def written_number(q: Quantity) -> str:
    """``q``'s number as plain digits in the unit it was written in (45万円 -> 450,000)."""
    m = _QUANTITY_X.search(q.text)
    value = q.value / (_unit(m)[1] if m else 1.0)
    return f"{value:,.0f}" if same_value(value, round(value)) else f"{value:,.4g}"


def unit_name(q: Quantity, language: str) -> str:
    """The name of ``q``'s written unit in ``language`` (円 -> yen), "" for a bare number."""
    m = _QUANTITY_X.search(q.text)
    if not m:
        return ""
    if m["cur"]:
        canon = _CURRENCY_PREFIX[m["cur"].lower()]
    elif (m["unit"] or "").lower() == "年":
        canon = "year"
    else:
        canon = _UNIT_LOOKUP.get((m["unit"] or "").lower(), ("",))[0]
    names = _UNIT_NAMES.get(canon)
    return (names[language == "ja"] if names else canon)


_UNIT_NAMES = {
    "hour": ("hours", "時間"), "minute": ("minutes", "分"), "second": ("seconds", "秒"),
    "day": ("days", "日"), "week": ("weeks", "週間"), "month": ("months", "か月"),
    "year": ("years", "年"), "%": ("%", "%"), "割": ("割", "割"), "JPY": ("yen", "円"),
    "USD": ("US dollars", "米ドル"), "EUR": ("euros", "ユーロ"), "GBP": ("pounds", "ポンド"),
    "people": ("people", "人"), "times": ("times", "回"), "歳": ("years old", "歳"),
}


def strip_numbers(text: str, *, xlang: bool = False) -> str:
    """``text`` without its dates and quantities."""
    prepared = prepare(text, xlang=xlang)
    _, rest = extract_dates(prepared)
    return (_QUANTITY_X if xlang else _QUANTITY).sub(" ", rest)


# ------------------------------------------------------------------------------------------
# Whether a price includes tax, excludes it, or has none: compared across languages.
#
# 「月額45万円（税別）」 is a fee *before* tax; an answer that calls it "450,000 yen (tax-free)"
# states a different fact, with the right number. The value cues compare numbers and dates;
# this compares the tax status a claim and its evidence give, in Japanese (税別 / 税抜 / 外税,
# 税込 / 内税, 非課税 / 免税) and English ("excluding tax", "plus tax", "including tax", "tax
# included", "tax-free", "tax-exempt"). Three classes: ``excluded``, ``included``,
# ``exempt``. A claim whose class is none of those the matching evidence sentence gives is
# contradicted (``cues.check_claim`` reports it as ``tax_mismatch``).

_TAX = r"(?:(?:consumption|sales)\s+)?(?:tax|taxes|vat|gst)"
_CLASSES: dict[str, re.Pattern[str]] = {
    "excluded": re.compile(
        r"税別|税抜|外税|別途(?:消費)?税|消費税(?:等)?(?:は)?別"
        rf"|\b(?:excluding|excl\.?|exclusive\s+of|before|plus|not\s+including)\s+{_TAX}\b"
        rf"|\b{_TAX}\s+(?:excluded|not\s+included|extra)\b|\bpre-tax\b|\+\s*{_TAX}\b",
        re.I),
    "included": re.compile(
        r"税込|内税|消費税(?:等)?(?:込|を含)"
        rf"|\b(?:including|incl\.?|inclusive\s+of)\s+{_TAX}\b"
        rf"|\b{_TAX}[-\s](?:included|inclusive)\b",
        re.I),
    "exempt": re.compile(
        r"非課税|免税|不課税"
        rf"|\b{_TAX}[-\s](?:free|exempt)\b|\b(?:exempt|free)\s+(?:from|of)\s+{_TAX}\b"
        r"|\bnon-?taxable\b|\buntaxed\b",
        re.I),
}


GLOSS = {"excluded": "excluding tax", "included": "including tax", "exempt": "tax-exempt"}
"""English words for each class (to gloss Japanese evidence for an English claim)."""


def tax_classes(text: str) -> dict[str, str]:
    """The tax classes ``text`` states, each with the words that state it (first found)."""
    norm = unicodedata.normalize("NFKC", text)
    out: dict[str, str] = {}
    for name, pattern in _CLASSES.items():
        m = pattern.search(norm)
        if m:
            out[name] = m.group(0)
    return out


def tax_mismatch(claim: str, sentences: Sequence[str],
                 context: Sequence[float]) -> tuple[int, str, str, str] | None:
    """Where the claim's tax status disagrees with the evidence's, else None.

    Returns (sentence index, the claim's words, the evidence's words, the evidence's class).
    The evidence sentence is the best-matching one (``context``, the same wording score the
    value cues use, > 0) among those that state a tax class; None when the claim states
    none, no such sentence matches, or the classes agree.
    """
    said = tax_classes(claim)
    if not said:
        return None
    stated = [(context[i], i, tax_classes(s)) for i, s in enumerate(sentences)]
    stated = [t for t in stated if t[2] and t[0] > 0]
    if not stated:
        return None
    _, best, classes = max(stated, key=lambda t: t[0])
    if set(said) & set(classes):
        return None
    name, words = next(iter(classes.items()))
    return best, next(iter(said.values())), words, name


# ------------------------------------------------------------------------------------------
# Value cue helpers: a listed value's own clause, and values read in the claim's language.

# Clause breaks for a listed value: 、 ， ; , (not a thousands separator), and the topic
# particle は after a noun, which sets the subject apart from what is said of it.
_CLAUSE_SPLIT = re.compile(r"[、，;；]|,(?!\d)|(?<=[\u3400-\u9fff\u30a0-\u30ff])は")


def _clause_context(
    claim: str, value: str, sentence_tokens: list[set[str]], cross: CrossContext | None = None
) -> list[float]:
    """Context of each sentence as seen from the claim clause that holds ``value``.

    ``sentence_tokens`` are the sentences' content tokens with numbers removed; ``cross``
    judges the sentences in the other language by the clause's concepts.
    """
    clause = next((c for c in _CLAUSE_SPLIT.split(claim) if value in c), claim)
    tokens = content_tokens(strip_numbers(clause)) or content_tokens(strip_numbers(claim))
    context = [overlap(tokens, sentence) for sentence in sentence_tokens]
    return cross.widen(clause, context) if cross else context


def _gloss(q: Quantity, language: str, cross: CrossContext | None, sentence: int) -> str:
    """``q``'s text, read out in the claim's language when it comes from the other one.

    45万円 becomes "45万円 (450,000 yen)", so that the reason names both values comparably.
    """
    if cross is None or not cross.crossing[sentence]:
        return q.text
    return glossed(q, language)


def glossed(q: Quantity, language: str) -> str:
    """``q``'s text with its reading in ``language`` beside it when they differ."""
    unit = unit_name(q, language)
    sep = "" if language == "ja" or unit in ("", "%") else " "
    reading = f"{written_number(q)}{sep}{unit}"
    same = re.sub(r"[\s,]", "", reading) == re.sub(r"[\s,]", "", q.text)
    return q.text if same else f"{q.text} ({reading})"


def _iso(d: DateValue) -> str:
    """A date as YYYY-MM-DD, with the parts it lacks left out."""
    parts = [f"{d.year:04d}" if d.year else "", f"{d.month:02d}" if d.month else "",
             f"{d.day:02d}" if d.day else ""]
    return "-".join(p for p in parts if p)
