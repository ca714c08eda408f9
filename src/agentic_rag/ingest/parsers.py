"""File formats to plain text with Markdown structure.

Each parser turns one file's bytes into a :class:`Parsed`: the document text (headings as
Markdown ``#`` lines, tables as Markdown pipe tables, see ``tables.py``) plus what the format
itself says about the document: Markdown front matter (YAML ``---`` or TOML ``+++``, taken out of
the text), an HTML ``<title>`` and ``<meta>`` tags, DOCX core properties, PDF metadata. What the
keys mean is decided in ``metadata.py``. Anything unreadable raises :class:`IngestError` naming the
file and the reason; vendor errors are chained.

JSON Lines are not parsed here: ``pipeline.py`` streams them record by record.
"""

from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentic_rag.errors import IngestError
from agentic_rag.ingest.pdf import PdfOptions, read_pdf
from agentic_rag.ingest.tables import render_markdown

#: suffixes handled by :func:`parse_bytes`
PARSED_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".html", ".htm", ".docx", ".pdf", ".csv", ".xlsx",
                             ".xlsm", ".pptx", ".epub", ".rtf"})


@dataclass(slots=True)
class Parsed:
    """One file's text and the metadata hints its format carried."""

    text: str
    title: str = ""
    hints: dict[str, str] = field(default_factory=dict)  # e.g. {"authority": ..., "publish_date": ...}
    rule: str = ""  # where the title hint came from, for provenance
    #: Markdown front matter as written (key -> YAML/TOML value); never part of ``text``
    front_matter: dict[str, Any] = field(default_factory=dict)
    front_matter_rule: str = ""  # "YAML front matter" / "TOML front matter"
    #: HTML ``<meta name|property=... content=...>`` (name lowercased -> content)
    meta_tags: dict[str, str] = field(default_factory=dict)
    #: PDF: ``(start, end, page, box)`` of each block of ``text`` (see ``pdf.locate``)
    layout: list[tuple[int, int, int, tuple[float, float, float, float]]] = field(default_factory=list)
    #: facts about the file for the document's ``extra`` (e.g. ``ocr_pages``)
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- text files and encodings

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def decode_text(data: bytes, path: str) -> str:
    """Bytes of a text file to str: BOM (UTF-8/16/32), then UTF-8, then line by line when some
    lines are UTF-8 and others not (a file pasted together from two sources), then GB18030
    (covers GBK and GB2312), then charset-normalizer's best guess. Binary or unrecognisable ->
    IngestError. Decoding the whole of a mixed file as one legacy encoding would turn every
    UTF-8 line into mojibake ("CafÃ©") without a word."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return _check_text(data.decode(encoding), path, encoding)
            except UnicodeDecodeError as exc:
                raise IngestError(path, f"invalid {encoding} text after its byte-order mark") from exc
    if b"\x00" in data[:4096]:
        raise IngestError(path, "unknown encoding: binary data (NUL bytes) without a byte-order mark")
    try:
        return _check_text(data.decode("utf-8"), path, "utf-8")
    except UnicodeDecodeError:
        pass
    mixed = _decode_mixed(data, path)
    if mixed is not None:
        return _check_text(mixed, path, "UTF-8 and another encoding")
    encoding = _legacy_encoding(data)
    if encoding is None:
        raise IngestError(path, "unknown encoding: not UTF-8/UTF-16/GB18030 and no confident guess")
    return _check_text(data.decode(encoding), path, encoding)


def _decode_mixed(data: bytes, path: str) -> str | None:
    """The text of a file whose lines mix UTF-8 with one legacy encoding, each line decoded in
    its own; None when no line has UTF-8 beyond ASCII (a file in one legacy encoding). The
    other lines' encoding is guessed from them alone; a guess that fails -> IngestError."""
    lines = data.split(b"\n")
    utf8 = other = 0
    for line in lines:
        if line.isascii():
            continue
        try:
            line.decode("utf-8")
            utf8 += 1
        except UnicodeDecodeError:
            other += 1
    if not utf8 or not other:
        return None
    rest = b"\n".join(line for line in lines if not _is_utf8(line))
    encoding = _legacy_encoding(rest)
    if encoding is None:
        raise IngestError(path, f"mixed encodings: {utf8} lines are UTF-8, {other} are in an "
                                "encoding that cannot be told; convert the file to UTF-8")
    try:
        return "\n".join(line.decode("utf-8") if _is_utf8(line) else line.decode(encoding)
                         for line in lines)
    except UnicodeDecodeError as exc:
        raise IngestError(path, f"mixed encodings: lines that are not UTF-8 are not {encoding} "
                                "either; convert the file to UTF-8") from exc


