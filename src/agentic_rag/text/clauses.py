"""Clause labels as people write them, compared by what they name.

"第七条", "Article 7" and "7" name the same clause; so do "第十二条之一" and "12-1", "Section
4(b)" and "4(b)", "§ D.4" and "D.4". :func:`clause_number` reduces a label to that number (the
form ingest stores as ``Chunk.clause_no``); :func:`clause_matches` compares a label a person gave
(a question's "第三十九条", an override's ``clause``) with a chunk's label and number.

    >>> clause_number("第三十九条"), clause_number("Section 4(b)"), clause_number("第十二条之一")
    ('39', '4(b)', '12-1')
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentic_rag.text.numerals import CN_NUMERAL_CHARS, cn_to_int, int_to_cn

__all__ = ["ADDS_OR_DROPS", "AMENDED_CLAUSE", "ASKS_PENALTY", "BREACH_CUE", "CROSS_REFERENCE", "SELF_NAME", "amended_title",
           "amending_item_label", "breached_clauses", "clause_matches", "clause_number", "item_references", "item_text"]

#: how a document names itself in its own references ("依照本法第四十七条", "本办法第九条")
SELF_NAME = r"本(?:法|办法|规定|制度|通知|条例|细则|决定|章程|准则)"
#: a cross-reference in a sentence: "详见第七条", "《X办法》第三条", "see Section 4.2"; a
#: penalty "违反本条例第十八条规定的" refers to the clause that states the duty
CROSS_REFERENCE = re.compile(
    r"(?P<cue>详见|参见|参照|见|依照|按照|依据|根据|按|适用|执行|违反)?\s*(?:" + SELF_NAME + r")?"
    r"(?:《(?P<title>[^》]{2,80})》)?第(?P<no>[一二三四五六七八九十百零〇\d]+)条(?:之(?P<sub>[一二三四五六七八九十]+))?"
    r"|(?P<encue>see|under|in accordance with|as set out in|pursuant to|refer to)?\s*"
    r"(?:Section|Article|Clause)\s+(?P<enno>\d+(?:\.\d+)*)"
    r"|(?P<apcue>详见|参见|见|依照|按照|列入|listed in|set out in|see|under|in)?\s*"
    r"(?:附件|附录|Appendix|Annex|Schedule)\s*(?P<apno>\d+|[一二三四五六七八九十]+|(?-i:[A-Z])\b)", re.I)

# -- amending instruments -----------------------------------------------------------------------
_AMENDMENT = r"(?:(?:first|second|third|fourth|fifth)\s+)?amendment(?:\s+(?:no\.?\s*)?\d+)?"
#: an amending instrument names the instrument it amends in its title: "关于修改《X》的决定",
#: "《X》修正案", "Amendment No. 1 to the X", "X – Amendment No. 1", "X (Second Amendment)"
_AMENDING_TITLE = re.compile(
    r"(?:关于)?修改《(?P<zh>[^《》]{2,80})》的决定|《(?P<zh2>[^《》]{2,80})》修正案"
    rf"|^\s*{_AMENDMENT}\s+to\s+(?:the\s+)?(?P<en>\S.{{2,150}}?)\s*$"
    rf"|^\s*(?P<en2>\S.{{2,150}}?)\s*(?:[–—:]|\s-|\()\s*{_AMENDMENT}\s*\)?\s*$", re.I)
_EN_NO = r"\d{1,3}(?:\.\d{1,3})*[a-z]?(?![\w.])"
#: what an English amending item does to a clause it names
_EN_CHANGES = "replaced|amended|substituted|revised|deleted|revoked|repealed|changed|extended|increased|reduced|shortened"
_EN_INSERTS = "inserted|added"


_EN_DO = "delete|replace|amend|substitute|revise|revoke|repeal"
_EN_DO_INSERT = "insert|add"


def _en_item(group: str, verbs: str, imperatives: str) -> str:
    """An English amending item naming a clause (its number in ``group``) and what is done to it:
    "Clause 4.2 is deleted and replaced with", or as an instruction, "Delete clause 4.2 and insert"."""
    return (rf"\b(?:clause|section|article|paragraph)\s+(?P<{group}>{_EN_NO})(?:\s+of\s+the\s+[\w ]{{1,60}}?)?"
            rf"(?:,\s*[^.\n]{{0,160}}?)?\s+(?:is|are|shall\s+be)\s+(?:hereby\s+)?(?:deleted\s+and\s+)?(?:{verbs})\b"
            rf"|^\W*(?:\d{{1,3}}[.)]\s*)?(?:{imperatives})\s+(?:the\s+)?(?:new\s+)?(?:clause|section|article|paragraph)\s+"
            rf"(?P<{group}_do>{_EN_NO})")


#: the clause an amending item changes: "将第九条中的……修改为……", "在第七条中增加一款", "删去第十八条第二款",
#: "第十条增加一款";
#: "Clause 4.2 is deleted and replaced with", "Article 6.1 of the Agreement is replaced as follows",
#: "In clause 5.3, "£10,000" is replaced by "£15,000"". An item that inserts a new clause
#: ("增加一条，作为第三十一条", "A new clause 3.4 is inserted") changes none.
AMENDED_CLAUSE = re.compile(
    rf"(?:将|在|删去|删除)\s*(?:第[{CN_NUMERAL_CHARS}0-9]+章\s*)?第(?P<no>[{CN_NUMERAL_CHARS}0-9０-９]+)条"
    rf"(?:之(?P<sub>[{CN_NUMERAL_CHARS}0-9]+))?"
    # an item may open with the article itself: "第十条增加一款", "第二十条改为第二十二条，第一款修改为"
    rf"|(?<![\w“\"《])第(?P<no2>[{CN_NUMERAL_CHARS}0-9０-９]+)条(?:之(?P<sub2>[{CN_NUMERAL_CHARS}0-9]+))?"
    rf"(?:第[{CN_NUMERAL_CHARS}0-9]+款)?(?:中的?)?(?:增加|修改为|改为|删去)"
    rf"|(?im:(?:\bin\s+)?{_en_item('en', _EN_CHANGES, _EN_DO)})")
#: an amending item's phrase (as :data:`AMENDED_CLAUSE` reads it) that adds a paragraph or item to
#: a clause or deletes part of it rather than replacing its words: "在第七条中增加一款",
#: "第十条增加", "删去第十八条"
ADDS_OR_DROPS = re.compile(r"^(?:在|删除)|增加|删去")
#: an English amending item's line, naming the clause it sets or inserts ("Clause 4.2 is deleted
#: and replaced with:", "A new clause 3.4 is inserted after clause 3.3")
_SETS_CLAUSE = re.compile(_en_item("no", f"{_EN_CHANGES}|{_EN_INSERTS}", f"{_EN_DO}|{_EN_DO_INSERT}"), re.I | re.M)


@lru_cache(maxsize=4096)
def amended_title(title: str) -> str | None:
    """The title of the instrument an amending instrument amends ("关于修改《青川市物业条例》的决定"
    -> "青川市物业条例", "Travel Policy – Amendment No. 2" -> "Travel Policy"), or ``None``."""
    m = _AMENDING_TITLE.search(title or "")
    if not m:
        return None
    found = next(g for g in (m.group("zh"), m.group("zh2"), m.group("en"), m.group("en2")) if g)
    return found.strip()


def amending_item_label(line: str) -> str | None:
    """The clause an English amending item sets, as its label ("1. Clause 4.2 is deleted and
    replaced with:" -> "4.2"; "2. A new clause 3.4 is inserted" -> "3.4"), or ``None`` for a
    line that amends no clause."""
    m = _SETS_CLAUSE.search(line)
    return (m.group("no") or m.group("no_do")) if m else None


_PREFIXES = ("第", "article", "art.", "section", "sec.", "§", "clause")
_SUB = re.compile(r"^(?P<main>.+?)条之(?P<sub>.+)$")


def clause_number(label: str) -> str:
    """The number a clause label names, lowercased: 第七条 / Article 7 / 7 -> "7"."""
    s = re.sub(r"\s+", " ", label.strip().lower())
    m = _SUB.match(s.removeprefix("第"))
    if m:
        main, sub = cn_to_int(m.group("main")), cn_to_int(m.group("sub"))
        if main is not None and sub is not None:
            return f"{main}-{sub}"
    for prefix in _PREFIXES:
        s = s.removeprefix(prefix).strip()
    s = s.removesuffix("条").strip()
    value = cn_to_int(s)
    return str(value) if value is not None else s


def clause_matches(wanted: str, clause: str | None, clause_no: str | None) -> bool:
    """Whether the label ``wanted`` names the clause labelled ``clause`` / numbered ``clause_no``."""
    if not clause and not clause_no:
        return False
    want = clause_number(wanted)
    return bool(want) and want in {clause_number(clause or ""), (clause_no or "").lower()}


#: a question about the penalty for an act ("会被怎么罚", "罚多少钱", "承担什么法律责任", "what is the fine")
ASKS_PENALTY = re.compile(r"罚|处分|法律责任|\bfine[sd]?\b|\bpenalt(?:y|ies)\b|\bsanctions?\b", re.I)
#: how a penalty clause names the clause whose breach it punishes ("违反本条例第二十一条……规定的，处……罚款")
BREACH_CUE = "违反"

_CN = rf"[{CN_NUMERAL_CHARS}\d]+"
#: the clauses a penalty names as breached: "违反本条例第八条、第九条、第十五条规定燃放……的"
_BREACH = re.compile(rf"{BREACH_CUE}(?:{SELF_NAME})?((?:(?:、|，|和|或者|及)?第{_CN}条(?:第{_CN}款)?)+)")
_CLAUSE_NO = re.compile(rf"第({_CN})条")
#: "本条例第十一条第（五）项和第（六）项", "第四十条第一项、第二项": a clause's numbered items
_ITEM_REF = re.compile(rf"第(?P<no>{_CN})条(?:第{_CN}款)?(?P<items>(?:(?:和|及|、|或者|至)?第?[（(]?{_CN}[)）]?项)+)")
_ITEM_NO = re.compile(rf"(至)?第?[（(]?({_CN})[)）]?项")
#: the most items a range of a clause's items spans ("第一项至第四项")
_MAX_RANGE = 30


def breached_clauses(sentence: str) -> list[str]:
    """The numbers of the clauses whose breach ``sentence`` punishes: "违反本条例第八条、第九条
    规定的，处……罚款" -> ["8", "9"]. The penalty is about what those clauses forbid or require."""
    out: list[str] = []
    for m in _BREACH.finditer(sentence):
        for x in _CLAUSE_NO.findall(m.group(1)):
            no = cn_to_int(x)
            if no is not None and str(no) not in out:
                out.append(str(no))
    return out


def item_references(sentence: str) -> list[tuple[str, list[int]]]:
    """The numbered items of clauses ``sentence`` refers to, as (clause number, item numbers):
    "决定本条例第十一条第（五）项和第（六）项规定的事项" -> [("11", [5, 6])]; a range
    ("第一项至第四项") names every item from one end to the other."""
    out: list[tuple[str, list[int]]] = []
    for m in _ITEM_REF.finditer(sentence):
        no = cn_to_int(m.group("no"))
        items: list[int] = []
        for joint, x in _ITEM_NO.findall(m.group("items")):
            n = cn_to_int(x)
            if n is None:
                continue
            if joint == "至" and items and items[-1] < n <= items[-1] + _MAX_RANGE:
                items.extend(range(items[-1] + 1, n))
            items.append(n)
        if no is not None and items:
            out.append((str(no), items))
    return out


def item_text(clause_text: str, item: int) -> str:
    """The text of item ``item`` of a clause, marked at a line start as "（五）", "(五)" or
    "（5）", or quoted by an amending item that adds it; empty when the clause does not list it."""
    marks = (f"（{int_to_cn(item)}）", f"({int_to_cn(item)})", f"（{item}）", f"({item})")
    for line in clause_text.splitlines():
        # an amending item quotes the item it adds: "作为第六项：“（六）擅自拆除……。”"
        for piece in (line, *line.split("“")[1:]):
            piece = piece.strip()
            for mark in marks:
                if piece.startswith(mark):
                    return piece[len(mark):].split("”")[0].strip("；;。 ")
    return ""
