"""Does the answer answer? Deterministic checks of each statement against the question.

A statement is *off the question* when it only restates a heading of the evidence or the
question itself (``第7条（解除）。`` for "how much notice is needed to terminate?"), or when the
answer as a whole lacks the kind of thing the question asks for: a number for "how much /
how many / いくら / 何日 / 何人", a date for "when / いつ", an amount of money for "how much
does it cost / いくら", or, for a yes/no question, any cited sentence (statement or quote)
that speaks to what is asked rather than only to its subject (``asked.py``). Each gets an
``off_question`` finding (``major``) whose detail tells the generator what to fix.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from grounded_rag.prompts import addresses as asked_texts
from grounded_rag.prompts import feedback as texts
from grounded_rag.types import Claim, Evidence, Finding
from grounded_rag.verification import asked, counts, coverage, rules
from grounded_rag.verification.echoes import echoes_feedback
from grounded_rag.verification.evidence import key_tokens, split_sentences, stem
from grounded_rag.verification.gap import gap_fillers, gap_unwritten
from grounded_rag.verification.restates import restates_itself
from grounded_rag.verification.subjects import topic_uncited

Kind = Literal["number", "date"]

_NUMBER_Q = re.compile(
    r"\bhow\s+(?:much|many|long|far|old|often|big|large|heavy|high|tall|wide|fast)\b"
    r"|\bwhat\s+(?:percentage|percent|amount|number|size|price|fee|rate)\b"
    # Not 「いくつかの」「いくらでも」 (some, any), 「何年も」「何度も」 (for years, many times),
    # 「何時代」「何分解」 (which era, what kind of decomposition), 「何人が」 (which people).
    r"|いくら(?!でも|か)|いくつ(?!か)"
    r"|何(?:日|時間|時|円|回|歳|件|年|分|割|台|個|本|枚|週|名|度|倍|%|％|パーセント"
    r"|ヶ月|か月|カ月|ヵ月|キロ|メートル|ドル)(?![もか代解])"
    r"|" + counts.HOW_MANY_PEOPLE +
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
    if _NUMBER_Q.search(text) or counts.asks_count(text):
        return "number"
    return None


def has_kind(text: str, kind: Kind) -> bool:
    """True when ``text`` gives a number (or a date) other than a heading's numbering."""
    text = counts.NUMBERING.sub(" ", unicodedata.normalize("NFKC", text))
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
            elif counts.NUMBERING.match(line) or (len(line) <= 25 and not _DIGIT.search(line)
                                            and not _SENTENCE_PUNCT.search(line)):
                out.append(line)
            first = split_sentences(line)
            if first and counts.NUMBERING.match(first[0].text) and len(first[0].text) <= 25:
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

    - A statement that is itself a question (「…は現在でもありますか？」) answers nothing, nor
      does one that repeats a check's reason ("The evidence does not mention: …").
    - A statement whose content tokens all come from one heading of the evidence (and, for a
      question that asks for a thing, add no word to the question's), or all come from the
      question, or says its subject is itself (``restates.restates_itself``), only restates
      it (questions with a question word only), unless it holds the word that fills the
      question's gap in a source sentence (``gap.gap_fillers``).
    - When no statement writes that word (``gap.gap_unwritten``), none answers.
    - When the question asks for a number, a date or an amount of money and no statement
      gives one, every statement lacks it; when it asks how many and the statements' only
      figures are dates (``counts.has_count``), every statement lacks the count.
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
                and counts.asks_count(question)
                and not any(counts.has_count(s["text"]) for s in statements))
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
        elif rules.enabled("echoes") and echoes_feedback(statement["text"]):
            rules.fired("echoes")
            reason = texts.OFF_QUESTION_REASONS[lang]["feedback"]
        elif tokens and not adds and any(tokens <= h for h in heading_tokens):
            reason = texts.OFF_QUESTION_REASONS[lang]["heading"]
        elif tokens and not any(f in statement["text"] for f in fillers) and (
                tokens <= question_tokens or (rules.enabled("restates")
                                              and restates_itself(statement["text"], question))):
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
