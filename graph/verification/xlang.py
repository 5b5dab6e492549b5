"""Cross-language context for the value cues: does a sentence speak of the claim's thing?

The same-language cues judge "the same thing" by the words a claim and an evidence sentence
share once numbers are removed. An English claim shares no words with a Japanese sentence,
so across languages the words are first mapped to a small set of language-neutral concepts
(fee, monthly, tax, contract, term, notice, start...), the things that values in answers are
usually about. The context of a sentence is then the share of the claim's concepts that the
sentence also names, read like the word overlap it stands in for: 0 means nothing in common,
and a value there never contradicts the claim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from grounded_rag.verification.evidence import normalize

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")

# concept: (English words, each matched from a word start: a stem unless it ends in "$",
# which asks for the whole word; Japanese spellings, matched anywhere). Connectives that
# follow any value (から, まで, from, by) are left out: they would tie every sentence to
# every claim.
_CONCEPTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "fee": (("fee$", "fees$", "price", "cost", "charge", "rent", "fare$", "fares$", "tuition",
             "commission", "remuneration"),
            ("料金", "委託料", "利用料", "使用料", "手数料", "報酬", "費用", "代金", "価格", "値段",
             "賃料", "家賃", "対価", "料は", "料を", "料が", "費は", "費を")),
    "salary": (("salary", "salaries", "wage"),
               ("給与", "給料", "賃金", "月給", "年収", "年俸", "時給", "日給")),
    "monthly": (("monthly", "per month", "a month$", "each month", "every month"),
                ("月額", "毎月", "月々", "月当たり", "月あたり", "月給")),
    "annual": (("annual", "yearly", "per year", "a year$", "each year", "every year"),
               ("年額", "毎年", "年間", "年あたり", "年当たり", "年収", "年俸", "年率")),
    "daily": (("daily", "per day", "a day$", "each day", "every day"),
              ("日額", "毎日", "日あたり", "日当たり", "日当", "日給")),
    "hourly": (("hourly", "per hour", "an hour$"), ("時給", "時間あたり", "時間当たり")),
    "tax": (("tax", "vat$"), ("税",)),
    "contract": (("contract", "agreement"), ("契約",)),
    "term": (("term$", "terms$", "period", "duration", "valid"), ("期間", "有効")),
    "notice": (("notice", "notif", "in advance"), ("通知", "予告", "申し出", "申出", "前まで")),
    "termination": (("terminat", "cancel", "rescin"),
                    ("解約", "解除", "キャンセル", "取消", "取り消")),
    "renewal": (("renew", "extend", "extension"), ("更新", "延長")),
    "start": (("start", "begin", "began$", "begun$", "commenc", "effective"),
              ("開始", "発効", "効力", "始ま", "始め", "施行")),
    "end": (("end$", "ends$", "ended$", "ending$", "expir", "until$"), ("満了", "終了", "期限")),
    "payment": (("payment", "paid$", "payable", "pay$", "pays$", "settle"),
                ("支払", "払い", "振込", "振り込", "入金")),
    "deadline": (("due$", "deadline", "within$", "no later than"),
                 ("期日", "期限", "以内", "締切", "締め切")),
    "delivery": (("deliver", "ship", "lead time"),
                 ("納品", "納期", "配送", "納入", "引渡", "引き渡", "発送", "出荷")),
    "warranty": (("warrant", "guarantee"), ("保証",)),
    "penalty": (("penalt", "late$", "delay", "overdue", "liquidated"),
                ("違約", "遅延", "延滞", "罰金", "損害金")),
    "interest": (("interest",), ("利息", "利子", "金利", "利率")),
    "deposit": (("deposit", "security deposit"), ("保証金", "敷金", "預託", "手付", "預り金")),
    "discount": (("discount", "rebate"), ("割引", "値引")),
    "refund": (("refund", "reimburse"), ("返金", "返還", "払い戻", "払戻")),
    "trial": (("trial", "free$"), ("試用", "トライアル", "無料", "無償")),
    "work": (("overtime", "working hours", "labor", "labour", "shift$"),
             ("勤務", "労働", "残業", "就業")),
    "staff": (("employee", "staff", "worker", "personnel", "people$", "person$", "persons$"),
              ("従業員", "社員", "職員", "人員", "人数")),
    "user": (("user", "customer", "client", "subscriber", "member"),
             ("利用者", "ユーザー", "顧客", "加入者", "会員")),
    "battery": (("battery", "batteries"), ("バッテリー", "電池")),
    "charging": (("charging", "recharg"), ("充電",)),
    "weight": (("weigh",), ("重量", "重さ", "質量")),
    "size": (("length", "long$", "width", "wide$", "height", "tall$", "size", "dimension"),
             ("長さ", "全長", "幅", "高さ", "全高", "寸法", "サイズ")),
    "capacity": (("capacity", "storage"), ("容量", "定員")),
    "speed": (("speed", "fast$"), ("速度", "速さ")),
    "population": (("population", "resident", "inhabitant"), ("人口", "住民")),
    "age": (("age$", "aged$", "old$"), ("年齢", "歳")),
    "revenue": (("revenue", "sales$", "turnover"), ("売上", "売り上げ", "収益", "営業収入")),
    "profit": (("profit", "income", "earnings$"), ("利益", "所得", "収入")),
    "budget": (("budget",), ("予算",)),
    "capital": (("capital",), ("資本",)),
    "rate": (("rate$", "rates$", "ratio", "percent", "share$", "proportion"), ("率", "割合")),
    "increase": (("increase", "grow", "rise$", "rose$", "risen$", "raise"),
                 ("増加", "増え", "増額", "成長", "上昇", "値上")),
    "decrease": (("decrease", "decline", "drop", "fall$", "falls$", "fell$", "reduc", "cut$",
                  "cuts$"), ("減少", "減っ", "減額", "低下", "値下", "削減")),
    "founded": (("founded$", "founding$", "founder", "establish", "incorporat"),
                ("設立", "創業", "創立", "創設")),
    "born": (("born$", "birth"), ("生まれ", "誕生", "出生")),
    "died": (("died$", "death", "passed away"), ("死去", "死亡", "逝去")),
    "launch": (("launch", "release", "open", "introduc", "debut"),
               ("開業", "開設", "開館", "発売", "公開", "リリース", "開店", "導入")),
    "retention": (("retain", "retention", "keep", "kept$", "stored$", "store$", "archiv"),
                  ("保存", "保管", "保持")),
    "meeting": (("meeting", "conference"), ("会議", "会合", "打ち合わせ", "打合せ")),
    "support": (("support", "maintenance"), ("サポート", "保守", "支援")),
    "maximum": (("maximum", "max$", "up to$", "at most$", "limit", "cap$"),
                ("最大", "上限", "限度", "以下", "以内")),
    "minimum": (("minimum", "at least$", "no less"), ("最低", "以上", "下限")),
    "invoice": (("invoice", "bill$", "billing", "billed$"), ("請求",)),
    "report": (("report",), ("報告",)),
    "install": (("install", "initial", "setup$", "set-up", "onboarding"),
                ("初期", "導入", "設置", "初回")),
    "plan": (("plan$", "plans$", "tier$", "edition"), ("プラン", "コース")),
    "train": (("train$", "trains$", "railway", "station"), ("電車", "列車", "鉄道", "駅")),
    "distance": (("distance", "away$", "far$"), ("距離",)),
    "temperature": (("temperature", "degree"), ("温度", "気温")),
    "attendance": (("visitor", "attend", "spectator", "audience"),
                   ("来場", "入場", "観客", "参加")),
}


def en_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """English words matched from a word start: a stem, or the whole word when it ends in "$"."""
    parts = [re.escape(w[:-1]) + r"\b" if w.endswith("$") else re.escape(w) for w in words]
    return re.compile(r"\b(?:" + "|".join(parts) + ")")


_EN_PATTERNS = {name: en_pattern(en) for name, (en, _) in _CONCEPTS.items()}


def written_in_japanese(text: str) -> bool:
    """True for Japanese text: kana or kanji make up most of it.

    A kana or kanji character counts as three Latin letters (about one English word's worth
    per two characters), so a Japanese sentence naming "Microsoft Azure" stays Japanese and
    an English one glossing a name in katakana (Pocari Sweat (ポカリスエット)) stays English.
    """
    return 3 * len(_CJK.findall(text)) >= max(1, len(_LATIN.findall(text)))


def concepts(text: str) -> frozenset[str]:
    """The concepts ``text`` names, in either language."""
    norm = normalize(text).lower()
    found = {name for name, (_, ja) in _CONCEPTS.items() if any(w in norm for w in ja)}
    if _LATIN.search(norm):
        found |= {name for name, pattern in _EN_PATTERNS.items() if pattern.search(norm)}
    return frozenset(found)


def concept_overlap(claim: frozenset[str], sentence: frozenset[str]) -> float:
    """Share of the claim's concepts the sentence names too (0 when the claim names none)."""
    return len(claim & sentence) / len(claim) if claim else 0.0


