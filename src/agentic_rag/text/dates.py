"""Dates as documents and questions write them: 2024年3月1日, 二〇二四年三月一日, 2024-03-01,
2024/3/1, March 1, 2024, 1 March 2024. One place for finding and parsing them, used by document
metadata, chunking (signature dates) and the Router's date slots.
"""

from __future__ import annotations

import datetime as dt
import re

from agentic_rag.text.numerals import cn_to_int

_CN_Y = "〇零一二三四五六七八九○Ｏ"
_CN_MD = "一二三四五六七八九十"
_MONTHS = {m: i for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
     ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
     ("october", "oct"), ("november", "nov"), ("december", "dec")], start=1) for m in names}
# case-sensitive on purpose: an IGNORECASE alternation of month names tried at every character
# was the slowest part of bulk ingest; written dates capitalise the month anyway
_MONTH_RE = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec|JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC)[a-zA-Z]{0,6}"
#: an English month name or its abbreviation (a regex fragment)
MONTH = _MONTH_RE
DATE = (
    rf"(?:(?:19|20)\d{{2}}|[{_CN_Y}]{{4}})\s*年\s*(?:\d{{1,2}}|[{_CN_MD}]{{1,3}})\s*月\s*(?:\d{{1,2}}|[{_CN_MD}]{{1,3}})\s*[日号]"
    r"|(?<!\d)(?:19|20)\d{2}[-/.](?:0?[1-9]|1[0-2])[-/.](?:0?[1-9]|[12]\d|3[01])(?!\d)"
    rf"|\b{_MONTH_RE}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?:19|20)\d{{2}}"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH_RE}\.?,?\s+(?:19|20)\d{{2}}"
)
DATE_RE = re.compile(DATE)
_CN_DATE_PARTS = re.compile(rf"((?:19|20)\d{{2}}|[{_CN_Y}]{{4}})\s*年\s*(\d{{1,2}}|[{_CN_MD}]{{1,3}})\s*月"
                            rf"\s*(\d{{1,2}}|[{_CN_MD}]{{1,3}})")
_ISO_PARTS = re.compile(r"((?:19|20)\d{2})[-/.](\d{1,2})[-/.](\d{1,2})")
_EN_PARTS = re.compile(rf"(?:({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})"
                       rf"|(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE})\.?,?\s+(\d{{4}}))")


def parse_date(raw: str) -> dt.date | None:
    """A date written in Chinese (2024年3月1日, 二〇二四年三月一日), ISO (2024-03-01, also with a
    time after it), slashes/dots, or English (March 1, 2024 / 1 March 2024); else ``None``."""
    raw = raw.strip()
    try:
        if m := _CN_DATE_PARTS.search(raw):
            y, mo, d = (cn_to_int(g) for g in m.groups())
            return dt.date(y, mo, d) if None not in (y, mo, d) else None  # type: ignore[arg-type]
        if m := _ISO_PARTS.search(raw):
            return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if m := _EN_PARTS.search(raw):
            month = _MONTHS.get((m.group(1) or m.group(5)).lower().rstrip("."))
            if month is None:
                return None
            if m.group(1):
                return dt.date(int(m.group(3)), month, int(m.group(2)))
            return dt.date(int(m.group(6)), month, int(m.group(4)))
    except ValueError:  # 2024年2月30日: a typo in the source is not a date
        return None
    return None


def find_dates(text: str) -> list[dt.date]:
    """Every valid date written in ``text``, in order, without repeats."""
    found = (parse_date(m.group(0)) for m in DATE_RE.finditer(text))
    return list(dict.fromkeys(d for d in found if d is not None))
