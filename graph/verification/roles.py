"""Who did what to whom: Japanese claims that swap the roles of the evidence's participants.

"ライダーを男性が助けた" and "男性をライダーが助けた" share every word, so word overlap, the
other cues and the 1.5B judge all call the second supported by the first. Case particles
say who acts: が marks the actor, を and に the one acted on (in the passive, が marks the one
acted on and に the actor). This check reads them with Sudachi and reports a claim whose
sentence has the same predicate and the same noun phrases as an evidence sentence but
gives one of them another role.

It is deliberately narrow: the same predicates in the same order, no relative clause;
every marked noun phrase shared, none repeated; one phrase moved into the actor's place
and another out of it; は counts as the actor only in a sentence without が (otherwise it
is a topic and is not compared). Causatives and anything it cannot line up are left to
the judge. On JaNLI's dev split it
flags 1,218 of 6,840 non-entailed pairs and none of the 6,840 entailed ones
(``benchmarks/screens.py --screens cues`` prints this and the rate on other sets' supported
claims).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

_CASE = {"が": "actor", "を": "object", "に": "object"}
_MARKERS = frozenset({"が", "を", "に", "は"})
_NOMINAL = frozenset({"名詞", "接頭辞", "接尾辞"})
_LIGHT_VERBS = frozenset({"する", "できる", "為る", "出来る"})
_PASSIVE = frozenset({"れる", "られる"})
# Nouns that follow a verb without making it a relative clause (「押したことは確実だ」).
_FORMAL_NOUNS = frozenset({"こと", "の", "わけ", "ところ", "はず", "よう", "ため", "もの"})


@dataclass(frozen=True)
class Clause:
    """The role-bearing parts of a Japanese sentence."""

    phrases: tuple[tuple[str, str], ...]
    """(noun phrase, particle) for each noun phrase marked with が, を, に or は."""
    predicates: tuple[str, ...]
    """Dictionary forms of the content verbs, in order (サ変 nouns + する as one verb)."""
    passive: bool
    """True when a passive auxiliary (れる / られる) follows a verb."""
    relative: bool = False
    """True when a verb modifies a noun (a relative clause: roles are not compared)."""


@lru_cache(maxsize=4096)
def analyse(text: str) -> Clause:
    """Noun phrases with their case particles, the predicates and the voice of ``text``.

    Memoised: the cascade and the judge's feature builder both check a claim against its
    evidence sentences, and the analysis of a text never changes.
    """
    from grounded_rag.retrieval.text_analysis import sudachi_tokenizer

    phrases: list[tuple[str, str]] = []
    predicates: list[str] = []
    passive = False
    relative = False
    after_verb = False
    buf: list[str] = []
    last_noun_pos = ""
    previous = ""
    for m in sudachi_tokenizer().tokenize(text):
        pos = m.part_of_speech()
        surface = m.surface()
        prev, previous = previous, surface
        if after_verb and pos[0] in _NOMINAL and surface not in _FORMAL_NOUNS:
            relative = True  # 「女の子を押した男性」: the noun is an argument of both verbs
        after_verb = pos[0] == "動詞" or (after_verb and (pos[0] == "助動詞"
                                                         or surface in ("て", "で")))
        if pos[0] in _NOMINAL:
            buf.append(surface)
            last_noun_pos = pos[2] if pos[0] == "名詞" else last_noun_pos
            continue
        if pos[0] == "助詞" and surface == "の" and buf:  # 「A社のCEO」 is one phrase
            buf.append(surface)
            continue
        if pos[0] == "助詞" and surface in _MARKERS and buf:
            phrases.append(("".join(buf), surface))
        elif pos[0] == "動詞":
            if m.dictionary_form() in _LIGHT_VERBS and buf and last_noun_pos == "サ変可能":
                predicates.append("".join(buf) + "する")
            elif pos[1] != "非自立可能" or prev not in ("て", "で"):
                # 非自立可能 verbs (見る, いる, しまう) are auxiliaries only after て / で
                predicates.append(m.dictionary_form())
        elif pos[0] == "助動詞" and m.dictionary_form() in _PASSIVE and predicates:
            passive = True
        buf = []
        last_noun_pos = ""
    return Clause(tuple(phrases), tuple(predicates), passive, relative)


def _roles(clause: Clause) -> dict[str, str | None] | None:
    """Noun phrase -> actor / object (None: a topic, not compared); None if one repeats."""
    has_ga = any(p == "が" for _, p in clause.phrases)
    out: dict[str, str | None] = {}
    for phrase, particle in clause.phrases:
        if phrase in out:
            return None
        role: str | None
        if particle == "は":
            role = None if has_ga else "actor"
        else:
            role = _CASE[particle]
        if clause.passive and role is not None:
            role = "object" if particle in ("が", "は") else "actor"
        out[phrase] = role
    return out


def _comparable(claim: Clause, sentence: Clause) -> bool:
    if not claim.predicates or claim.predicates != sentence.predicates:
        return False
    if claim.relative or sentence.relative:
        return False
    names = sorted(p for p, _ in claim.phrases)
    if len(names) < 2 or names != sorted(p for p, _ in sentence.phrases):
        return False
    if claim.passive != sentence.passive:
        # Only a transitive active (を) against a passive with its actor in に: "られる" is
        # also honorific or potential, and those keep their roles.
        active, passive = (sentence, claim) if claim.passive else (claim, sentence)
        if not any(p == "を" for _, p in active.phrases):
            return False
        if not any(p == "に" for _, p in passive.phrases):
            return False
    return True


def _swapped(a: Clause, b: Clause) -> list[str]:
    ra, rb = _roles(a), _roles(b)
    if ra is None or rb is None:
        return []
    changed = [p for p, role in ra.items()
               if role is not None and rb.get(p) is not None and role != rb[p]]
    # A swap moves one phrase to the actor's place and another out of it; a single phrase
    # changing (「足場糸を引き終わる」 / 「足場糸が引き終わる」, a place marked with に) is
    # a change of construction, not of who acts.
    if {ra[p] for p in changed} != {"actor", "object"}:
        return []
    return changed


def swapped_roles(claim: str, sentence: str) -> list[str]:
    """Noun phrases that ``claim`` gives another role than ``sentence`` does ([]: none)."""
    a, b = analyse(claim), analyse(sentence)
    return _swapped(a, b) if _comparable(a, b) else []


def role_swap(claim: str, sentences: Sequence[str]) -> tuple[str, list[str]] | None:
    """The evidence sentence whose participants ``claim`` swaps, with the phrases involved.

    None when no sentence lines up with the claim, or when one that does agrees with it.
    """
    a = analyse(claim)
    if len(a.phrases) < 2 or not a.predicates:
        return None
    found: tuple[str, list[str]] | None = None
    for sentence in sentences:
        if not all(phrase in sentence for phrase, _ in a.phrases):
            continue  # cheap: a sentence that lines up holds every marked phrase
        b = analyse(sentence)
        if not _comparable(a, b):
            continue
        phrases = _swapped(a, b)
        if not phrases:
            return None  # a sentence says it the claim's way
        found = found or (sentence, phrases)
    return found
