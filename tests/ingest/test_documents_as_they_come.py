"""Documents as people publish them: front matter, HTML <meta>, amended laws in several versions,
part files of a code, clause labels with letters, folders with formats we do not read. Every
assertion is on what `arag ingest`, `arag docs` and `arag chunks` show."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from agentic_rag.cli import app


def arag(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def ingest(folder: Path, index: Path) -> dict[str, dict]:
    code, out = arag("ingest", str(folder), "--index", str(index), "--json")
    assert code == 0, out
    return {Path(f["path"]).name: f for f in json.loads(out)["files"]}


def docs(index: Path) -> dict[str, dict]:
    code, out = arag("docs", "--index", str(index), "--json")
    assert code == 0, out
    return {Path(d["source"]).name: d for d in json.loads(out)}


def chunks(index: Path, doc_id: str) -> list[dict]:
    code, out = arag("chunks", doc_id, "--index", str(index), "--json")
    assert code == 0, out
    return json.loads(out)


LEAVE_V1 = """---
title: Annual Leave Policy
date: 2022-03-01
version: "1.0"
owner: People Operations
status: active
tags: [leave, hr]
redirect_from:
  - /policies/deprecated/annual-leave
---

# Annual Leave Policy

## 1. Entitlement

Employees receive 15 days of paid annual leave per year.
"""

LEAVE_V2 = """+++
title = "Annual Leave Policy"
date = 2022-03-01
last_updated = 2024-07-01
version = "2.0"
department = "People Operations"
+++

# Annual Leave Policy

## 1. Entitlement

