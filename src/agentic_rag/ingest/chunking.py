"""Clause-aware chunking: one chunk per clause, never across two.

The chunker finds structural lines with one multi-line regex pass (so plain prose such as news costs
almost nothing), classifies each candidate, and walks them once to cut the text into segments:

- headings (第X编/分编/章/节, Part/Chapter, Markdown ``#``) build the heading path;
- clauses (第X条, 第X条之一, Article 12, Section 3, § 4, 3.1) start a chunk each; where a document
  has no article structure, ``一、`` items (or, without those, ``1.`` items) are its clauses;
  sub-items (（一）, (1), 1.) stay inside their clause;
- 附件/附录/Appendix A start the appendix (kind ``appendix``); 注：/Note:/``[^1]:`` start a
  footnote that runs to the end of its paragraph (kind ``footnote``); Markdown pipe tables are
  their own chunks (kind ``table``), the clause around them resumes after them;
- text before the first structure is the preamble (``p0``).

A segment longer than ``max_clause_chars`` is split at discourse markers (但是, 然而, 此外,
however, provided that), else at sentence ends; every piece keeps the clause label and gets the
next ``n`` in its id ``<doc_id>:<clause path>:<n>``. Spans are exact: ``doc.text[span[0]:span[1]]``
is the chunk text (for tables: the Markdown source of the rows rendered in ``Chunk.text``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agentic_rag.ingest import tables as tbl
from agentic_rag.text.clauses import amended_title, amending_item_label
from agentic_rag.text.dates import DATE
from agentic_rag.text.numerals import CN_NUMERAL_CHARS, cn_to_int
from agentic_rag.text.sentences import LIST_ITEM
from agentic_rag.types import POSITION_WEIGHTS, Chunk, Document, SectionKind, Table

_WS = "[ \\t\\u3000\\xa0]"
_NUM = f"[{CN_NUMERAL_CHARS}0-9０-９]+"
_CN_SMALL = "一二三四五六七八九十"

# Cheap first pass: line starts that could be structure. Everything else is never looked at again.
_CANDIDATE = re.compile(
    rf"^{_WS}*(?=第|[（(]|[{_CN_SMALL}]+[、.．]|[0-9０-９]|#|\||§|附件|附录|附表|注|[A-Z]\.[0-9]|"
    r"Art(?:icle|\.)|ARTICLE|Sec(?:tion|\.)|SECTION|Chapter|CHAPTER|Part\b|PART\b|"
    r"Appendix|APPENDIX|Annex|ANNEX|Schedule|SCHEDULE|Exhibit|EXHIBIT|Notes?\b|NOTES?\b|\[)",
    re.M,
)
_CN_HEAD = re.compile(rf"第({_NUM})(分编|编|章|节)")
_CN_ART = re.compile(rf"第({_NUM})条(?:之({_NUM}))?")
# what may follow a 第X条 label that opens an article (anything else reads as a reference: 第五条规定)
_ART_FOLLOW = re.compile(rf"{_WS}|[：:、.．]|$|(?![规所的至和及中第或、，,。；与以之])")
_CN_ITEM = re.compile(rf"([{_CN_SMALL}百]+)[、.．](?![0-9])")
_NUM_ITEM = re.compile(r"([0-9０-９]{1,3})[.．、](?![0-9０-９.．])")
_DOTTED = re.compile(rf"([0-9]{{1,3}}(?:\.[0-9]{{1,3}})+)\.?(?={_WS})")
#: an English clause number as written: 4, 4.1, 12a, 12bis, 4(b), 4.1(a)(ii), D.4, L.2, XIV
EN_CLAUSE_NO = (r"(?:[A-Z](?:\.\d{1,3})+|\d+(?:\.\d+)*(?:bis|ter|quater|[A-Za-z](?![A-Za-z]))?"
                r"(?:\([A-Za-z0-9]{1,4}\))*|[IVXLCDM]+\b)")
_EN_CLAUSE = re.compile(rf"(Article|ARTICLE|Art\.|Section|SECTION|Sec\.|§+)\s*({EN_CLAUSE_NO})")
# a clause numbered by a letter and a dotted number alone (appendix-style policies): L.2, D.4.1
_LETTER_DOTTED = re.compile(r"([A-Z](?:\.\d{1,3})+)\.?(?=[ \t\u3000]|$)")
_EN_HEAD = re.compile(r"(Part|PART|Chapter|CHAPTER)\s+(\d+|[IVXLCDM]+|[A-Z])\b")
_APPENDIX = re.compile(
    r"(附件|附录|附表|Appendix|APPENDIX|Annex|ANNEX|Schedule|SCHEDULE|Exhibit|EXHIBIT)"
    rf"{_WS}*([0-9０-９{_CN_SMALL}]+|[A-Z](?![a-z])|[IVX]+\b)?"
)
_FOOTNOTE = re.compile(r"(?:注[0-9０-９一二三四五六七八九十]*|注释|Notes?|NOTES?)[：:]|\[\^[^\]\s]+\]:|\[\d+\]" + _WS)
_MD_HEAD = re.compile(r"(#{1,6})" + _WS + r"+(.+?)#*" + _WS + "*$")
# the rest of an English label line that makes it a heading/clause, not a sentence ("Article 5 of ...")
_EN_FOLLOW = re.compile(r"\s*$|\s*[.:\-–—)]|\s+[A-Z\u4e00-\u9fff(\"“]")
_HEAD_PUNCT = re.compile(r"[。；;，,！？!?]")
_PARA_BREAK = re.compile(r"\n[ \t\u3000\xa0]*\n")
# articles run together in one paragraph (text pasted without line breaks): 。第二条　...
_INLINE_ART = re.compile(rf"(?<=[。；;])[ \t\u3000]*(?=第{_NUM}条(?:之{_NUM})?[ \t\u3000])")

_DISCOURSE = re.compile(
    r"(?<=[。；;，,：:\s])(?:但是|然而|此外|但(?=[，,])|不过|[Hh]owever\b|[Pp]rovided(?:,)? that\b|"
    r"[Nn]otwithstanding\b|[Mm]oreover\b|[Ii]n addition\b)"
)
_SENTENCE_END = re.compile(r"[。！？；!?;]|\.(?=\s)|\n\s*\n")
#: a line break: where a text with neither ends a sentence (lines of a list, of a poem) it cuts;
#: in hard-wrapped text (a licence, a plain-text RFC) most line breaks fall inside sentences
_LINE_END = re.compile(r"\n")

_HEAD_LEVELS = {"编": 1, "分编": 2, "章": 3, "节": 4, "part": 1, "chapter": 3}
_HEAD_IDS = {"编": "b", "分编": "fb", "章": "c", "节": "j", "part": "b", "chapter": "c"}
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_to_int(s: str) -> int | None:
    """``"XIV"`` -> 14; ``None`` for anything that is not a Roman numeral."""
    total, prev = 0, 0
    for ch in reversed(s.upper()):
        value = _ROMAN.get(ch)
        if value is None:
            return None
        total = total - value if value < prev else total + value
        prev = max(prev, value)
    return total or None


def _id_safe(no: str) -> str:
    """A clause number as a chunk-id part: 4(b) -> 4b (ids stay letters, digits and dots)."""
    return re.sub(r"[^0-9A-Za-z.\-]+", "", no)


def _norm_no(raw: str) -> str:
    """A label number as a plain string: 十二 -> "12", １２ -> "12", XIV -> "14", A -> "A"."""
    value = cn_to_int(raw)
    if value is not None:
        return str(value)
    if raw.isupper() and len(raw) > 1 or raw in ("I", "V", "X"):
        roman = roman_to_int(raw)
        if roman is not None:
            return str(roman)
    return raw


@dataclass(slots=True)
class _Marker:
    pos: int  # start of the line (after indentation)
    eol: int  # end of the line
    kind: str  # head, clause, item, num_item, appendix, footnote, table
    level: int = 0  # heading level or clause rank
    label: str = ""
    no: str = ""
    idpart: str = ""
    end: int = 0  # tables: end of the block
    table: Table | None = None
    # appendix: the label alone (附件1) while ``label`` is the whole line; items: their heading
    # line; inline articles: "inline" until their sequence is checked
    label_short: str = ""
    heading: bool = False  # the label opens a Markdown heading line (## 2. Definitions)


@dataclass(slots=True)
class _Context:
    heads: list[tuple[int, str, str]] = field(default_factory=list)  # (level, text, idpart)
    # (rank, label, no, idpart, path entry)
    clauses: list[tuple[int, str, str, str, str]] = field(default_factory=list)
    appendix: tuple[str, str] | None = None  # (label as written, number) inside an appendix

    def id_path(self) -> str:
        parts = [h[2] for h in self.heads]
        if self.clauses:
            parts.append(self.clauses[-1][3])
        return ".".join(parts) if parts else "p0"

    def path(self) -> list[str]:
        return [h[1] for h in self.heads] + [c[4] for c in self.clauses]


@dataclass(slots=True)
class _Segment:
    start: int
    end: int
    ctx: _Context
    kind: SectionKind
    id_path: str
    skip_to: int = -1  # heading segments: the heading line alone is not a chunk
    table: Table | None = None


def _classify(text: str, pos: int, eol: int, md_ord: list[int]) -> _Marker | None:
    line = text[pos:eol].rstrip()
    if not line:
        return None
    first = line[0]
    if first == "|":
        return _Marker(pos, eol, "table")
    if first == "#":
        m = _MD_HEAD.match(line)
        if not m:
            return None
        inner = m.group(2).strip()
        # a Markdown heading that carries a statute label is that label (## 第三章 医疗费用)
        sub = _classify_label(inner, pos, eol, in_heading=True)
        if sub is not None:
            sub.heading = True
            return sub
        md_ord[0] += 1
        return _Marker(pos, eol, "head", level=len(m.group(1)), label=inner[:120], idpart=f"h{md_ord[0]}")
    return _classify_label(line, pos, eol, in_heading=False)


def _classify_label(line: str, pos: int, eol: int, in_heading: bool) -> _Marker | None:
    first = line[0]
    if first == "第":
        m = _CN_HEAD.match(line)
        if m:
            rest = line[m.end():]
            if len(line) <= 60 and not _HEAD_PUNCT.search(rest):
                kind = m.group(2)
                no = _norm_no(m.group(1))
                return _Marker(pos, eol, "head", level=_HEAD_LEVELS[kind], label=line.strip(),
                               no=no, idpart=f"{_HEAD_IDS[kind]}{no}")
        m = _CN_ART.match(line)
        if m and _ART_FOLLOW.match(line, m.end()):
            no = _norm_no(m.group(1))
            label = m.group(0)
            if m.group(2):
                no = f"{no}-{_norm_no(m.group(2))}"
            return _Marker(pos, eol, "clause", level=1, label=label, no=no, idpart=f"a{no}")
        return None
    if first in "附A" or first in "SEs":
        m = _APPENDIX.match(line)
        if m and len(line) <= 80:
            rest = line[m.end():]
            if not rest.strip() or rest[0] in "：: \t\u3000-–—.、" and not _HEAD_PUNCT.search(rest.rstrip("。")):
                raw = m.group(2) or ""
                no = _norm_no(raw) if raw else ""
                return _Marker(pos, eol, "appendix", label=line.strip()[:120], no=no,
                               idpart=f"appx-{no.lower()}" if no else "appx",
                               label_short=m.group(0).strip())
    if first in "ASs§":
        m = _EN_CLAUSE.match(line)
        if m and _EN_FOLLOW.match(line, m.end()):
            word = m.group(1)
            no = _norm_no(m.group(2))
            prefix = "a" if word.lower().startswith("art") else "s"
            return _Marker(pos, eol, "clause", level=1, label=m.group(0), no=no, idpart=prefix + _id_safe(no))
    if first.isupper() and line[1:2] == ".":
        m = _LETTER_DOTTED.match(line)
        if m and _EN_FOLLOW.match(line, m.end()):
            no = m.group(1)
            return _Marker(pos, eol, "clause", level=no.count(".") + 1, label=no, no=no, idpart=f"s{no}")
    if first in "PC":
        m = _EN_HEAD.match(line)
        if m and len(line) <= 80 and _EN_FOLLOW.match(line, m.end()):
            kind = m.group(1).lower()
            no = _norm_no(m.group(2))
            return _Marker(pos, eol, "head", level=_HEAD_LEVELS[kind], label=line.strip()[:120],
                           no=no, idpart=f"{_HEAD_IDS[kind]}{no.lower()}")
    if first.isdigit():
        m = _DOTTED.match(line)
        if m:
            no = m.group(1)
            return _Marker(pos, eol, "clause", level=no.count(".") + 1, label=no, no=no, idpart=f"s{no}")
        m = _NUM_ITEM.match(line)
        if m and len(line) > m.end():
            no = _norm_no(m.group(1))
            return _Marker(pos, eol, "num_item", level=1, label=m.group(0), no=no, idpart=f"i{no}",
                           label_short=_item_heading(line))
        return None
    if first in _CN_SMALL or first == "百":
        m = _CN_ITEM.match(line)
        if m and len(line) > m.end():
            no = _norm_no(m.group(1))
            return _Marker(pos, eol, "item", level=1, label=m.group(0), no=no, idpart=f"i{no}",
                           label_short=_item_heading(line))
        return None
    if not in_heading and first in "注N[":
        if _FOOTNOTE.match(line):
            return _Marker(pos, eol, "footnote")
    return None


def _item_heading(line: str) -> str:
    """The path entry of an item that acts as a clause: its line when that reads as a heading
    (一、总体要求), else just its marker."""
    line = line.strip()
    if len(line) <= 40 and not _HEAD_PUNCT.search(line):
        return line
    m = _CN_ITEM.match(line) or _NUM_ITEM.match(line)
    return m.group(0) if m else line[:10]


_SIGNATURE_DATE = re.compile(rf"[（(]?\s*(?:{DATE})\s*[)）]?")
_SIGNATURE_STOP = re.compile(r"[。；;，,！？!?：:|#]")


def _signature(text: str) -> _Marker | None:
    """The signature block closing a document (issuing bodies, then a date on its own line): it
    belongs to no clause, so it must not be glued to the last article."""
    end = len(text.rstrip())
    cursor = end
    starts: list[int] = []
    for _ in range(5):  # a date line and at most four issuer lines
        if cursor <= 0:
            break
        line_start = text.rfind("\n", 0, cursor) + 1
        line = text[line_start:cursor].strip()
        cursor = line_start - 1
        if not line:
            continue
        if not starts:
            if len(line) > 30 or not _SIGNATURE_DATE.fullmatch(line):
                return None
        elif len(line) > 40 or _SIGNATURE_STOP.search(line) or _CANDIDATE.match(line):
            break
        starts.append(line_start + (len(text[line_start:]) - len(text[line_start:].lstrip())))
    if not starts:
        return None
    pos = starts[-1]
    if not text[:pos].strip():
        return None  # the whole document is a date: nothing to separate it from
    return _Marker(pos, pos, "signature")


def _find_markers(text: str) -> list[_Marker]:
    markers: list[_Marker] = []
    md_ord = [0]
    block_end = -1
    fences = _code_fences(text) if "```" in text or "~~~" in text else []
    for cand in _CANDIDATE.finditer(text):
        pos = cand.end()
        if pos < block_end:
            continue
        if fences and any(s <= pos < e for s, e in fences):
            continue  # "# comment" or "1. step" inside a code block is code, not structure
        eol = text.find("\n", pos)
        if eol < 0:
            eol = len(text)
        marker = _classify(text, pos, eol, md_ord)
        if marker is None:
            continue
        if marker.kind == "head" and marker.idpart == "h1" and marker.level == 1 \
                and not text[:pos].strip():
            continue  # a leading "# Title" names the document; it is not a section of it
        if marker.kind == "table":
            marker = _table_block(text, pos)
            if marker is None:
                continue
            block_end = marker.end
        markers.append(marker)
    if "条" in text:
        inline = _inline_articles(text)
        if inline:
            markers = _in_sequence(sorted(markers + inline, key=lambda m: m.pos))
    if text.rstrip()[-1:] in "日号)）0123456789" and (sig := _signature(text)) is not None:
        markers = [m for m in markers if m.pos < sig.pos] + [sig]
    return markers


def _in_sequence(markers: list[_Marker]) -> list[_Marker]:
    """Keep an article found mid-paragraph only when its number follows the article before it;
    a sentence that merely starts with "第五条 " after another clause's text is not a new article."""
    out: list[_Marker] = []
    last = 0.0
    for m in markers:
        if m.kind == "clause" and m.idpart.startswith("a"):
            number = _sort_number(m.no)
            if m.label_short == "inline" and number <= last:
                continue
            last = number
            m.label_short = ""
        out.append(m)
    return out


