"""A "Yes" or "No" in front of a verified answer to "Are A and B from the same country?".

The local generator answers such a question with one statement per compared thing
("Lysichiton is a genus in the family Araceae[1]. Ageratum is a genus ... from the family
Asteraceae[1].") and no verdict: the two values are there, the comparison the user asked
for is not. When the question asks whether the things share a value of one kind (country
or nationality, continent, botanical or zoological family or genus, year), each compared
thing has a verified statement of its own naming it alone, and the quoted source sentence
of that statement names it alone and gives exactly one value of that kind (a double
nationality, "Filipino-American", is one value of two countries), the values are compared:
the same value answers "Yes", values with nothing in common answer "No" ("different"
questions the other way round). A thing without a value of the kind in its quote, or with
two candidate values, leaves the answer as it is.

Values come from the quoted source sentence, not from the statement, and only from the
words that name the kind (demonyms and country names, continent names, "family X" /
"-aceae", a four-digit year); nothing is inferred (a city does not give its country).
``benchmarks/same_value_check.py`` screens the rule on HaluEval-QA dev's comparison
questions with their own knowledge paragraph as the statements (no model).

"Are Janus and The Lady both published in the US?" asks a country of each thing, not
whether they share one: :func:`both_country_lead` answers "No" when a compared thing's own
quote gives it one country (or one double nationality) with nothing in common with the one
asked, and "Yes" only when the question asks the country and nothing more ("both located
in China") and each quote gives exactly it: "in the Spanish mainland" is a country and more.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from grounded_rag.types import Claim
from grounded_rag.verification import asked
from grounded_rag.verification.yes_lead import BOTH, already_led, quoted_sentences

_SAME = re.compile(
    r"\b(?:the\s+)?same\s+(country|nationality|nationalities|continent|family|genus|year)\b"
    r"|\b(?:in|from|of)\s+different\s+(countries|nationalities|continents|families|genera|years)\b"
    r"|\bdifferent\s+(nationalities|countries)\b",
    re.I)
_KIND = {"country": "country", "countries": "country", "nationality": "country",
         "nationalities": "country", "continent": "continent", "continents": "continent",
         "family": "family", "families": "family", "genus": "genus", "genera": "genus",
         "year": "year", "years": "year"}
_NEGATION = re.compile(r"\b(?:not|never|neither|nor)\b|n't", re.I)

# country -> its names and demonyms (lower case; matched as whole words)
_COUNTRIES: dict[str, tuple[str, ...]] = {
    "US": ("american", "united states", "u.s.", "u.s.a.", "usa", "united states of america"),
    "UK": ("british", "english", "scottish", "welsh", "united kingdom", "england",
           "scotland", "wales", "great britain", "britain", "u.k."),
    "Canada": ("canadian", "canada"), "Australia": ("australian", "australia"),
    "New Zealand": ("new zealand", "new zealander"), "Ireland": ("irish", "ireland"),
    "France": ("french", "france"), "Germany": ("german", "germany"),
    "Italy": ("italian", "italy"), "Spain": ("spanish", "spain"),
    "Portugal": ("portuguese", "portugal"), "Netherlands": ("dutch", "netherlands"),
    "Belgium": ("belgian", "belgium"), "Switzerland": ("swiss", "switzerland"),
    "Austria": ("austrian", "austria"), "Sweden": ("swedish", "sweden"),
    "Norway": ("norwegian", "norway"), "Denmark": ("danish", "denmark"),
    "Finland": ("finnish", "finland"), "Iceland": ("icelandic", "iceland"),
    "Poland": ("polish", "poland"), "Czech": ("czech", "czech republic", "czechia"),
    "Slovakia": ("slovak", "slovakia"), "Hungary": ("hungarian", "hungary"),
    "Romania": ("romanian", "romania"), "Bulgaria": ("bulgarian", "bulgaria"),
    "Greece": ("greek", "greece"), "Turkey": ("turkish", "turkey"),
    "Russia": ("russian", "russia"), "Ukraine": ("ukrainian", "ukraine"),
    "Serbia": ("serbian", "serbia"), "Croatia": ("croatian", "croatia"),
    "Israel": ("israeli", "israel"), "Iran": ("iranian", "iran"), "Iraq": ("iraqi", "iraq"),
    "Egypt": ("egyptian", "egypt"), "India": ("indian", "india"),
    "Pakistan": ("pakistani", "pakistan"), "China": ("chinese", "china"),
    "Japan": ("japanese", "japan"), "South Korea": ("south korean", "south korea"),
    "North Korea": ("north korean", "north korea"), "Taiwan": ("taiwanese", "taiwan"),
    "Philippines": ("filipino", "philippine", "philippines"),
    "Indonesia": ("indonesian", "indonesia"), "Thailand": ("thai", "thailand"),
    "Vietnam": ("vietnamese", "vietnam"), "Malaysia": ("malaysian", "malaysia"),
    "Mexico": ("mexican", "mexico"), "Brazil": ("brazilian", "brazil"),
    "Argentina": ("argentine", "argentinian", "argentina"), "Chile": ("chilean", "chile"),
    "Colombia": ("colombian", "colombia"), "Peru": ("peruvian", "peru"),
    "Cuba": ("cuban", "cuba"), "Honduras": ("honduran", "honduras"),
    "South Africa": ("south african", "south africa"), "Nigeria": ("nigerian", "nigeria"),
    "Kenya": ("kenyan", "kenya"), "Tanzania": ("tanzanian", "tanzania"),
    "Ethiopia": ("ethiopian", "ethiopia"),
}
_CONTINENTS: dict[str, tuple[str, ...]] = {
    "Africa": ("africa", "african"), "Europe": ("europe", "european"),
    "Asia": ("asia", "asian"), "Australia": ("australia", "oceania"),
    "North America": ("north america", "north american", "central america"),
    "South America": ("south america", "south american"),
    "Antarctica": ("antarctica",),
}
# "South American" is not American, "Korean" alone names no one of the two Koreas
_NOT_A_COUNTRY = re.compile(
    r"\b(?:south|north|latin|central|native|african|asian|mexican)[\s-]+americans?\b"
    r"|\bnew\s+(?:england|south\s+wales|mexico|york)\b|\bbritish\s+columbia\b"
    r"|\benglish[\s-]+language\b|\bin\s+english\b|\bspanish[\s-]+language\b"
    r"|\bfrench[\s-]+language\b|\bgerman[\s-]+language\b",
    re.I)


def _table_pattern(table: dict[str, tuple[str, ...]]) -> list[tuple[str, re.Pattern[str]]]:
    return [(value, re.compile(r"(?<![\w.])(?:" + "|".join(
        re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")(?![\w])", re.I))
        for value, names in table.items()]


_COUNTRY_PATTERNS = _table_pattern(_COUNTRIES)
_CONTINENT_PATTERNS = _table_pattern(_CONTINENTS)
_FAMILY = re.compile(r"\bfamily\s+([A-Z][a-z]+)|\b([A-Z][a-z]+(?:aceae|idae))\b")
_GENUS = re.compile(r"\bgenus\s+([A-Z][a-z]+)")
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")


_ABBREVIATED = ((re.compile(r"\bUS\b"), "United States"), (re.compile(r"\bUK\b"), "United Kingdom"))
""""US" and "UK" in capitals (the table reads "U.S." but not "us", a pronoun)."""


def _spelled(text: str) -> str:
    for pattern, name in _ABBREVIATED:
        text = pattern.sub(name, text)
    return text


def names_country(text: str, countries: frozenset[str]) -> bool:
    """Whether ``text`` names any of ``countries`` (by name or demonym, anywhere in it)."""
    text = _NOT_A_COUNTRY.sub(" ", _spelled(text))
    return any(p.search(text) for value, p in _COUNTRY_PATTERNS if value in countries)


def without_countries(text: str) -> str:
    """``text`` with every country name and demonym of the table blanked out."""
    text = _spelled(text)
    for _, pattern in _COUNTRY_PATTERNS:
        text = pattern.sub(" ", text)
    return text


def asked_kind(question: str) -> tuple[str, bool] | None:
    """The kind of value the question compares and whether it asks "different"."""
    match = _SAME.search(question)
    if match is None:
        return None
    word = next(g for g in match.groups() if g)
    return _KIND[word.lower()], "different" in match.group(0).lower()


def values(kind: str, sentence: str) -> frozenset[str] | None:
    """The values of ``kind`` the sentence gives, as one value (None when none or ambiguous).

    One value may be a set: "Filipino-American" is {Philippines, US}. Two values that are
    not one hyphenated word ("an American film by a British director") are ambiguous.
    """
    if kind in ("country", "continent"):
        text = _NOT_A_COUNTRY.sub(" ", _spelled(sentence) if kind == "country" else sentence)
        patterns = _COUNTRY_PATTERNS if kind == "country" else _CONTINENT_PATTERNS
        found = [(m.start(), m.end(), value) for value, p in patterns for m in p.finditer(text)]
        if not found:
            return None
        found.sort()
        # values joined by a hyphen or a space ("Filipino-American", "Filipino American")
        # are one
        groups: list[set[str]] = [{found[0][2]}]
        for (_, end, _), (start, _, value) in zip(found, found[1:], strict=False):
            if text[end:start] in ("-", " "):
                groups[-1].add(value)
            else:
                groups.append({value})
        distinct = {frozenset(g) for g in groups}
        return next(iter(distinct)) if len(distinct) == 1 else None
    if kind == "year":
        years = set(_YEAR.findall(sentence))
        return frozenset(years) if len(years) == 1 else None
    pattern = _FAMILY if kind == "family" else _GENUS
    names = {g for m in pattern.finditer(sentence) for g in m.groups() if g}
    return frozenset(names) if len(names) == 1 else None


def _names(group: Sequence[str], text: str) -> bool:
    """Whether the text names the thing: one of its own words, as written ("City", not "city")."""
    return any(re.search(r"(?<!\w)" + re.escape(w) + r"(?!\w)", text) for w in group)


def _own_words(groups: Sequence[Sequence[asked.Term]]) -> list[list[str]]:
    """Each thing's words that no other compared thing has ("Airport" names neither)."""
    words = [[t.surface for t in g] for g in groups]
    shared = {w.lower() for n, g in enumerate(words) for w in g
              for o in words[n + 1:] if w.lower() in {x.lower() for x in o}}
    return [[w for w in g if w.lower() not in shared] for g in words]