def _is_utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_HIGH_RUN = re.compile(rb"[\x80-\xff]+")


def _legacy_encoding(data: bytes) -> str | None:
    """The encoding of text that is not UTF-8 (a whole file, or the other lines of a mixed
    one, often too few for a statistical guess): lone high bytes between ASCII letters are a
    Western code page ("Caf\xe9"); bytes that read as Chinese are GB18030; otherwise
    charset-normalizer's guess when it is confident, else None."""
    runs = [len(m) for m in _HIGH_RUN.findall(data)]
    if runs and sum(1 for n in runs if n == 1) >= 0.8 * len(runs):
        for encoding in ("cp1252", "latin-1"):  # cp1252 leaves five bytes undefined
            try:
                data.decode(encoding)
                return encoding
            except UnicodeDecodeError:
                continue
    try:
        if _plausible_chinese(data.decode("gb18030")):
            return "gb18030"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    return best.encoding if best is not None and best.chaos <= 0.3 else None


def _plausible_chinese(text: str) -> bool:
    # GB18030 decodes most byte soup; accept it only when the result reads as CJK + ASCII text
    sample = text[:4000]
    if not sample:
        return False
    cjk = len(_CJK.findall(sample))
    ascii_ = sum(1 for ch in sample if ch < "\x80")
    return cjk > 0 and (cjk + ascii_) / len(sample) > 0.9


