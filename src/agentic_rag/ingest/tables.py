"""Tables: one structured form (``types.Table``), one text form in documents, one searchable form.

Every parser renders the tables it finds (HTML ``<table>``, DOCX tables, PDF tables found by
PyMuPDF) as Markdown pipe tables inside ``Document.text``, so the chunker has a single table
syntax to recognise and every table keeps an exact char span. The searchable text repeats the
headers on every row (``药品名称: 阿莫西林; 类别: 甲类``) so BM25 matches a value together with
its column name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentic_rag.types import Table

_SEPARATOR_CELL = re.compile(r":?-{1,}:?")
_SPLIT_CELLS = re.compile(r"(?<!\\)\|")


def _clean_cell(cell: str) -> str:
    # cells must stay on one line and must not contain a bare pipe, or the table breaks
    return " ".join(cell.replace("|", "\\|").split())


def render_markdown(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown pipe table; rows shorter than the header are padded with empty cells."""
    width = max([len(headers)] + [len(r) for r in rows]) if (headers or rows) else 0
    head = [_clean_cell(h) for h in headers] + [""] * (width - len(headers))
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * width) + "|"]
    for row in rows:
        cells = [_clean_cell(c) for c in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def split_row(line: str) -> list[str]:
    """The cells of one Markdown table row (outer pipes optional, ``\\|`` kept as a pipe)."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.strip().replace("\\|", "|") for c in _SPLIT_CELLS.split(body)]


def is_separator_row(line: str) -> bool:
    cells = split_row(line)
    return bool(cells) and all(_SEPARATOR_CELL.fullmatch(c.replace(" ", "")) for c in cells)


def parse_markdown_table(lines: Sequence[str]) -> Table | None:
    """Parse the lines of one pipe table (header, separator, rows); ``None`` if it is not one."""
    if len(lines) < 2 or not is_separator_row(lines[1]):
        return None
    headers = split_row(lines[0])
    rows = [split_row(line) for line in lines[2:] if line.strip()]
    width = len(headers)
    rows = [(r + [""] * (width - len(r)))[: max(width, len(r))] for r in rows]
    return Table(headers=headers, rows=rows)


def row_text(headers: Sequence[str], row: Sequence[str]) -> str:
    """One row as ``header: value; header: value``; empty values are left out."""
    parts: list[str] = []
    for i, value in enumerate(row):
        if not value:
            continue
        name = headers[i] if i < len(headers) and headers[i] else ""
        parts.append(f"{name}: {value}" if name else value)
    return "; ".join(parts)


def searchable_text(table: Table) -> str:
    """The rendering stored as ``Chunk.text``: one line per row, headers repeated."""
    lines = [row_text(table.headers, row) for row in table.rows]
    lines = [line for line in lines if line]
    if not lines:  # a header-only table still says what it is about
        return " | ".join(h for h in table.headers if h)
    return "\n".join(lines)


def split_rows(table: Table, max_chars: int) -> list[Table]:
    """Cut a big table into consecutive row groups whose searchable text stays near
    ``max_chars``; every group keeps the headers. A single huge row is its own group."""
    groups: list[Table] = []
    current: list[list[str]] = []
    size = 0
    for row in table.rows:
        length = len(row_text(table.headers, row)) + 1
        if current and size + length > max_chars:
            groups.append(Table(headers=table.headers, rows=current))
            current, size = [], 0
        current.append(row)
        size += length
    if current or not groups:
        groups.append(Table(headers=table.headers, rows=current))
    return groups