Employees receive 20 days of paid annual leave per year.
"""

REDIRECT_STUB = """---
title: Leave (old page)
redirect_to: /policies/annual-leave
---
This page has moved.
"""

PAGE = """<html><head><title>Remote Work Guidelines</title>
<meta name="description" content="How and when staff may work from home.">
<meta name="author" content="Facilities Office">
<meta name="dc.date" content="2023-05-04">
<meta name="keywords" content="remote, home office">
<meta name="viewport" content="width=device-width, initial-scale=1">
</head><body><h1>Remote Work Guidelines</h1>
<p>Staff may work from home two days per week.</p></body></html>"""


def test_front_matter_is_metadata_not_body(tmp_path: Path):
    folder = tmp_path / "policies"
    (folder / "deprecated").mkdir(parents=True)
    (folder / "leave-v1.md").write_text(LEAVE_V1, encoding="utf-8")
    # a current policy whose folder happens to be called "deprecated"
    (folder / "deprecated" / "leave-v2-redirect.md").write_text(LEAVE_V2, encoding="utf-8")
    (folder / "old-leave.md").write_text(REDIRECT_STUB, encoding="utf-8")
    index = tmp_path / "idx"
    ingest(folder, index)
    shown = docs(index)

    v1, v2, stub = shown["leave-v1.md"], shown["leave-v2-redirect.md"], shown["old-leave.md"]
    assert v1["title"] == v2["title"] == "Annual Leave Policy"
    assert (v1["publish_date"], v1["version"], v1["authority"]) == ("2022-03-01", "1.0", "People Operations")
    assert v1["provenance"]["title"] == "YAML front matter: title"
    assert v1["provenance"]["authority"] == "YAML front matter: owner"
    assert v1["extra"]["tags"] == ["leave", "hr"]
    assert v1["extra"]["redirect_from"] == ["/policies/deprecated/annual-leave"]
    # the later "last updated" date is the version date; the first one is history
    assert (v2["publish_date"], v2["version"]) == ("2024-07-01", "2.0")
    assert v2["provenance"]["publish_date"] == "TOML front matter: last_updated"
    assert [h["date"] for h in v2["extra"]["history"]] == ["2022-03-01", "2024-07-01"]
    assert v2["authority"] == "People Operations"
    # the newer version supersedes the older; a folder or file name says nothing about status
    assert (v1["status"], v2["status"]) == ("superseded", "active")
    # a redirect stub is superseded by its own front matter
    assert stub["status"] == "superseded" and stub["provenance"]["status"] == "YAML front matter: redirect_to"
    assert stub["extra"]["redirect_to"] == "/policies/annual-leave"

    body = chunks(index, v1["doc_id"])
    assert all("---" not in c["text"] and "owner:" not in c["text"] for c in body)
    assert body[0]["text"].startswith("## 1. Entitlement") or "15 days" in body[0]["text"]


def test_html_title_and_meta(tmp_path: Path):
    folder = tmp_path / "web"
    folder.mkdir()
    (folder / "remote.html").write_text(PAGE, encoding="utf-8")
    index = tmp_path / "idx"
    ingest(folder, index)
    page = docs(index)["remote.html"]
    assert page["title"] == "Remote Work Guidelines" and page["provenance"]["title"] == "<title>"
    assert page["authority"] == "Facilities Office"
    assert page["provenance"]["authority"] == '<meta name="author">'
    assert page["publish_date"] == "2023-05-04"
    assert page["provenance"]["publish_date"] == '<meta name="dc.date">'
    assert page["extra"]["description"] == "How and when staff may work from home."
    assert page["extra"] == {"description": "How and when staff may work from home.",
                             "keywords": "remote, home office"}


def test_file_name_words_do_not_make_versions(tmp_path: Path):
    # two documents without any title of their own, named alike in different folders
    for sub, year in (("current", 2024), ("redirects", 2019)):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "deprecated.txt").write_text(
            "员工须于每月5日前提交考勤记录，逾期不予补登，由部门负责人签字确认后报人力资源部备案。" * 3
            + f"\n\n人力资源部\n{year}年1月1日", encoding="utf-8")
    index = tmp_path / "idx"
    ingest(tmp_path, index)
    code, out = arag("docs", "--index", str(index), "--json")
    shown = json.loads(out)
    assert [d["provenance"]["title"] for d in shown] == ["file name", "file name"]
    assert {d["status"] for d in shown} == {"active"}


def test_front_matter_edge_cases():
    from agentic_rag.ingest.parsers import parse_bytes

    broken = parse_bytes(b"---\ntitle: Expense Policy\nsummary: [unclosed\n---\nBody text.\n", "a.md")
    assert broken.front_matter == {"title": "Expense Policy", "summary": "[unclosed"}
    assert broken.text == "Body text.\n"
    # a thematic break that opens a note is body text, not front matter
    rule = parse_bytes(b"---\n\nJust a note between two rules.\n\n---\nMore.\n", "b.md")
    assert rule.front_matter == {} and rule.text.startswith("---")


# a statute as public collections publish it: the promulgation note under the title
STATUTE_V1 = """# 中华人民共和国职业培训促进法

（2009年6月27日第十一届全国人民代表大会常务委员会第九次会议通过）

## 第一章 总则

第一条 为了促进职业培训，制定本法。

第二条 用人单位应当每年安排职工参加培训，培训时间不少于十日。
"""

STATUTE_V2 = """# 中华人民共和国职业培训促进法

（2009年6月27日第十一届全国人民代表大会常务委员会第九次会议通过　根据2015年4月24日第十二届全国人民代表大会常务委员会第十四次会议《关于修改〈中华人民共和国职业培训促进法〉等六部法律的决定》第一次修正　2021年12月24日第十三届全国人民代表大会常务委员会第三十二次会议修订）

## 第一章 总则

第一条 为了促进职业培训，制定本法。

第二条 用人单位应当每年安排职工参加培训，培训时间不少于十五日。
"""

# the closing part of a code, kept in its own file under the code's title
CODE_PART = """# 中华人民共和国职业培训促进法

（2009年6月27日第十一届全国人民代表大会常务委员会第九次会议通过）

附　则

第三十条 本法自2022年1月1日起施行。
"""

REGULATION = """工伤职工康复管理条例

（2004年1月1日中华人民共和国国务院令第888号公布　根据2011年1月8日《国务院关于修改〈工伤职工康复管理条例〉的决定》修订）