def _sort_number(no: str) -> float:
    head, _, sub = no.partition("-")
    try:
        return float(head) + (float(sub) / 1000 if sub else 0.0)
    except ValueError:
        return 0.0


_FENCE = re.compile(r"^[ \t]*(```|~~~)", re.M)


def _code_fences(text: str) -> list[tuple[int, int]]:
    """Spans of Markdown fenced code blocks (an unclosed fence runs to the end)."""
    spans: list[tuple[int, int]] = []
    opened = -1
    for m in _FENCE.finditer(text):
        if opened < 0:
            opened = m.start()
        else:
            spans.append((opened, m.end()))
            opened = -1
    if opened >= 0:
        spans.append((opened, len(text)))
    return spans


def _inline_articles(text: str) -> list[_Marker]:
    found: list[_Marker] = []
    for m in _INLINE_ART.finditer(text):
        pos = m.end()
        # the "line" of a run-together article ends at its first sentence (bounded, so a huge
        # single-line text stays linear)
        limit = min(len(text), pos + 500)
        eol = min(i for i in (text.find("\n", pos, limit), text.find("。", pos, limit), limit) if i >= 0)
        marker = _classify_label(text[pos:eol], pos, eol, in_heading=False)
        if marker is not None and marker.kind == "clause":
            marker.label_short = "inline"  # checked against the article sequence, then cleared
            found.append(marker)
    return found