def _check_text(text: str, path: str, encoding: str) -> str:
    sample = text[:8000]
    if sample and len(_CONTROL.findall(sample)) > max(2, len(sample) // 100):
        raise IngestError(path, f"unknown encoding: decoding as {encoding} gives binary control characters")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_text(data: bytes, path: str) -> Parsed:
    text = decode_text(data, path)
    front, kind, text = split_front_matter(text)
    title = ""
    for line in text.split("\n", 20)[:20]:
        if line.strip():
            stripped = line.strip()
            if stripped.startswith("#"):
                title = stripped.lstrip("#").strip()
            break
    return Parsed(text=text, title=title, rule="markdown heading" if title else "",
                  front_matter=front, front_matter_rule=kind)


# Markdown's inline markup is how a page is drawn, not what it says: a reader sees "25 days",
# not "_25 days_", and the link's words, not its address. Block structure (headings, lists,
# tables, quotes) stays: the chunker reads it.
_MD_INLINE = (
    (re.compile(r"<!--.*?-->", re.S), ""),  # comments are never shown
    (re.compile(r"^[ \t]*(?:\{\{[<%].*?[%>]\}\}|\{%.*?%\})[ \t]*$\n?", re.M), ""),  # site-generator shortcodes
    (re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\S+.*$\n?", re.M), ""),  # link reference definitions
    (re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)"), r"\1"),  # an image: its alt text
    (re.compile(r"\[([^\]\n]+)\](?:\([^)\n]*\)|\[[^\]\n]*\])"), r"\1"),  # a link: its words
    (re.compile(r"<(https?://[^>\s]+)>"), r"\1"),  # an autolink: the address
    (re.compile(r"<br\s*/?>", re.I), " "),
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # strong
    (re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])"), r"\1"),  # emphasis
    (re.compile(r"(?<![\w\\])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?!\w)"), r"\1"),
    (re.compile(r"(?<!`)`([^`\n]+)`(?!`)"), r"\1"),  # inline code
)


def markdown_plain(text: str) -> str:
    """Markdown ``text`` with its inline markup rendered as a reader sees it (comments and
    shortcodes dropped, links and images as their words, emphasis and code marks removed);
    headings, list markers, tables and fenced code stay as written.

    >>> markdown_plain("Take _at least 25 days_ off; see [the **calendar**](https://x.y/cal).<!-- x -->")
    'Take at least 25 days off; see the calendar.'
    """
    out: list[str] = []
    # fenced code is shown as written
    for i, part in enumerate(re.split(r"(^```.*?^```[ \t]*$)", text, flags=re.M | re.S)):
        if i % 2 == 0:
            for pattern, repl in _MD_INLINE:
                part = pattern.sub(repl, part)
        out.append(part)
    return "".join(out)


_FRONT_MATTER = re.compile(r"\A\ufeff?\s*(?:(?P<yaml>---)|\+\+\+)[ \t]*\n(?P<body>(?:.*?\n)??)"
                           r"(?(yaml)(?:---|\.\.\.)|\+\+\+)[ \t]*(?:\n|\Z)", re.S)
_FM_LINE = re.compile(r"^([A-Za-z_][\w.-]{0,40})[ \t]*:[ \t]*(.*?)[ \t]*$", re.M)
_FM_MAX = 20_000  # a front matter block is a few lines; a "---" rule far down is not one


def split_front_matter(text: str) -> tuple[dict[str, Any], str, str]:
    """``(fields, kind, body)``: a leading YAML (``---``) or TOML (``+++``) block read into a dict
    and cut from the text, so it is never indexed as body. A YAML block that does not parse is
    read line by line as ``key: value``; a leading ``---`` that holds no keys is left alone.

    >>> split_front_matter("---\\ntitle: Leave Policy\\n---\\n# Leave\\n")[0]
    {'title': 'Leave Policy'}
    """
    m = _FRONT_MATTER.match(text[:_FM_MAX])
    if not m:
        return {}, "", text
    raw = m.group("body")
    if not raw.strip():
        return {}, "", text[m.end():]  # an empty block still is not body text
    fields: Any = None
    if m.group("yaml"):
        import yaml

        try:
            fields = yaml.safe_load(raw)
        except yaml.YAMLError:
            fields = {k: v.strip("'\"") for k, v in _FM_LINE.findall(raw)}
        kind = "YAML front matter"
    else:
        import tomllib

        try:
            fields = tomllib.loads(raw)
        except tomllib.TOMLDecodeError:
            fields = None
        kind = "TOML front matter"
    if not isinstance(fields, dict) or not fields:
        return {}, "", text
    return {str(k): v for k, v in fields.items()}, kind, text[m.end():]


# ---------------------------------------------------------------- HTML

_HTML_DROP = ("script", "style", "nav", "noscript", "template", "svg", "iframe", "header", "footer",
              "form", "button")
_BLOCKS = {"p", "div", "section", "article", "main", "li", "dd", "dt", "blockquote", "pre",
           "address", "figcaption", "caption", "br", "tr"}


def parse_html(data: bytes, path: str) -> Parsed:
    from bs4 import BeautifulSoup

    try:
        soup = BeautifulSoup(data, "lxml")
    except Exception as exc:  # lxml raises several unrelated types on broken input
        raise IngestError(path, f"unreadable HTML: {exc}") from exc
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    tags: dict[str, str] = {}
    for meta in soup.find_all("meta"):
        name = (meta.get("name") or meta.get("property") or meta.get("itemprop") or "").strip().lower()
        content = " ".join((meta.get("content") or "").split())
        if name and content:
            tags.setdefault(name, content)
    for tag in soup(_HTML_DROP):
        tag.decompose()
    body = soup.body or soup
    lines: list[str] = []
    _html_walk(body, lines)
    text = "\n".join(line for line in (ln.strip() for ln in lines) if line)
    rule = "<title>" if title else ""
    h1 = body.find("h1")
    if not title and h1 is not None:
        title, rule = h1.get_text(" ", strip=True), "<h1>"
    return Parsed(text=text, title=title, rule=rule if title else "", meta_tags=tags)


def _html_walk(node, lines: list[str]) -> None:
    from bs4 import NavigableString, Tag

    buf: list[str] = []

    def flush() -> None:
        if buf:
            lines.append(" ".join("".join(buf).split()))
            buf.clear()

    # (children, is_block): a block's text is flushed when it closes, so blocks never merge
    stack: list[tuple[object, bool]] = [(iter(node.children), False)]
    steps = 0
    while stack and steps < 5_000_000:  # bounded walk over the parsed tree
        steps += 1
        child = next(stack[-1][0], None)
        if child is None:
            if stack.pop()[1]:
                flush()
            continue
        if isinstance(child, NavigableString):
            if type(child).__name__ in ("Comment", "Doctype", "Declaration", "ProcessingInstruction"):
                continue
            buf.append(str(child))
            continue
        if not isinstance(child, Tag):
            continue
        name = child.name.lower()
        if re.fullmatch(r"h[1-6]", name):
            flush()
            lines.append("#" * int(name[1]) + " " + child.get_text(" ", strip=True))
            continue
        if name == "table":
            flush()
            headers, rows = _html_table(child)
            if headers or rows:
                lines.append(render_markdown(headers, rows))
            continue
        if name in _BLOCKS:
            flush()
            if name != "br":
                stack.append((iter(child.children), True))
            continue
        stack.append((iter(child.children), False))
    flush()


def _html_table(table) -> tuple[list[str], list[list[str]]]:
    rows: list[list[str]] = []
    header: list[str] = []
    for tr in table.find_all("tr"):
        if tr.find_parent("table") is not table:
            continue  # nested tables are flattened into their cell text
        cells = tr.find_all(["th", "td"], recursive=False)
        values = [c.get_text(" ", strip=True) for c in cells]
        if not header and cells and all(c.name == "th" for c in cells):
            header = values
        elif any(values):
            rows.append(values)
    if not header and rows:
        header, rows = rows[0], rows[1:]
    return header, rows


# ---------------------------------------------------------------- DOCX

_HEADING_STYLE = re.compile(r"(?:heading|标题)\s*(\d)", re.I)


def parse_docx(data: bytes, path: str) -> Parsed:
    try:
        import docx
        from docx.document import Document as DocxDocument
        from docx.table import Table as DocxTable
        from docx.text.paragraph import Paragraph

        document: DocxDocument = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises zipfile/KeyError/ValueError variants
        raise IngestError(path, f"unreadable DOCX: {exc}") from exc
    lines: list[str] = []
    first_heading = ""
    body = document.element.body
    numbers = _Numbering(document)
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = Paragraph(child, document)
            text = para.text.strip()
            if not text:
                continue
            label = numbers.label(para)
            if label and not text.startswith(label.strip()):
                text = f"{label} {text}" if not label.endswith((" ", "\u3000")) else label + text
            style = (para.style.name if para.style is not None else "") or ""
            m = _HEADING_STYLE.search(style)
            if style.lower() == "title" or style == "标题":
                first_heading = first_heading or text
                lines.append("# " + text)
            elif m:
                level = max(1, min(6, int(m.group(1))))
                first_heading = first_heading or text
                lines.append("#" * level + " " + text)
            else:
                lines.append(text)
        elif tag == "tbl":
            table = DocxTable(child, document)
            rows = [_dedupe_merged([cell.text.strip() for cell in row.cells]) for row in table.rows]
            rows = [r for r in rows if any(r)]
            if rows:
                lines.append(render_markdown(rows[0], rows[1:]))
    props = document.core_properties
    title = (props.title or "").strip() or first_heading
    hints: dict[str, str] = {}
    if props.author:
        hints["author"] = props.author
    return Parsed(text="\n".join(lines), title=title, hints=hints,
                  rule="docx title" if title else "")


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_CN_DIGITS = "零一二三四五六七八九"


def _cn_count(n: int) -> str:
    """1..9999 in Chinese counting: 1 一, 10 十, 12 十二, 21 二十一, 105 一百零五."""
    if n <= 0 or n >= 10000:
        return str(n)
    out, zero = "", False
    for unit, value in (("千", 1000), ("百", 100), ("十", 10), ("", 1)):
        digit, n = divmod(n, value)
        if digit:
            if zero and out:
                out += "零"
            out += ("" if unit == "十" and digit == 1 and not out else _CN_DIGITS[digit]) + unit
            zero = False
        elif out:
            zero = True
    return out


def _roman(n: int) -> str:
    out = ""
    for value, sym in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
                       (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out, n = out + sym, n - value
    return out


def _letters(n: int) -> str:
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1) if n > 0 else str(n)


_NUM_FORMATS = {
    "decimal": str, "decimalZero": lambda n: f"{n:02d}", "lowerLetter": _letters,
    "upperLetter": lambda n: _letters(n).upper(), "lowerRoman": lambda n: _roman(n).lower(),
    "upperRoman": _roman, "chineseCounting": _cn_count, "chineseCountingThousand": _cn_count,
    "ideographTraditional": lambda n: "甲乙丙丁戊己庚辛壬癸"[(n - 1) % 10],
    "decimalEnclosedCircle": lambda n: chr(0x2460 + n - 1) if 0 < n <= 20 else str(n),
    "decimalFullWidth": lambda n: "".join(chr(0xFF10 + int(d)) for d in str(n)),
}


class _Numbering:
    """The numbers Word draws in front of auto-numbered paragraphs (they are not in the
    paragraph text): each ``w:num`` counts its levels, a level's counter restarting when a
    higher level moves on, and ``lvlText`` ("%1.", "第%1条", "(%2)") says how to write them.
    Bullets become ``-``."""

    def __init__(self, document) -> None:
        self.levels: dict[str, dict[int, tuple[int, str, str]]] = {}  # numId -> ilvl -> (start, fmt, text)
        self.counts: dict[str, dict[int, int]] = {}
        try:
            root = document.part.numbering_part.element
        except (NotImplementedError, KeyError, AttributeError):
            return
        abstract = {}
        for a in root.iterchildren(f"{_W}abstractNum"):
            lv = {}
            for lvl in a.iterchildren(f"{_W}lvl"):
                ilvl = int(lvl.get(f"{_W}ilvl", "0"))
                start = lvl.find(f"{_W}start")
                fmt = lvl.find(f"{_W}numFmt")
                text = lvl.find(f"{_W}lvlText")
                lv[ilvl] = (int(start.get(f"{_W}val", "1")) if start is not None else 1,
                            fmt.get(f"{_W}val", "decimal") if fmt is not None else "decimal",
                            text.get(f"{_W}val", "") if text is not None else "")
            abstract[a.get(f"{_W}abstractNumId")] = lv
        for num in root.iterchildren(f"{_W}num"):
            ref = num.find(f"{_W}abstractNumId")
            if ref is None:
                continue
            lv = dict(abstract.get(ref.get(f"{_W}val"), {}))
            for over in num.iterchildren(f"{_W}lvlOverride"):
                start = over.find(f"{_W}startOverride")
                ilvl = int(over.get(f"{_W}ilvl", "0"))
                if start is not None and ilvl in lv:
                    lv[ilvl] = (int(start.get(f"{_W}val", "1")),) + lv[ilvl][1:]
            self.levels[num.get(f"{_W}numId")] = lv

    def _num_pr(self, para):
        ppr = para._p.pPr
        if ppr is not None and ppr.numPr is not None:
            return ppr.numPr
        style = para.style
        for _ in range(10):  # a style's numbering, or the numbering of the style it is based on
            if style is None:
                return None
            ppr = style.element.pPr
            if ppr is not None and ppr.numPr is not None:
                return ppr.numPr
            style = style.base_style
        return None

    def label(self, para) -> str:
        if not self.levels:
            return ""
        num_pr = self._num_pr(para)
        if num_pr is None or num_pr.numId is None:
            return ""
        num_id = str(num_pr.numId.val)
        ilvl = int(num_pr.ilvl.val) if num_pr.ilvl is not None else 0
        levels = self.levels.get(num_id)
        if not levels or ilvl not in levels or num_id == "0":
            return ""
        start, fmt, text = levels[ilvl]
        if fmt == "none":
            return ""
        if fmt == "bullet":
            return "-"
        counts = self.counts.setdefault(num_id, {})
        counts[ilvl] = counts.get(ilvl, start - 1) + 1
        for deeper in [k for k in counts if k > ilvl]:
            del counts[deeper]

        def number(m: re.Match) -> str:
            k = int(m.group(1)) - 1
            k_start, k_fmt, _ = levels.get(k, (1, "decimal", ""))
            return _NUM_FORMATS.get(k_fmt, str)(counts.get(k, k_start))

        return re.sub(r"%([1-9])", number, text).strip() if text else ""


def _dedupe_merged(cells: list[str]) -> list[str]:
    # python-docx repeats a horizontally merged cell once per grid column
    out: list[str] = []
    for i, cell in enumerate(cells):
        if i and cell and cell == cells[i - 1]:
            out.append("")
        else:
            out.append(cell)
    return out


# ---------------------------------------------------------------- spreadsheets

def parse_csv(data: bytes, path: str) -> Parsed:
    """A CSV (or TSV / semicolon-separated) file as one table: its first row is the header."""
    import csv

    text = decode_text(data, path)
    try:
        dialect = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    try:
        rows = [[cell.strip() for cell in row] for row in csv.reader(io.StringIO(text), dialect)]
    except csv.Error as exc:
        raise IngestError(path, f"unreadable CSV: {exc}") from exc
    # a table has no title line: the file's name is its title (and, being no statement of the
    # document's, makes it a version of nothing)
    return Parsed(text=_sheet_text([("", rows)]), title=Path(path).stem, rule="file name")


def parse_xlsx(data: bytes, path: str) -> Parsed:
    """An Excel workbook: each non-empty sheet a ``## sheet`` section holding its table (first
    non-empty row as header; formulas as their last computed values)."""
    try:
        import openpyxl

        book = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as exc:  # zipfile.BadZipFile, KeyError, InvalidFileException
        raise IngestError(path, f"unreadable XLSX: {exc}") from exc
    try:
        sheets = [(ws.title, [[_cell(v) for v in row] for row in ws.iter_rows(values_only=True)])
                  for ws in book.worksheets]
        title = (book.properties.title or "").strip() if book.properties else ""
    except Exception as exc:
        raise IngestError(path, f"corrupt XLSX: {exc}") from exc
    finally:
        book.close()
    return Parsed(text=_sheet_text(sheets, named=len(sheets) > 1), title=title or Path(path).stem,
                  rule="xlsx title" if title else "file name")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "isoformat"):
        text = value.isoformat()
        return text[:10] if text.endswith("T00:00:00") else text
    return " ".join(str(value).split())