第一条 为了保障工伤职工康复，制定本条例。
"""


def test_amended_law_versions_parts_and_issuer(tmp_path: Path):
    folder = tmp_path / "laws"
    folder.mkdir()
    (folder / "training-2009.md").write_text(STATUTE_V1, encoding="utf-8")
    (folder / "training-2021.md").write_text(STATUTE_V2, encoding="utf-8")
    (folder / "training-fuze.md").write_text(CODE_PART, encoding="utf-8")
    (folder / "rehab.txt").write_text(REGULATION, encoding="utf-8")
    index = tmp_path / "idx"
    ingest(folder, index)
    shown = docs(index)
    old, new, part, reg = (shown[n] for n in ("training-2009.md", "training-2021.md", "training-fuze.md", "rehab.txt"))

    # the latest amendment is the version; adoption and the first amendment are history
    assert (new["publish_date"], new["version"]) == ("2021-12-24", "2021")
    assert new["provenance"]["publish_date"] == "latest 修订 line"
    assert [(h["date"], h["event"]) for h in new["extra"]["history"]] == [
        ("2009-06-27", "通过"), ("2015-04-24", "修正"), ("2021-12-24", "修订")]
    assert (old["publish_date"], old["version"]) == ("2009-06-27", "2009")
    # the issuing body comes from the promulgation note
    assert new["authority"] == old["authority"] == "全国人民代表大会常务委员会"
    assert new["provenance"]["authority"] == "通过 line"
    assert (reg["authority"], reg["publish_date"]) == ("国务院", "2011-01-08")
    # the newer text supersedes the older; the 附则 file is a part, not a version of either
    assert (old["status"], new["status"], part["status"]) == ("superseded", "active", "active")
    assert part["extra"]["part"] == "附则"


def test_a_later_run_with_a_part_file_leaves_the_whole_code_alone(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "code.md").write_text(STATUTE_V2, encoding="utf-8")
    (tmp_path / "b" / "fuze.md").write_text(CODE_PART.replace("2009年6月27日", "2022年6月27日"), encoding="utf-8")
    index = tmp_path / "idx"
    ingest(tmp_path / "a", index)
    ingest(tmp_path / "b", index)
    assert {d["status"] for d in docs(index).values()} == {"active"}


def test_english_version_dates():
    from agentic_rag.ingest.metadata import extract_metadata

    meta = extract_metadata("Expense Reimbursement Policy\nVersion 4\nIssued: 12 March 2021\n"
                            "Last updated: 2 May 2024\nEffective: 1 June 2024\n"
                            "This policy supersedes the Expense Reimbursement Policy Version 3.\n"
                            "1. Scope\nAll staff.")
    assert (str(meta.publish_date), meta.version, str(meta.effective_date)) == ("2024-05-02", "4", "2024-06-01")
    assert meta.provenance["publish_date"] == "Last updated line"
    assert [h["event"] for h in meta.extra["history"]] == ["published", "updated"]
    assert meta.supersedes == ["Expense Reimbursement Policy Version 3"]


HANDBOOK = """---
title: Staff Handbook
---

# Staff Handbook

L.1 Annual leave
Employees receive 20 days of annual leave.

L.2 Sick leave
Employees receive 10 days of sick leave.

Section 4(b) Carry-over
Up to five unused days carry over; see Article 12bis.

Article 12bis Parental leave
Sixteen weeks are paid.

§ 4.1 Approval
Line managers approve leave requests.

