"""PDF pages to text with layout: reading order, headings, tables, page boxes, OCR.

Two backends read a PDF into the same page model (lines with a box, a font size and a weight,
plus the tables found on the page):

- ``pdfium`` (default, permissive licences): pypdfium2 (Apache-2.0/BSD-3) for the text layer,
  page rendering and metadata; pdfplumber (MIT, on pdfminer.six) for ruled tables, asked only
  about pages that draw lines;
- ``mupdf`` (opt-in, the ``pdf-mupdf`` extra, AGPL-3.0): PyMuPDF for all of it.

One layout pass then turns the pages into Markdown-structured text, whatever the backend:

- running headers and footers (a line in the top or bottom band that repeats, digits aside, on
  at least half of the pages) and page numbers (``第3页 共9页``, ``- 3 -``, ``Page 3 of 9``) are
  dropped;
- a page (or a band of it) set in two columns is read left column first, then right;
- lines clearly larger than the body text, or bold short lines standing alone, become ``#``
  headings (larger font, higher level); clause lines (第X条, Article 4, 4.1) are left to the
  chunker as they are;
- a table found on the page becomes a Markdown pipe table in place (structured rows, as
  tables from DOCX/HTML), its cells never repeated as loose text;
- every block of text keeps its page number and box, so a chunk can say where on which page
  it came from (``Chunk.extra["page"]``/``["boxes"]``, see :func:`locate`);
- a page without a text layer is OCR'd (``ocr.py``) when OCR is on; a page with one never is.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentic_rag.errors import IngestError
from agentic_rag.ingest.tables import render_markdown

Box = tuple[float, float, float, float]  # x0, top, x1, bottom in PDF points, origin top-left


@dataclass(slots=True)
class Line:
    """One line of text on a page (or, for a table, its Markdown rendering)."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float = 0.0
    bold: bool = False
    table: bool = False

    @property
    def box(self) -> Box:
        return (self.x0, self.y0, self.x1, self.y1)


@dataclass(slots=True)
class Page:
    number: int  # 1-based
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)
    ocr: bool = False  # the lines came from OCR of the rendered page
    scanned: bool = False  # no text layer (OCR'd or not)


@dataclass(slots=True)
class PdfOptions:
    engine: str = "pdfium"
    ocr: bool = True
    ocr_dpi: int = 200
    ocr_max_pages: int = 200


@dataclass(slots=True)
class PdfText:
    """The text of a PDF and where each block of it stands on its pages."""

    text: str
    title: str = ""
    title_rule: str = ""
    author: str = ""
    created: str = ""  # yyyy-mm-dd from the PDF's CreationDate
    #: (start, end, page, box) of every block of ``text``
    layout: list[tuple[int, int, int, Box]] = field(default_factory=list)
    ocr_pages: list[int] = field(default_factory=list)
    scanned_skipped: list[int] = field(default_factory=list)  # no text layer, OCR off or unavailable
    repaired: bool = False


# ---------------------------------------------------------------- backends

def _truncated(data: bytes) -> bool:
    """A PDF ends with ``%%EOF`` (an incremental update appends another); a cut-off download
    does not."""
    return b"%%EOF" not in data[-2048:]


def _pdf_date(raw: str) -> str:
    m = re.match(r"(?:D:)?(\d{4})(\d{2})(\d{2})", raw or "")
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else ""


def _bold_font(name: str, weight: int) -> bool:
    return weight >= 600 or bool(re.search(r"bold|heavy|black|semibold|demi|-B\b|黑体|粗", name, re.I))


