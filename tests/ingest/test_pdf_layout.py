"""PDFs as they come out of offices: two columns, a running header and footer on every page, a
ruled table, headings set in larger or bold type. Fixtures are drawn here with PyMuPDF (the
pdf-mupdf extra); each is read by the default pdfium reader, and by the mupdf one too, and the
assertions are on what `arag chunks` / `arag docs` show."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_rag.ingest.parsers import parse_bytes
from agentic_rag.ingest.pdf import PdfOptions

from .test_documents_as_they_come import arag, chunks, docs, ingest

pymupdf = pytest.importorskip("pymupdf")

ENGINES = ["pdfium", "mupdf"]


def _text(page, xy, text, size=11, font="china-s"):
    page.insert_text(xy, text, fontname=font, fontsize=size)


def two_column_pdf() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()  # 595 x 842
    _text(page, (160, 60), "差旅费管理办法", size=20)
    left = ["第一条 为规范差旅费管理，", "制定本办法。", "第二条 出差人员应当事先", "报经单位负责人批准。"]
    right = ["第三条 住宿费在规定标准", "内凭据报销。", "第四条 本办法自2024年6", "月18日起施行。"]
    for i, (a, b) in enumerate(zip(left, right)):
        _text(page, (60, 110 + i * 15), a)
        _text(page, (320, 110 + i * 15), b)
    return doc.tobytes()


def running_pages_pdf() -> bytes:
    doc = pymupdf.open()
    for n in range(1, 4):
        page = doc.new_page()
        _text(page, (60, 40), "某某集团有限公司内部文件", size=9)
        _text(page, (270, 815), f"第{n}页 共3页", size=9)
        _text(page, (60, 100), f"第{'一二三'[n - 1]}条 本条是第{n}页的正文内容。")
        if n == 2:
            rows = [["岗位", "住宿标准"], ["部门经理", "500元"], ["普通员工", "350元"]]
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    rect = pymupdf.Rect(60 + c * 150, 130 + r * 24, 60 + (c + 1) * 150, 130 + (r + 1) * 24)
                    page.draw_rect(rect, color=(0, 0, 0), width=1)
                    _text(page, (rect.x0 + 5, rect.y0 + 16), value)
    return doc.tobytes()


def headings_pdf() -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    _text(page, (60, 70), "Remote Work Policy", size=22, font="helv")
    _text(page, (60, 110), "Eligibility", size=11, font="hebo")
    _text(page, (60, 130), "Employees who have completed probation may apply.", font="helv")
    _text(page, (60, 160), "Equipment", size=11, font="hebo")
    _text(page, (60, 180), "The company provides a laptop and a monitor.", font="helv")
    return doc.tobytes()


@pytest.mark.parametrize("engine", ENGINES)
def test_two_columns_are_read_left_column_first(engine):
    text = parse_bytes(two_column_pdf(), "two.pdf", PdfOptions(engine=engine)).text
    lines = text.split("\n")
    assert lines[0] == "# 差旅费管理办法"
    assert "第一条 为规范差旅费管理，制定本办法。" in lines
    assert "第四条 本办法自2024年6月18日起施行。" in lines
    order = [text.index(f"第{n}条") for n in "一二三四"]
    assert order == sorted(order)


def _pieces(page, xy, pieces):
    """One line drawn piece by piece, each ``(text, font, size)``, side by side on one baseline."""
    x, y = xy
    for text, font, size in pieces:
        _text(page, (x, y), text, size=size, font=font)
        x += pymupdf.get_text_length(text, fontname=font, fontsize=size)


@pytest.mark.parametrize("engine", ENGINES)
def test_digits_in_another_font_and_size_stay_in_their_line_and_paragraph(engine):
    # office documents often set digits in a Latin font a little larger than the Chinese text
    # (each Chinese piece holds two characters or more: pdfium drops a text object of one glyph
    # that has no outline, as a non-embedded Chinese font has where none is installed)
    doc = pymupdf.open()
    page = doc.new_page()
    cn, num = ("china-s", 11), ("tiro", 12)
    _pieces(page, (60, 100), [("第五条 自", *cn), ("2024", *num), ("年度起，住宿费每人每天", *cn), ("350", *num),
                              ("元，原", *cn)])
    _pieces(page, (60, 115), [("标准同时废止。", *cn)])
    _pieces(page, (60, 140), [("The allowance is ", "helv", 11), ("350", "tiro", 12), (" yuan a night.", "helv", 11)])
    text = parse_bytes(doc.tobytes(), "d.pdf", PdfOptions(engine=engine)).text
    assert text.split("\n") == ["第五条 自2024年度起，住宿费每人每天350元，原标准同时废止。",
                                 "The allowance is 350 yuan a night."]


@pytest.mark.parametrize("engine", ENGINES)
def test_running_header_footer_dropped_and_table_kept_as_rows(engine):
    text = parse_bytes(running_pages_pdf(), "run.pdf", PdfOptions(engine=engine)).text
    assert "内部文件" not in text and "共3页" not in text
    assert "| 岗位 | 住宿标准 |\n|---|---|\n| 部门经理 | 500元 |\n| 普通员工 | 350元 |" in text
    assert text.index("第二条") < text.index("| 岗位") < text.index("第三条")


@pytest.mark.parametrize("engine", ENGINES)
def test_headings_from_font_size_and_weight(engine):
    parsed = parse_bytes(headings_pdf(), "h.pdf", PdfOptions(engine=engine))
    lines = parsed.text.split("\n")
    assert lines[:2] == ["# Remote Work Policy", "## Eligibility"]
    assert "## Equipment" in lines
    assert "Employees who have completed probation may apply." in lines
    assert parsed.title == "Remote Work Policy" and parsed.rule == "largest type on its first page"


@pytest.mark.parametrize("engine", ENGINES)
def test_page_numbers_go_and_a_lone_year_stays(engine):
    doc = pymupdf.open()
    for n in range(1, 3):
        page = doc.new_page()
        _text(page, (60, 60), "2024" if n == 1 else "Annual report", font="helv")
        _text(page, (60, 100), f"Section {n} The board met {n} times.", font="helv")
        _text(page, (260, 815), f"Page {n} of 2", size=9, font="helv")
        _text(page, (540, 30), f"{n}", size=9, font="helv")
    text = parse_bytes(doc.tobytes(), "r.pdf", PdfOptions(engine=engine)).text
    assert text.split("\n") == ["2024", "Section 1 The board met 1 times.", "Annual report",
                                 "Section 2 The board met 2 times."]


def test_an_issuers_masthead_is_no_title():
    doc = pymupdf.open()
    page = doc.new_page()
    _text(page, (120, 80), "江西省医疗保障局文件", size=26)
    _text(page, (200, 120), "赣医保发〔2024〕9号")
    _text(page, (100, 160), "关于调整职工医保报销比例的通知", size=18)
    _text(page, (60, 200), "第一条 三级医院报销比例调整为80%。")
    parsed = parse_bytes(doc.tobytes(), "notice.pdf")
    assert parsed.title == "关于调整职工医保报销比例的通知"
    assert parsed.text.split("\n")[:3] == ["# 江西省医疗保障局文件", "赣医保发〔2024〕9号", "## 关于调整职工医保报销比例的通知"]


def test_every_pdf_chunk_shows_its_page_and_boxes(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "run.pdf").write_bytes(running_pages_pdf())
    (folder / "h.pdf").write_bytes(headings_pdf())
    (folder / "two.pdf").write_bytes(two_column_pdf())
    index = tmp_path / "idx"
    ingest(folder, index)
    listed = docs(index)
    columns = {r["clause"]: r["boxes"] for r in chunks(index, listed["two.pdf"]["doc_id"]) if r["clause"]}
    assert all(b[1] < 297 for b in columns["第二条"]) and all(b[1] > 297 for b in columns["第三条"])
    assert listed["h.pdf"]["title"] == "Remote Work Policy"
    rows = chunks(index, listed["run.pdf"]["doc_id"])
    assert {r["clause"]: r["page"] for r in rows if r["kind"] == "body"} == {"第一条": 1, "第二条": 2, "第三条": 3}
    table = next(r for r in rows if r["kind"] == "table")
    assert table["page"] == 2 and table["table"]["headers"] == ["岗位", "住宿标准"]
    assert table["table"]["rows"] == [["部门经理", "500元"], ["普通员工", "350元"]]
    page, x0, top, x1, bottom = table["boxes"][0]
    # the drawn grid: x 60..360, y 130..202 in points from the top-left corner
    assert page == 2 and abs(x0 - 60) < 3 and abs(top - 130) < 3 and abs(x1 - 360) < 3 and abs(bottom - 202) < 3
    for r in rows:
        for box in r["boxes"]:
            assert box[0] == r["page"] or box[0] in (1, 2, 3)
            assert box[1] < box[3] and box[2] < box[4]
    code, out = arag("chunks", listed["run.pdf"]["doc_id"], "--index", str(index))
    assert code == 0 and "p.2" in out


def test_mupdf_engine_without_pymupdf_says_which_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_mupdf(name, *args, **kw):
        if name == "pymupdf":
            raise ImportError("No module named 'pymupdf'")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_mupdf)
    from agentic_rag.errors import IngestError

    with pytest.raises(IngestError, match=r"pdf-mupdf"):
        parse_bytes(b"%PDF-1.4\n%%EOF", "x.pdf", PdfOptions(engine="mupdf"))


EXAMPLE_PDFS = sorted((Path(__file__).resolve().parents[2] / "examples" / "docs").rglob("*.pdf"))


@pytest.mark.parametrize("path", EXAMPLE_PDFS, ids=[p.name for p in EXAMPLE_PDFS])
def test_both_readers_give_the_same_text_of_the_example_pdfs(path: Path):
    data = path.read_bytes()
    default = parse_bytes(data, path.name).text
    assert default == parse_bytes(data, path.name, PdfOptions(engine="mupdf")).text
    assert "\n第一条 " in default  # the space after a clause label, a run of its own in pdfium, is kept
