"""A country the claim names against another country its best-matching evidence sentence names.

"The Lady was published in the US" against "The Lady is Britain's longest-running weekly
women's magazine": the claim adds a country, and the sentence that says the same thing gives
another one. When the English claim names one country (a name or a demonym, read with the
table of :mod:`grounded_rag.verification.same_value`; "Filipino-American" is one value of two
countries), no evidence sentence names it, and the evidence
sentence that best matches the claim's wording (at least a quarter of its content words) names
one country and only others, the claim is contradicted. A country the question names is
taken as its premise, unless the question is a yes/no question that asks it. Nothing is
inferred: a city gives no country, a sentence that names two countries apart ("an American
film by a British director") gives none, and where the question or the claim is about a
language, "English" names none. A negated claim is left to the judge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from grounded_rag.verification.asked import is_yes_no
from grounded_rag.verification.evidence import RUN_TOGETHER, content_tokens, overlap
from grounded_rag.verification.same_value import names_country, values, without_countries
from grounded_rag.verification.values import strip_numbers

_LANGUAGE = re.compile(r"\blanguages?\b|\btranslat\w*|\bspoken\b|\bdubbed\b|\bsubtitle", re.I)
"""A question or claim about a language: "English" there names no country."""
_LANGUAGE_LABEL = re.compile(r"\b[A-Z][a-z]+(?=\s*:)")
"""A language label before a name written in it: "(Russian: Ю́рий …)" names no country."""

_NEGATION = re.compile(r"\b(?:not|never|neither|nor)\b|n't", re.I)

CONTEXT_MIN = 0.25
"""Share of the claim's content words the best-matching evidence sentence must hold (the
claim's subject, at least: "The Lady" in "The Lady was published in the US")."""


def country_mismatch(claim: str, sentences: Sequence[str], question: str = ""
                     ) -> tuple[str, str, str] | None:
    """(the evidence sentence, the claim's country, the sentence's country) when they disagree.

    Sentences that sources run together ("…issues of "Janus".)The Lady is Britain's…") are
    read apart, so that one thing's country is not read as another's.
    """
    if (not claim.isascii() or not sentences or _LANGUAGE.search(f"{question} {claim}")
            or _NEGATION.search(claim)):  # "… is not British" agrees with "American"
        return None
    shown = [part for s in sentences for part in RUN_TOGETHER.split(s) if part]
    sentences = [_LANGUAGE_LABEL.sub(" ", part) for part in shown]
    # the claim's own wording, without the country it gives (the value the sentence may not share)
    wanted = content_tokens(strip_numbers(without_countries(claim)))
    context = [overlap(wanted, content_tokens(strip_numbers(s))) for s in sentences]
    claimed = values("country", claim)
    # A country the question names is its premise ("Which American university …?"), except
    # where a yes/no question asks it ("Are A and B both published in the US?").
    if not claimed or (names_country(question, claimed) and not is_yes_no(question)):
        return None
    if any(names_country(s, claimed) for s in sentences):
        return None
    best = max(range(len(sentences)), key=lambda i: context[i])
    if context[best] < CONTEXT_MIN:
        return None
    given = values("country", sentences[best])
    if not given or given & claimed:
        return None
    return shown[best], " / ".join(sorted(claimed)), " / ".join(sorted(given))