def _table_block(text: str, pos: int) -> _Marker | None:
    lines: list[str] = []
    cursor = pos
    end = pos
    n = len(text)
    while cursor < n:
        eol = text.find("\n", cursor)
        if eol < 0:
            eol = n
        line = text[cursor:eol]
        if not line.lstrip(" \t\u3000").startswith("|"):
            break
        lines.append(line)
        end = eol
        cursor = eol + 1
    table = tbl.parse_markdown_table(lines)
    if table is None:
        return None
    return _Marker(pos, pos, "table", end=end, table=table)


def _select_clauses(markers: list[_Marker], text: str = "", amending: bool = False) -> list[_Marker]:
    """Decide which item markers are clauses: only where the document has no articles, and
    ``1.`` lines of a Markdown document only when they are its headings (``## 2. Scope``):
    under Markdown headings a ``1.`` line is an ordered list, which stays in its section.

    In an amending instrument the numbered items that replace or insert clauses ("1. Clause 4.2
    is deleted and replaced with: …") are its clauses wherever they stand, each labelled with the
    clause it sets (4.2), the label the clause has in the instrument it amends."""
    has_articles = any(m.kind == "clause" and m.level == 1 for m in markers)
    has_items = any(m.kind == "item" for m in markers)
    markdown = any(m.heading or m.kind == "head" and m.idpart.startswith("h") for m in markers)
    sets = {id(m): amending_item_label(text[m.pos:m.eol]) for m in markers
            if amending and not has_articles and m.kind == "num_item"}
    items_amend = any(sets.values())
    out: list[_Marker] = []
    for m in markers:
        if m.kind == "item" or m.kind == "num_item":
            amends = items_amend and m.kind == "num_item"
            if not amends and (has_articles or (m.kind == "num_item" and (has_items or markdown and not m.heading))):
                continue
            m.kind = "clause"
            m.label, m.label_short = m.label.rstrip("、.．"), m.label_short or m.label
            if sets.get(id(m)):
                m.label = m.no = sets[id(m)]
        out.append(m)
    return out


