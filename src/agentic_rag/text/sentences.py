"""Sentences with their character offsets (so quotes carry spans), headings and clause labels."""

from __future__ import annotations

import re

from agentic_rag.text.language import is_cjk

__all__ = ["LIST_ITEM", "LONG_SENTENCE_CHARS", "is_heading", "is_numbered_title", "label_length", "split_sentences",
           "strip_label", "unwrap"]


_SENT_END = re.compile(r"[。！？!?]+|(?<=[a-z0-9)\]])\.(?=\s+[A-Z(\"“]|\s*$)")
# a clause quoted whole (the new text an amendment puts in: '"4.2 A referral remains …') opens
# with a quotation mark before its label; an article's own title after its label ("第五条 年度学时要求
# 员工每年应……", set apart by spaces as Chinese prose never is, and a noun phrase: no particle or
# verb that opens a sentence, as in "第五条　为了规范 管理" with a stray space) is part of the label
_LABEL = re.compile(
    r"^\s*[\"“]?(?:#+\s*)?(?:第[一二三四五六七八九十百千零〇\d]+[条章节款项](?:之[一二三四五六七八九十]+)?"
    r"(?:[ \t\u3000]+(?:(?![的了是为应由对在将可不所本按依根凡各其该有])[\u4e00-\u9fff、]){2,12}"
    r"(?=[ \t\u3000]+[\u4e00-\u9fff“（(\d]))?|"
    r"(?:Article|Section|Clause|Art\.|Sec\.|§)\s*(?:[A-Z]\.)?[\dIVXivx.]+(?:\([a-z0-9]{1,3}\))*"
    r"(?:bis|ter|quater)?[.:]?|[A-Z]\.\d+(?:\.\d+)*(?=\s)|\d+(?:\.\d+)+(?=\s)|[一二三四五六七八九十]+、|"
    r"[（(][一二三四五六七八九十\d]+[)）]|\d+[.、)）](?!\d)|[-*•])\s*"
)
#: the start of a list item: （一） (1) 一、 1. 1、 - * •  (not a decimal such as 1.5)
LIST_ITEM = re.compile(r"^\s*(?:[（(][一二三四五六七八九十\d]+[)）]|[一二三四五六七八九十]+、|\d+[.、)）](?!\d)|[-*•])")
#: a line that starts something new: a list item, a heading, a table row, a clause label
_NEW_LINE = re.compile(
    r"\s*(?:#|\||[-*•]\s|[（(][一二三四五六七八九十\d]+[)）]|[一二三四五六七八九十]+、|\d+[.、)）](?!\d)\s*\S|"
    # a section number opening a line ("10.1. New Versions"); one a wrapped line starts with
    # ("... as provided in Section\n10.3, no one ...") is a reference inside the sentence
    r"\d+(?:\.\d+)+\.?\s+\S|"
    r"第[一二三四五六七八九十百千零〇\d]+[条章节]|附件|注[:：\d]|(?:Article|Section|Clause)\s)")
