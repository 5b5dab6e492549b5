"""Does the answer answer? The checks that send back, drop or keep an answer's statements.

- Does the answer answer? Deterministic checks of each statement against the question.
- A statement about another case than the one asked, beside one that answers it.
- Statements that cite only passages the relevance gate says are not about the question.
- Statements must follow the question's language, whatever the language of their sources.
- What holds when the budget is spent: the statements whose claims all passed.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from grounded_rag.prompts import addresses as asked_texts
from grounded_rag.prompts import feedback as texts
from grounded_rag.retrieval.calibration import gate_thresholds, is_same_language
from grounded_rag.retrieval.text_analysis import JA_RUN, is_japanese_text
from grounded_rag.types import Claim, Evidence, Finding
from grounded_rag.verification import asked, coverage, rules
from grounded_rag.verification.asked import gap_fillers, gap_unwritten
from grounded_rag.verification.evidence import key_tokens, split_sentences, stem
from grounded_rag.verification.subjects import topic_uncited

# ------------------------------------------------------------------------------------------
# Does the answer answer? Deterministic checks of each statement against the question.
#
# A statement is *off the question* when it only restates a heading of the evidence or the
# question itself (``第7条（解除）。`` for "how much notice is needed to terminate?"), or when the
# answer as a whole lacks the kind of thing the question asks for: a number for "how much /
# how many / いくら / 何日 / 何人", a date for "when / いつ", an amount of money for "how much
# does it cost / いくら", or, for a yes/no question, any cited sentence (statement or quote)
# that speaks to what is asked rather than only to its subject (``asked.py``). Each gets an
# ``off_question`` finding (``major``) whose detail tells the generator what to fix.

Kind = Literal["number", "date"]

_NUMBER_Q = re.compile(
    r"\bhow\s+(?:much|many|long|far|old|often|big|large|heavy|high|tall|wide|fast)\b"
    r"|\bwhat\s+(?:percentage|percent|amount|number|size|price|fee|rate)\b"
    # Not 「いくつかの」「いくらでも」 (some, any), 「何年も」「何度も」 (for years, many times),
    # 「何時代」「何分解」 (which era, what kind of decomposition), 「何人が」 (which people).
    r"|いくら(?!でも|か)|いくつ(?!か)"
    r"|何(?:日|時間|時|円|回|歳|件|年|分|割|台|個|本|枚|週|名|度|倍|%|％|パーセント"
    r"|ヶ月|か月|カ月|ヵ月|キロ|メートル|ドル)(?![もか代解])"
    r"|" + asked.HOW_MANY_PEOPLE +
    r"|どのくらい|どれくらい|どれほど|どの程度|どれだけ",
    re.I,
)
# "When" asks for a date at the head of a question or before an auxiliary ("..., and when
# did it close?"), not as a conjunction ("in which city was she when she fell ill?").
_DATE_Q = re.compile(
    r"^\W*when\b|\bwhen\s+(?:is|are|was|were|do|does|did|will|would|can|could|should|has|"
    r"have|had|must)\b|\bwhat\s+(?:date|day|year|month|time)\b|\bby\s+what\s+date\b"
    r"|いつ|何月|何日|何年|何曜",
    re.I,
)
_DURATION_Q = re.compile(r"何(?:日|週|年|ヶ月|か月|カ月|ヵ月)(?:前|以内|間|後)")
_WH = re.compile(
    r"\b(?:what|when|where|who|whom|whose|which|why|how)\b"
    r"|^\W*(?:name|list|give|identify)\b"  # "Name a ...": asks for a thing, as "what" does
    r"|何|なに|なん|いつ|どこ|誰|だれ|どなた|いくら|いくつ|どの|どう|なぜ|どれ"
    r"|挙げ(?:よ|て|なさい)|答え(?:よ|なさい)|教えて"
    # 「…をアルファベット一字で」「…を漢字で」: asks for the thing written another way
    r"|(?:アルファベット|ローマ字|漢字|カタカナ|ひらがな|英語|略語)\s*[0-9０-９一二三四五六七八九十]*"
    r"\s*(?:文字|字)?で(?:表す|書く|言う|答え|は|[？?。]|$)",
    re.I,
)
# An either/or question, or one that lists its candidates ("Of A and B, which one ...",
# 「A、B、Cのうち」), is answered by naming one of its own words.
_CHOICE = re.compile(r"\bor\b|\bwhich\s+(?:one|of)\b|\bbetween\b|どちら|どっち|それとも"
                     r"|のうち|の中で|の内", re.I)

_DIGIT = re.compile(r"\d")
_NUMBER_WORD = re.compile(
    r"[一二三四五六七八九十百千万億半]"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|billion|half|once|twice|dozen|single|double)\b"
    # a whole amount answers "how much" without a figure: 「全額を支給する」, "paid in full"
    r"|全額|半額|実費|全部|無料|無償|\bin\s+full\b|\bfull\s+(?:amount|cost|price)\b"
    r"|\bfree(?:\s+of\s+charge)?\b|\bat\s+cost\b",
    re.I,
)
_DATE_WORD = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
    r"|\b(?:today|tomorrow|yesterday|daily|weekly|monthly|yearly|annually|immediately)\b"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|令和|平成|昭和|元年|毎月|毎年|毎週|毎日|翌月|翌日|翌年|前日|月末|年末|年度末|月初|当日|即日"
    r"|[一二三四五六七八九十]+[年月日]|[月火水木金土日]曜",
    re.I,
)
_BULLET = re.compile(r"^\s*(?:[-*+•・]|\d+[.)])\s")
_SENTENCE_PUNCT = re.compile(r"[。．.!?！？、,:：；;]")


def question_kind(question: str) -> Kind | None:
    """The kind of thing the question asks for: ``number``, ``date``, or None (anything)."""
    text = unicodedata.normalize("NFKC", question)
    if _DURATION_Q.search(text):
        return "number"
    if _DATE_Q.search(text) and not _NUMBER_Q.search(text.replace("何日", "")):
        return "date"
    if _NUMBER_Q.search(text) or asked.asks_count(text):
        return "number"
    return None


def has_kind(text: str, kind: Kind) -> bool:
    """True when ``text`` gives a number (or a date) other than a heading's numbering."""
    text = asked.NUMBERING.sub(" ", unicodedata.normalize("NFKC", text))
    if _DIGIT.search(text):
        return True
    if kind == "number":
        return bool(_NUMBER_WORD.search(text))
    return bool(_DATE_WORD.search(text))