Section D.4 Unpaid leave
Unpaid leave needs approval by HR.
"""


def test_clause_labels_keep_their_letters(tmp_path: Path):
    folder = tmp_path / "hb"
    folder.mkdir()
    (folder / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    index = tmp_path / "idx"
    ingest(folder, index)
    [doc] = docs(index).values()
    shown = {c["clause"]: c for c in chunks(index, doc["doc_id"]) if c["clause"]}
    assert list(shown) == ["L.1", "L.2", "Section 4(b)", "Article 12bis", "§ 4.1", "Section D.4"]
    assert [c["clause_no"] for c in shown.values()] == ["L.1", "L.2", "4(b)", "12bis", "4.1", "D.4"]
    assert "10 days of sick leave" in shown["L.2"]["text"]
    assert "Sixteen weeks" in shown["Article 12bis"]["text"]
    code, out = arag("search", "unused days carry over", "--index", str(index), "--json")
    assert json.loads(out)[0]["clause"] == "Section 4(b)"


def test_reference_to_a_lettered_clause_resolves(tmp_path: Path):
    from agentic_rag.ingest.pipeline import parse_document

    (tmp_path / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    [(_, items, edges)] = parse_document(tmp_path / "handbook.md")
    by_id = {c.chunk_id: c.clause for c in items}
    assert [(by_id[e.src], by_id[e.dst]) for e in edges] == [("Section 4(b)", "Article 12bis")]


def test_formats_without_a_reader_are_listed_as_skipped(tmp_path: Path):
    folder = tmp_path / "share"
    folder.mkdir()
    (folder / "policy.md").write_text("# 报销办法\n\n第一条 差旅费凭票报销。\n", encoding="utf-8")
    (folder / "policy.md.meta.json").write_text('{"authority": "财务部"}', encoding="utf-8")
    for name in ("kickoff.ppt", "manual.mobi", "memo.odt", "old.xls", "logo.png"):
        (folder / name).write_bytes(b"PK\x03\x04 not read")
    code, out = arag("ingest", str(folder), "--index", str(tmp_path / "idx"), "--json")
    assert code == 0, out
    status = {Path(f["path"]).name: (f["status"], f["reason"]) for f in json.loads(out)["files"]}
    assert status.pop("policy.md") == ("added", "")
    assert status == {
        "old.xls": ("skipped", "no reader for .xls files (legacy Excel (save it as .xlsx))"),
        "kickoff.ppt": ("skipped", "no reader for .ppt files (legacy PowerPoint (save it as .pptx))"),
        "manual.mobi": ("skipped", "no reader for .mobi files (e-book (convert it to .epub))"),
        "memo.odt": ("skipped", "no reader for .odt files (OpenDocument text (save it as .docx))"),
        "logo.png": ("skipped", "unsupported file type .png"),
    }
    code, out = arag("ingest", str(folder), "--index", str(tmp_path / "idx"))
    assert code == 0 and "1 unchanged · 0 replaced · 0 failed · 5 skipped" in out


def test_spreadsheets_become_tables_with_structured_rows(tmp_path: Path):
    import datetime as dt

    import openpyxl

    folder = tmp_path / "sheets"
    folder.mkdir()
    book = openpyxl.Workbook()
    hotels = book.active
    hotels.title = "Hotels"
    hotels.append(["City", "Nightly limit", "Valid from"])
    hotels.append(["Beijing", 800, dt.date(2024, 1, 1)])
    hotels.append(["Nanchang", 350.0, None])
    meals = book.create_sheet("Meals")
    meals.append(["Tier", "Per day"])
    meals.append(["Tier 1", 120])
    book.save(folder / "travel-limits.xlsx")
    (folder / "allowances.csv").write_text("岗位;津贴\n一线岗位;300元\n后勤岗位;150元\n", encoding="gb18030")
    index = tmp_path / "idx"
    assert {f["status"] for f in ingest(folder, index).values()} == {"added"}
    shown = docs(index)
    sheet_doc, csv_doc = shown["travel-limits.xlsx"], shown["allowances.csv"]
    assert (sheet_doc["title"], csv_doc["title"]) == ("travel-limits", "allowances")

    rows = chunks(index, sheet_doc["doc_id"])
    assert [(c["kind"], c["path"]) for c in rows] == [("table", ["Hotels"]), ("table", ["Meals"])]
    assert "City: Beijing; Nightly limit: 800; Valid from: 2024-01-01" in rows[0]["text"]
    assert "Tier: Tier 1; Per day: 120" in rows[1]["text"]
    [allow] = chunks(index, csv_doc["doc_id"])
    assert allow["kind"] == "table" and "岗位: 后勤岗位; 津贴: 150元" in allow["text"]
    code, out = arag("search", "Nanchang nightly limit", "--index", str(index), "--json")
    assert "Nanchang" in json.loads(out)[0]["text"]


def test_spreadsheet_rows_stay_structured_and_a_broken_workbook_fails_alone(tmp_path: Path):
    import openpyxl

    from agentic_rag.ingest.pipeline import parse_document

    folder = tmp_path / "hr"
    folder.mkdir()
    book = openpyxl.Workbook()
    book.active.append(["Grade", "Days"])
    book.active.append(["Senior", 25])
    book.save(folder / "leave.xlsx")
    [(_, [table], _)] = parse_document(folder / "leave.xlsx")
    assert (table.table.headers, table.table.rows) == (["Grade", "Days"], [["Senior", "25"]])
    (folder / "broken.xlsx").write_bytes(b"PK\x03\x04 truncated")
    code, out = arag("ingest", str(folder), "--index", str(tmp_path / "idx"), "--json")
    status = {Path(f["path"]).name: (f["status"], f["reason"]) for f in json.loads(out)["files"]}
    assert code == 1 and status["leave.xlsx"][0] == "added"
    assert status["broken.xlsx"][0] == "failed" and status["broken.xlsx"][1].startswith("unreadable XLSX")


def test_slides_become_sections_with_tables_and_notes(tmp_path: Path):
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Onboarding"
    first.placeholders[1].text_frame.text = "Laptops are issued on the first working day."
    first.notes_slide.notes_text_frame.text = "Remind people to enrol in the VPN."
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Monthly allowances"
    table = second.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(4), Inches(2)).table
    for r, (item, amount) in enumerate([("Item", "Amount"), ("Phone", "50"), ("Internet", "30")]):
        table.cell(r, 0).text, table.cell(r, 1).text = item, amount
    folder = tmp_path / "decks"
    folder.mkdir()
    deck.save(folder / "onboarding.pptx")
    index = tmp_path / "idx"
    ingest(folder, index)
    [doc] = docs(index).values()
    assert doc["title"] == "Onboarding" and doc["provenance"]["title"] == "first slide title"
    shown = [(c["kind"], c["path"], c["text"]) for c in chunks(index, doc["doc_id"])]
    assert shown[0][:2] == ("body", ["Slide 1: Onboarding"]) and "first working day" in shown[0][2]
    assert shown[1][:2] == ("footnote", ["Slide 1: Onboarding"]) and "VPN" in shown[1][2]
    assert shown[2][:2] == ("table", ["Slide 2: Monthly allowances"])
    assert "Item: Internet; Amount: 30" in shown[2][2]


def test_the_same_title_from_two_issuers_is_no_version_of_the_other(tmp_path: Path):
    folder = tmp_path / "notices"
    folder.mkdir()
    notice = "关于做好高校毕业生就业工作的通知\n第一条 各地应当做好就业服务。\n{org}\n{date}\n"
    for name, org, date in (("zj-2023.txt", "浙江省人力资源和社会保障厅", "2023年5月4日"),
                            ("sc-2024.txt", "四川省人力资源和社会保障厅", "2024年5月6日"),
                            ("zj-2024.txt", "浙江省人力资源和社会保障厅", "2024年6月1日")):
        (folder / name).write_text(notice.format(org=org, date=date), encoding="utf-8")
    index = tmp_path / "idx"
    ingest(folder, index)
    status = {name: (d["authority"], d["status"]) for name, d in docs(index).items()}
    assert status == {"zj-2023.txt": ("浙江省人力资源和社会保障厅", "superseded"),
                      "zj-2024.txt": ("浙江省人力资源和社会保障厅", "active"),
                      "sc-2024.txt": ("四川省人力资源和社会保障厅", "active")}
