"""A value taken from the wrong case of a sentence that lists one value per case.

Policies and price lists give one value per case in a single sentence: 「1泊あたり東京都内は
15,000円、その他の地域は12,000円を上限とする」. Every value of such a sentence is "in the
evidence", so the value cues find no mismatch when an answer says "In Tokyo the cap is
12,000 yen". This check reads the sentence as clauses, each holding one value and the cases
(qualifiers) it names, and flags a claim that names the case of one clause but states the
value of another.

Only a small vocabulary of cases counts (places, other / elsewhere, domestic / overseas,
weekday / weekend, adult / child, member / non-member..., and the year that labels a value
of a yearly series: 「2006年19.3万人、2007年23.5万人」 read as "2007年には19.3万人"), matched in
English and Japanese alike, so that an English claim is compared with a Japanese sentence
too. The check is built to miss rather than to fire falsely: a clause that opens the
sentence without a value ("国内出張の宿泊費は、") speaks for every case; a claim clause that
names the value's own case is never flagged; and the value's clause must name a case of its
own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from grounded_rag.verification._cue_values import glossed
from grounded_rag.verification.values import (
    Quantity,
    extract_dates,
    extract_quantities,
    prepare,
    same_value,
)
from grounded_rag.verification.xlang import en_pattern

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