def headings(evidence: Sequence[Evidence]) -> list[str]:
    """Heading-like texts of the evidence: title parts and heading lines of the chunks."""
    out: list[str] = []
    for item in evidence:
        out.extend(part for part in item.get("title", "").split(" > ") if part.strip())
        out.extend(item.get("section", "").split(" > ") if item.get("section") else [])
        for line in item["text"].splitlines():
            line = line.strip()
            if not line or _BULLET.match(line):
                continue
            if line.startswith("#"):
                out.append(line.lstrip("#").strip())
            elif asked.NUMBERING.match(line) or (len(line) <= 25 and not _DIGIT.search(line)
                                            and not _SENTENCE_PUNCT.search(line)):
                out.append(line)
            first = split_sentences(line)
            if first and asked.NUMBERING.match(first[0].text) and len(first[0].text) <= 25:
                out.append(first[0].text)
    return out


def asks_back(text: str) -> bool:
    """True for a statement that is a question ("…は現在でもありますか？"): no answer.

    Citation markers are ignored; a question quoted inside a sentence (「なぜ？」という問い)
    or at its end (He asked "why?") is not the statement asking.
    """
    body = re.sub(r"(?:\[\d+\])+", "", text).rstrip()
    return body.endswith(("?", "？"))


def unrelated_statements(question: str, statements: Sequence[Claim]) -> list[int]:
    """Indices of statements that have nothing to do with the question or the rest.

    In an answer of several statements, one that cites no document another statement cites
    and whose content words (its text and its quotes, :func:`key_tokens`) meet neither the
    question's nor any other statement's is a sentence the model picked up from an
    unrelated passage ("She was a member of the pop group S#arp." in an answer about
    licence numbers). One word in common does not make a long statement related when it is
    an ordinary English word there, not a name ("...manufactures footwear, *sports* and
    casual apparel" beside the Ministry of Education, Culture, *Sports*, Science and
    Technology); a shared name ("Honda") does. Always leaves at least one statement.
    """
    if len(statements) < 2:
        return []
    asked_tokens = key_tokens(question)
    texts = [" ".join([s["text"], *(c.get("quote", "") for c in s["citations"])])
             for s in statements]
    tokens = [key_tokens(text) for text in texts]
    docs = [{c["source_id"].split("#")[0] for c in s["citations"]} for s in statements]
    out = []
    for i, own in enumerate(tokens):
        if any(docs[i] & docs[j] for j in range(len(statements)) if j != i):
            continue
        shared = own & asked_tokens
        for j, other in enumerate(tokens):
            if j != i:
                shared |= own & other
        if not shared or (len(shared) == 1 and len(own) >= _LONG_STATEMENT
                          and _only_common_word(next(iter(shared)), texts[i])):
            out.append(i)
    return out if len(out) < len(statements) else []