def read_pdfium(data: bytes, path: str, opts: PdfOptions) -> tuple[list[Page], dict[str, str], bool]:
    """Pages with their lines via pypdfium2; tables via pdfplumber on pages that draw lines."""
    import ctypes

    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise IngestError(path, "encrypted PDF: remove the password and ingest it again") from exc
        cut = " (truncated: it ends before its end-of-file marker)" if _truncated(data) else ""
        raise IngestError(path, f"corrupt or unreadable PDF{cut}: {exc}") from exc
    pages: list[Page] = []
    plumber = None
    try:
        if len(pdf) == 0:
            raise IngestError(path, "corrupt PDF: no pages")
        meta = {k.lower(): (v or "").strip() for k, v in pdf.get_metadata_dict().items()}
        for i in range(len(pdf)):
            page = pdf[i]
            width, height = page.get_size()
            tp = page.get_textpage()
            lines = _pdfium_lines(tp, raw, ctypes, height)
            kinds = Counter(obj.type for obj in page.get_objects(max_depth=1))
            entry = Page(number=i + 1, width=width, height=height, lines=lines)
            if not any(ln.text.strip() for ln in lines):
                entry.scanned = bool(kinds.get(raw.FPDF_PAGEOBJ_IMAGE))
                if entry.scanned and opts.ocr:
                    entry.lines, entry.ocr = _ocr_page(page, width, height, opts, path, pages), True
            elif kinds.get(raw.FPDF_PAGEOBJ_PATH, 0) >= 3:
                if plumber is None:
                    import pdfplumber

                    plumber = pdfplumber.open(io.BytesIO(data))
                _add_tables(entry, _plumber_tables(plumber.pages[i]))
            tp.close()
            page.close()
            pages.append(entry)
    except IngestError:
        raise
    except Exception as exc:  # pdfium/pdfminer raise many unrelated types on damaged input
        raise IngestError(path, f"corrupt PDF: {exc}") from exc
    finally:
        if plumber is not None:
            plumber.close()
        pdf.close()
    return pages, {"title": meta.get("title", ""), "author": meta.get("author", ""),
                   "created": _pdf_date(meta.get("creationdate", ""))}, False


def _pdfium_lines(tp, raw, ctypes, height: float) -> list[Line]:
    """The page's lines from pdfium's text rectangles (one per run of text on a line; a
    column gutter or a change of font starts another), runs on one baseline with no wide gap
    between them joined into one line. A few calls per run, not per character.

    A rectangle's height is no measure of its type: pdfium draws it round the glyph outlines,
    and a glyph the viewer has no outline for (a CJK font that is neither embedded nor
    installed) is a flat box on its baseline, while the digits of the same run, set from a
    substitute font, are full height. So a run's size, baseline and box come from one of its
    characters (font size, origin, and the box its font's ascent and descent give), never from
    the rectangle's height, and a line's size is the size most of its characters are set in:
    digits in another font or size do not change it."""
    handle = tp.raw
    n = raw.FPDFText_CountRects(handle, 0, -1)
    left, top, right, bottom = (ctypes.c_double() for _ in range(4))
    ox, oy = ctypes.c_double(), ctypes.c_double()
    loose = raw.FS_RECTF()
    name = ctypes.create_string_buffer(128)
    flags = ctypes.c_int()
    runs: list[tuple[Line, float]] = []  # (run, baseline from the top of the page)
    for i in range(n):
        raw.FPDFText_GetRect(handle, i, left, top, right, bottom)
        l, t, r, b = left.value, top.value, right.value, bottom.value
        bounded = tp.get_text_bounded(l, b, r, t).replace("\x02", "-").replace("\r", " ").replace("\n", " ")
        text = " ".join(bounded.split())
        if not text:
            continue
        if bounded[-1].isspace():
            text += " "  # the space that ends a run ("第一条 ") separates it from the next one
        h = max(t - b, 1.0)
        # a character near the run's left end; the tolerance spans the whole rectangle, whose
        # glyph boxes may lie anywhere between its top and bottom
        k = raw.FPDFText_GetCharIndexAtPos(handle, l + min(h, r - l) / 2, (t + b) / 2, h / 2, h)
        size, bold, base = h, False, height - b
        if k >= 0:
            size = raw.FPDFText_GetFontSize(handle, k) or h
            raw.FPDFText_GetFontInfo(handle, k, name, 128, ctypes.byref(flags))
            bold = _bold_font(name.value.decode("latin-1", "replace"), raw.FPDFText_GetFontWeight(handle, k)) \
                or bool(flags.value & (1 << 18))
            if raw.FPDFText_GetCharOrigin(handle, k, ox, oy):
                base = height - oy.value
            if raw.FPDFText_GetLooseCharBox(handle, k, loose):
                t, b = max(t, loose.top), min(b, loose.bottom)
        runs.append((Line(l, height - t, r, height - b, text, size, bold), base))
    groups: list[list[Line]] = []  # the runs of each line
    last_base = 0.0
    for run, base in runs:
        prev = groups[-1][-1] if groups else None
        em = max(run.size, prev.size if prev else 0.0, 1.0)
        # (glyph boxes of neighbouring runs may overlap a little: italics, kerning)
        if prev is not None and abs(base - last_base) < 0.5 * em and -0.2 * em <= run.x0 - prev.x1 < 2.2 * em:
            groups[-1].append(run)
        else:
            groups.append([run])
        last_base = base
    return [_joined_runs(group) for group in groups]