@dataclass(frozen=True)
class CrossContext:
    """Which evidence sentences are in the other language than the claim, and their concepts."""

    crossing: tuple[bool, ...]
    """Per sentence: True when it is not in the claim's language."""
    concepts: tuple[frozenset[str], ...]
    """Per sentence: the concepts it names."""
    claim_japanese: bool
    """True when the claim is written in Japanese."""

    @property
    def foreign(self) -> bool:
        """True when no evidence sentence is in the claim's language."""
        return all(self.crossing)

    def spelled_alike(self, name: str) -> bool:
        """True for a name written the same in both languages.

        That is one with a digit (X300), or a Latin-script name in a Japanese claim (English
        evidence writes it so too).
        """
        if any(c.isdigit() for c in name):
            return True
        return self.claim_japanese and bool(_LATIN.search(name)) and not _CJK.search(name)

    def widen(self, text: str, context: Sequence[float]) -> list[float]:
        """``context`` with each crossing sentence scored by ``text``'s concepts it names."""
        mine = concepts(text)
        return [
            max(c, concept_overlap(mine, named)) if crossing else c
            for c, crossing, named in zip(context, self.crossing, self.concepts, strict=True)
        ]


def cross_context(claim: str, sentences: Sequence[str]) -> CrossContext | None:
    """The cross-language view of ``sentences`` for ``claim``; None when all share its language."""
    japanese = written_in_japanese(claim)
    crossing = tuple(written_in_japanese(s) != japanese for s in sentences)
    if not any(crossing):
        return None
    return CrossContext(crossing, tuple(concepts(s) for s in sentences), japanese)