def _value_of(group: Sequence[str], others: Sequence[Sequence[str]], kind: str,
              statements: Sequence[Claim]) -> frozenset[str] | None:
    """The one value the quotes of the thing's own statements give (None: none, or several)."""
    def alone(text: str) -> bool:
        return _names(group, text) and not any(_names(o, text) for o in others)

    found: set[frozenset[str]] = set()
    for statement in statements:
        if not alone(statement["text"]) or _NEGATION.search(statement["text"]):
            continue
        for quote in quoted_sentences(statement):
            if alone(quote) and not _NEGATION.search(quote):
                value = values(kind, quote)
                if value is not None:
                    found.add(value)
    return next(iter(found)) if len(found) == 1 else None


def same_value_lead(question: str, statements: Sequence[Claim]) -> str | None:
    """"Yes" or "No" for an English same-value question the statements settle, else None."""
    question = unicodedata.normalize("NFKC", question).strip()
    asked_for = asked_kind(question)
    if asked_for is None or already_led(statements):
        return None
    kind, different = asked_for
    groups = _own_words(asked.compared_things(question))
    if len(groups) != 2 or not all(groups):
        return None
    found = [_value_of(g, [o for o in groups if o is not g], kind, statements) for g in groups]
    first, second = found
    if first is None or second is None:
        return None
    if first == second:
        same = True
    elif not first & second:
        same = False
    else:  # {Philippines, US} against {US}: partly shared, not settled
        return None
    return "Yes" if same != different else "No"