def segment(text: str, amending: bool = False) -> list[_Segment]:
    """Cut ``text`` into clause segments (internal; :func:`chunk_document` is the public API);
    ``amending``: the text is an amending instrument (:func:`_select_clauses`)."""
    markers = _select_clauses(_find_markers(text), text, amending)
    segments: list[_Segment] = []
    ctx = _Context()
    kind: SectionKind = "body"
    start = 0
    # a "# Title" line alone does not make a preamble chunk; the title is in the metadata
    lead = len(text) - len(text.lstrip())
    skip_to = text.find("\n", lead) if text.startswith("# ", lead) else -1
    if skip_to < 0 and text.startswith("# ", lead):
        skip_to = len(text)
    resume: tuple[int, _Context, SectionKind] | None = None  # where a footnote paragraph ends
    counters = {"fn": 0, "t": 0}

    own_id: str | None = None  # an id that is not the clause path (footnotes, the signature)

    def close(end: int) -> None:
        if end > start:
            id_path = own_id or (ctx.id_path() if kind != "footnote" else f"fn{counters['fn']}")
            segments.append(_Segment(start, end, ctx, kind, id_path, skip_to))

    for i, m in enumerate(markers):
        if resume is not None and resume[0] <= m.pos:  # the footnote paragraph ended before m
            close(resume[0])
            start, ctx, kind = resume
            resume = None
            skip_to = -1
        close(m.pos)
        skip_to = -1
        if resume is not None:  # m ends the footnote: go on from what surrounded it
            _, ctx, kind = resume
            resume = None
        if m.kind == "signature":
            ctx, kind, start, own_id = _Context(), "body", m.pos, "sig"
            continue
        if m.kind == "table":
            counters["t"] += 1
            segments.append(_Segment(m.pos, m.end, ctx, "table", f"t{counters['t']}", table=m.table))
            start = m.end
            continue
        if m.kind == "footnote":
            counters["fn"] += 1
            # the note ends at its paragraph break, or at the next structure anyway
            bound = markers[i + 1].pos if i + 1 < len(markers) else len(text)
            brk = _PARA_BREAK.search(text, m.eol, bound)
            resume = (brk.end() if brk else bound, ctx, kind)
            # a note belongs to the headings around it, not to the clause it follows
            ctx = _Context(heads=ctx.heads, appendix=ctx.appendix)
            kind = "footnote"
            start = m.pos
            continue
        if m.kind == "appendix":
            ctx = _Context(heads=[(0, m.label, m.idpart)], appendix=(m.label_short, m.no))
            skip_to = m.eol
        elif m.kind == "head":
            heads = [h for h in ctx.heads if h[0] < m.level]
            heads.append((m.level, m.label, m.idpart))
            ctx = _Context(heads=heads, appendix=ctx.appendix)
            skip_to = m.eol
        else:  # clause
            clauses = [c for c in ctx.clauses if c[0] < m.level]
            # items acting as clauses show their heading line in the path (一、总体要求)
            clauses.append((m.level, m.label, m.no, m.idpart, m.label_short or m.label))
            ctx = _Context(heads=ctx.heads, clauses=clauses, appendix=ctx.appendix)
            nxt = markers[i + 1] if i + 1 < len(markers) else None
            if nxt is not None and nxt.kind == "clause" and nxt.level > m.level \
                    and _title_line(text[m.pos:m.eol], m.label):
                # "Section 3 Meals" right above 3.1, 3.2: a heading, kept in their paths; a
                # clause that states something ("Section 7(b) Phones are replaced ...") keeps
                # its text whatever follows it
                skip_to = m.eol
        kind = "appendix" if ctx.appendix is not None else "body"
        start = m.pos
    if resume is not None and resume[0] < len(text):
        close(resume[0])
        start, ctx, kind = resume
        skip_to = -1
    close(len(text))
    return segments


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _in_list(text: str, at: int) -> bool:
    """Whether a cut at ``at`` falls inside a list: the next line is an item, or the line before
    introduces one (ends in a colon)."""
    after = text[at:at + 40].lstrip()
    before = text[:at].rstrip()
    return bool(LIST_ITEM.match(after)) or before.endswith((":", "："))


