"""The other form of a name the question asks about, written beside it in a source sentence.

「UNTAGの正式名称は」 over 「…国際連合ナミビア独立支援グループ (UNTAG) の下で…」.

A question for a name's full form or its abbreviation (正式名称 / 正式名 / 何の略 / 略称,
"what does X stand for", "the full name of X", "the abbreviation of X") is answered,
word for word, by a source sentence that writes the two forms together: the full name
followed by the short one in brackets. When one evidence sentence pairs the asked name
with exactly one other form, the evidence pins the answer, and the decision to write does
not veto it on the generator's prompt-state score (that score reads a short question over
a long passage as unanswerable: "UNTAGの正式名称は" scored -2.59 against a floor of -1.74).

The pair also fills the question's gap (``gap.gap_fillers``), so a bare answer equal to it
is settled by the cloze rule, an answer that does not write it is off the question, and
a revision is told the word. On JSQuAD dev's 40 questions of this kind, each against its
gold passage, the pairing is found for 10, all a gold answer (the conditions were written
while reading them: a reading in brackets, 「こくさいれんごうへいわいじぐん」, is no
abbreviation, and a form the question already writes is not asked); no NoMIRACL query and
no HaluEval-QA knowledge paragraph gives one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from grounded_rag.types import Evidence
from grounded_rag.verification.evidence import split_sentences

__all__ = ["asked_form", "asked_phrase", "paired_form", "paired_forms"]

_JA_LONG = re.compile(r"^(.+?)の?(?:正式名称|正式名|正式な名称|正式な名前)"
                      r"|^(.+?)は(?:何|なに|なん)の略")
_JA_SHORT = re.compile(r"^(.+?)の(?:略称|略語|略号)")
_EN_LONG = re.compile(
    r"\bwhat\s+(?:does|did)\s+(?:the\s+)?(.+?)\s+stand\s+for\b"
    r"|\bwhat\s+is\s+(?:the\s+)?(.+?)\s+short\s+for\b"
    r"|\b(?:full|official)\s+name\s+(?:of|for)\s+(?:the\s+)?(.+?)\s*[?.]?$", re.I)
_EN_SHORT = re.compile(
    r"\b(?:abbreviation|acronym|short\s+name)\s+(?:of|for)\s+(?:the\s+)?(.+?)\s*[?.]?$", re.I)
_JA_RUN = re.compile(r"[\u3400-\u9fff\u30a0-\u30ffA-Za-z0-9・ー\-]+$")
_EN_RUN = re.compile(r"(?:[A-Z][\w'&.-]*\s+(?:(?:of|and|for|the|on|in|de)\s+)*)*[A-Z][\w'&.-]*$")
_KANA_ONLY = re.compile(r"^[\u3040-\u309fー\s]+$")
_LIST = re.compile(r"[、,;]")


def asked_form(question: str) -> tuple[str, str] | None:
    """The name asked about and which form is wanted (``long`` / ``short``), or None."""
    text = unicodedata.normalize("NFKC", question).strip()
    for pattern, wants in ((_JA_LONG, "long"), (_JA_SHORT, "short"),
                           (_EN_LONG, "long"), (_EN_SHORT, "short")):
        match = pattern.search(text)
        if match:
            name = next(g for g in match.groups() if g).strip(" 「」\"'")
            return (name, wants) if len(name) >= 2 else None
    return None


def _long_before(text: str) -> str | None:
    """The name that ends right before a bracket: a run of kanji / katakana / Latin words."""
    text = text.rstrip()
    if re.search(r"[A-Za-z]$", text):
        match = _EN_RUN.search(text)
        name = match.group(0) if match else ""
    else:
        match = _JA_RUN.search(text)
        name = match.group(0) if match else ""
    return name if len(name) >= 2 else None


def _forms(name: str, wants: str, sentence: str) -> set[str]:
    found: set[str] = set()
    quoted = re.escape(name)
    if wants == "long":  # "<full name> (<name>)" or "(英: …, 略称: <name>)"
        for m in re.finditer(r"\((?:[^()]*?(?:[:、,]|略称)\s*)?" + quoted + r"\s*[),、]", sentence):
            full = _long_before(sentence[:m.start()])
            if full and full != name:
                found.add(full)
    else:  # "<name> (<short>)" or "<name> (略称: <short>)"
        for m in re.finditer(quoted + r"\s*\(([^()]{1,40})\)", sentence):
            inner = m.group(1)
            label = re.search(r"略称\s*[:は]?\s*([^、,;]+)", inner)
            short = (label.group(1) if label else inner).strip()
            if short and short != name and not _LIST.search(short) \
                    and not _KANA_ONLY.match(short) and len(short) <= 20:
                found.add(short)
    return found


def paired_forms(question: str, evidence: Sequence[Evidence]) -> list[tuple[str, str]]:
    """(other form, sentence) for each evidence sentence that pairs the asked name with it.

    ``[]`` unless the question asks for a name's other form and the sentences give exactly
    one (a form the question already writes does not count: 「日本建築家協会の略称はJIA、では
    国際建築家連合の略称は?」).
    """
    asked = asked_form(question)
    if asked is None:
        return []
    name, wants = asked
    plain_question = unicodedata.normalize("NFKC", question)
    found: list[tuple[str, str]] = []
    for item in evidence:
        if name not in unicodedata.normalize("NFKC", item.get("text", "")):
            continue
        for sentence in split_sentences(item.get("text", "")):
            plain = unicodedata.normalize("NFKC", sentence.text)
            found += [(form, sentence.text) for form in _forms(name, wants, plain)
                      if form not in plain_question]
    return found if len({form for form, _ in found}) == 1 else []


def paired_form(question: str, evidence: Sequence[Evidence]) -> str | None:
    """The other form of the asked name, when evidence sentences give exactly one."""
    found = paired_forms(question, evidence)
    return found[0][0] if found else None


def asked_phrase(question: str) -> str:
    """How the question names what it asks (「UNTAGの正式名称」), or ``""``."""
    asked = asked_form(question)
    if asked is None:
        return ""
    name, wants = asked
    return f"{name}の{'正式名称' if wants == 'long' else '略称'}"