def _joined_runs(runs: list[Line]) -> Line:
    """The runs of one line as one: a space between two ASCII runs, none between CJK ones."""
    text = runs[0].text
    for run in runs[1:]:
        joiner = "" if text.endswith(" ") else " " if text[-1].isascii() and run.text[0].isascii() else ""
        text += joiner + run.text
    return Line(min(r.x0 for r in runs), min(r.y0 for r in runs), max(r.x1 for r in runs),
                max(r.y1 for r in runs), text.rstrip(), _dominant_size((r.size, r.text) for r in runs),
                all(r.bold for r in runs))


def _dominant_size(pieces: Iterable[tuple[float, str]]) -> float:
    """The font size most of the characters of ``(size, text)`` pieces are set in (the first
    piece's on a tie): a line's size is its text's, not that of a few digits in another font."""
    chars: Counter[float] = Counter()
    for size, text in pieces:
        chars[round(size, 1)] += len("".join(text.split())) or 1
    return chars.most_common(1)[0][0] if chars else 0.0


def _plumber_tables(page) -> list[tuple[Box, list[list[str]]]]:
    try:
        found = page.find_tables()
    except Exception:  # table detection is best effort; the text layer still comes through
        return []
    out = []
    for t in found:
        rows = [[" ".join((c or "").split()) for c in row] for row in t.extract()]
        out.append((tuple(t.bbox), rows))
    return out


def read_mupdf(data: bytes, path: str, opts: PdfOptions) -> tuple[list[Page], dict[str, str], bool]:
    """Pages with their lines and tables via PyMuPDF (the ``pdf-mupdf`` extra)."""
    try:
        import pymupdf
    except ImportError as exc:
        raise IngestError(path, "ingest.pdf_engine is 'mupdf' but PyMuPDF is not installed: "
                                "pip install 'agentic-rag[pdf-mupdf]' (AGPL-3.0), or use 'pdfium'") from exc
    try:
        pdf = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # pymupdf raises FileDataError/RuntimeError on corrupt input
        cut = " (truncated: it ends before its end-of-file marker)" if _truncated(data) else ""
        raise IngestError(path, f"corrupt or unreadable PDF{cut}: {exc}") from exc
    pages: list[Page] = []
    with pdf:
        if pdf.needs_pass or pdf.is_encrypted:
            raise IngestError(path, "encrypted PDF: remove the password and ingest it again")
        if pdf.page_count == 0:
            raise IngestError(path, "corrupt PDF: no pages")
        try:
            for page in pdf:
                entry = Page(number=page.number + 1, width=page.rect.width, height=page.rect.height)
                for block in page.get_text("dict")["blocks"]:
                    for ln in block.get("lines", ()):
                        spans = [s for s in ln["spans"] if s["text"].strip()]
                        if not spans:
                            continue
                        text = " ".join("".join(s["text"] for s in ln["spans"]).split())
                        x0, y0, x1, y1 = ln["bbox"]
                        bold = all(s["flags"] & 16 or _bold_font(s["font"], 0) for s in spans)
                        size = _dominant_size((s["size"], s["text"]) for s in spans)
                        entry.lines.append(Line(x0, y0, x1, y1, text, size, bold))
                if not entry.lines:
                    entry.scanned = bool(page.get_images())
                    if entry.scanned and opts.ocr:
                        entry.lines, entry.ocr = _ocr_mupdf(page, opts, path, pages), True
                elif page.get_drawings():
                    try:
                        found = page.find_tables()
                        tables = [(tuple(t.bbox), [[" ".join((c or "").split()) for c in row]
                                                   for row in t.extract()]) for t in found.tables]
                    except Exception:  # best effort, as above
                        tables = []
                    _add_tables(entry, tables)
                pages.append(entry)
        except IngestError:
            raise
        except Exception as exc:
            raise IngestError(path, f"corrupt PDF: {exc}") from exc
        meta = pdf.metadata or {}
        repaired = bool(getattr(pdf, "is_repaired", False))
    return pages, {"title": (meta.get("title") or "").strip(), "author": (meta.get("author") or "").strip(),
                   "created": _pdf_date(meta.get("creationDate") or "")}, repaired


# ---------------------------------------------------------------- OCR hooks

def _ocr_budget(opts: PdfOptions, done: list[Page], path: str) -> None:
    if sum(p.ocr for p in done) >= opts.ocr_max_pages:
        raise IngestError(path, f"more than ingest.ocr_max_pages={opts.ocr_max_pages} scanned pages to "
                                "OCR; raise the bound or split the file")


