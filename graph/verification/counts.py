"""A date does not answer "how many": count questions and the figures that answer them.

"How many acts does the opera have?" asks for a count. A statement whose only figures are a
date ("The music video was released on March 4, 2005.", 「2005年3月に発売された。」) gives
a number, but not the one asked for: it is a sentence about something else. ``asks_count``
tells a count question (how many / how much / what number / いくつ / 何人 / 何個 / 何回 ...),
not a duration, an age or a frequency ("how many years", "how long", 何年, 何歳: a span of
dates may answer those); ``has_count`` whether a text gives a figure once its dates
(years, month-day, 2005年3月4日, "in 1999", "the 1990s") are set aside.
"""

from __future__ import annotations

import re
import unicodedata

HOW_MANY_PEOPLE = r"何人(?![もがをにでとのか])"
"""「何人」 as "how many people": not 何人が / 何人ですか / 何人も (which nationality, many)."""

_COUNT_Q = re.compile(
    r"\bhow\s+(?:many|much)\b(?!\s+(?:years?|months?|weeks?|days?|hours?|minutes?|seconds?"
    r"|decades?|centuries|century|time\b|later|earlier|longer|older))"
    r"|\bwhat\s+(?:percentage|percent|amount|number|proportion|share)\b"
    r"|いくつ(?!か)|何(?:個|回|件|台|本|枚|名|倍|割|%|％|パーセント|種類|カ国|か国|ヶ国|幕|議席)"
    r"(?![もか])|" + HOW_MANY_PEOPLE,
    re.I,
)
NUMBERING = re.compile(
    r"第\s*[0-9一二三四五六七八九十百]+\s*[条章節項号款]"
    r"|\b(?:article|section|chapter|clause|item|§)\s*\d+(?:\.\d+)*",
    re.I,
)
"""A heading's numbering (第7条, Article 3, § 2.1): a label, not a figure the text gives."""

_ORDINAL = re.compile(
    r"\b\d+\s*(?:st|nd|rd|th)\b|第\s*[0-9一二三四五六七八九十百千]+\s*(?:位|番目|代|次)?"
    r"|\d+\s*(?:位|番目)",
    re.I,
)
"""A rank or place ("ranked 7th", 第3位, 2番目): a position, not how many of something."""

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
          r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_YEAR = r"(?:1[0-9]{3}|20[0-9]{2})"
_DATES = re.compile(
    # 2005年3月4日, 2005年, 3月4日, 1990年代, 平成17年 (the era name alone is no count)
    r"(?:(?:令和|平成|昭和|大正|明治)\s*(?:\d{1,2}|元)年|\d{3,4}年(?:代)?)(?:\s*\d{1,2}月)?"
    r"(?:\s*\d{1,2}日)?|\d{1,2}月\s*\d{1,2}日|\d{1,2}月(?=[のにから、。]|$)"
    # March 4, 2005 / 4 March 2005 / March 2005 / 2005-03-04 / 3/4/2005
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s*{_YEAR})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s*{_YEAR})?\b"
    rf"|\b{_MONTH}\s*,?\s*{_YEAR}\b|\b{_YEAR}-\d{{1,2}}-\d{{1,2}}\b|\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b"
    # a bare year where a date is meant: "in 1999", "since 2005", "the 1990s", "1999-2003"
    rf"|\b(?:in|on|since|from|until|till|by|during|circa|around|before|after|year|of)\s+"
    rf"(?:the\s+)?(?:early\s+|late\s+|mid-?)?{_YEAR}s?\b|\b{_YEAR}s\b"
    rf"|\b{_YEAR}\s*[-–]\s*{_YEAR}\b|\({_YEAR}\)",
    re.I,
)
# Narrower than the off-question check's number words: "single", "double", "all" or "both"
# name other things too ("the first single released after …" is no count).
_FIGURE = re.compile(
    r"\d|[一二三四五六七八九十百千万億半両]"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
    r"|eighty|ninety|hundred|thousand|million|billion|half|once|twice|thrice|dozen|none)\b"
    r"|全額|半額|実費|全部|無料|無償|\bfree\b|\bin\s+full\b",
    re.I,
)


def asks_count(question: str) -> bool:
    """Whether ``question`` asks how many / how much of something (not a span of time)."""
    return bool(_COUNT_Q.search(unicodedata.normalize("NFKC", question)))


def without_dates(text: str) -> str:
    """``text`` with its date expressions blanked out."""
    return _DATES.sub(" ", unicodedata.normalize("NFKC", text))


def has_count(text: str) -> bool:
    """Whether ``text`` gives a figure (a digit, a number word) outside dates and numbering.

    Dates, a heading's numbering (第7条, Article 3) and ranks ("7th", 第3位) are set aside
    first: "ranked 7th in positive peace" does not say how many of anything.
    """
    return bool(_FIGURE.search(_ORDINAL.sub(" ", NUMBERING.sub(" ", without_dates(text)))))
