"""What a question asks: its answer type, its predicate, its count, the gap it leaves.

- What a question asks: the predicate of a yes/no question, or an amount of money.
- A date does not answer "how many": count questions and the figures that answer them.
- What fills a Japanese question's gap in a source sentence the question was made from.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from grounded_rag.retrieval.text_analysis import sudachi_tokenizer, tokenize
from grounded_rag.types import Evidence
from grounded_rag.verification.evidence import split_sentences

# ------------------------------------------------------------------------------------------
# What a question asks: the predicate of a yes/no question, or an amount of money.
#
# A yes/no question ("Can the Aurora LX-3 be carried in an airplane cabin?", 「追加の宿泊費は
# 支給されますか？」) names a subject and asks a predicate about it. An answer that talks about
# the subject but never about the predicate ("The Aurora LX-3 carries a 24-month warranty")
# does not answer it. ``asked_terms`` returns the predicate's content words: the question's
# content words minus the subject (English: the noun phrase after the auxiliary; Japanese: the
# words before the last topic particle は / も, or subject particle が) and minus the words of
# the evidence's document titles (they name what is asked about). A comparison ("Are A and B
# both American?", 「AとBは同じか」) is answered by what the sources say of each compared
# thing, rarely in the question's words ("same country"), so its terms are the compared things.
# ``addressed`` is true when at
# least half of them (rounded up) occur in the cited sentences, stemmed (English: Snowball;
# Japanese: Sudachi normalized forms, as BM25 indexes them). Half rather than one: a common
# verb recurs in an unrelated sense ("carries a warranty" for "be carried in a cabin").
#
# ``asks_money`` tells a "how much does it cost / いくら" question; ``has_money`` whether a text
# gives an amount of money (or says it is free).

_EN_AUX = frozenset(
    "can could is are was were am does do did will would should shall has have had may "
    "might must".split()
)
_BE = frozenset("is are was were am".split())
# Words that may open the subject without belonging to it.
_EN_OPENERS = frozenset(
    "the a an this that these those my your our their its his her both all any each every "
    "it they he she we you i".split()
)
# Where the predicate of a "be" question starts, when the subject is not a name.
_EN_PREDICATE_START = frozenset(
    "be been being a an the both all also still ever really only always never not in on at "
    "for with by from of to into over under within without than as more less".split()
)
_EN_WORD = re.compile(r"[A-Za-z0-9\u00c0-\u024f][A-Za-z0-9\u00c0-\u024f'\-.]*"
                      r"[A-Za-z0-9\u00c0-\u024f]|[A-Za-z0-9\u00c0-\u024f]")
"""A word of an English question: Latin letters with their accents ("Károly", "François")."""
_WH_EN = re.compile(r"\b(?:what|when|where|who|whom|whose|which|why|how)\b", re.I)
_WH_JA = re.compile(r"何|なに|なん(?:と|て|で|の|に|だ|です)|いつ|どこ|誰|だれ|どなた"
                    r"|いくら|いくつ|幾|どの|どう|なぜ|どれ|どちら|どっち|どんな|いかなる|いかに")
_COMPARE_JA = re.compile(r"同じ|異な|違う|違い|共通|両方|ともに|共に|どちらも")
_CHOICE_EN = re.compile(r"\bor\b", re.I)
# 「赤字か黒字か」「合法ですか？違法ですか？」「見られるか、見られないか」: either/or.
_CHOICE_JA = re.compile(r"それとも|か[、,]|か[?？][^?？]*か"
                        r"|か[^か、,。?？]{1,15}か\s*[?？。．!！]*\s*$")
_YES_NO_JA = re.compile(r"(?:か|かな|かね|でしょうか)\s*[?？。．.!！]*\s*$")
_TOPIC_JA = frozenset({"は", "も"})
_CASE_BEFORE_TOPIC = frozenset({"で", "に", "へ", "から", "まで", "より"})
_JA_DROP_POS = frozenset({"助詞", "助動詞", "補助記号", "空白", "記号", "代名詞", "接頭辞"})
_JA_DROP_FORMS = frozenset(
    {"為る", "する", "居る", "いる", "有る", "ある", "成る", "なる", "事", "こと", "物", "もの",
     "出来る", "できる", "の", "ん"}
)
_COMPOUND_PARTICLE_VERBS = frozenset(
    {"おく", "於く", "関する", "つく", "就く", "付く", "よる", "因る", "依る", "対する", "とる",
     "取る", "する", "わたる", "渡る", "かける", "掛ける", "伴う", "基づく"}
)
_LATIN = re.compile(r"^[a-z0-9][a-z0-9'\-.]*$")

_MONEY_Q = re.compile(
    r"\bhow\s+much\b(?:(?!\?).)*\b(?:cost|costs|costed|fee|fees|price|priced|pay|pays|paid|"
    r"charge|charged|charges|spend|spent|earn|earned|earns|worth|rent|salary|wage|fine|"
    r"tuition|money|dollars?|sell|sold|buy|bought|budget|refund|deposit|premium|allowance)\b"
    r"|\bhow\s+much\s+(?:is|are|was|were|will|would)\s+(?:the|a|an|this|that|it)?\s*"
    r"(?:\w+\s+)?(?:fee|price|cost|rent|salary|fare|charge|allowance|deposit|premium)s?\b"
    r"|\bwhat\s+(?:is|was|are|were)\s+the\s+(?:\w+\s+)?(?:price|cost|fee|fare|salary)s?\b"
    r"|\bhow\s+much\s+money\b"
    r"|いくら(?!か|でも)"
    r"|(?:料金|費用|金額|価格|値段|代金|運賃|給与|給料|手当|賃金|家賃|手数料|会費|月額|年額)"
    r"[^?？。]*(?:どのくらい|どれくらい|どの程度|どれほど)",
    re.I | re.S,
)
# 「長さは、いくらですか」 asks for a measure, not a price.
_MEASURE = re.compile(r"長さ|重さ|高さ|深さ|広さ|距離|面積|体積|容量|大きさ|速さ|速度|温度"
                      r"|割合|比率"
                      r"|\b(?:long|tall|heavy|far|length|weight|height|distance|area)\b", re.I)
# An amount of money, or a share of one ("3分の2", "10% of the order value"): "how much of
# the GDP" is answered by a share. "何ドル" asks for a number only (the unit is asked).
_MONEY = re.compile(
    r"[$¥€£￥]|\d[\d,.]*\s*[十百千万億兆]*\s*(?:円|ドル|ユーロ|ポンド|元|ウォン)"
    r"|[十百千万億兆]円|\d\s*(?:%|パーセント|割)|分の\d|\bper\s*cent\b|\bpercent\b"
    r"|\b(?:dollars?|cents?|yen|euros?|pounds?|usd|jpy|eur|gbp)\b"
    r"|\bfree\b|\bno\s+(?:charge|cost|fee)\b|\bat\s+no\s+cost\b|\bcomplimentary\b"
    r"|無料|無償|タダ|不要|かからない|かかりません",
    re.I,
)


@dataclass(frozen=True)
class Term:
    """A content word of the question: as written, and as the tokenizer indexes it."""

    surface: str
    token: str


def is_yes_no(question: str) -> bool:
    """True for a yes/no question (not a wh- or either/or question)."""
    text = unicodedata.normalize("NFKC", question).strip()
    if not text:
        return False
    words = _EN_WORD.findall(text)
    if _has_japanese(text):
        return bool(_YES_NO_JA.search(text) and not _WH_JA.search(text)
                    and not _CHOICE_JA.search(text))
    return bool(words and words[0].lower() in _EN_AUX and not _CHOICE_EN.search(text)
                and not _WH_EN.match(words[1] if len(words) > 1 else ""))


def asked_terms(question: str, titles: Iterable[str] = ()) -> list[Term]:
    """Content words of a yes/no question's predicate, in question order (may be empty)."""
    text = unicodedata.normalize("NFKC", question).strip()
    known = {t for title in titles for t in tokenize(title)}
    terms = _ja_terms(text) if _has_japanese(text) else _en_terms(text)
    seen: set[str] = set()
    out: list[Term] = []
    for term in terms:
        if term.token in known or term.token in seen:
            continue
        seen.add(term.token)
        out.append(term)
    return out