_WORD = re.compile(r"[A-Za-z]+")
_COUNTRY_ONLY = frozenset(
    "is are was were do does did and both in the from located based situated headquartered "
    "published born".split())
"""Words of a both-question that ask the country and nothing more."""


def both_country_lead(question: str, statements: Sequence[Claim]) -> str | None:
    """"No" for "Are A and B both from <country>?" where a thing's quote gives another one.

    "Yes" where the question asks nothing but the country ("Are A and B both located in
    China?") and each thing's quote gives that country alone.
    """
    question = unicodedata.normalize("NFKC", question).strip()
    if not BOTH.search(question) or already_led(statements) or _NEGATION.search(question):
        return None
    groups = _own_words(asked.compared_things(question))
    if len(groups) != 2 or not all(groups):
        return None
    # the country asked: the question's words after the compared names
    rest = question
    for group in groups:
        for word in group:
            rest = re.sub(r"(?<!\w)" + re.escape(word) + r"(?!\w)", " ", rest)
    asked_country = values("country", rest)
    if not asked_country:
        return None
    given = [_value_of(g, [o for o in groups if o is not g], "country", statements)
             for g in groups]
    if any(v is not None and not v & asked_country for v in given):
        return "No"
    # "Yes" only where the question asks the country and nothing else ("both located in
    # China"), and each thing's quote gives exactly it
    if all(v == asked_country for v in given) and not (
            {w.lower() for w in _WORD.findall(without_countries(rest))} - _COUNTRY_ONLY):
        return "Yes"
    return None