def split_span(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Cut ``text[start:end]`` into pieces of at most ``max_chars``: at the last discourse marker
    in the window, else the last sentence end (a terminator or a blank line; one before the window
    when the window has none), else the last line break, else the last space, else hard. Pieces
    are trimmed."""
    pieces: list[tuple[int, int]] = []
    guard = (end - start) // max(1, max_chars // 10) + 2  # each round advances ≥ max_chars/10
    while end - start > max_chars and guard > 0:
        guard -= 1
        lo = start + max_chars // 3
        short = start + max_chars // 10
        hi = start + max_chars
        window = text[lo:hi]
        cut = -1
        for m in _DISCOURSE.finditer(window):
            cut = lo + m.start()
        if cut < 0:
            # the last sentence end, but not one that parts a list from its items or an item
            # from the next ("Serious misconduct includes:" / "* Theft" ...) when another will do
            # (a shorter piece that ends a sentence beats one that stops mid-sentence at a line
            # break: "... shall terminate" / "as of the date such litigation is filed.")
            ends = [lo + m.end() for m in _SENTENCE_END.finditer(window)] \
                or [m.end() for m in _SENTENCE_END.finditer(text, short, lo)] \
                or [lo + m.end() for m in _LINE_END.finditer(window)]
            whole = [c for c in ends if not _in_list(text, c)]
            cut = (whole or ends or [-1])[-1]
        if cut < 0:
            space = window.rfind(" ")
            cut = lo + space + 1 if space >= 0 else hi
        s, e = _trim(text, start, cut)
        if e > s:
            pieces.append((s, e))
        start = cut
    s, e = _trim(text, start, end)
    if e > s:
        pieces.append((s, e))
    return pieces


def _title_line(line: str, label: str) -> bool:
    """Whether a clause's line is only its label and a short title ("Section 3 Meals", "第二章
    总则"), not a statement: no sentence punctuation and a few words after the label."""
    rest = line.strip().lstrip("#").strip()
    rest = rest[len(label):] if rest.startswith(label) else rest
    rest = rest.lstrip(" .:：-–—").rstrip()
    return not re.search(r"[，。；！？,;!?]|\.\s|\.$", rest) and len(rest.split()) <= 6 and len(rest) <= 40


def heading_only(text: str) -> bool:
    """Whether a chunk's text is nothing but Markdown heading lines (what an outline with no
    text under its headings chunks into). Such a chunk says nothing a vector could match
    better than BM25 on the same words, so it is not embedded.

    >>> heading_only("## 3 Scope\\n\\n## 4 Terms"), heading_only("## 3 Scope\\nThis applies to all.")
    (True, False)
    """
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and all(_MD_HEAD.match(line.strip()) for line in lines)


def chunk_document(doc: Document, max_clause_chars: int = 500) -> list[Chunk]:
    """The chunks of ``doc`` in reading order, each carrying the document's metadata.

    >>> from agentic_rag.types import DocMeta
    >>> d = Document(doc_id="d1", source="x.txt", content_hash="h",
    ...              text="第一章 总则\\n第一条 为了规范管理，制定本办法。", meta=DocMeta(title="办法"))
    >>> [(c.chunk_id, c.clause, c.path) for c in chunk_document(d)]
    [('d1:c1.a1:0', '第一条', ['第一章 总则', '第一条'])]
    """
    text = doc.text
    meta = doc.meta
    common = {
        "doc_id": doc.doc_id, "title": meta.title, "source": doc.source, "doc_number": meta.doc_number,
        "authority": meta.authority, "publish_date": meta.publish_date,
        "effective_date": meta.effective_date, "version": meta.version, "status": meta.status,
        "language": meta.language, "extra": meta.extra,
    }
    chunks: list[Chunk] = []
    counters: dict[str, int] = {}
    amending = amended_title(meta.title or "") is not None or bool(meta.extra.get("amends"))
    for seg in segment(text, amending):
        if seg.ctx.clauses:
            label, clause_no = seg.ctx.clauses[-1][1], seg.ctx.clauses[-1][2]
        elif seg.ctx.appendix is not None and seg.kind != "footnote":
            label, clause_no = seg.ctx.appendix[0], seg.ctx.appendix[1] or None
        else:  # a section under an unnumbered Markdown heading is cited by its heading
            label = next((h[1] for h in reversed(seg.ctx.heads)
                          if h[2].startswith("h") and h[1] != meta.title), None)
            clause_no = None
        if seg.kind == "footnote":  # a note is cited by its own marker as written: 注, 注1, [2]
            note = _FOOTNOTE.match(text, _trim(text, seg.start, seg.end)[0])
            label = note.group(0).strip().rstrip("：:").strip() if note else label
        path = seg.ctx.path()
        weight = POSITION_WEIGHTS.get(seg.kind, 1.0)
        if seg.kind == "table" and seg.table is not None:
            groups = tbl.split_rows(seg.table, max_clause_chars)
            span = _trim(text, seg.start, seg.end)
            for group in groups:
                n = counters.get(seg.id_path, 0)
                counters[seg.id_path] = n + 1
                chunks.append(Chunk(
                    chunk_id=f"{doc.doc_id}:{seg.id_path}:{n}", ord=len(chunks),
                    text=tbl.searchable_text(group), clause=label, clause_no=clause_no, path=path,
                    kind="table", position_weight=weight, span=span, table=group, **common))
            continue
        start, end = _trim(text, seg.start, seg.end)
        if seg.skip_to >= 0 and _trim(text, max(start, seg.skip_to), end)[0] >= end:
            continue  # a heading line with nothing under it: it lives on in the path
        if end <= start:
            continue
        for s, e in split_span(text, start, end, max_clause_chars):
            n = counters.get(seg.id_path, 0)
            counters[seg.id_path] = n + 1
            chunks.append(Chunk(
                chunk_id=f"{doc.doc_id}:{seg.id_path}:{n}", ord=len(chunks), text=text[s:e],
                clause=label, clause_no=clause_no, path=path, kind=seg.kind, position_weight=weight,
                span=(s, e), **common))
    if not chunks and text.strip():
        # only headings (a title line, or an outline with nothing under its headings): keep
        # them rather than lose the document, cut like any clause so that no chunk is so long
        # that embedding it costs minutes (20,000 headings in one chunk did)
        start, end = _trim(text, 0, len(text))
        for n, (s, e) in enumerate(split_span(text, start, end, max_clause_chars)):
            chunks.append(Chunk(chunk_id=f"{doc.doc_id}:p0:{n}", ord=n, text=text[s:e], span=(s, e),
                                **common))
    return chunks