def compared_things(question: str) -> list[list[Term]]:
    """The things an English yes/no comparison names, one group of terms per thing.

    "Are both Rhapidophyllum and Spartium flowering plants?" -> [[Rhapidophyllum],
    [Spartium]]; "Are Sparta and King Charles both from the same country?" -> [[Sparta],
    [King, Charles]]. Only names (capitalised words or words with digits) joined by "and" /
    "&"; empty for anything else, and for Japanese questions.
    """
    text = unicodedata.normalize("NFKC", question).strip()
    if _has_japanese(text) or not is_yes_no(text):
        return []
    words = _EN_WORD.findall(text)
    subject, _ = _en_split(words)
    if not any(w.lower() in ("and", "&") for w in subject):
        return []
    groups: list[list[Term]] = [[]]
    for word in subject:
        low = word.lower()
        if low in ("and", "&"):
            groups.append([])
        elif low not in _EN_OPENERS | {"of"}:
            groups[-1] += _terms([word])
    groups = [g for g in groups if g]
    return groups if len(groups) >= 2 else []


_CONDITION_EN = re.compile(
    r"\b(?:[Ii]f|[Uu]nless|[Ii]n\s+case(?:\s+of)?|[Ii]n\s+the\s+event\s+(?:of|that)"
    r"|[Pp]rovided\s+that)\b"
    # a lower-case "when" inside the question ("When We Were Kings" is a title), not
    # asking a date ("..., and when did it close?")
    r"|(?<=\S)\s+when\b(?!\s+(?:is|are|was|were|do|does|did|will|would|can|could|should|"
    r"has|have|had|must)\b)",
)
_CONDITION_END_EN = re.compile(r"[,;?!.]")
_NAMING = re.compile(r"(?:何|なん)と(?:呼|よ|い|言)|(?:何|なん)という"
                     r"|\b(?:called|named|known\s+as)\b")
