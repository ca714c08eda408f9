"""E-books, rich text and Word's auto-numbered lists, as `arag docs` / `arag chunks` show them."""

from __future__ import annotations

import zipfile
from pathlib import Path

from .test_documents_as_they_come import chunks, docs, ingest

CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""
OPF = """<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:x</dc:identifier><dc:title>员工手册</dc:title>
    <dc:publisher>某某科技有限公司</dc:publisher><dc:date>2024-06-18</dc:date><dc:language>zh</dc:language>
  </metadata>
  <manifest>
    <item id="c2" href="text/ch2.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
  </manifest>
  <spine><itemref idref="c1"/><itemref idref="c2"/></spine>
</package>"""
CHAPTER = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{head}</title></head>
<body><h1>{head}</h1>{body}</body></html>"""


def make_epub(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", CONTAINER)
        z.writestr("OEBPS/content.opf", OPF)
        z.writestr("OEBPS/style.css", "p { margin: 0 }")
        z.writestr("OEBPS/text/ch1.xhtml", CHAPTER.format(
            head="第一章 总则", body="<p>第一条 为规范员工行为，制定本手册。</p><p>第二条 本手册适用于全体员工。</p>"))
        z.writestr("OEBPS/text/ch2.xhtml", CHAPTER.format(
            head="第二章 休假", body="<p>第三条 员工每年享有带薪年假。</p>"
                                  "<table><tr><th>工龄</th><th>年假</th></tr><tr><td>1-10年</td><td>5天</td></tr></table>"))
    return path


def rtf_escape(text: str) -> str:
    return "".join(ch if ord(ch) < 128 else f"\\u{ord(ch) if ord(ch) < 32768 else ord(ch) - 65536}?" for ch in text)


def make_rtf(path: Path) -> Path:
    body = "\\par\n".join(rtf_escape(line) for line in (
        "关于加班费的规定", "第一条 加班应当事先审批。", "第二条 本规定自2024年7月1日起施行。"))
    path.write_text("{\\rtf1\\ansi\\ansicpg936\\deff0{\\fonttbl{\\f0 SimSun;}}"
                    "{\\info{\\title " + rtf_escape("关于加班费的规定") + "}}\n\\f0\\fs24 " + body + "\\par\n}",
                    encoding="ascii")
    return path


def make_numbered_docx(path: Path) -> Path:
    import docx
    from docx.oxml import parse_xml

    d = docx.Document()
    d.add_paragraph("报销管理办法", style="Title")
    numbering = d.part.numbering_part.element
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    numbering.insert(0, parse_xml(
        f'<w:abstractNum {w} w:abstractNumId="90"><w:lvl w:ilvl="0"><w:start w:val="1"/>'
        '<w:numFmt w:val="chineseCounting"/><w:lvlText w:val="第%1条"/></w:lvl>'
        '<w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="chineseCounting"/>'
        '<w:lvlText w:val="（%2）"/></w:lvl></w:abstractNum>'))
    numbering.append(parse_xml(f'<w:num {w} w:numId="90"><w:abstractNumId w:val="90"/></w:num>'))

    def numbered(text: str, level: int) -> None:
        p = d.add_paragraph(text)
        p._p.get_or_add_pPr().append(parse_xml(
            f'<w:numPr {w}><w:ilvl w:val="{level}"/><w:numId w:val="90"/></w:numPr>'))

    numbered("为规范报销，制定本办法。", 0)
    numbered("报销范围包括：", 0)
    numbered("差旅费；", 1)
    numbered("会议费。", 1)
    numbered("本办法自2024年1月1日起施行。", 0)
    d.add_paragraph("Steps to file a claim:")
    for step in ("Collect the receipts.", "Submit the form."):
        d.add_paragraph(step, style="List Number")
    d.save(path)
    return path


def test_epub_rtf_and_numbered_docx_are_read(tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    make_epub(folder / "handbook.epub")
    make_rtf(folder / "overtime.rtf")
    make_numbered_docx(folder / "claims.docx")
    index = tmp_path / "idx"
    files = ingest(folder, index)
    assert {name: f["status"] for name, f in files.items()} == {
        "handbook.epub": "added", "overtime.rtf": "added", "claims.docx": "added"}
    listed = docs(index)

    epub = listed["handbook.epub"]
    assert epub["title"] == "员工手册" and epub["provenance"]["title"] == "epub title"
    assert epub["publish_date"] == "2024-06-18" and epub["authority"] == "某某科技有限公司"
    rows = chunks(index, epub["doc_id"])
    assert [r["clause"] for r in rows if r["kind"] == "body"] == ["第一条", "第二条", "第三条"]
    assert rows[0]["path"] == ["第一章 总则", "第一条"]  # spine order, not manifest order
    table = next(r for r in rows if r["kind"] == "table")
    assert table["table"] == {"headers": ["工龄", "年假"], "rows": [["1-10年", "5天"]]}

    rtf = listed["overtime.rtf"]
    assert rtf["title"] == "关于加班费的规定" and rtf["effective_date"] == "2024-07-01"
    assert [r["clause"] for r in chunks(index, rtf["doc_id"])] == [None, "第一条", "第二条"]

    claims = chunks(index, listed["claims.docx"]["doc_id"])
    by_clause = {r["clause"]: r["text"] for r in claims}
    assert by_clause["第一条"] == "第一条 为规范报销，制定本办法。"
    assert by_clause["第二条"] == "第二条 报销范围包括：\n（一） 差旅费；\n（二） 会议费。"
    assert by_clause["第三条"].startswith("第三条 本办法自2024年1月1日起施行。")
    assert "1. Collect the receipts.\n2. Submit the form." in by_clause["第三条"]