def _ocr_page(page, width: float, height: float, opts: PdfOptions, path: str, done: list[Page]) -> list[Line]:
    from agentic_rag.ingest import ocr

    _ocr_budget(opts, done, path)
    scale = opts.ocr_dpi / 72
    image = page.render(scale=scale).to_pil()
    return [Line(x0, y0, x1, y1, text, size=size)
            for x0, y0, x1, y1, text, size in ocr.recognize(image, scale, path)]


def _ocr_mupdf(page, opts: PdfOptions, path: str, done: list[Page]) -> list[Line]:
    from PIL import Image

    from agentic_rag.ingest import ocr

    _ocr_budget(opts, done, path)
    scale = opts.ocr_dpi / 72
    pix = page.get_pixmap(dpi=opts.ocr_dpi)
    image = Image.frombytes("RGB" if pix.n < 4 else "RGBA", (pix.width, pix.height), pix.samples)
    return [Line(x0, y0, x1, y1, text, size=size)
            for x0, y0, x1, y1, text, size in ocr.recognize(image, scale, path)]


# ---------------------------------------------------------------- tables

def _add_tables(page: Page, tables: list[tuple[Box, list[list[str]]]]) -> None:
    """Tables replace the loose lines inside their box with one Markdown line of their own."""
    for box, rows in tables:
        rows = [r for r in rows if any(r)]
        if len(rows) < 2 or max(len(r) for r in rows) < 2:
            continue
        header, body = _drop_empty_columns(rows[0], rows[1:])
        x0, y0, x1, y1 = box
        page.lines = [ln for ln in page.lines
                      if not (x0 - 1 <= (ln.x0 + ln.x1) / 2 <= x1 + 1 and y0 - 1 <= (ln.y0 + ln.y1) / 2 <= y1 + 1)]
        page.lines.append(Line(x0, y0, x1, y1, render_markdown(header, body), table=True))