_CONDITION_JA = frozenset({"場合", "とき", "時", "際"})


def condition_terms(question: str, titles: Iterable[str] = ()) -> list[Term]:
    """Content words of the condition a question sets (may be empty).

    「悪天候で飛行機が欠航した場合、追加の宿泊費は…」 asks about a case: the sentence that
    answers it speaks to that case (悪天候, 欠航), where a sentence about the same subject in
    general (「宿泊費は1泊12,000円を上限…」) does not. English: the clause after *if*,
    *unless*, *in case (of)*, *in the event of*, or a *when* that is not a question word.
    Japanese: the clause before 場合 / とき / 時 / 際, back to the previous comma. Words of the
    evidence's document titles and question words are dropped, as in :func:`asked_terms`.
    """
    text = unicodedata.normalize("NFKC", question).strip()
    if _NAMING.search(text):  # 「…場合を何と呼ぶか」: the case defines what is named
        return []
    known = {t for title in titles for t in tokenize(title)}
    if _has_japanese(text):
        terms = _ja_condition(text)
    else:
        terms = []
        for m in _CONDITION_EN.finditer(text):
            clause = _CONDITION_END_EN.split(text[m.end():], maxsplit=1)[0]
            if not _WH_EN.search(clause):  # "when what channel premiered" asks, not sets
                terms += _terms(_EN_WORD.findall(clause))
    seen: set[str] = set()
    out: list[Term] = []
    for term in terms:
        if term.token in known or term.token in seen or _WH_JA.fullmatch(term.surface):
            continue
        seen.add(term.token)
        out.append(term)
    return out


