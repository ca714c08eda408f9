"""The bundled sample corpus and its questions stay true to each other.

`examples/questions.jsonl` (and the unseen `examples/holdout/questions.jsonl`) are the answer keys
the demo and the acceptance numbers are scored against. A key that cites a clause that is not in
the document, or a fact the document never states, would silently make every score wrong, so this
test reads every document the way a user would (python-docx for .docx, PyMuPDF for .pdf, the text
of .html) and checks each question against it. It is self-contained on purpose: it must not depend
on the ingest code whose output it is used to judge.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
MAIN_QUESTIONS = EXAMPLES / "questions.jsonl"
HOLDOUT_QUESTIONS = EXAMPLES / "holdout" / "questions.jsonl"
DOC_SUFFIXES = {".md", ".txt", ".html", ".docx", ".pdf"}
TYPES = {
    "single",
    "multi_clause",
    "cross_reference",
    "table",
    "version_conflict",
    "authority_conflict",
    "pinned_version",
    "colloquial",
    "out_of_scope",
}
RULES = {"newer", "authority", "pinned"}
KEYS = {"id", "question", "lang", "type", "answers", "facts", "citations", "abstain", "conflict"}


# --- reading documents ---------------------------------------------------------------------


def _docx_text(path: Path) -> str:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = docx.Document(str(path))
    lines: list[str] = []
    # Body order matters: a table belongs to the clause it follows, so paragraphs and tables
    # are read in document order rather than via `document.paragraphs` (which skips tables).
    for element in document.element.body.iterchildren():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "p":
            lines.append(Paragraph(element, document).text)
        elif tag == "tbl":
            for row in Table(element, document).rows:
                lines.append(" | ".join(cell.text for cell in row.cells))
    return "\n".join(lines)


def _join_wrapped(block: str) -> str:
    # PDF layout wraps a paragraph into lines; CJK needs no space at a wrap, Latin text does.
    out = ""
    for piece in block.strip().split("\n"):
        if out and not (_is_cjk(out[-1]) or _is_cjk(piece[:1])):
            out += " "
        out += piece
    return out


def _pdf_text(path: Path) -> str:
    import pymupdf

    with pymupdf.open(str(path)) as pdf:
        blocks = [b[4] for page in pdf for b in page.get_text("blocks") if b[6] == 0]
    return "\n".join(_join_wrapped(b) for b in blocks)


def _html_text(path: Path) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(path.read_text(encoding="utf-8"), "lxml")
    for cell in soup.find_all(["td", "th"]):
        cell.append(" | ")
    return soup.get_text("\n")


@cache
def doc_text(rel: str) -> str:
    path = ROOT / rel
    suffix = path.suffix.lower()
    if suffix == ".docx":
        return _docx_text(path)
    if suffix == ".pdf":
        return _pdf_text(path)
    if suffix == ".html":
        return _html_text(path)
    return path.read_text(encoding="utf-8")


# --- normalizing so that 百分之九十 == 90%, 三十日 == 30日, three months == 3 months -------------

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
# 万 is left as a unit word: documents write 40万元, so 四十万元 must become 40万元, not 400000元.
_CN_RUN = re.compile("[零〇一二两三四五六七八九十百千]+")
_CN_PERCENT = re.compile("百分之([零〇一二两三四五六七八九十百千]+)")
_EN_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "twelve": 12, "twenty": 20, "thirty": 30, "sixty": 60, "ninety": 90,
}
_EN_RUN = re.compile(r"\b(" + "|".join(_EN_NUMBERS) + r")\b")


def _is_cjk(ch: str) -> bool:
    return bool(ch) and ("\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef")


def _cn_to_int(run: str) -> int:
    if not any(ch in _CN_UNITS for ch in run):
        return int("".join(str(_CN_DIGITS[ch]) for ch in run))  # 二〇二四 -> 2024
    total, current = 0, 0
    for ch in run:
        if ch in _CN_DIGITS:
            current = _CN_DIGITS[ch]
        else:
            total += (current or 1) * _CN_UNITS[ch]
            current = 0
    return total + current


def norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    # 百分之 first, or its 百 would be read as a numeral (百分之九十 -> 100分之90).
    text = _CN_PERCENT.sub(lambda m: f"{_cn_to_int(m.group(1))}%", text)
    text = _CN_RUN.sub(lambda m: str(_cn_to_int(m.group())), text)
    text = _EN_RUN.sub(lambda m: str(_EN_NUMBERS[m.group()]), text)
    return re.sub(r"\s+", " ", text)


# --- clause spans ------------------------------------------------------------------------------

_NUM = "[一二三四五六七八九十百零〇两0-9]+"
_HEADING = re.compile(
    rf"^(第{_NUM}[章节条]|附件\s*\d+|注[：:]|(?:Section|Article) \d+\b|\d+\.\d+(?=\s))"
)
_TOP = re.compile(rf"^(第{_NUM}章|附件\s*\d+|注[：:]|(?:Section|Article) \d+\b)")


def _strip(line: str) -> str:
    return line.strip().lstrip("#*> ").strip()


def clause_span(rel: str, label: str) -> str | None:
    """The text of the clause headed by ``label`` (up to the next heading), or None.

    Labels that do not head a line ("表" for a table caption) return None; facts for them are
    checked against the whole document instead.
    """
    lines = doc_text(rel).split("\n")
    # Headings that contain sub-clauses (Section 4 holds 4.1, 4.2) end only at the next top heading.
    stop = _TOP if _TOP.match(label) and not label.startswith("注") else _HEADING
    for i, line in enumerate(lines):
        s = _strip(line)
        if not s.startswith(label):
            continue
        rest = s[len(label) :]
        if label[-1].isdigit() and rest[:1].isdigit():
            continue  # 6.1 must not match 6.12
        if not _HEADING.match(s) and label != "注":
            continue
        body = [s]
        for nxt in lines[i + 1 :]:
            if _HEADING.match(_strip(nxt)) and stop.match(_strip(nxt)):
                break
            body.append(nxt)
        return "\n".join(body)
    return None


# --- loading questions -------------------------------------------------------------------------


def load(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"{path.name} line {n} is not JSON: {exc}")
    return rows


def _all_questions() -> list[tuple[str, dict]]:
    out = []
    for path in (MAIN_QUESTIONS, HOLDOUT_QUESTIONS):
        out += [(path.parent.name + "/" + q.get("id", "?"), q) for q in load(path)]
    return out


QUESTIONS = _all_questions()


def _corpus(folder: Path) -> list[str]:
    return sorted(
        str(p.relative_to(ROOT)) for p in folder.rglob("*") if p.suffix.lower() in DOC_SUFFIXES and p.is_file()
    )


MAIN_DOCS = _corpus(EXAMPLES / "docs")
HOLDOUT_DOCS = _corpus(EXAMPLES / "holdout" / "docs")


# --- the corpus itself -------------------------------------------------------------------------


@pytest.mark.parametrize("docs,minimum", [(MAIN_DOCS, 12), (HOLDOUT_DOCS, 4)], ids=["main", "holdout"])
def test_corpus_covers_every_format(docs: list[str], minimum: int) -> None:
    assert len(docs) >= minimum
    assert {Path(d).suffix for d in docs} == DOC_SUFFIXES


@pytest.mark.parametrize("rel", MAIN_DOCS + HOLDOUT_DOCS)
def test_document_is_readable_and_dated(rel: str) -> None:
    text = doc_text(rel)
    size = len(text.encode("utf-8"))
    # The main corpus keeps documents to 1-4 KB; the holdout also has documents as long as real
    # company policies (a whole policy with its appendices) and local regulations (thirty-odd
    # articles in chapters, with a table of contents).
    limit = 4500 if rel in MAIN_DOCS else 12000
    assert 500 <= size <= limit, f"{rel}: {size} bytes of text; the limit for its corpus is {limit}"
    # Every document carries a date a metadata extractor can find: a 发布日期 line, a signature
    # block date, an English Issued: line, or an issued: / effective_date: key of its front matter,
    # quoted or not (a handbook page often states only when it takes effect).
    assert re.search(r"\d{4}年\d{1,2}月\d{1,2}日|Issued: \d{1,2} \w+ \d{4}|^(?:issued|effective_date): [\"']?\d{4}-\d{2}-\d{2}[\"']?$",
                     text, re.MULTILINE), rel
    assert "\ufb00" not in text and "\ufb01" not in text, f"{rel}: ligature glyphs in the text layer"


# --- the question files ------------------------------------------------------------------------


@pytest.mark.parametrize("path", [MAIN_QUESTIONS, HOLDOUT_QUESTIONS], ids=["main", "holdout"])
def test_question_file_shape(path: Path) -> None:
    rows = load(path)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate ids"
    counts = Counter(r["type"] for r in rows)
    if path == MAIN_QUESTIONS:
        assert len(rows) >= 45
        for t in TYPES:
            assert counts[t] >= 4, f"only {counts[t]} {t} questions"
        assert counts["out_of_scope"] >= 5
        assert {r["lang"] for r in rows} == {"zh", "en"}
    else:
        assert len(rows) == 93
        assert counts["version_conflict"] >= 1 and counts["cross_reference"] >= 1


@pytest.mark.parametrize("qid,q", QUESTIONS, ids=[qid for qid, _ in QUESTIONS])
def test_question_matches_its_documents(qid: str, q: dict) -> None:
    assert set(q) == KEYS, f"{qid}: keys {sorted(set(q) ^ KEYS)}"
    assert q["type"] in TYPES and q["lang"] in {"zh", "en"}
    assert q["abstain"] == (q["type"] == "out_of_scope")
    if q["abstain"]:
        assert q["facts"] == [] and q["answers"] == [] and q["citations"] == [] and q["conflict"] is None
        return

    assert q["facts"] and q["citations"] and q["answers"] in q["facts"]
    # The holdout never cites the main corpus and vice versa: it is the unseen check.
    corpus = HOLDOUT_DOCS if qid.startswith("holdout/") else MAIN_DOCS

    cited_docs: list[str] = []
    spans: list[str] = []
    for cit in q["citations"]:
        src, label = cit["source"], cit["clause"]
        assert src in corpus, f"{qid}: {src} is not a document of its corpus"
        text = doc_text(src)
        cited_docs.append(norm(text))
        if label is None:  # prose (a news article) has no clauses: the citation is the document
            assert not any(_HEADING.match(_strip(line)) for line in text.split("\n")), f"{qid}: {src} has clauses"
            spans.append(norm(text))
            continue
        assert label in text, f"{qid}: clause label {label!r} not in {src}"
        span = clause_span(src, label)
        spans.append(norm(span if span is not None else text))

    for fact in q["facts"]:
        assert fact, f"{qid}: empty fact"
        for alias in fact:
            assert any(norm(alias) in d for d in cited_docs), f"{qid}: alias {alias!r} is in no cited document"
        assert any(norm(alias) in s for alias in fact for s in spans), f"{qid}: fact {fact} is in no cited clause"

    conflict = q["conflict"]
    if q["type"] in {"version_conflict", "authority_conflict", "pinned_version"}:
        assert conflict is not None, f"{qid}: a conflict question needs the expected winner"
    if conflict is not None:
        assert conflict["rule"] in RULES
        assert (conflict["rule"] == "pinned") == (q["type"] == "pinned_version")
        winner, loser = norm(conflict["winner"]), norm(conflict["loser"])
        assert winner != loser
        assert any(winner == norm(a) for fact in q["facts"] for a in fact), f"{qid}: winner is not an expected fact"
        assert any(winner in s for s in spans), f"{qid}: winner not in a cited clause"
        assert any(loser in norm(doc_text(d)) for d in corpus), f"{qid}: loser {conflict['loser']!r} in no document"