def _sheet_text(sheets: list[tuple[str, list[list[str]]]], named: bool = False) -> str:
    """Sheets as Markdown: a ``## name`` heading per sheet (when there are several), then one
    pipe table (the chunker keeps its rows structured); empty rows and columns dropped."""
    parts: list[str] = []
    for name, rows in sheets:
        rows = [r for r in rows if any(c.strip() for c in r)]
        if not rows:
            continue
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        keep = [i for i in range(width) if any(r[i].strip() for r in rows)]
        rows = [[r[i] for i in keep] for r in rows]
        if named:
            parts.append(f"## {name}")
        parts.append(render_markdown(rows[0], rows[1:]))
    return "\n\n".join(parts)


# ---------------------------------------------------------------- slides

def parse_pptx(data: bytes, path: str) -> Parsed:
    """A PowerPoint deck: each slide a ``## Slide N: title`` section with its text boxes in
    reading order (top to bottom, left to right), tables as tables, and the speaker notes as a
    ``Notes:`` paragraph (a footnote to the slide)."""
    try:
        from pptx import Presentation

        deck = Presentation(io.BytesIO(data))
    except Exception as exc:  # zipfile.BadZipFile, KeyError, PackageNotFoundError
        raise IngestError(path, f"unreadable PPTX: {exc}") from exc
    parts: list[str] = []
    first_title = ""
    try:
        for n, slide in enumerate(deck.slides, start=1):
            title_shape = slide.shapes.title
            title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
            first_title = first_title or title
            parts.append(f"## Slide {n}" + (f": {title}" if title else ""))
            for shape in _reading_order(slide.shapes):
                if title_shape is not None and shape.shape_id == title_shape.shape_id:
                    continue
                if getattr(shape, "has_table", False) and shape.has_table:
                    rows = [[" ".join(c.text.split()) for c in row.cells] for row in shape.table.rows]
                    rows = [r for r in rows if any(r)]
                    if rows:
                        parts.append(render_markdown(rows[0], rows[1:]))
                elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                    lines = [" ".join(p.text.split()) for p in shape.text_frame.paragraphs]
                    parts.extend(line for line in lines if line)
            if slide.has_notes_slide:
                notes = " ".join(slide.notes_slide.notes_text_frame.text.split())
                if notes:
                    parts.append(f"Notes: {notes}")
            parts.append("")
        props_title = (deck.core_properties.title or "").strip()
    except Exception as exc:
        raise IngestError(path, f"corrupt PPTX: {exc}") from exc
    title = props_title or first_title
    return Parsed(text="\n".join(parts).strip(), title=title,
                  rule="pptx title" if props_title else "first slide title" if title else "")