def _ja_condition(text: str) -> list[Term]:
    """Content words of each 「…場合 / とき / 時 / 際」 clause that sets a case.

    Not a clause that holds a question word (「何歳の時」 asks), nor a case followed by を / が
    (「降らない場合を何と呼ぶ」 asks for the case's name; 『失われた時を求めて』 is a title).
    """
    morphemes = list(sudachi_tokenizer().tokenize(text.lower()))
    out: list[Term] = []
    start = 0
    for end, marker in enumerate(morphemes):
        if marker.surface() in ("、", ",", "，", "。"):
            start = end + 1
            continue
        if (marker.surface() not in _CONDITION_JA or marker.part_of_speech()[0] != "名詞"
                or end == start):
            continue
        after = morphemes[end + 1].surface() if end + 1 < len(morphemes) else ""
        clause = morphemes[start:end]
        start = end + 1
        if after in ("を", "が") or any(_WH_JA.match(m.surface()) for m in clause):
            continue
        for m in clause:
            pos = m.part_of_speech()
            if pos[0] in _JA_DROP_POS or pos[0] == "連体詞" or pos[1] == "非自立可能":
                continue
            out += _ja_content_terms(m)
    # One kanji of a split compound (飛行機 -> 飛行 + 機) says little on its own.
    longer = [t for t in out if len(t.token) > 1]
    return longer or out


def addressed(terms: Sequence[Term], texts: Iterable[str]) -> bool:
    """True when at least half of ``terms`` (rounded up) occur in ``texts``."""
    if not terms:
        return True
    tokens = {t for text in texts for t in tokenize(text)}
    found = sum(1 for term in terms if _occurs(term.token, tokens))
    return 2 * found >= len(terms)


def missing_terms(terms: Sequence[Term], texts: Iterable[str]) -> list[Term]:
    """The ``terms`` that occur in none of ``texts``."""
    tokens = {t for text in texts for t in tokenize(text)}
    return [term for term in terms if not _occurs(term.token, tokens)]


def asks_money(question: str) -> bool:
    """True when the question asks for an amount of money (a price, fee, wage, いくら)."""
    text = unicodedata.normalize("NFKC", question)
    return bool(_MONEY_Q.search(text)) and not _MEASURE.search(text)


def has_money(text: str) -> bool:
    """True when ``text`` gives an amount of money, or says that something is free."""
    return bool(_MONEY.search(unicodedata.normalize("NFKC", text)))


def _has_japanese(text: str) -> bool:
    return re.search(r"[\u3040-\u30ff\u3400-\u9fff]", text) is not None


def _occurs(token: str, tokens: set[str]) -> bool:
    if token in tokens:
        return True
    # A close variant: the stemmer leaves "america" / "american" apart.
    if len(token) >= 6 and _LATIN.match(token):
        return any(len(t) >= 6 and t[:6] == token[:6] for t in tokens)
    return False


def _en_terms(text: str) -> list[Term]:
    words = _EN_WORD.findall(text)
    if not words or words[0].lower() not in _EN_AUX:
        return _terms(words)
    subject, predicate = _en_split(words)
    if any(w.lower() in ("and", "&") for w in subject):
        # "Are Sparta and King Charles both from the same country?": the sources answer it by
        # what they say of each compared thing, rarely in the question's own words.
        return _terms([w for w in subject if w.lower() not in _EN_OPENERS | {"and", "of", "&"}])
    return _terms(predicate)


