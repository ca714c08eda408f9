"""Chinese and full-width numerals to integers, and back.

Statutes number their parts in Chinese (第一百零五条, 二〇二四年), people type Arabic digits, and
full-width digits (１２) turn up in scanned or typeset text. Ingest, the Router and the Reasoner all
need the same conversions, so they live here.

    >>> cn_to_int("一百零五")
    105
    >>> int_to_cn(105)
    '一百零五'
"""

from __future__ import annotations

import re

_DIGITS: dict[str, int] = {
    "零": 0, "〇": 0, "○": 0, "Ｏ": 0, "一": 1, "壹": 1, "二": 2, "贰": 2, "貳": 2, "两": 2, "兩": 2,
    "三": 3, "叁": 3, "參": 3, "四": 4, "肆": 4, "五": 5, "伍": 5, "六": 6, "陆": 6, "陸": 6,
    "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9,
}
_SMALL_UNITS: dict[str, int] = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_BIG_UNITS: dict[str, int] = {"万": 10_000, "萬": 10_000, "亿": 100_000_000, "億": 100_000_000}

#: every character :func:`cn_to_int` understands; handy for building regex classes elsewhere
CN_NUMERAL_CHARS = "".join(_DIGITS) + "".join(_SMALL_UNITS) + "".join(_BIG_UNITS)

_FULLWIDTH = str.maketrans("０１２３４５６７８９．", "0123456789.")
_ASCII_INT = re.compile(r"\d+")


def normalize_digits(text: str) -> str:
    """Full-width digits (and the full-width dot between them) to ASCII: ``"第１２条"`` -> ``"第12条"``."""
    return text.translate(_FULLWIDTH)


def cn_to_int(s: str) -> int | None:
    """Parse a Chinese numeral, an Arabic one, or a digit-by-digit Chinese year to an int.

    ``"十二"`` -> 12, ``"一百零五"`` -> 105, ``"两千"`` -> 2000, ``"12"`` -> 12,
    ``"二〇二四"`` -> 2024 (digit-by-digit, as years are written), ``"〇"`` -> 0.
    Anything else (empty, mixed with other characters) -> ``None``.
    """
    s = normalize_digits(s.strip())
    if not s:
        return None
    if _ASCII_INT.fullmatch(s):
        return int(s)
    if any(ch not in _DIGITS and ch not in _SMALL_UNITS and ch not in _BIG_UNITS for ch in s):
        return None
    if not any(ch in _SMALL_UNITS or ch in _BIG_UNITS for ch in s):
        # digit-by-digit form: 二〇二四 -> 2024, 一 -> 1
        value = 0
        for ch in s:
            value = value * 10 + _DIGITS[ch]
        return value
    total = 0  # completed big-unit groups (亿, 万)
    section = 0  # current group below 万
    digit: int | None = None
    for ch in s:
        if ch in _DIGITS:
            digit = _DIGITS[ch]
        elif ch in _SMALL_UNITS:
            # a bare unit (十二, 百) means one of it
            section += (1 if digit is None else digit) * _SMALL_UNITS[ch]
            digit = None
        else:
            group = section + (digit or 0)
            digit = None
            section = 0
            if _BIG_UNITS[ch] == 10_000:
                total += (group or 1) * 10_000
            else:  # 亿 multiplies everything before it: 一万亿 = 10^12
                total = (total + group or 1) * 100_000_000
    return total + section + (digit or 0)


_CN_DIGITS = "零一二三四五六七八九"


def int_to_cn(n: int) -> str:
    """Write a non-negative int the way statutes number articles: 12 -> 十二, 105 -> 一百零五,
    1260 -> 一千二百六十. Values of 10,000 and above use 万 groups."""
    if n < 0:
        raise ValueError(f"int_to_cn needs a non-negative number, got {n}")
    if n == 0:
        return "零"
    if n >= 10_000:
        high, low = divmod(n, 10_000)
        rest = "" if low == 0 else ("零" if low < 1000 else "") + int_to_cn(low)
        return int_to_cn(high) + "万" + rest
    out: list[str] = []
    units = [(1000, "千"), (100, "百"), (10, "十"), (1, "")]
    zero_pending = False
    for value, unit in units:
        d, n = divmod(n, value)
        if d:
            if zero_pending:
                out.append("零")
                zero_pending = False
            out.append(_CN_DIGITS[d] + unit)
        elif out:
            zero_pending = True
    text = "".join(out)
    # 十二 rather than 一十二 for 10..19, as written in statutes
    return text[1:] if text.startswith("一十") else text