def _reading_order(shapes, depth: int = 0) -> list:
    """Shapes top to bottom, left to right, group shapes opened (at most a few levels deep)."""
    out = []
    for shape in shapes:
        if shape.shape_type == 6 and depth < 5:  # MSO_SHAPE_TYPE.GROUP
            out.extend(_reading_order(shape.shapes, depth + 1))
        else:
            out.append(shape)
    return sorted(out, key=lambda s: ((s.top or 0), (s.left or 0)))


# ---------------------------------------------------------------- e-books and rich text

_OPF_NS = {"opf": "http://www.idpf.org/2007/opf", "dc": "http://purl.org/dc/elements/1.1/",
           "c": "urn:oasis:names:tc:opendocument:xmlns:container"}


def parse_epub(data: bytes, path: str) -> Parsed:
    """An EPUB (2 or 3): its chapters in spine order, each XHTML file read as HTML is (headings,
    tables), with the package's ``dc:title``, ``dc:creator``, ``dc:publisher`` and ``dc:date``.
    Read with zipfile and lxml: the maintained EPUB library (EbookLib) is AGPL-3.0."""
    import posixpath
    import zipfile

    from lxml import etree

    try:
        book = zipfile.ZipFile(io.BytesIO(data))
        container = etree.fromstring(book.read("META-INF/container.xml"))
        opf_path = container.find(".//c:rootfile", _OPF_NS).get("full-path")
        opf = etree.fromstring(book.read(opf_path))
    except (zipfile.BadZipFile, KeyError, AttributeError, etree.XMLSyntaxError) as exc:
        raise IngestError(path, f"unreadable EPUB: {exc}") from exc
    base = posixpath.dirname(opf_path)
    manifest = {item.get("id"): item for item in opf.iterfind(".//opf:manifest/opf:item", _OPF_NS)}

    def dc(name: str) -> str:
        node = opf.find(f".//opf:metadata/dc:{name}", _OPF_NS)
        return " ".join((node.text or "").split()) if node is not None and node.text else ""

    parts: list[str] = []
    for ref in opf.iterfind(".//opf:spine/opf:itemref", _OPF_NS):
        item = manifest.get(ref.get("idref"))
        if item is None or "html" not in (item.get("media-type") or ""):
            continue
        name = posixpath.normpath(posixpath.join(base, item.get("href") or ""))
        try:
            chapter = parse_html(book.read(name), f"{path}!{name}")
        except KeyError as exc:
            raise IngestError(path, f"corrupt EPUB: {name} is in the spine but not in the file") from exc
        if chapter.text.strip():
            parts.append(chapter.text)
    hints = {k: v for k, v in (("author", dc("creator")), ("authority", dc("publisher")),
                               ("publish_date", dc("date"))) if v}
    title = dc("title")
    return Parsed(text="\n\n".join(parts), title=title, hints=hints, rule="epub title" if title else "")


