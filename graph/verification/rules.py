"""The verifier's deterministic rules: one table, one switch, one counter.

Every rule that decides a claim's verdict without the judge, drops or rewrites a statement,
puts a Yes / No in front of an answer, or sends a draft back is named in :data:`RULES` with
what it does and the case it was written from. Each can be switched off for one process,
to measure what it earns (``GROUNDED_RAG_ABLATE=cloze,copy grounded-rag eval
...``), and each call that changes an outcome counts one firing (:func:`fired`), which the
evaluation harness records per question; ``benchmarks/screens.py inventory`` prints the table
with the firings and the leave-one-out scores.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from typing import NamedTuple


class Rule(NamedTuple):
    """One deterministic rule of the verifier."""

    mechanism: str
    """The general check it belongs to (see ``docs/decisions.md``)."""
    does: str
    """What it changes when it fires."""
    written_from: str
    """The observed case it was written from ("general" when it was designed as a class)."""


RULES: dict[str, Rule] = {
    # coverage and binding
    "coverage": Rule("coverage", "claim neutral when the text it cites lacks one of its "
                     "identifiers, names, values or topic; re-cites when another sentence "
                     "holds them all", "general (first-corpus misses: neighbouring error "
                     "code, other waste category)"),
    "focus": Rule("addresses the question", "sends back an answer none of whose cited "
                  "sentences holds the question's focus word", "general (frozen-corpus "
                  "design)"),
    "value_binding": Rule("coverage", "contradicted: the value of another case of a "
                          "one-value-per-case sentence", "small corpus (hotel cap by region)"),
    "subject_swap": Rule("coverage", "contradicted: says of one named thing what the "
                         "evidence says of another", "small-corpus held-out (university)"),
    "reading_missing": Rule("coverage", "neutral: a romaji name the Japanese cited text "
                            "never reads as", "cross-language item (mayor of Kyoto)"),
    # typed values
    "quantity_mismatch": Rule("typed values", "contradicted: same-unit value differs from "
                              "the best-matching sentence", "general"),
    "date_mismatch": Rule("typed values", "contradicted: date differs from the "
                          "best-matching sentence", "general"),
    "tax_mismatch": Rule("typed values", "contradicted: another tax status of a price",
                         "general (Japanese fee tables)"),
    # polarity
    "negation_mismatch": Rule("polarity", "contradicted: the same sentence negated",
                              "general"),
    # judge shortcuts
    "copy": Rule("judge", "supported without the judge: a source sentence word for word",
                 "general"),
    "cloze": Rule("judge", "supported without the judge: the value filling the question's "
                  "one gap in a source sentence", "JSQuAD item"),
    # the answer addresses the question
    "other_case": Rule("addresses the question", "drops a statement about 'other' cases "
                       "beside the asked one", "first corpus (hotel cap, other regions)"),
}

_ABLATED = frozenset(os.environ.get("GROUNDED_RAG_ABLATE", "").replace(" ", "").split(",")) - {""}
_OFF: set[str] = set(_ABLATED)
_COUNTS: Counter[str] = Counter()
_LOCK = threading.Lock()


def unknown(names: set[str] | frozenset[str]) -> list[str]:
    """The names of ``names`` that are not rules."""
    return sorted(n for n in names if n not in RULES)


def enabled(name: str) -> bool:
    """False when ``name`` is switched off (``GROUNDED_RAG_ABLATE`` or :func:`switch_off`)."""
    return name not in _OFF


def switch_off(names: set[str] | frozenset[str] | list[str]) -> None:
    """Switch rules off for this process (benchmarks' ``--without``); unknown names raise."""
    bad = unknown(set(names))
    if bad:
        raise ValueError(f"unknown rule(s): {', '.join(bad)}; known: {', '.join(RULES)}")
    _OFF.update(names)


def fired(name: str, times: int = 1) -> None:
    """Count that ``name`` changed an outcome (``times`` claims or statements)."""
    if times > 0:
        with _LOCK:
            _COUNTS[name] += times


def counts() -> dict[str, int]:
    """A snapshot of the firings so far in this process."""
    with _LOCK:
        return dict(_COUNTS)


def since(before: dict[str, int]) -> dict[str, int]:
    """The firings after the snapshot ``before`` (:func:`counts`)."""
    now = counts()
    return {k: v - before.get(k, 0) for k, v in sorted(now.items()) if v > before.get(k, 0)}


if unknown(_ABLATED):
    raise ValueError(f"GROUNDED_RAG_ABLATE names unknown rule(s): {', '.join(unknown(_ABLATED))}"
                     f"; known: {', '.join(RULES)}")
