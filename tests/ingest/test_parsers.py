"""Parsers: encodings, HTML, DOCX, PDF, and the clear errors for bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_rag.errors import IngestError
from agentic_rag.ingest.parsers import decode_text, parse_bytes

from .conftest import POLICY_ZH, make_docx, make_pdf


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "gb18030", "gbk"])
def test_text_encodings(encoding):
    data = POLICY_ZH.encode(encoding)
    assert decode_text(data, "x.txt") == POLICY_ZH


def test_utf16_big_endian_with_bom():
    data = b"\xfe\xff" + POLICY_ZH.encode("utf-16-be")
    assert decode_text(data, "x.txt") == POLICY_ZH


def test_crlf_becomes_lf():
    assert decode_text("第一条 甲。\r\n第二条 乙。".encode(), "x.txt") == "第一条 甲。\n第二条 乙。"


def test_binary_data_is_an_unknown_encoding_error():
    with pytest.raises(IngestError, match="unknown encoding") as info:
        decode_text(bytes(range(256)) * 4, "blob.txt")
    assert info.value.path == "blob.txt"


def test_empty_and_whitespace_files_fail_clearly():
    with pytest.raises(IngestError, match="empty file"):
        parse_bytes(b"", "empty.txt")
    with pytest.raises(IngestError, match="empty file"):
        parse_bytes(b"  \n\n", "blank.md")


def test_unsupported_suffix():
    with pytest.raises(IngestError, match="unsupported file type .xls"):
        parse_bytes(b"data", "sheet.xls")


def test_markdown_title_hint():
    parsed = parse_bytes("# 医保办法\n\n第一条 内容。".encode(), "a.md")
    assert (parsed.title, parsed.rule) == ("医保办法", "markdown heading")


def test_html_drops_script_style_nav_and_keeps_headings_and_tables():
    html = ("<html><head><title>指南</title><script>var x=1;</script><style>p{color:red}</style></head>"
            "<body><nav>首页 | 关于</nav><h2>第一章 总则</h2><p>第一条 <b>参保人员</b>可以报销。</p>"
            "<table><tr><th>项目</th><th>比例</th></tr><tr><td>住院</td><td>80%</td></tr></table></body></html>")
    parsed = parse_bytes(html.encode(), "g.html")
    assert parsed.title == "指南"
    assert "var x" not in parsed.text and "color" not in parsed.text and "首页" not in parsed.text
    assert "## 第一章 总则" in parsed.text
    assert "第一条 参保人员 可以报销。" in parsed.text or "第一条 参保人员可以报销。" in parsed.text
    assert "| 项目 | 比例 |" in parsed.text and "| 住院 | 80% |" in parsed.text


def test_docx_paragraphs_headings_and_tables_in_body_order(tmp_path: Path):
    path = make_docx(tmp_path / "rules.docx")
    parsed = parse_bytes(path.read_bytes(), str(path))
    assert parsed.title == "差旅费管理办法"
    text = parsed.text
    assert text.index("# 第一章 总则") < text.index("第一条") < text.index("| 城市 | 标准 |") < text.index("第三条")


def test_corrupt_docx(tmp_path: Path):
    with pytest.raises(IngestError, match="unreadable DOCX"):
        parse_bytes(b"PK\x03\x04 not really a zip", "bad.docx")


def test_pdf_text_layer_with_chinese(tmp_path: Path):
    path = make_pdf(tmp_path / "p.pdf")
    parsed = parse_bytes(path.read_bytes(), str(path))
    assert "第一条 为了规范报销，制定本办法。" in parsed.text
    assert parsed.text.index("第一条") < parsed.text.index("第四条")


def test_corrupt_pdf_fails_with_reason():
    with pytest.raises(IngestError, match="corrupt or unreadable PDF"):
        parse_bytes(b"%PDF-1.7\n garbage garbage", "broken.pdf")


def test_encrypted_pdf_fails_with_reason(tmp_path: Path):
    path = make_pdf(tmp_path / "locked.pdf", password="secret")
    with pytest.raises(IngestError, match="encrypted PDF"):
        parse_bytes(path.read_bytes(), str(path))


def test_pdf_without_text_layer_fails_with_reason(tmp_path: Path):
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.draw_rect(pymupdf.Rect(50, 50, 200, 200), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))
    path = tmp_path / "scan.pdf"
    doc.save(path)
    with pytest.raises(IngestError, match="no text layer"):
        parse_bytes(path.read_bytes(), str(path))


def test_pdf_table_found_by_pymupdf_becomes_a_markdown_table_in_place():
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "第一条 报销比例如下表。", fontname="china-s", fontsize=11)
    rows = [["医院等级", "报销比例"], ["一级", "90%"], ["三级", "80%"]]
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            rect = pymupdf.Rect(72 + c * 150, 80 + r * 24, 72 + (c + 1) * 150, 80 + (r + 1) * 24)
            page.draw_rect(rect, color=(0, 0, 0), width=1)
            page.insert_text((rect.x0 + 5, rect.y0 + 16), value, fontname="china-s", fontsize=11)
    page.insert_text((72, 200), "第二条 本办法自2024年1月1日起施行。", fontname="china-s", fontsize=11)
    text = parse_bytes(doc.tobytes(), "t.pdf").text
    assert "| 医院等级 | 报销比例 |\n|---|---|\n| 一级 | 90% |\n| 三级 | 80% |" in text
    assert text.index("第一条") < text.index("| 医院等级") < text.index("第二条")
    assert text.count("医院等级") == 1  # the cells are not repeated as loose text


def test_pdf_wrapped_lines_are_joined_and_running_headers_dropped(tmp_path: Path):
    import pymupdf

    doc = pymupdf.open()
    for n in range(1, 4):
        page = doc.new_page()
        page.insert_text((72, 40), "江西省医疗保障局文件", fontname="china-s", fontsize=9)
        page.insert_text((72, 100), f"第{'一二三'[n - 1]}条 参保人员在定点医疗机构发生的住院费用，",
                         fontname="china-s", fontsize=11)
        page.insert_text((72, 114), "由统筹基金按规定支付。", fontname="china-s", fontsize=11)
        page.insert_text((72, 800), f"- {n} -", fontname="china-s", fontsize=9)
    text = parse_bytes(doc.tobytes(), "wrapped.pdf").text
    assert "江西省医疗保障局文件" not in text
    assert "- 2 -" not in text
    assert "第二条 参保人员在定点医疗机构发生的住院费用，由统筹基金按规定支付。" in text.split("\n")


# -- issue 11 (10): mixed encodings are decoded line by line, never turned into mojibake --------

def test_utf8_lines_mixed_with_latin1_lines_keep_both_right():
    data = ("Café au lait\n".encode() + "Crème brûlée et pâtisserie\n".encode("latin-1")
            + "Naïve façade\n".encode())
    text = decode_text(data, "menu.txt")
    assert text == "Café au lait\nCrème brûlée et pâtisserie\nNaïve façade\n"
    assert "Ã" not in text


def test_utf8_lines_mixed_with_gbk_lines_keep_both_right():
    data = "第一条 在职职工报销比例为90%。\n".encode() + "第二条 退休人员为95%。\n".encode("gbk")
    assert decode_text(data, "policy.txt") == "第一条 在职职工报销比例为90%。\n第二条 退休人员为95%。\n"


def test_a_whole_latin1_file_is_not_read_as_another_code_page():
    assert decode_text("Tarif réduit: crème et café\n".encode("latin-1"), "x.txt") == \
        "Tarif réduit: crème et café\n"


def test_markdown_inline_markup_reads_as_a_reader_sees_it():
    md = ("---\ntitle: Office rules\n---\n# Office rules\n\n<!-- owner: facilities -->\n"
          "Visitors must sign in **at reception** and wear a _visitor badge_; see the "
          "[visitor guide](https://intranet.example/visitors) or run `badge-print`.\n\n"
          "{{< note >}}\n\n* item one\n| a | b |\n|---|---|\n| **x** | 2 |\n\n```\nkeep *this* as is\n```\n")
    text = parse_bytes(md.encode(), "rules.md").text
    assert "Visitors must sign in at reception and wear a visitor badge; see the visitor guide or run badge-print." in text
    assert "owner: facilities" not in text and "https://" not in text and "{{<" not in text
    assert "* item one" in text and "| x | 2 |" in text and "keep *this* as is" in text
    # a .txt file is not Markdown: its characters stay as written
    assert "**at reception**" in parse_bytes(md.encode(), "rules.txt").text