_RTF_TITLE = re.compile(r"\{\\info[^{}]*?\{\\title\s+([^{}]*)\}", re.S)
_RTF_CODEPAGE = re.compile(r"\\ansicpg(\d+)")


def parse_rtf(data: bytes, path: str) -> Parsed:
    """Rich text via striprtf: ``\\uN`` escapes and the code page of ``\\ansicpgN`` (936 for
    GBK Chinese) decoded; the ``{\\info{\\title …}}`` group is the title."""
    from striprtf.striprtf import rtf_to_text

    head = data[:4096].decode("latin-1")
    if not head.lstrip().startswith("{\\rtf"):
        raise IngestError(path, "unreadable RTF: it does not start with {\\rtf")
    m = _RTF_CODEPAGE.search(head)
    encoding = f"cp{m.group(1)}" if m else "cp1252"
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "cp1252"
    source = data.decode("latin-1")
    try:
        text = rtf_to_text(source, encoding=encoding, errors="replace")
    except Exception as exc:  # striprtf raises plain errors on broken groups
        raise IngestError(path, f"unreadable RTF: {exc}") from exc
    text = "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n"))
    title = ""
    if t := _RTF_TITLE.search(source):
        title = rtf_to_text("{\\rtf1 " + t.group(1) + "}", encoding=encoding, errors="replace").strip()
    if not title:
        title = next((line.strip() for line in text.split("\n") if line.strip()), "")[:100]
        rule = "first line" if title else ""
    else:
        rule = "rtf title"
    return Parsed(text=text.strip("\n"), title=title, rule=rule)