_LONG_STATEMENT = 6  # content tokens from which one shared ordinary word relates nothing


def _only_common_word(token: str, text: str) -> bool:
    """Whether ``token`` stands in ``text`` only as a lower-case English word (not a name)."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'\-]*", unicodedata.normalize("NFKC", text))
             if stem(w.lower()) == token]
    return bool(words) and all(w.islower() for w in words)


def off_question_findings(
    question: str,
    statements: Sequence[Claim],
    evidence: Sequence[Evidence],
    language: str,
) -> list[Finding]:
    """``off_question`` findings (major) for the statements that do not answer ``question``.

    - A statement that is itself a question (「…は現在でもありますか？」) answers nothing.
    - A statement whose content tokens all come from one heading of the evidence (and, for a
      question that asks for a thing, add no word to the question's), or all come from the
      question, only restates
      it (questions with a question word only), unless it holds the word that fills the
      question's gap in a source sentence (``asked.gap_fillers``).
    - When no statement writes that word (``asked.gap_unwritten``), none answers.
    - When the question asks for a number, a date or an amount of money and no statement
      gives one, every statement lacks it; when it asks how many and the statements' only
      figures are dates (``asked.has_count``), every statement lacks the count.
    - When a yes/no question's predicate (``asked.asked_terms``: its content words less
      its subject and the evidence's document titles) is not addressed by the statements and
      their quotes together, no statement answers it.
    - When no sentence the answer cites, nor its section heading, holds any of the question's
      focus words (``coverage.focus_uncited``), the answer speaks of something else.
    - When a Japanese question names what it asks about (「速水 堅曹は…」) and no passage the
      answer cites names it (``subjects.topic_uncited``), the answer speaks of something else.
    - When the question sets a condition (``asked.condition_terms``: "if ...", 「…場合」) and
      no statement or quote names any word of it, the answer is about another case.

    ``claim_index`` is the statement index, as for the citation findings.
    """
    lang = "ja" if language == "ja" else "en"
    findings: list[Finding] = []
    if not question.strip() or not statements:
        return findings
    kind = question_kind(question)
    # A number is not a price: "how much is the fee?" wants an amount of money.
    no_money = (kind == "number" and asked.asks_money(question)
                and not any(asked.has_money(s["text"]) for s in statements))
    missing = kind is not None and not no_money and not any(
        has_kind(s["text"], kind) for s in statements)
    # "How many acts?" is not answered by a date: a count question needs a figure besides dates.
    no_count = (kind == "number" and not missing and not no_money
                and asked.asks_count(question)
                and not any(asked.has_count(s["text"]) for s in statements))
    unaddressed = _unaddressed(question, statements, evidence) if kind is None else []
    unmet = _condition_unmet(question, statements)
    # A yes/no or either/or question may well be answered by repeating its own words.
    restating = bool(_WH.search(question)) and not _CHOICE.search(question)
    heading_tokens = [t for t in (key_tokens(h) for h in headings(evidence)) if t]
    question_tokens = key_tokens(question)
    found = gap_fillers(question, evidence)
    fillers = [f for f, _ in found] if restating else []
    unwritten = gap_unwritten([s["text"] for s in statements], found)
    uncited = topic_uncited(question, statements, evidence)
    unfocused = (coverage.focus_uncited(question, statements, evidence)
                 if rules.enabled("focus") and _WH.search(question) else [])
    for index, statement in enumerate(statements):
        tokens = key_tokens(statement["text"]) if restating else set()
        # What the statement adds to the question, beyond numbering and single characters
        # (第7条): for a question that asks for a thing rather than a number or a date, an
        # entity named in a heading ("オーガスタ" from the article titled "オーガスタ (メイン
        # 州)", for "メイン州の州都はどこですか") is an answer, not a restated heading.
        adds = {t for t in tokens - question_tokens if len(t) > 1 and not t[0].isdigit()
                } if kind is None else set()
        reason = kind_name = ""
        if asks_back(statement["text"]):
            reason = texts.OFF_QUESTION_REASONS[lang]["asks"]
        elif tokens and not adds and any(tokens <= h for h in heading_tokens):
            reason = texts.OFF_QUESTION_REASONS[lang]["heading"]
        elif tokens and not any(f in statement["text"] for f in fillers) and (
                tokens <= question_tokens):
            reason = texts.OFF_QUESTION_REASONS[lang]["question"]
        elif unwritten:
            reason = texts.OFF_QUESTION_REASONS[lang]["gap"].format(filler=unwritten)
        elif uncited:
            reason = texts.OFF_QUESTION_REASONS[lang]["topic"].format(topic=uncited)
        elif missing and kind is not None:
            reason = texts.OFF_QUESTION_REASONS[lang][kind]
        elif no_count:
            reason = texts.OFF_QUESTION_REASONS[lang]["count"]
        elif no_money:
            reason, kind_name = asked_texts.MONEY_REASON[lang], asked_texts.MONEY_KIND[lang]
        elif unaddressed or unmet:
            template = asked_texts.NOT_ADDRESSED if unaddressed else asked_texts.CASE_NOT_ADDRESSED
            terms = (dict.fromkeys(t.surface for t in unaddressed) if unaddressed
                     else [t.surface for t in unmet])
            findings.append({
                "type": "off_question", "severity": "major", "claim_index": index,
                "detail": template[lang].format(
                    text=statement["text"], terms=asked_texts.TERMS_SEPARATOR[lang].join(terms)),
            })
            continue
        elif unfocused:
            reason = texts.OFF_QUESTION_REASONS[lang]["focus"].format(
                focus=("、" if lang == "ja" else ", ").join(unfocused))
        if not reason:
            continue
        findings.append({
            "type": "off_question", "severity": "major", "claim_index": index,
            "detail": texts.OFF_QUESTION[lang].format(
                text=statement["text"], reason=reason,
                kind=kind_name or texts.OFF_QUESTION_KINDS[lang][kind or "answer"]),
        })
    return findings


def _cited_texts(statements: Sequence[Claim]) -> list[str]:
    """The statements' texts and their quotes: what an answer says and cites."""
    return [s["text"] for s in statements] + [
        c.get("quote", "") for s in statements for c in s.get("citations", [])]


def _condition_unmet(question: str, statements: Sequence[Claim]) -> list[asked.Term]:
    """The words of the question's condition when no cited sentence names any of them.

    「悪天候で飛行機が欠航した場合、宿泊費は…」 answered from the general rule on hotel costs
    (no 悪天候, no 欠航 in the answer or its quotes) answers another case. One word of the
    condition suffices (the case is often put in other words: 飛行機 / 航空便); empty when
    the question sets no condition or the answer speaks to it.
    """
    if not any(c.get("quote") for s in statements for c in s.get("citations", [])):
        return []  # a bare answer without its sentence: nothing tells the case
    # Titles are not dropped here: a section's title often names the very case (「第3条
    # 交通機関の遅延と欠航」), which the answer must then speak to.
    terms = asked.condition_terms(question)
    cited = _cited_texts(statements)
    if not terms or len(asked.missing_terms(terms, cited)) < len(terms):
        return []
    return terms


def _unaddressed(
    question: str, statements: Sequence[Claim], evidence: Sequence[Evidence]
) -> list[asked.Term]:
    """The predicate words of a yes/no question that no cited sentence speaks to.

    Empty when the question is not yes/no, has no predicate words, or is addressed.
    """
    if not asked.is_yes_no(question):
        return []
    # Document titles name what is asked about (the product, the rule book), not the predicate.
    titles = [e.get("title", "").split(" > ")[0] for e in evidence]
    unnamed = _compared_unnamed(question, statements, evidence)
    if unnamed is not None:
        return unnamed
    terms = asked.asked_terms(question, titles)
    cited = _cited_texts(statements)
    if asked.addressed(terms, cited):
        return []
    return asked.missing_terms(terms, cited)


def _compared_unnamed(
    question: str, statements: Sequence[Claim], evidence: Sequence[Evidence]
) -> list[asked.Term] | None:
    """The words of each compared thing that nothing cited names (None: not a comparison).

    For a comparison of named things ("Are both A and B flowering plants?"), a thing is
    named when a quoted sentence or a cited section's title has one of its words. The
    statements' own words do not count here: an answer that names A and B but cites a
    paragraph about two other plants ("Rhapidophyllum is a flowering plant[1]" citing a
    passage on Echinacea) cannot have checked either. None when the question is not such a
    comparison or no statement quotes its source (nothing to check against); an empty list
    when every compared thing is named in what is cited.
    """
    groups = asked.compared_things(question)
    quotes = [c.get("quote", "") for s in statements for c in s.get("citations", [])]
    if not groups or not any(quotes):
        return None
    cited_docs = {c["source_id"].split("#")[0] for s in statements
                  for c in s.get("citations", [])}
    titles = [e.get("title", "") for e in evidence
              if str(e.get("source_id", "")).split("#")[0] in cited_docs]
    texts = [*quotes, *titles]
    # A name is found as written too (case aside): sources run sentences together
    # ("...family.Adlumia is a genus"), which hides it from the tokenizer.
    flat = " ".join(texts).lower()
    # A word the compared names share ("Gynaika Magazine and New! Magazine") names neither.
    counts = Counter(t.token for group in groups for t in {t.token: t for t in group}.values())
    own = [[t for t in group if counts[t.token] == 1] or group for group in groups]
    return [term for group in own
            if asked.missing_terms(group, texts) == group
            and not any(term.surface.lower() in flat for term in group)
            for term in group]


def predicate_absent(question: str, evidence: Sequence[Evidence],
                     language: str) -> list[asked.Term]:
    """The predicate words of a yes/no question when no retrieved passage speaks to them.

    "Can the Aurora LX-3 be carried in an airplane cabin?" over a product sheet that never
    mentions cabins or flights: an answer could only list true sentences about the product,
    and a revision rewrites from the same passages. Judged by ``asked.addressed`` (half of
    the terms, stemmed) over the passages' texts and titles in the question's language;
    empty (no verdict) when the question is not yes/no, has no predicate words, or no
    passage is in its language (the other language's words cannot be matched).
    ``language``: the question's, as the relevance gate detected it.
    """
    if not evidence or not asked.is_yes_no(question):
        return []
    from grounded_rag.retrieval.calibration import is_same_language

    same = [e for e in evidence if is_same_language(e, language)]
    if not same:
        return []
    titles = [e.get("title", "").split(" > ")[0] for e in evidence]
    terms = asked.asked_terms(question, titles)
    texts = [t for e in same for t in (e.get("text", ""), e.get("title", ""))]
    if asked.addressed(terms, texts):
        return []
    return asked.missing_terms(terms, texts)


# ------------------------------------------------------------------------------------------
# A statement about another case than the one asked, beside one that answers it.
#
# "What is the maximum hotel cost per night for business trips in Tokyo?" came back as
# "…in Tokyo is 15,000 yen[1]. The maximum hotel cost per night for business trips in other
# regions is 12,000 yen[1]." Both statements are true and cite the right sentence, so the
# claim judge supports both, but the second answers a case nobody asked about, and a reader
# skimming for the figure may take the wrong one. A statement that speaks of "other" cases
# (other / elsewhere / except / その他 / 以外 / ほかの), while another statement of the same
# answer names a word of the question that it leaves out (Tokyo, 東京), is about the rest, not
# the case asked: it is dropped before verification, with an info finding, as an unrelated
# statement is. A question that itself asks about other cases keeps such statements.

_OTHER = re.compile(
    r"\b(?:other|others|elsewhere|outside|except|excluding|remaining|rest\s+of)\b"
    r"|その他|それ以外|以外|他の|ほかの|他地域|そのほか",
    re.I,
)


def other_case_statements(question: str, statements: Sequence[Claim]) -> list[int]:
    """Indices of statements about other cases than the question's (never all of them)."""
    if len(statements) < 2 or _OTHER.search(unicodedata.normalize("NFKC", question)):
        return []
    asked = key_tokens(question)
    tokens = [key_tokens(s["text"]) & asked for s in statements]
    others = [bool(_OTHER.search(unicodedata.normalize("NFKC", s["text"]))) for s in statements]
    out = [i for i in range(len(statements)) if others[i] and any(
        not others[j] and tokens[j] - tokens[i] for j in range(len(statements)) if j != i)]
    return out if len(out) < len(statements) else []


# ------------------------------------------------------------------------------------------
# Statements that cite only passages the relevance gate says are not about the question.
#
# The pre-model gate abstains when no retrieved passage reaches its relevance threshold
# ("nothing in the store is about this"). A question that passes it is still answered from
# all of the top passages, and those below the gate are there only because something had to
# fill the list. A statement whose every citation points to such a passage was picked up from
# text about something else. A held-out cross-language answer about the Kyōhō era said
# "The 2010 census reported a population of 66,135 in the city of Kyōhō", citing a passage
# on Schenectady, New York (relevance 0.0000 against the English gate 0.004), and "…the
# Japanese government, which is represented by the … genus Cibotium", citing one on tree
# ferns (0.0001); the judge found both supported.
#
# The pre-model check's same-language gate decides (:func:`retrieval.calibration.gate_thresholds`),
# so ``abstain_threshold=0`` turns this off too. Only passages in the question's language are
# judged: across languages the embedder's relevance is lower and less certain. A cross-language
# dev answer cited its Japanese gold passage at relevance 0.0014, under the cross-language gate
# (0.01), while English passages had let the question through.

def below_gate_statements(statements: Sequence[Any], evidence: Sequence[Any], language: str,
                          threshold: float | None) -> list[int]:
    """Indices of statements whose cited passages all fall below their relevance gate.

    ``language`` is the question's (``ja`` / ``en``); ``threshold`` the user's
    ``abstain_threshold`` (None: the default gates). A statement without citations, or
    citing a passage not among ``evidence``, is not counted.
    """
    same_gate, _ = gate_thresholds(language, threshold)
    if same_gate <= 0:
        return []
    by_id = {str(e.get("source_id", "")): e for e in evidence}

    def below(source_id: str) -> bool:
        e = by_id.get(source_id)
        if e is None or not is_same_language(e, language):
            return False
        return float(e.get("relevance", 1.0)) < same_gate

    out = []
    for i, s in enumerate(statements):
        cited = [str(c.get("source_id", "")) for c in s.get("citations", [])]
        if cited and all(below(sid) for sid in cited):
            out.append(i)
    return out


def source_findings(statements: Sequence[Any], evidence: Sequence[Any], asked: str,
                    threshold: float | None, language: str) -> list[Finding]:
    """``off_question`` findings when every statement cites only passages below the gate.

    (When only some do, the check_citations node drops those and keeps the rest.) ``asked``
    is the question's language for the gates; ``language`` the answer's, for the wording.
    """
    gated = below_gate_statements(statements, evidence, asked, threshold)
    if not statements or len(gated) < len(statements):
        return []
    lang = "ja" if language == "ja" else "en"
    return [{"type": "off_question", "severity": "major", "claim_index": i,
             "detail": texts.OFF_QUESTION[lang].format(
                 text=statements[i]["text"], reason=texts.OFF_QUESTION_REASONS[lang]["source"],
                 kind=texts.OFF_QUESTION_KINDS[lang]["answer"])}
            for i in gated]


# ------------------------------------------------------------------------------------------
# Statements must follow the question's language, whatever the language of their sources.

def wrong_language(text: str, language: str) -> bool:
    """Whether a statement is written in another language than ``language`` (``ja``/``en``).

    A Japanese statement may name things in Latin letters (X100, USB-C) and an English one may
    quote a Japanese term: only a statement mostly in the other script counts. A statement in
    Chinese (:func:`reads_as_chinese`) is in neither language.
    """
    if sum(ch.isalpha() for ch in text) < 4:
        return False
    if language == "ja":
        return not is_japanese_text(text, share=0.2) or reads_as_chinese(text)
    return is_japanese_text(text, share=0.5)


# Simplified characters that Japanese never writes (its forms: 這 們 時 対 発 現 問 題 ...).
_SIMPLIFIED = frozenset("这们么说时对发现问题过还进经动实见长门间关东车马鸟鱼书买卖气电话语认记笔该"
                        "给让请谢应习历个为从业开无网术产种简")
_HIRAGANA = re.compile(r"[\u3041-\u309f]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# 是 as a copula and 的 joining two nouns, outside Japanese words that hold them (是非, 目的)
_CHINESE_GRAMMAR = re.compile(
    r"(?<![如国])是(?![非正認々])|(?<![目標端])的(?=[\u3400-\u4dbf\u4e00-\u9fff\u30a0-\u30ff])")


def reads_as_chinese(text: str) -> bool:
    """True when a statement in Han characters reads as Chinese, not Japanese.

    The small local model drifts into Chinese: a simplified character Japanese never writes
    (「一般的な笔记本の全充電」), or a statement with no kana particle at all held together by
    是 and 的 (「交響曲『祖国』的作曲者是ジョゼ・ヴィアナ・ダ・モッタ」). Terms in brackets or
    quotes are left out. A bare Japanese noun phrase (「国際連合ナミビア独立支援グループ」,
    「1977年」) has neither.
    """
    bare = _ENCLOSED.sub(" ", unicodedata.normalize("NFKC", text))
    if any(ch in _SIMPLIFIED for ch in bare):
        return True
    if _HIRAGANA.search(bare) or len(_HAN.findall(bare)) < 4:
        return False
    return len(_CHINESE_GRAMMAR.findall(bare)) >= 2


# What may hold a Japanese term in an English statement: brackets and quotation marks.
_ENCLOSED = re.compile(r"\([^()]*\)|（[^（）]*）|「[^「」]*」|『[^『』]*』|\"[^\"]*\"|“[^”]*”")


def untranslated(text: str) -> list[str]:
    """Japanese words left in an English statement ("theカラフトマス", "IUPAC naming法").

    A run of kana / kanji counts when it stands in the sentence's own words: not a term
    given in brackets or quotes beside its English ("pink salmon (カラフトマス)"), and not one
    letter inside a code ("13-ユ-30"): a single character counts only when it is glued to a
    Latin letter. A statement mostly in Japanese is :func:`wrong_language`'s case.
    """
    bare = _ENCLOSED.sub(" ", text)
    out = []
    for m in JA_RUN.finditer(bare):
        before = bare[m.start() - 1] if m.start() else " "
        after = bare[m.end()] if m.end() < len(bare) else " "
        glued = before.isascii() and before.isalpha() or after.isascii() and after.isalpha()
        if len(m.group()) >= 2 or glued:
            out.append(m.group())
    return out


def language_findings(statements: list[Claim], language: str) -> list[Finding]:
    """An ``answer_language`` finding (major) per statement not in the answer's language.

    In an English answer, a statement that leaves Japanese words untranslated
    (:func:`untranslated`) gets one too: the revision is asked to write them in English.
    """
    lang = "ja" if language == "ja" else "en"
    findings: list[Finding] = []
    for i, st in enumerate(statements):
        if lang == "ja" and _source_term(st):
            continue
        if wrong_language(st["text"], lang):
            detail = asked_texts.WRONG_LANGUAGE[lang].format(text=st["text"])
        elif lang == "en" and (words := untranslated(st["text"])):
            detail = asked_texts.UNTRANSLATED.format(text=st["text"], words=", ".join(words))
        else:
            continue
        findings.append({"type": "answer_language", "severity": "major", "claim_index": i,
                         "detail": detail})
    return findings


_TERM = re.compile(r"[A-Za-z0-9][A-Za-z0-9 .&'-]{0,38}[A-Za-z0-9.]?")


def _source_term(statement: Claim) -> bool:
    """A bare name in Latin letters that its cited Japanese quote writes so ("UNTAG", "JCP").

    The answer to 「国際連合ナミビア独立支援グループの略称は」 is the source's own spelling; there
    is no Japanese to rewrite it in.
    """
    text = unicodedata.normalize("NFKC", statement["text"]).strip().rstrip("。.")
    if not _TERM.fullmatch(text):
        return False
    return any(text in unicodedata.normalize("NFKC", c.get("quote", ""))
               and is_japanese_text(c.get("quote", ""), share=0.2)
               for c in statement.get("citations", []))


# ------------------------------------------------------------------------------------------
# What holds when the budget is spent: the statements whose claims all passed.
#
# After the last revision, an answer with one statement the judge did not accept used to be
# thrown away whole, also when its other statements were verified and answered the question
# ("Columbia University is a private Ivy League research university in Upper Manhattan",
# beside a revision's "Capitol Technology University is not ..." that no sentence states).
# The verified part is delivered instead, flagged ``partial_answer``, when it still answers
# the question by the same deterministic checks as a whole draft: a kept statement unrelated
# to the question and to the rest is left out, as it is from a whole draft, and what remains
# must raise no ``off_question`` finding (the asked kind of value or yes/no predicate is
# there). Otherwise the run abstains as before.
#
# A verified draft whose only fault is that some of its statements restate the question (or a
# heading) while the others write the word that fills its gap (「中東は良質の優れた油田が
# 多いだけでなく」 beside 「今日まで世界最大の石油輸出地域となっている」 for 「中東は良質の優れた
# 何が多いだけでなく…」) is not revised:
# the answering statements are delivered the same way (:func:`answering_part`). A revision
# only had those statements to drop, and it may reword the answer on the way (one wrote 石油
# for the source's 油田). The same holds for a question that asks a number or a date
# ("…, Tosca an Italian libretto has how many acts?"): a statement that restates the question
# beside one that gives a value the question does not hold ("Tosca an Italian libretto has
# three acts") is left out. The revision of such a draft used to write it again word for word,
# and the run then abstained.

PASSING = ("supported", "unchecked")
"""Claim verdicts that do not block an answer (``unchecked``: sampled out or deferred)."""


def all_pass(claims: list[Claim]) -> bool:
    """Whether there are claims and every one of them passes (:data:`PASSING`)."""
    return bool(claims) and all(c.get("verdict") in PASSING for c in claims)


def verified_part(statements: list[Claim], claims: list[Claim], question: str,
                  evidence: list[Evidence], language: str) -> list[int] | None:
    """Indices of the statements to deliver, or None when no part of the draft answers.

    A statement is kept when it has claims and all of them pass; None also when every
    statement passes (that is a whole answer, not a part of one).
    """
    if not statements or not claims:
        return None
    having = {c.get("statement", -1) for c in claims}
    failing = {c.get("statement", -1) for c in claims if c.get("verdict") not in PASSING}
    keep = [i for i in range(len(statements)) if i in having and i not in failing]
    if not keep or not failing:
        return None
    unrelated = set(unrelated_statements(question, [statements[i] for i in keep]))
    keep = [k for n, k in enumerate(keep) if n not in unrelated]
    kept = [statements[i] for i in keep]
    findings = off_question_findings(question, kept, evidence, language)
    if any(f["type"] == "off_question" for f in findings):
        return None
    return keep


def answering_part(statements: list[Claim], question: str, evidence: list[Evidence],
                   language: str) -> list[int] | None:
    """Indices of the statements that answer, when the others only restate the question.

    None unless some statements (not all) have an ``off_question`` finding of their own, and
    the rest, less any unrelated statement, raise none and show that they answer: where the
    question is a source sentence with a gap (``asked.gap_fillers``), they hold the word that
    fills it; where an English question asks a number or a date
    (``on_question.question_kind``), one of them gives such a value in words the question
    does not hold. Without that nothing shows that
    the rest answers: bare nouns beside a restated question (「住民票」「選挙人名簿」 for
    「…組織はなにか」) are revised, as before.
    """
    fillers = [word for word, _ in gap_fillers(question, evidence)]
    kind = question_kind(question) if language != "ja" else None  # Japanese: the gap word
    if not fillers and kind is None:
        return None
    findings = off_question_findings(question, statements, evidence, language)
    flagged = {f["claim_index"] for f in findings if f["type"] == "off_question"}
    if not flagged or len(flagged) == len(statements):
        return None
    keep = [i for i in range(len(statements)) if i not in flagged]
    unrelated = set(unrelated_statements(question, [statements[i] for i in keep]))
    keep = [k for n, k in enumerate(keep) if n not in unrelated]
    kept = [statements[i] for i in keep]
    if not any(word in s["text"] for s in kept for word in fillers) and not (
            kind is not None and any(has_kind(_beyond(s["text"], question), kind)
                                     for s in kept)):
        return None
    if any(f["type"] == "off_question"
           for f in off_question_findings(question, kept, evidence, language)):
        return None
    return keep


def _beyond(text: str, question: str) -> str:
    """The words of ``text`` that ``question`` does not hold ("three" of "… has three acts")."""
    asked = {w.lower().strip(".,;:!?\"'") for w in question.split()}
    return " ".join(w for w in text.split() if w.lower().strip(".,;:!?\"'") not in asked)
