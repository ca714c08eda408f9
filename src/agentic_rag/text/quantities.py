"""Numbers with units, normalized so that two sources can be compared.

Policy text states its facts as quantities: a reimbursement rate (90%, 百分之九十, 九成), an amount
(3000元, 1.5万元, $500), a time limit (3个工作日, 5日, 30 calendar days), a date (2024年3月1日,
二〇二四年三月一日, 2024-03-01, March 1, 2024) or a count (2次, 5人). Conflict detection and the
fact-check compare *normalized* values, so 百分之九十 equals 90% and 5日 equals 5天, while
3个工作日 never equals 3日 — a working day is not a calendar day, and a policy that changes one into
the other has changed.

    >>> [(q.kind, q.value, q.unit) for q in extract_quantities("备案需提前3个工作日，报销比例为九成")]
    [('duration', 3.0, 'workday'), ('percent', 90.0, '%')]

Extraction is table-driven regular expressions (one table, tried in priority order; a span taken
by an earlier pattern is never re-read by a later one), because rule text is highly regular and a
regex is exact where a model would guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from agentic_rag.text.numerals import CN_NUMERAL_CHARS, cn_to_int, normalize_digits
from agentic_rag.types import Quantity

__all__ = ["CLOCK_TIME", "EN_NUMBER_WORD", "extract_quantities", "parse_number", "comparable", "same_value",
           "rounds_to", "bounded_by", "quantity_key", "rate_measures", "rate_periods", "within"]

# -- numbers --------------------------------------------------------------------------------

_CN_CHARS = CN_NUMERAL_CHARS + "点"
_ASCII_NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
_CN_NUM = f"[{CN_NUMERAL_CHARS}][{_CN_CHARS}]*"
#: a number written with digits, Chinese numerals, or a mix such as 1.5万
_NUM = rf"(?:{_ASCII_NUM}(?:[万亿千])?|{_CN_NUM})"

_EN_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_EN_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
            "eighty": 80, "ninety": 90}
#: an English number word up to ninety-nine ("three", "twenty-one"), as a regex
EN_NUMBER_WORD = (r"(?:(?:" + "|".join(_EN_TENS) + r")(?:[- ](?:" + "|".join(list(_EN_UNITS)[1:10])
            + r"))?|" + "|".join(_EN_UNITS) + r")")
#: an English number: digits (1,500.5) or a word up to ninety-nine
_EN_NUM = rf"(?:{_ASCII_NUM}|{EN_NUMBER_WORD})"

_MULTIPLIERS = {"万": 10_000, "亿": 100_000_000, "千": 1000, "百": 100,
                "thousand": 1000, "k": 1000, "million": 1_000_000, "m": 1_000_000,
                "billion": 1_000_000_000, "bn": 1_000_000_000}


def _en_word_value(word: str) -> float | None:
    word = word.lower().replace("-", " ").strip()
    if word in _EN_UNITS:
        return float(_EN_UNITS[word])
    parts = word.split()
    if parts and parts[0] in _EN_TENS:
        rest = _EN_UNITS.get(parts[1], 0) if len(parts) > 1 else 0
        return float(_EN_TENS[parts[0]] + rest)
    return None


def parse_number(text: str) -> float | None:
    """Parse ``"1,500"``, ``"1.5万"``, ``"三千五百"``, ``"七点五"``, ``"二〇二四"``, ``"twenty-five"``.

    Returns ``None`` for anything that is not a number, so callers can skip a false match.
    """
    s = normalize_digits(text.strip()).replace(",", "").replace("，", "")
    if not s:
        return None
    word = _en_word_value(s)
    if word is not None:
        return word
    multiplier = 1
    if s[-1] in "万亿" and len(s) > 1 and re.fullmatch(r"\d+(?:\.\d+)?[万亿]", s):
        multiplier, s = _MULTIPLIERS[s[-1]], s[:-1]
    elif s[-1] == "千" and re.fullmatch(r"\d+(?:\.\d+)?千", s):
        multiplier, s = 1000, s[:-1]
    if re.fullmatch(r"\d+(?:\.\d+)?", s):
        return float(s) * multiplier
    if "点" in s:  # 七点五 -> 7.5: the part after 点 is read digit by digit
        whole, _, frac = s.partition("点")
        head = cn_to_int(whole) if whole else 0
        digits = [cn_to_int(ch) for ch in frac]
        if head is None or not frac or any(d is None or d > 9 for d in digits):
            return None
        return float(f"{head}.{''.join(str(d) for d in digits)}")
    value = cn_to_int(s)
    return None if value is None else float(value)


# -- the extraction table ---------------------------------------------------------------------

_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_MONTH_RE = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
             r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")


def _month_no(name: str) -> int:
    name = name.lower().rstrip(".")
    return next(no for full, no in _MONTHS.items() if full.startswith(name[:3]))


def _year(text: str) -> int | None:
    value = cn_to_int(text)
    return value if value is not None and 1900 <= value <= 2100 else None


def _iso(year: int | None, month: int | None, day: int | None) -> str | None:
    if month is not None and not 1 <= month <= 12:
        return None
    if day is not None and not 1 <= day <= 31:
        return None
    if year is not None and month is not None and day is not None:
        return f"{year:04d}-{month:02d}-{day:02d}"
    if year is not None and month is not None:
        return f"{year:04d}-{month:02d}"
    if month is not None and day is not None:
        return f"--{month:02d}-{day:02d}"
    return None


Builder = Callable[[re.Match[str]], Quantity | None]


@dataclass(frozen=True)
class _Rule:
    name: str
    pattern: re.Pattern[str]
    build: Builder


def _q(kind: str, value: float | str | None, unit: str, m: re.Match[str]) -> Quantity | None:
    if value is None:
        return None
    return Quantity(kind=kind, value=value, unit=unit, raw=m.group(0).strip())  # type: ignore[arg-type]


def _date_ymd(m: re.Match[str]) -> Quantity | None:
    y, mo, d = _year(m["y"]), cn_to_int(m["m"]), cn_to_int(m["d"])
    return _q("date", _iso(y, mo, d) if y else None, "date", m)


def _date_iso(m: re.Match[str]) -> Quantity | None:
    return _q("date", _iso(int(m["y"]), int(m["m"]), int(m["d"])), "date", m)


def _date_en_mdy(m: re.Match[str]) -> Quantity | None:
    return _q("date", _iso(int(m["y"]), _month_no(m["mon"]), int(m["d"])), "date", m)


def _date_en_my(m: re.Match[str]) -> Quantity | None:
    return _q("date", _iso(int(m["y"]), _month_no(m["mon"]), None), "month", m)


def _date_ym(m: re.Match[str]) -> Quantity | None:
    y = _year(m["y"])
    return _q("date", _iso(y, cn_to_int(m["m"]), None) if y else None, "month", m)


def _date_md(m: re.Match[str]) -> Quantity | None:
    return _q("date", _iso(None, cn_to_int(m["m"]), cn_to_int(m["d"])), "monthday", m)


def _date_en_md(m: re.Match[str]) -> Quantity | None:
    if m["mon"].islower() and m["mon"].rstrip(".") == "may":
        return None  # "up to 2 may be carried over": the verb, not the month
    day = int(m["d"])
    return _q("date", _iso(None, _month_no(m["mon"]), day) if 1 <= day <= 31 else None, "monthday", m)


def _date_year(m: re.Match[str]) -> Quantity | None:
    y = _year(m["y"])
    return _q("date", str(y) if y else None, "year", m)


_CURRENCY = {"元": "CNY", "块": "CNY", "人民币": "CNY", "rmb": "CNY", "cny": "CNY", "yuan": "CNY",
             "¥": "CNY", "￥": "CNY", "美元": "USD", "$": "USD", "＄": "USD", "us$": "USD",
             "usd": "USD", "dollar": "USD", "dollars": "USD", "€": "EUR", "eur": "EUR", "euro": "EUR",
             "euros": "EUR", "欧元": "EUR", "£": "GBP", "gbp": "GBP", "英镑": "GBP", "日元": "JPY",
             "jpy": "JPY", "港元": "HKD", "港币": "HKD", "hkd": "HKD", "pence": "GBP", "p": "GBP"}
#: currency words that name a hundredth of the unit ("47p", "45 pence" are £0.47, £0.45)
_HUNDREDTHS = frozenset({"pence", "p"})


def _money(m: re.Match[str]) -> Quantity | None:
    value = parse_number(m["n"])
    if value is None:
        return None
    mult = (m.groupdict().get("mult") or "").lower().strip()
    if mult:
        value *= _MULTIPLIERS[mult]
    cur = (m.groupdict().get("cur") or m.groupdict().get("pre") or "").lower().strip()
    if cur in _HUNDREDTHS:
        value /= 100
    return _q("money", value, _CURRENCY.get(cur, "CNY"), m)


def _percent(m: re.Match[str]) -> Quantity | None:
    return _q("percent", parse_number(m["n"]), "%", m)


def _points(m: re.Match[str]) -> Quantity | None:
    # 降低10个百分点: a difference of rates, never the same thing as a rate of 10%
    n = m["n"]
    value = _en_word_value(n) if re.fullmatch(EN_NUMBER_WORD, n, re.I) else parse_number(n)
    return _q("percent", value, "pp", m)


def _permille(m: re.Match[str]) -> Quantity | None:
    value = parse_number(m["n"])
    return _q("percent", None if value is None else value / 10, "%", m)


def _fraction(m: re.Match[str]) -> Quantity | None:
    # 三分之二 / 2/3以上: a share, as a percentage (66.67)
    den, num = parse_number(m["d"]), parse_number(m["n"])
    if not den or num is None or num > den:
        return None
    return _q("percent", round(num / den * 100, 2), "%", m)


def _tenths(m: re.Match[str]) -> Quantity | None:
    # 九成 = 90%, 九成五 = 95%
    whole, extra = cn_to_int(m["n"]), cn_to_int(m["x"]) if m["x"] else 0
    if whole is None or extra is None or whole > 10 or extra > 9:
        return None
    return _q("percent", float(whole * 10 + extra), "%", m)


_DURATION_UNITS = {
    "个工作日": "workday", "工作日": "workday", "个自然日": "day", "自然日": "day", "日": "day",
    "天": "day", "个月": "month", "年": "year", "周": "week", "个星期": "week", "星期": "week",
    "个小时": "hour", "小时": "hour", "分钟": "minute",
    "business day": "workday", "working day": "workday", "workday": "workday",
    "calendar day": "day", "day": "day", "week": "week", "month": "month", "year": "year",
    "hour": "hour", "minute": "minute",
}


def _duration(m: re.Match[str]) -> Quantity | None:
    n = m["n"]
    value = _en_word_value(n) if re.fullmatch(EN_NUMBER_WORD, n, re.I) else parse_number(n)
    if value is None:
        return None
    unit = m["u"].lower().rstrip("s") if m["u"].isascii() else m["u"]
    unit = re.sub(r"\s+", " ", unit)
    if unit == "年" and float(value).is_integer() and 1900 <= value <= 2100:
        return None  # 2024年 is a year, handled by the date rules
    return _q("duration", value, _DURATION_UNITS[unit], m)


def _half(m: re.Match[str]) -> Quantity | None:
    unit = {"半年": "month", "半个月": "month"}[m.group(0)]
    return _q("duration", 6.0 if m.group(0) == "半年" else 0.5, unit, m)


_COUNT_UNITS = {"人次": "人次", "次": "次", "人": "人", "名": "人", "项": "项", "件": "件",
                "只": "只", "头": "头", "辆": "辆", "台": "台", "套": "套", "架": "架", "艘": "艘",
                "家": "家", "户": "户", "份": "份", "张": "张", "种": "种", "批": "批", "篇": "篇",
                "棵": "株", "株": "株",
                "times": "次", "time": "次", "visits": "次", "visit": "次", "persons": "人",
                "person": "人", "people": "人", "employees": "人", "items": "项", "item": "项",
                "copies": "份", "copy": "份", "characters": "字符", "character": "字符", "digits": "位",
                "digit": "位"}
_NUMBER_UNITS = {"℃": "℃", "°C": "℃", "摄氏度": "℃", "度": "℃", "周岁": "岁", "岁": "岁", "倍": "倍", "平方米": "m2", "㎡": "m2", "公里": "km",
                 "千米": "km", "公斤": "kg", "千克": "kg", "吨": "t", "张床": "床", "床": "床",
                 "米": "m", "厘米": "cm", "毫米": "mm",
                 "years old": "岁", "times as": "倍", "km": "km", "kg": "kg", "sq m": "m2", "°c": "℃",
                 "metres": "m", "meters": "m", "metre": "m", "meter": "m", "cm": "cm"}


def _count(m: re.Match[str]) -> Quantity | None:
    n = m["n"]
    value = _en_word_value(n) if re.fullmatch(EN_NUMBER_WORD, n, re.I) else parse_number(n)
    return _q("count", value, _COUNT_UNITS[m["u"].lower()], m)


def _number(m: re.Match[str]) -> Quantity | None:
    n = m["n"]
    value = _en_word_value(n) if re.fullmatch(EN_NUMBER_WORD, n, re.I) else parse_number(n)
    return _q("number", value, _NUMBER_UNITS[m["u"].lower()], m)


def _alt(units: dict[str, str], ascii_only: bool | None = None) -> str:
    keys = [k for k in units if ascii_only is None or k.isascii() == ascii_only]
    return "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))


# Not a quantity when the number is an ordinal (第三条), part of a word (一次性, 统一), or a day of
# the month (3月5日, 每月15日 — read by the date rules or skipped).
_CN_GUARD = rf"(?<![第{CN_NUMERAL_CHARS}\d.])"
_I = re.IGNORECASE
_YEAR4 = rf"(?:\d{{4}}|[{CN_NUMERAL_CHARS}]{{4}})"
#: an approximate number's mark between it and its unit: 3000余人, 100多名, 3万余元, 10多天
_ABOUT = r"(?:多|余)?"
_SMALL = rf"(?:\d{{1,2}}|[{CN_NUMERAL_CHARS}]{{1,3}})"

_RULES: tuple[_Rule, ...] = (
    _Rule("date-zh-ymd", re.compile(rf"(?P<y>{_YEAR4})\s*年\s*(?P<m>{_SMALL})\s*月\s*(?P<d>{_SMALL})\s*[日号]"),
          _date_ymd),
    _Rule("date-iso", re.compile(r"(?<![\d.])(?P<y>(?:19|20)\d{2})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?![\d])"),
          _date_iso),
    _Rule("date-en-mdy", re.compile(rf"\b(?P<mon>{_MONTH_RE})\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>(?:19|20)\d{{2}})\b", _I),
          _date_en_mdy),
    _Rule("date-en-dmy", re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<mon>{_MONTH_RE})\s*,?\s+(?P<y>(?:19|20)\d{{2}})\b", _I),
          _date_en_mdy),
    _Rule("money-prefix", re.compile(
        rf"(?P<pre>US\$|[$＄¥￥€£]|\b(?:RMB|CNY|USD|EUR|GBP|JPY|HKD)\s?)\s*(?P<n>{_ASCII_NUM})\s*(?P<mult>[万亿千]|\b(?:thousand|million|billion|bn|k|m)\b)?", _I),
          _money),
    _Rule("money-zh", re.compile(
        rf"{_CN_GUARD}(?P<n>{_NUM})\s*{_ABOUT}(?P<mult>[万亿])?\s*{_ABOUT}(?P<cur>元|块|美元|人民币|欧元|英镑|日元|港元|港币)"), _money),
    _Rule("money-en", re.compile(
        rf"\b(?P<n>{_ASCII_NUM})\s*(?P<mult>thousand|million|billion)?\s*(?P<cur>yuan|dollars?|euros?|pence|RMB|CNY|USD|EUR|GBP|JPY|HKD)\b", _I),
          _money),
    # British pence written after the figure: "47p per mile"
    _Rule("money-pence", re.compile(r"(?<![\w.£$€])(?P<n>\d{1,3}(?:\.\d+)?)(?P<cur>p)\b(?![.\-]\d)"), _money),
    _Rule("points-zh", re.compile(rf"{_CN_GUARD}(?P<n>{_NUM})\s*个?百分点"), _points),
    _Rule("points-en", re.compile(rf"\b(?P<n>{_EN_NUM})\s+percentage points?\b", _I), _points),
    _Rule("percent-sign", re.compile(rf"(?P<n>{_ASCII_NUM})\s*(?:[%％]|\s?(?:percent|per cent|pct)\b)", _I),
          _percent),
    _Rule("percent-en-word", re.compile(rf"\b(?P<n>{EN_NUMBER_WORD})\s+(?:percent|per cent)\b", _I), _percent),
    _Rule("percent-zh", re.compile(rf"百分之(?P<n>{_NUM})"), _percent),
    _Rule("permille-zh", re.compile(rf"千分之(?P<n>{_NUM})"), _permille),
    _Rule("fraction-zh", re.compile(rf"(?<![百千{CN_NUMERAL_CHARS}\d])(?P<d>{_NUM})分之(?P<n>{_NUM})"), _fraction),
    _Rule("fraction-ascii", re.compile(r"(?<![\d/.])(?P<n>\d{1,2})/(?P<d>\d{1,2})(?=\s*(?:以上|以下|以内|的|多数))"), _fraction),
    _Rule("percent-tenths", re.compile(
        rf"(?<![{CN_NUMERAL_CHARS}A-Za-z0-9])(?P<n>[一二三四五六七八九十])成(?P<x>[一二三四五六七八九](?![{CN_NUMERAL_CHARS}]))?(?![为立本功员果熟效绩交型品年人不])"),
          _tenths),
    _Rule("date-zh-ym", re.compile(rf"(?P<y>{_YEAR4})\s*年\s*(?P<m>{_SMALL})\s*月(?!份?[内底初中末]?\s*\d)"), _date_ym),
    _Rule("date-zh-md", re.compile(rf"(?<![\d{CN_NUMERAL_CHARS}个])(?P<m>{_SMALL})\s*月\s*(?P<d>{_SMALL})\s*[日号]"), _date_md),
    _Rule("date-en-my", re.compile(rf"\b(?P<mon>{_MONTH_RE})\s+(?P<y>(?:19|20)\d{{2}})\b", _I), _date_en_my),
    # "by 30 June", "until March 31" (no year: a day of every year, like 3月5日)
    _Rule("date-en-dm", re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<mon>{_MONTH_RE})(?![A-Za-z])", _I), _date_en_md),
    _Rule("date-en-md", re.compile(rf"\b(?P<mon>{_MONTH_RE})\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?![.,]?\d)", _I), _date_en_md),
    _Rule("date-zh-year", re.compile(rf"(?<![\d{CN_NUMERAL_CHARS}])(?P<y>{_YEAR4})\s*年(?!\s*(?:度?以[上下内]|[内间]))"),
          _date_year),
    _Rule("number-zh", re.compile(rf"{_CN_GUARD}(?P<n>{_NUM})\s*{_ABOUT}(?P<u>{_alt(_NUMBER_UNITS, False)})"), _number),
    _Rule("duration-half", re.compile(r"半年|半个月"), _half),
    _Rule("duration-zh", re.compile(
        rf"{_CN_GUARD}(?<!月)(?P<n>{_NUM})\s*{_ABOUT}(?P<u>{_alt(_DURATION_UNITS, False)})"), _duration),
    _Rule("duration-en", re.compile(
        rf"\b(?P<n>{_EN_NUM})[\s-]+(?:(?:consecutive|full|whole)\s+)?(?P<u>(?:business|working|calendar)\s+days?|workdays?|days?|weeks?|months?|years?|hours?|minutes?)\b(?![\s-]+old\b)", _I),
          _duration),
    _Rule("number-en", re.compile(rf"\b(?P<n>{_EN_NUM})\s*(?P<u>years old|km|kg|sq m|°C|metres?|meters?|cm)(?![A-Za-z])", _I),
          _number),
    _Rule("count-zh", re.compile(
        rf"{_CN_GUARD}(?P<n>{_NUM})\s*{_ABOUT}(?P<u>{_alt(_COUNT_UNITS, False)})(?![性员口])"), _count),
    _Rule("count-en", re.compile(rf"\b(?P<n>{_EN_NUM})\s+(?P<u>{_alt(_COUNT_UNITS, True)})\b", _I), _count),
)


#: a time of day: 七时, 22点, 下午3点半, 8:30, 10am, 10 p.m., midnight (not 四小时, 一时难以, 三点意见)
CLOCK_TIME = re.compile(rf"(?<![\d{CN_NUMERAL_CHARS}])(?!一时(?![至到前后起整半]))[\d{CN_NUMERAL_CHARS}]{{1,3}}\s*"
                        r"(?:时(?![间候期代段效限速长])|"
                        r"点(?=\s*(?:[至到前后半整钟，。；、,;]|以[前后]|之[前后]|\d{1,2}分|[零一二三四五六七八九十]{1,3}分)))|"
                        r"(?<![\d.])\d{1,2}[：:]\d{2}(?![\d:])|"
                        r"\b\d{1,2}(?:[.:]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)(?![a-z])|"
                        r"\bo'clock\b|\bmidnight\b|\bnoon\b|午夜|正午", re.I)


def extract_quantities(text: str) -> list[Quantity]:
    """All quantities in ``text``, in reading order, each normalized (see :func:`_extract`).
    Quantities are frozen, so the cached ones are handed out as they are, not copied."""
    return list(_extract(text))


@lru_cache(maxsize=8192)
def _extract(text: str) -> tuple[Quantity, ...]:
    """All quantities in ``text``, in reading order, each normalized.

    Percent values are in percent (``90.0``), money in whole currency units (``15000.0`` for
    1.5万元, unit ``CNY``/``USD``), durations in their own unit (``workday`` is kept apart from
    ``day``), dates as ISO strings (``2024-03-01``; unit ``date``, ``month`` for 2024年3月,
    ``monthday`` for 3月1日, ``year`` for 2024年), counts with a canonical unit (``次``, ``人``).
    """
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Quantity]] = []
    for rule in _RULES:
        for m in rule.pattern.finditer(text):
            start, end = m.span()
            if start == end or any(start < e and s < end for s, e in taken):
                continue
            q = rule.build(m)
            if q is None:
                continue
            taken.append((start, end))
            found.append((start, q))
    found.sort(key=lambda item: item[0])
    return tuple(q for _, q in found)


# -- comparing --------------------------------------------------------------------------------

#: durations expressed in a common unit where the conversion is exact; a working day is not
#: converted to calendar days (that is the point of keeping it apart)
_DURATION_BASE = {"day": ("day", 1.0), "week": ("day", 7.0), "workday": ("workday", 1.0),
                  "month": ("month", 1.0), "year": ("month", 12.0),
                  "hour": ("minute", 60.0), "minute": ("minute", 1.0)}


def quantity_key(q: Quantity) -> tuple[str, str, float | str]:
    """A hashable normalized form: equal keys mean the same stated value."""
    if q.kind == "duration" and q.unit in _DURATION_BASE:
        base, factor = _DURATION_BASE[q.unit]
        return (q.kind, base, round(float(q.value) * factor, 6))
    value = round(float(q.value), 6) if isinstance(q.value, (int, float)) else q.value
    return (q.kind, q.unit, value)


def comparable(a: Quantity, b: Quantity) -> bool:
    """Whether two quantities state the same kind of thing, so a difference is a disagreement.

    Any two durations are comparable (3个工作日 vs 5日 disagree: 工作日 ≠ 日); money only in the
    same currency; dates only at the same precision; counts and measures only in the same unit.
    """
    if a.kind != b.kind:
        return False
    if a.kind == "duration":
        return True
    return a.unit == b.unit


def same_value(a: Quantity, b: Quantity) -> bool:
    """Whether two quantities say the same thing: 5日 == 5天 == 5 days, 3个工作日 != 3日."""
    return quantity_key(a) == quantity_key(b)


#: a figure written with at least this multiplier (万, 亿, million) is a rounded figure
_ROUNDED_SCALE = 1e4


def rounds_to(fine: Quantity, coarse: Quantity) -> bool:
    """Whether ``fine`` rounded to the precision ``coarse`` is written in gives ``coarse``, for
    large figures written with a multiplier (reports round them: 6.05万亿美元 is "6万亿美元",
    130.6万辆 "131万辆"); a figure written out in full (1.5米, 800元) is exact.

    >>> six, exact = extract_quantities("6万亿美元")[0], extract_quantities("6.05万亿美元")[0]
    >>> rounds_to(exact, six), rounds_to(six, exact)
    (True, False)
    """
    step = _rounding_step(coarse)
    if step is None or not comparable(fine, coarse) or not isinstance(fine.value, (int, float)):
        return False
    return abs(float(fine.value) - float(coarse.value)) <= step / 2 * (1 + 1e-9)


def _rounding_step(q: Quantity) -> float | None:
    """The step a large figure written with a multiplier is rounded to (1e10 for 6万亿, 1e3
    for 130.6万); ``None`` for a figure written out in full."""
    written = re.search(r"\d+(?:,\d{3})*(?:\.(\d+))?", q.raw)
    if not written or not isinstance(q.value, (int, float)):
        return None
    literal = float(written.group(0).replace(",", ""))
    if literal == 0 or float(q.value) / literal < _ROUNDED_SCALE:
        return None
    return float(q.value) / literal * 10.0 ** -len(written.group(1) or "")


# -- rates ------------------------------------------------------------------------------------

#: the period a rate is stated per: "3 days per week", "每月1500元", "20 working days a year"
_PERIODS = (
    ("day", re.compile(r"\b(?:per|a|each|every) (?:calendar |working |business )?day\b|\bdaily\b|每日|每天|日均", _I)),
    ("week", re.compile(r"\b(?:per|a|each|every) (?:calendar )?week\b|\bweekly\b|每周|每星期|每个星期|周均", _I)),
    ("month", re.compile(r"\b(?:per|a|each|every) (?:calendar )?month\b|\bmonthly\b|每月|每个月|月均|按月", _I)),
    ("quarter", re.compile(r"\b(?:per|a|each|every) quarter\b|\bquarterly\b|\bevery (?:three|3) months\b|"
                           r"每季度?|每个季度|每三个月|按季度?", _I)),
    ("half-year", re.compile(r"\b(?:per|a|each|every) half[- ]year\b|\b(?:half-yearly|semi-?annually|biannually)\b|"
                             r"\bevery (?:six|6) months\b|每半年|每六个月|每6个月", _I)),
    ("year", re.compile(r"\b(?:per|a|each|every) (?:calendar |financial |fiscal )?year\b|\b(?:annually|yearly)\b|"
                        r"每年|每个年度|每一年度|年均|按年|年度(?=内|最高|累计|限额|总额)", _I)),
)


@lru_cache(maxsize=8192)  # per text: the same sentences are candidates question after question
def rate_periods(text: str) -> frozenset[str]:
    """The periods ``text`` states a rate per (``day``, ``week``, ``month``, ``quarter``,
    ``half-year``, ``year``): a value per week does not answer a question asked per year.

    >>> sorted(rate_periods("up to three days per week, and 20 working days a year"))
    ['week', 'year']
    >>> sorted(rate_periods("每月不超过1500元"))
    ['month']
    """
    return frozenset(period for period, pattern in _PERIODS if pattern.search(text))


def period_of(text: str) -> str:
    """The period ``text`` names when it says nothing but how often ("monthly", "every week",
    每月): two versions of a rule that differ only there ("checked monthly" / "checked weekly")
    state two values; "" for any other text.

    >>> period_of("monthly"), period_of("每周"), period_of("monthly by a first aider")
    ('month', 'week', '')
    """
    for period, pattern in _PERIODS:
        m = pattern.search(text)
        if m and not re.search(r"\w", text[:m.start()] + text[m.end():]):
            return period
    return ""


#: the measures a price or fee is stated per (物业费每平方米1.2元, "EUR 0.30 per kWh"): a lump sum
#: or a price per another measure does not answer a question asked per square metre
_MEASURES = (
    ("area", re.compile(r"每(?:一)?平方米|每㎡|/\s*(?:平方米|㎡|m2|m²|sq\.? ?m)|\bper (?:square met(?:re|er)|sq\.? ?m|m2|m²)", _I)),
    ("volume", re.compile(r"每(?:一)?立方米|/\s*(?:立方米|m3|m³)|\bper cubic met(?:re|er)\b", _I)),
    ("weight", re.compile(r"每(?:一)?(?:吨|公斤|千克)|/\s*(?:吨|公斤|千克|kg\b)|\bper (?:tonne|ton|kg|kilo(?:gram)?)s?\b", _I)),
    ("distance", re.compile(r"每(?:一)?(?:公里|千米)|/\s*(?:公里|千米|km\b)|\bper (?:km|kilomet(?:re|er)|mile)s?\b", _I)),
    ("energy", re.compile(r"每(?:一)?(?:千瓦时|度电)|/\s*(?:千瓦时|度|kwh\b)|\bper kwh\b", _I)),
)


@lru_cache(maxsize=8192)
def rate_measures(text: str) -> frozenset[str]:
    """The measures ``text`` states a rate per (``area``, ``volume``, ``weight``, ``distance``,
    ``energy``), as :func:`rate_periods` does for periods.

    >>> sorted(rate_measures("多层住宅物业服务费每月每平方米不超过1.2元，电价0.56元/千瓦时"))
    ['area', 'energy']
    >>> sorted(rate_measures("处五千元以上三万元以下罚款"))
    []
    """
    return frozenset(measure for measure, pattern in _MEASURES if pattern.search(text))


# -- ranges -------------------------------------------------------------------------------------

_BETWEEN = re.compile(r"\s*(?:to|and|-|–|—|~|～|至|到)\s*", re.I)
_AT_MOST_BEFORE = re.compile(r"(?:up to|not exceeding|not more than|no more than|under|below|less than|at most|"
                             r"不超过|不高于|低于|不足|未满)\s*$", re.I)
_AT_MOST_AFTER = re.compile(r"\s*(?:以下|以内|或以下|or (?:less|under|below))", re.I)
_AT_LEAST_BEFORE = re.compile(r"(?:over|above|more than|exceeding|at least|from|不低于|超过|高于|满)\s*$", re.I)
#: how news states a large figure passed or nearly reached ("首次突破6万亿", "逾百万", "近60亿"):
#: bounds of a rounded figure (:func:`bounded_by`), not bands a rule sets (:func:`within`)
_PASSED = re.compile(r"(?:突破|逾|多于)\s*$")
_NEARLY = re.compile(r"(?:将近|接近|近)\s*$")
_AT_LEAST_AFTER = re.compile(r"\s*(?:以上|或以上|起|or (?:more|above|over)|and (?:above|over)|\+)", re.I)


def within(value: Quantity, text: str) -> bool:
    """Whether ``text`` states a range that ``value`` falls in, in the same kind and unit: an
    approval band "£25,000 to £100,000" holds £40,000, "Up to £2,500" does not, nor does
    "5万元以上" hold 3万元.

    >>> q = extract_quantities("a £40,000 order")[0]
    >>> within(q, "£25,000 to £100,000"), within(q, "Up to £2,500"), within(q, "Over £100,000")
    (True, False, False)
    >>> absence = extract_quantities("off sick for three days")[0]
    >>> within(absence, "absences of up to 3 consecutive working days"), within(absence, "up to 2 weeks")
    (True, True)
    """
    asked = _band_scale(value)
    if asked is None:
        return False
    located: list[tuple[int, int, Quantity]] = []
    pos = 0
    for q in _extract(text):
        at = text.find(q.raw, pos)
        if at < 0:
            continue
        located.append((at, at + len(q.raw), q))
        pos = at + len(q.raw)
    kind, unit, x = asked
    for i, (start, end, q) in enumerate(located):
        here = _band_scale(q)
        if here is None or here[:2] != (kind, unit):
            continue
        after = located[i + 1] if i + 1 < len(located) else None
        there = _band_scale(after[2]) if after else None
        if after and there and there[:2] == (kind, unit) and _BETWEEN.fullmatch(text[end:after[0]]):
            lo, hi = sorted((here[2], there[2]))
        elif _AT_MOST_BEFORE.search(text[max(0, start - 16):start]) or _AT_MOST_AFTER.match(text, end):
            lo, hi = float("-inf"), here[2]
        elif _AT_LEAST_BEFORE.search(text[max(0, start - 16):start]) or _AT_LEAST_AFTER.match(text, end):
            lo, hi = here[2], float("inf")
        else:
            continue
        if lo <= x <= hi:
            return True
    return False


def _band_scale(q: Quantity) -> tuple[str, str, float] | None:
    """(kind, unit, value) of ``q`` for telling whether a band holds it: a duration in a common
    unit, a working day read as a day (a three-day absence falls under "up to 3 consecutive
    working days", though the two are never the same value)."""
    if not isinstance(q.value, (int, float)):
        return None
    kind, unit, value = quantity_key(q)
    return kind, "day" if unit == "workday" else unit, float(value)


def bounded_by(value: Quantity, bound: Quantity, sentence: str) -> bool:
    """Whether ``bound``, a large figure ``sentence`` states as a bound ("突破6万亿美元", "超过
    200万辆", "近60亿"), holds ``value``: the two then do not disagree.

    >>> six, exact = extract_quantities("6万亿美元")[0], extract_quantities("6.05万亿美元")[0]
    >>> bounded_by(exact, six, "进出口规模首次突破6万亿美元"), bounded_by(exact, six, "进出口规模为6万亿美元")
    (True, False)
    """
    if _rounding_step(bound) is None or not comparable(value, bound) or not isinstance(value.value, (int, float)):
        return False
    at = sentence.find(bound.raw)
    if at < 0:
        return False
    before, end = sentence[max(0, at - 16):at], at + len(bound.raw)
    x, b = float(value.value), float(bound.value)
    if _AT_LEAST_BEFORE.search(before) or _PASSED.search(before) or _AT_LEAST_AFTER.match(sentence, end):
        return x >= b
    if _AT_MOST_BEFORE.search(before) or _NEARLY.search(before) or _AT_MOST_AFTER.match(sentence, end):
        return x <= b
    return False