# ---------------------------------------------------------------- PDF

def parse_pdf(data: bytes, path: str, options: PdfOptions | None = None) -> Parsed:
    """A PDF through ``pdf.py`` (layout, tables, OCR of scanned pages), with the page and box
    of every block kept in ``Parsed.layout``."""
    read = read_pdf(data, path, options)
    hints: dict[str, str] = {}
    if read.author:
        hints["author"] = read.author
    if read.created:
        hints["pdf_date"] = read.created
    declared: dict[str, Any] = {}
    if read.ocr_pages:
        declared["ocr_pages"] = read.ocr_pages
    if read.scanned_skipped:
        declared["scanned_pages_not_read"] = read.scanned_skipped
    return Parsed(text=read.text, title=read.title, hints=hints, rule=read.title_rule,
                  layout=read.layout, extra=declared)


# ---------------------------------------------------------------- dispatch

def parse_bytes(data: bytes, path: str | Path, pdf: PdfOptions | None = None) -> Parsed:
    """Parse a file's bytes by its suffix. Empty input -> IngestError("empty file"). ``pdf``:
    the PDF backend and OCR settings (default: pdfium, OCR on)."""
    name = str(path)
    suffix = Path(name).suffix.lower()
    if not data or not data.strip():
        raise IngestError(name, "empty file")
    if suffix in (".txt", ".md", ".markdown"):
        parsed = parse_text(data, name)
        if suffix != ".txt":
            parsed = replace(parsed, text=markdown_plain(parsed.text))
    elif suffix in (".html", ".htm"):
        parsed = parse_html(data, name)
    elif suffix == ".docx":
        parsed = parse_docx(data, name)
    elif suffix == ".pdf":
        parsed = parse_pdf(data, name, pdf)
    elif suffix == ".csv":
        parsed = parse_csv(data, name)
    elif suffix in (".xlsx", ".xlsm"):
        parsed = parse_xlsx(data, name)
    elif suffix == ".pptx":
        parsed = parse_pptx(data, name)
    elif suffix == ".epub":
        parsed = parse_epub(data, name)
    elif suffix == ".rtf":
        parsed = parse_rtf(data, name)
    else:
        raise IngestError(name, f"unsupported file type {suffix or '(none)'}")
    if not parsed.text.strip():
        raise IngestError(name, "empty file: no text after parsing")
    return parsed
