"""Real files for the parser and pipeline tests, written with the libraries users have."""

from __future__ import annotations

from pathlib import Path

import pytest

POLICY_ZH = ("江西省医疗保障局\n关于职工医保报销的办法\n"
             "第一条 为了规范报销，制定本办法。\n第二条 住院费用报销比例详见第三条。\n"
             "第三条 三级医院报销比例为80%。\n第四条 本办法自2024年3月1日起施行。")


def make_docx(path: Path) -> Path:
    import docx

    d = docx.Document()
    d.core_properties.title = "差旅费管理办法"
    d.add_heading("第一章 总则", level=1)
    d.add_paragraph("第一条 为了规范差旅费管理，制定本办法。")
    d.add_paragraph("第二条 住宿标准如下表。")
    table = d.add_table(rows=3, cols=2)
    for r, (a, b) in enumerate([("城市", "标准"), ("北京", "500元"), ("南昌", "350元")]):
        table.cell(r, 0).text = a
        table.cell(r, 1).text = b
    d.add_paragraph("第三条 本办法自2024年1月1日起施行。")
    d.save(path)
    return path


def make_pdf(path: Path, lines: list[str] | None = None, password: str | None = None) -> Path:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    y = 72
    for line in lines or POLICY_ZH.split("\n"):
        # the built-in Base-14 fonts have no CJK glyphs; "china-s" is PyMuPDF's Simplified Chinese font
        page.insert_text((72, y), line, fontname="china-s", fontsize=11)
        y += 20
    if password:
        doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw=password, owner_pw=password)
    else:
        doc.save(path)
    doc.close()
    return path


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A folder with one good file of each kind."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "policy.md").write_text("# 医保办法\n\n" + POLICY_ZH, encoding="utf-8")
    (folder / "notice.txt").write_bytes(POLICY_ZH.encode("gb18030"))
    (folder / "page.html").write_text(
        "<html><head><title>报销指南</title><style>p{}</style></head><body><nav>首页</nav>"
        "<h2>第一章 总则</h2><p>第一条 参保人员可以报销。</p><table><tr><th>项目</th><th>比例</th></tr>"
        "<tr><td>住院</td><td>80%</td></tr></table></body></html>", encoding="utf-8")
    make_docx(folder / "rules.docx")
    make_pdf(folder / "scan.pdf")
    return folder