def _en_split(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """(subject words, predicate words) of an English yes/no question, the auxiliary dropped."""
    aux, rest = words[0].lower(), list(words[1:])
    if rest and rest[0].lower() == "there":  # "Is there a lounge?": all of it is asked
        return [], rest[1:]
    i = 0
    while i < len(rest) and rest[i].lower() in _EN_OPENERS:
        i += 1
    start = i
    if (i + 1 < len(rest) and not _is_name(rest[i]) and _is_name(rest[i + 1])
            and rest[i].lower() not in _EN_PREDICATE_START
            and any(w.lower() in ("and", "&") for w in rest[i + 2:])):
        # "Do filmmakers Chris Carter and Theo van Gogh …", "Did the movies The Castaway
        # Cowboy and The Straight Story …": a word for what the names are, before them
        rest = rest[:i] + rest[i + 1:]
    if i < len(rest) and _is_name(rest[i]):
        # "the Aurora LX-3", "Pam Veasey and Jon Jost": a name, joined by and / of / &.
        while i < len(rest) and (_is_name(rest[i]) or (
                rest[i].lower() in ("and", "of", "&") and i + 1 < len(rest)
                and _is_name(rest[i + 1]))):
            i += 1
    elif aux in _BE:
        # "Is the monthly fee refundable?": up to a predicate marker, else all but the last.
        while i < len(rest) - 1 and not _starts_predicate(rest[i], i > start):
            i += 1
    elif i < len(rest):
        i += 1  # "Does the fee include tax?": the head noun cannot be told from the verb
    return rest[:i], rest[i:]


def _is_name(word: str) -> bool:
    return word[:1].isupper() or any(c.isdigit() for c in word)


def _starts_predicate(word: str, after_subject: bool) -> bool:
    low = word.lower()
    return low in _EN_PREDICATE_START or (after_subject and (
        low.endswith(("ed", "en", "ly")) and len(low) > 3))


def _terms(words: Sequence[str]) -> list[Term]:
    out = []
    for word in words:
        for token in tokenize(word):
            out.append(Term(word, token))
    return out


def _ja_content_terms(m: Any) -> list[Term]:
    """The terms one content morpheme gives.

    Latin words as BM25 tokenizes them, else its normalized form (none for light verbs and
    nouns such as する, こと).
    """
    if _LATIN.match(m.surface()):
        return [Term(m.surface(), t) for t in tokenize(m.surface())]
    form = m.normalized_form()
    return [] if form in _JA_DROP_FORMS else [Term(m.surface(), form)]


def _ja_terms(text: str) -> list[Term]:
    """Content words after the last topic (は / も) or, failing that, subject (が) particle."""
    morphemes = list(sudachi_tokenizer().tokenize(text.lower()))
    content: list[tuple[int, Term]] = []
    topic = subject = -1
    for i, m in enumerate(morphemes):
        pos = m.part_of_speech()
        surface = m.surface()
        if pos[0] == "助詞":
            previous = morphemes[i - 1].surface() if i else ""
            if surface in _TOPIC_JA and previous not in _CASE_BEFORE_TOPIC:
                topic = i  # 「海外では」 is a place, not the topic
            elif surface == "が" and pos[1] == "格助詞":
                subject = i
            continue
        if pos[0] in _JA_DROP_POS or pos[1] == "非自立可能":
            continue
        if pos[0] == "動詞" and i and morphemes[i - 1].surface() in ("に", "と") and (
                m.dictionary_form() in _COMPOUND_PARTICLE_VERBS):
            continue  # 「において」「に関して」「によって」 work as particles
        content += [(i, term) for term in _ja_content_terms(m)]
    cut = topic if topic >= 0 else subject
    if topic >= 0 and _COMPARE_JA.search(text):
        # 「AとBは同じか」: answered by what the sources say of each compared thing.
        return [term for i, term in content if i < topic]
    after = [term for i, term in content if i > cut]
    # 「在宅勤務手当はありますか」: the predicate is only ある; what is asked about is the topic.
    return after or [term for _, term in content]


# ------------------------------------------------------------------------------------------
# A date does not answer "how many": count questions and the figures that answer them.
#
# "How many acts does the opera have?" asks for a count. A statement whose only figures are a
# date ("The music video was released on March 4, 2005.", 「2005年3月に発売された。」) gives
# a number, but not the one asked for: it is a sentence about something else. ``asks_count``
# tells a count question (how many / how much / what number / いくつ / 何人 / 何個 / 何回 ...),
# not a duration, an age or a frequency ("how many years", "how long", 何年, 何歳: a span of
# dates may answer those); ``has_count`` whether a text gives a figure once its dates
# (years, month-day, 2005年3月4日, "in 1999", "the 1990s") are set aside.

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


# ------------------------------------------------------------------------------------------
# What fills a Japanese question's gap in a source sentence the question was made from.
#
# Reading-comprehension questions, and many a user's first questions, copy a sentence of the
# source and put a question word where the answer was: 「中東は良質の優れた何が多いだけでなく、
# …」 over 「中東は良質の優れた油田が多いだけでなく、…」. When the text before the question word
# ends a stretch of the sentence and the text after it (its first characters at least) follows
# a few characters later, what lies between is the answer, by the sentence's own words: 「油田」.
# For 「どの党」 or 「どんな態度」 the noun after the question word belongs to the answer too
# (「共産党と新社会党」). Numbers are left to :mod:`grounded_rag.verification.cascade` (何年,
# 何人), and so are English questions, whose question word moves to the front.
#
# On JSQuAD dev (4,442 questions, each against its gold passage) the filler is found for 229
# questions and equals a gold answer for 217; the others are the answer with a word of context
# ("南部のアイントホーフェン空港", "立前座(たてぜんざ)"). The conditions were written while
# reading those; on JaQuAD dev, not read before, it is found for 4 of 612 (3 equal a gold
# answer, the fourth is one with its abbreviation in brackets).
# ``benchmarks/screens.py --screens cloze`` counts how often it settles right and wrong answers.

_GAP = re.compile(r"何|なに|誰|だれ|どこ|どれ|どの|どんな|どういう")
_NOT_GAP = re.compile(
    r"など|何らか|何らの|何ごと|何事|何も|何度|何か[をがにの]|どこまで|どこでも|どこか|どれも"
    r"|どの+ような|誰も|誰か|いくつか")
"""Question-word look-alikes that ask nothing: 「など」's どの, 「何らか」, 「どこでも」."""
_END = re.compile(r"(?:でしょう|です|ます)?[かの]?[？?。\s]*$")
_SENTENCE_STOP = re.compile(r"(?<=[。？?！!])")
_COUNTER_AFTER = re.compile(r"[\u3400-\u9fff0-9A-Za-z]")
_NOUN = re.compile(r"[\u3400-\u9fff\u30a0-\u30ffA-Za-z]+")
_PARTICLE_FIRST = re.compile(r"^[のはをがにで](?=[^\u3040-\u309f])")
_DEMONSTRATIVE = re.compile(r"^(?:この|その|あの|これ|それ|あれ|ここ|そこ)")
_READING = re.compile(r"\([^()]*\)$")
_KANA_ONLY = re.compile(r"[\u3040-\u309f]+")
_BAD_FILLER = re.compile(r"[。、,.!?！？0-9]")

LEFT_MIN = 5
"""Characters of the question before the gap that must run on into the gap in the sentence."""
LEFT_SHARE = 0.4
"""...and at least this share of the text before the gap."""
RIGHT_MIN = 3
"""Characters of the question after the gap that must follow the filler in the sentence
(all of them when it has only two: 「何が」 …「が多い」)."""
FILLER_MAX = 15


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _trim(filler: str) -> str:
    """The filler without a particle before it, its quote marks, and what follows a quote."""
    filler = _PARTICLE_FIRST.sub("", filler)
    quoted = re.search(r"「([^「」]+)」", filler)
    if quoted:
        return quoted.group(1)
    if "」" in filler:
        filler = filler[:filler.index("」")]
    return filler.strip("「」『』 ")


def _gap(question: str) -> re.Match[str] | None:
    """The question's one question word, or ``None`` (none, or more than one)."""
    blocked = [m.span() for m in _NOT_GAP.finditer(question)]
    gaps = [g for g in _GAP.finditer(question)
            if not any(a <= g.start() < b for a, b in blocked)]
    return gaps[0] if len(gaps) == 1 else None


def gap_word(question: str) -> str:
    """The question word whose place the filler takes (「何」, 「どの」), or ``""``."""
    gap = _gap(_nfkc(question).strip())
    return gap.group() if gap else ""


def gap_filler(question: str, sentence: str) -> tuple[str, ...]:
    """What fills the question word's place in ``sentence``.

    ``()`` when nothing does; else the filler and, for 「どの X」/「どんな X」, the filler
    with X too (both are answers).
    """
    question, sentence = _nfkc(question).strip(), _nfkc(sentence)
    gap = _gap(question)
    if gap is None:
        return ()
    # Within the question's sentence that has the gap: a question may set a scene first.
    left = _SENTENCE_STOP.split(question[:gap.start()])[-1]
    right = _END.sub("", _SENTENCE_STOP.split(question[gap.end():])[0])
    if gap.group() == "何" and _COUNTER_AFTER.match(right):
        return ()  # 何年, 何人: a number, the cloze rule's
    if len(left) < LEFT_MIN or len(right) < 2:
        return ()
    for size in range(len(left), max(LEFT_MIN, int(LEFT_SHARE * len(left))) - 1, -1):
        start = sentence.find(left[-size:])
        if start >= 0:
            start += size
            break
    else:
        return ()
    for size in range(len(right), min(RIGHT_MIN, len(right)) - 1, -1):
        end = sentence.find(right[:size], start)
        if end >= 0:
            break
    else:
        return ()
    span = sentence[start:end]
    if len(span) > FILLER_MAX + 4 or _BAD_FILLER.search(span):
        return ()  # a clause, not a word: the question's words are spread over the sentence
    filler = _DEMONSTRATIVE.sub("", _trim(span))
    if not 1 <= len(filler) <= FILLER_MAX or _KANA_ONLY.fullmatch(filler):
        return ()  # 「ら」 of 「これら」: a word's tail, not an answer
    noun = _NOUN.match(right) if gap.group() != "何" else None
    if noun and filler + noun.group() in sentence:
        return (filler, filler + noun.group())
    return (filler,)


def gap_fillers(question: str, evidence: Sequence[Evidence]) -> list[tuple[str, str]]:
    """(filler, sentence) for every evidence sentence the question's gap is filled in.

    ``[]`` when sentences fill it differently (the question is not pinned to one).
    """
    found: list[tuple[str, str]] = []
    for e in evidence:
        for sentence in split_sentences(e["text"]):
            for filler in gap_filler(question, sentence.text):
                found.append((filler, sentence.text))
    if len({f for f, _ in found if not any(f != g and g.startswith(f) for g, _ in found)}) > 1:
        return []
    return found


def gap_unwritten(texts: Sequence[str], found: Sequence[tuple[str, str]]) -> str:
    """The word that fills the question's gap when no text writes it, else ``""``.

    ``found`` is :func:`gap_fillers`' result for the question and its evidence.

    A text writes it when it holds three characters of it in one piece (all of a shorter
    one; a reading in brackets aside), or is itself a part of it (「農業」 of 「稲作を基盤と
    する農業」, 「主任行政官」 of 「平和維持軍司令部の主任行政官」). An answer to 「…何にもとづく
    不当な攻撃を受けていた？」 that does not say 「反ユダヤ主義」, which the source sentence says in
    the gap's place, answers something else, however true its statements are.
    """
    fillers = {filler for filler, _ in found}
    if not fillers:
        return ""
    written = [_nfkc(t).strip().rstrip("。.") for t in texts]
    for filler in fillers:
        core = _READING.sub("", filler)  # 「立前座」 of 「立前座(たてぜんざ)」
        need = min(len(core), 3)
        if any(core[i:i + need] in t for t in written for i in range(len(core) - need + 1)):
            return ""
        if any(t and t in filler for t in written):  # 「農業」 of 「稲作を基盤とする農業」
            return ""
    return max(fillers, key=len)