def _drop_empty_columns(header: list[str], rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    # table detection on drawn grids can report a phantom column that holds nothing anywhere
    width = max([len(header)] + [len(r) for r in rows])
    keep = [i for i in range(width)
            if (i < len(header) and header[i].strip() and not header[i].startswith("Col"))
            or any(i < len(r) and r[i].strip() for r in rows)]
    pick = lambda cells: [cells[i] if i < len(cells) else "" for i in keep]  # noqa: E731
    return pick(header), [pick(r) for r in rows]


# ---------------------------------------------------------------- layout

PAGE_NUMBER = re.compile(r"^\s*(?:[-–—]\s*)?(?:第\s*\d+\s*页(?:\s*[/，,]?\s*共\s*\d+\s*页)?|共\s*\d+\s*页\s*第\s*\d+\s*页|"
                         r"page\s*\d+(?:\s*(?:/|of)\s*\d+)?|\d{1,3}(?:\s*(?:/|of)\s*\d{1,3})?)(?:\s*[-–—])?\s*$", re.I)
# (a bare number of up to three digits: a lone 2024 in the top band is a year, not a page)
_BAND = 0.1  # top and bottom share of a page where running headers and footers stand
_STRUCTURE_START = re.compile(
    r"(?:第[一二三四五六七八九十百千零〇两\d]+[编章节条]|[（(][一二三四五六七八九十\d]+[)）]|[一二三四五六七八九十]+、|"
    r"\d+(?:\.\d+)*[.、．\s]|[A-Z]\.\d|附件|附录|注[：:]|Article\b|ARTICLE\b|Section\b|SECTION\b|§|Chapter\b|"
    r"CHAPTER\b|Part\b|PART\b|Appendix\b|Annex\b|Note:|[-•·*]\s|\|)")
_LINE_END = "。；：！？.;:!?」”）)"
_HEADING_END = "。；，,;：:"
# the red masthead of an official document (江西省医疗保障局文件) is set larger than its title
_ISSUER_HEADER = re.compile(r"(?:文件|简报|通报|快报)\s*$")


def _running_keys(pages: list[Page]) -> set[str]:
    """Texts (digits as #) of band lines that repeat on at least half of the pages (two or more)."""
    if len(pages) < 2:
        return set()
    counts: Counter[str] = Counter()
    for p in pages:
        # a number alone is a page number by PAGE_NUMBER or else a value (a year): never running
        counts.update({k for ln in p.lines if not ln.table and _in_band(ln, p) and (k := _key(ln.text)) != "#"})
    need = max(2, (len(pages) + 1) // 2)
    return {k for k, n in counts.items() if n >= need}


def _key(text: str) -> str:
    return re.sub(r"\d+", "#", "".join(text.split()))


def _in_band(ln: Line, p: Page) -> bool:
    return ln.y1 <= p.height * _BAND or ln.y0 >= p.height * (1 - _BAND)


def _reading_order(p: Page) -> list[Line]:
    """Lines top to bottom; a band of lines set in two columns (neither crossing the middle,
    both sides holding lines side by side) is read left column first."""
    mid = p.width / 2
    lines = sorted(p.lines, key=lambda ln: (round(ln.y0, 0), ln.x0))
    out: list[Line] = []
    band: list[Line] = []

    def flush() -> None:
        left = [ln for ln in band if ln.x1 <= mid + 4]
        right = [ln for ln in band if ln.x1 > mid + 4]
        side_by_side = (len(left) >= 2 and len(right) >= 2 and min(ln.x0 for ln in right) >= mid - 4
                        and right[0].y0 < left[-1].y1 and left[0].y0 < right[-1].y1)
        out.extend(left + right if side_by_side else band)
        band.clear()

    for ln in lines:
        if ln.x0 < mid - 4 and ln.x1 > mid + 4:  # a line across the middle ends a band of columns
            flush()
            out.append(ln)
        else:
            band.append(ln)
    flush()
    return out


def _body_size(pages: list[Page]) -> float:
    sizes: Counter[float] = Counter()
    for p in pages:
        for ln in p.lines:
            if not ln.table and ln.size:
                sizes[round(ln.size * 2) / 2] += len(ln.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _heading_levels(pages: list[Page], body: float) -> dict[float, int]:
    """Heading font sizes (at least 1.2 times the body size) to Markdown levels, largest first."""
    if not body:
        return {}
    big = sorted({round(ln.size * 2) / 2 for p in pages for ln in p.lines
                  if not ln.table and ln.size >= body * 1.2 and _heading_like(ln.text)}, reverse=True)
    return {s: min(i + 1, 3) for i, s in enumerate(big)}


_DOT_LEADER = re.compile(r"(?:\.\s?){4,}|…{2,}|·{4,}")  # a table of contents line: Index . . . . 33


def _heading_like(text: str) -> bool:
    t = text.strip()
    return 0 < len(t) <= 80 and t[-1] not in _HEADING_END and not PAGE_NUMBER.match(t) \
        and not _STRUCTURE_START.match(t) and not _DOT_LEADER.search(t)


def layout(pages: list[Page]) -> tuple[str, list[tuple[int, int, int, Box]], str]:
    """``(text, blocks, title)``: the pages as Markdown-structured text; ``blocks`` holds
    ``(start, end, page, box)`` of each block of it; ``title`` is the largest heading of the
    first page that has text, an issuer's masthead (…文件) aside (empty when the document has
    no larger type)."""
    running = _running_keys(pages)
    body = _body_size(pages)
    levels = _heading_levels(pages, body)
    bold_level = min(len(levels) + 1, 3)
    all_bold = all(ln.bold for p in pages for ln in p.lines if not ln.table)
    parts: list[str] = []
    blocks: list[tuple[int, int, int, Box]] = []
    pos = 0
    heads: list[tuple[int, str]] = []  # headings of the first page with text: the title is the largest

    def emit(text: str, page: int, box: Box) -> None:
        nonlocal pos
        if parts:
            pos += 1  # the "\n" between blocks
        parts.append(text)
        blocks.append((pos, pos + len(text), page, tuple(round(v, 1) for v in box)))
        pos += len(text)

    for p in pages:
        kept = [ln for ln in _reading_order(p)
                if ln.table or not (_in_band(ln, p) and (_key(ln.text) in running or PAGE_NUMBER.match(ln.text))
                                    or re.fullmatch(r"\s*(?:第\s*\d+\s*页\s*[/，,]?\s*共\s*\d+\s*页|"
                                                    r"共\s*\d+\s*页\s*第\s*\d+\s*页)\s*", ln.text))]
        group: list[Line] = []

        def close() -> None:
            if group:
                box = (min(g.x0 for g in group), min(g.y0 for g in group),
                       max(g.x1 for g in group), max(g.y1 for g in group))
                emit(_join_lines("\n".join(g.text for g in group)), p.number, box)
                group.clear()

        for i, ln in enumerate(kept):
            if ln.table:
                close()
                emit(ln.text, p.number, ln.box)
                continue
            size = round(ln.size * 2) / 2
            nxt = kept[i + 1] if i + 1 < len(kept) else None
            # a bold line is a heading when it stands alone: what follows is not bold, or apart
            alone = nxt is None or nxt.table or not nxt.bold or round(nxt.size * 2) / 2 != size \
                or nxt.y0 - ln.y1 > 0.4 * max(ln.y1 - ln.y0, 1)
            level = levels.get(size) if _heading_like(ln.text) else None
            if level is None and ln.bold and alone and size >= body - 0.5 and len(ln.text) <= 60 \
                    and _heading_like(ln.text) and not all_bold:
                level = bold_level
            if level is not None:
                close()
                if all(b[2] == p.number for b in blocks) and not _ISSUER_HEADER.search(ln.text):
                    heads.append((level, ln.text.strip()))
                emit("#" * level + " " + ln.text.strip(), p.number, ln.box)
                continue
            if group and _STRUCTURE_START.match(ln.text):
                close()  # a clause or item starts a block of its own: its box is its own
            if group:
                prev = group[-1]
                # a paragraph's lines follow at a pitch of 1.2-1.5 font sizes; a wider one is a
                # new paragraph (boxes differ between backends, font sizes do not)
                pitch = ln.y1 - prev.y1
                em = max(prev.size, ln.size, 1.0)
                if pitch > 1.6 * em or pitch < 0.5 * em or abs(ln.size - prev.size) > 0.6 \
                        or abs(ln.x0 - prev.x0) > p.width * 0.25 and ln.x0 > prev.x1:
                    close()
            group.append(ln)
        close()
    title = min(heads, key=lambda h: h[0])[1] if heads else ""
    return "\n".join(parts), blocks, title


def _join_lines(text: str) -> str:
    """Undo the page-width wrapping inside one block: a line that does not end a sentence runs
    on into the next, unless the next starts a structure (第X条, （一）, 1.)."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        if out and out[-1][-1] not in _LINE_END and not _STRUCTURE_START.match(line):
            prev = out[-1]
            ascii_join = prev[-1].isascii() and line[0].isascii()
            out[-1] = prev + (" " if ascii_join and prev[-1] != "-" else "") + line
        else:
            out.append(line)
    return "\n".join(out)


# ---------------------------------------------------------------- entry point

def read_pdf(data: bytes, path: str, opts: PdfOptions | None = None) -> PdfText:
    """A PDF's text with layout (see the module docstring); IngestError on what cannot be read."""
    opts = opts or PdfOptions()
    reader = read_mupdf if opts.engine == "mupdf" else read_pdfium
    pages, meta, repaired = reader(data, path, opts)
    text, blocks, big = layout(pages)
    scanned_skipped = [p.number for p in pages if p.scanned and not p.ocr]
    if not text.strip():
        if scanned_skipped and not opts.ocr:
            raise IngestError(path, "PDF has no text layer (scanned) and ingest.ocr is off")
        if any(p.ocr for p in pages):
            raise IngestError(path, "PDF has no text layer and OCR found no text on its pages")
        if repaired or _truncated(data):
            # a cut-off download reads as empty pages: say so, not "scanned"
            raise IngestError(path, "truncated or damaged PDF: no text could be recovered "
                                    "(the file ends early or its structure is broken)")
        raise IngestError(path, "PDF has no text layer (scanned?) and no page image to OCR")
    title, rule = meta["title"], "pdf metadata title"
    if not title and big:
        title, rule = big, "largest type on its first page"
    return PdfText(text=text, title=title, title_rule=rule if title else "", author=meta["author"],
                   created=meta["created"], layout=blocks, ocr_pages=[p.number for p in pages if p.ocr],
                   scanned_skipped=scanned_skipped, repaired=repaired)


def locate(layout_blocks: list[tuple[int, int, int, Box]], start: int, end: int) -> dict:
    """Where ``text[start:end]`` stands: ``{"page": first page, "pages": [...], "boxes":
    [[page, x0, top, x1, bottom], ...]}`` (PDF points, origin at the page's top-left corner),
    from the blocks it overlaps; {} when it overlaps none."""
    boxes = [[page, *box] for s, e, page, box in layout_blocks if s < end and e > start]
    if not boxes:
        return {}
    pages = sorted({b[0] for b in boxes})
    return {"page": pages[0], "pages": pages, "boxes": boxes}