_WRAP_END = "。！？；!?;：:"
_ITEM_NUMBER = re.compile(r"[ \t]*\d{1,3}")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (terminators excluded, blanks trimmed).

    A line break ends a sentence only where the line is complete (ends with a terminator or a
    colon) or the next line starts something new (a list item, heading, table row, clause);
    otherwise it is a soft wrap, as PDF text has inside sentences ("……达到37℃以\n上").
    """
    # the dot of a numbered line's number ("1. Afghanistan") ends no sentence: it marks the item
    cuts: list[tuple[int, int]] = [(m.start(), m.end()) for m in _SENT_END.finditer(text)
                                   if not _ITEM_NUMBER.fullmatch(text, text.rfind("\n", 0, m.start()) + 1, m.start())]
    for m in re.finditer(r"\n+", text):
        before = text[:m.start()].rstrip(" \t\u3000")
        line = before[before.rfind("\n") + 1:]
        hard = m.end() - m.start() > 1 or not before or before[-1] in _WRAP_END \
            or _NEW_LINE.match(text, m.end()) is not None or is_heading(line, text[m.end():m.end() + 1])
        if hard:
            cuts.append((m.start(), m.end()))
    cuts.sort()
    out: list[tuple[int, int]] = []
    start = 0
    for cs, ce in cuts + [(len(text), len(text))]:
        if cs < start:
            start = max(start, ce)
            continue
        s, e = start, cs
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e - s >= 2:
            out.extend(_split_long(text, s, e))
        start = ce
    return out


#: a sentence longer than this is split at semicolons as well (a list of cases stays together)
LONG_SENTENCE_CHARS = 120


def _split_long(text: str, s: int, e: int) -> list[tuple[int, int]]:
    # English needs about three times the characters for the same content
    limit = LONG_SENTENCE_CHARS if is_cjk(text[s:e]) else LONG_SENTENCE_CHARS * 2.5
    if e - s <= limit:
        return [(s, e)]
    out: list[tuple[int, int]] = []
    start = s
    for m in re.finditer(r"[；;]", text[s:e]):
        out.append((start, s + m.start()))
        start = s + m.end()
    out.append((start, e))
    return [(a, b) for a, b in out if b - a >= 2]


_HEADING_EN = re.compile(r"(?:\d+(?:\.\d+)*\.?\s+)?[A-Z][\w'’&/\-]*(?:\s+[\w'’&/\-]+){0,7}")


def is_heading(line: str, after: str = "A") -> bool:
    """Whether a line is a heading (context for what follows, not part of its first sentence):
    a markdown heading, or a short line without sentence punctuation followed by a line that
    starts a sentence — "Eligibility" above "Employees who ...", "报销范围" above a rule. A PDF's
    soft wrap breaks full-width lines, so a short line before a new one is not a wrap."""
    line = line.strip()
    if not line:
        return False
    if line.startswith("#"):
        return True
    label = _LABEL.match(line)
    if label and label.end() >= len(line.rstrip()):
        return False  # a clause number alone on its line labels the text after it
    if re.search(r"[，。；：、！？,.;:!?|]", line):
        return False
    if is_cjk(line):
        return len(line) <= 15 and not re.match(r"[，。；、）)]", after)
    return bool(_HEADING_EN.fullmatch(line)) and (after[:1].isupper() or after[:1].isdigit())


#: every word capitalised but the short ones ("Conveying Modified Source Versions", "Terms of Use")
_TITLE_CASE = re.compile(r"[A-Z][\w'’&/\-]*(?:\s+(?:[A-Z][\w'’&/\-]*|[a-z]{1,3})){1,7}")


def is_numbered_title(sentence: str, rest: str) -> bool:
    """Whether ``sentence`` is a numbered section's title set as a sentence of its own: its label,
    a few capitalised words, a full stop and a blank line (``rest`` is the text after it), as
    plain-text licences and RFCs write "5. Conveying Modified Source Versions." above a section."""
    label = _LABEL.match(sentence)
    body = sentence[label.end():].strip() if label else ""
    return bool(_TITLE_CASE.fullmatch(body)) and re.match(r"\.?[ \t]*\n[ \t]*\n", rest) is not None


def unwrap(text: str) -> str:
    """Join soft-wrapped lines: no space between Chinese characters, one space otherwise."""
    text = re.sub(r"(?<=[\u3400-\u9fff，、（）“”《》])\s*\n\s*(?=[\u3400-\u9fff，、（）“”《》\d])", "", text)
    text = re.sub(r"(?<=[\d])\s*\n\s*(?=[\u3400-\u9fff])", "", text)
    return re.sub(r"\s*\n\s*", " ", text).strip()


def label_length(sentence: str) -> int:
    """Characters of a leading clause label (and the space after it): 7 for "第十二条 统筹……"."""
    m = _LABEL.match(sentence)
    return m.end() if m and m.end() < len(sentence) else 0


def strip_label(sentence: str) -> str:
    """Drop a leading clause label (第七条, Article 7., 3.1, 一、) from a sentence."""
    return _LABEL.sub("", unwrap(sentence), count=1).strip() or unwrap(sentence)
