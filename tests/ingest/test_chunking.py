"""Clause-aware chunking: one chunk per clause, labels, paths, spans, kinds."""

from __future__ import annotations

import re
import textwrap

import pytest

from agentic_rag.types import POSITION_WEIGHTS

from .helpers import by_clause, chunks

STATUTE = """江西省职工医疗保障办法
（2024年修订）

为了保障职工基本医疗需求，根据有关法律法规，制定本办法。

第一编 总则
第一章 一般规定
第一条 本办法适用于本省行政区域内的职工基本医疗保险。
用人单位和职工应当依法参加职工基本医疗保险。
第二条 参保人员包括：
（一）在职职工；
（二）退休人员；
（三）灵活就业人员。
第二条之一 参保人员应当按时足额缴费。
第二编 待遇
第三章 医疗费用
第一节 住院
第十二条 住院医疗费用按照下列比例报销：
| 医院等级 | 报销比例 |
|---|---|
| 一级 | 90% |
| 三级 | 80% |
前款规定的比例为基本比例。
注：本条所称住院不含日间手术。

参保人员转外就医的，比例降低十个百分点。
第二节 门诊
第十三条 门诊费用详见附件1。
附件1 门诊慢特病病种目录
一、高血压
二、糖尿病
"""


@pytest.fixture(scope="module")
def statute():
    return chunks(STATUTE)


def test_every_article_is_its_own_chunk_with_label_number_and_path(statute):
    clauses = by_clause(statute)
    assert clauses["第一条"].clause_no == "1"
    assert clauses["第一条"].path == ["第一编 总则", "第一章 一般规定", "第一条"]
    assert clauses["第十二条"].clause_no == "12"
    assert clauses["第十二条"].path == ["第二编 待遇", "第三章 医疗费用", "第一节 住院", "第十二条"]
    assert clauses["第十三条"].path[-2:] == ["第二节 门诊", "第十三条"]


def test_sub_items_and_paragraphs_stay_inside_their_article(statute):
    art2 = by_clause(statute)["第二条"]
    assert "（一）在职职工" in art2.text and "（三）灵活就业人员" in art2.text
    assert "第二条之一" not in art2.text
    art1 = by_clause(statute)["第一条"]
    assert "用人单位和职工应当依法参加" in art1.text  # the second 款 of article 1


def test_zhi_yi_article_has_its_own_chunk_and_number(statute):
    c = by_clause(statute)["第二条之一"]
    assert c.clause_no == "2-1"
    assert c.chunk_id == "d1:b1.c1.a2-1:0"
    assert c.text.startswith("第二条之一 参保人员")


def test_chunk_ids_follow_the_clause_path(statute):
    ids = [c.chunk_id for c in statute]
    assert "d1:b1.c1.a1:0" in ids
    assert "d1:b2.c3.j1.a12:0" in ids
    assert len(ids) == len(set(ids))


def test_spans_are_exact_for_text_chunks(statute):
    for c in statute:
        if c.kind != "table":
            assert STATUTE[c.span[0]:c.span[1]] == c.text
        else:
            assert STATUTE[c.span[0]:c.span[1]].startswith("| 医院等级")


def test_preamble_before_the_first_structure_is_its_own_chunk(statute):
    first = statute[0]
    assert first.chunk_id == "d1:p0:0"
    assert first.clause is None
    assert "制定本办法" in first.text


def test_no_chunk_spans_two_articles(statute):
    label = re.compile(r"^第[一二三四五六七八九十百]+条", re.M)
    for c in statute:
        assert len(label.findall(c.text)) <= 1, c.text


def test_table_inside_an_article_is_its_own_chunk_and_the_article_resumes(statute):
    table = next(c for c in statute if c.kind == "table")
    assert table.clause == "第十二条"
    assert table.table is not None
    assert table.table.headers == ["医院等级", "报销比例"]
    assert table.table.rows == [["一级", "90%"], ["三级", "80%"]]
    assert "医院等级: 一级; 报销比例: 90%" in table.text
    assert table.position_weight == POSITION_WEIGHTS["table"]
    after = [c for c in statute if c.clause == "第十二条" and c.kind == "body"]
    assert [c.chunk_id.rsplit(":", 1)[1] for c in after] == ["0", "1", "2"]
    assert after[1].text == "前款规定的比例为基本比例。"


def test_footnote_runs_to_its_paragraph_end_then_the_article_resumes(statute):
    note = next(c for c in statute if c.kind == "footnote")
    assert note.text == "注：本条所称住院不含日间手术。"
    assert note.position_weight == POSITION_WEIGHTS["footnote"]
    assert note.chunk_id == "d1:fn1:0"
    assert note.clause == "注", "a note is cited by its marker as written"
    resumed = [c for c in statute if c.clause == "第十二条" and c.kind == "body"][-1]
    assert resumed.text.startswith("参保人员转外就医的")


def test_appendix_chunks_have_appendix_kind_and_label(statute):
    appx = [c for c in statute if c.kind == "appendix"]
    assert len(appx) == 1
    assert appx[0].clause == "附件1"
    assert appx[0].clause_no == "1"
    assert appx[0].position_weight == POSITION_WEIGHTS["appendix"]
    assert appx[0].chunk_id == "d1:appx-1:0"
    assert "一、高血压" in appx[0].text and "二、糖尿病" in appx[0].text


def test_heading_lines_alone_are_not_chunks(statute):
    assert not any(c.text.strip() in ("第一编 总则", "第一章 一般规定", "第一节 住院") for c in statute)


def test_an_outline_of_headings_only_is_kept_in_bounded_chunks():
    # issue 11: 20,000 headings with nothing under them became one chunk of the whole file,
    # and embedding that one chunk took minutes
    text = "\n\n".join(f"## Part {i} of the outline" for i in range(300))
    pieces = chunks(text, max_chars=500)
    assert len(pieces) > 10 and all(len(p.text) <= 500 for p in pieces)
    assert all(text[p.span[0]:p.span[1]] == p.text for p in pieces)
    assert "Part 0 " in pieces[0].text and "Part 299 " in pieces[-1].text
    assert len({p.chunk_id for p in pieces}) == len(pieces)


def test_document_metadata_is_propagated_to_chunks(statute):
    assert all(c.title == "测试办法" and c.doc_id == "d1" and c.source == "d1.txt" for c in statute)
    assert [c.ord for c in statute] == list(range(len(statute)))


def test_long_clause_splits_at_discourse_marker_and_keeps_its_label():
    body = "参保人员在定点医疗机构发生的住院费用，由统筹基金按规定支付。" * 15
    text = f"第五条 {body}但是，有下列情形之一的，不予支付：因故意犯罪受伤的。" + "其余情形按照规定处理。" * 10
    pieces = chunks(text, max_chars=500)
    assert len(pieces) >= 2
    assert all(p.clause == "第五条" and p.clause_no == "5" for p in pieces)
    assert [p.chunk_id for p in pieces] == [f"d1:a5:{i}" for i in range(len(pieces))]
    assert any(p.text.startswith("但是") for p in pieces)
    assert all(len(p.text) <= 500 for p in pieces)
    assert all(text[p.span[0]:p.span[1]] == p.text for p in pieces)


def test_long_clause_without_markers_splits_at_sentence_ends():
    text = "第七条 " + "".join(f"第{i}项规定的内容在这里说明清楚。" for i in range(60))
    pieces = chunks(text, max_chars=200)
    assert len(pieces) > 3
    assert all(p.text.endswith("。") for p in pieces)
    assert "".join(p.text for p in pieces).replace(" ", "") == text.replace(" ", "")


def _wrapped(paragraph: str) -> str:
    """``paragraph`` hard-wrapped with a six-space indent, as plain-text licences are."""
    return textwrap.fill(paragraph, 72, initial_indent=" " * 6, subsequent_indent=" " * 6)


def test_a_hard_wrapped_clause_is_cut_where_a_sentence_ends_not_at_a_line_break():
    # the clause is longer than a chunk: its pieces end where sentences end, so the last sentence
    # (with the date the licence ends) is not cut from its condition at a line break
    first = ("Subject to the terms of this Agreement, the Supplier grants to the Customer a worldwide, "
             "royalty-free and non-exclusive licence to use, copy and modify the Software for its internal "
             "business purposes, including use by its contractors.")
    second = ("If the Customer brings a claim alleging that the Software infringes a patent, the licence "
              "granted under this clause ends as of the date such claim is filed.")
    text = "5. Licence. " + _wrapped(first + " Each contractor is named in the order form. " + second)
    pieces = chunks(text, max_chars=400)
    assert len(pieces) >= 2
    assert all(p.text.rstrip().endswith(".") for p in pieces), [p.text[-40:] for p in pieces]
    assert any("as of the date such claim is filed" in p.text and "If the Customer brings" in p.text for p in pieces)


def test_a_short_first_piece_that_ends_a_sentence_beats_a_cut_inside_the_next_one():
    long = ("If You bring proceedings against any person alleging that the Software, or any part of it that "
            "You received from a contributor, infringes a patent that You or Your affiliates hold in any "
            "country, then every licence granted to You under this clause for that Software, and for any "
            "work derived from it, ends as of the date such proceedings are filed.")
    text = "7. Patents. " + _wrapped("This clause applies worldwide to every recipient. " + long)
    pieces = chunks(text, max_chars=400)
    assert [p.text for p in pieces][-1].replace("\n", " ").split() == long.split()


def test_a_long_section_is_not_cut_between_a_list_and_its_introduction():
    intro = "## Conduct\n\n" + "Managers review every complaint within a reasonable time. " * 5
    listing = ("\n\nThe following always lead to a final warning:\n\n* Sharing passwords\n* Falsifying timesheets\n"
               "* Leaving a site unlocked\n* Harassing a colleague\n")
    pieces = chunks(intro + listing, max_chars=400)
    holder = next(p for p in pieces if "final warning" in p.text)
    assert "Sharing passwords" in holder.text and "Harassing a colleague" in holder.text, [p.text for p in pieces]


def test_without_articles_chinese_items_become_clauses():
    text = ("关于做好2024年医疗保障工作的通知\n各市医保局：\n一、总体要求\n（一）坚持以人民为中心。\n"
            "1. 细化措施。\n二、主要任务\n做好参保扩面工作。\n三、保障措施\n加强组织领导。")
    items = chunks(text)
    clauses = by_clause(items)
    assert list(clauses) == ["一", "二", "三"]
    assert clauses["一"].path == ["一、总体要求"]
    assert clauses["一"].clause_no == "1"
    assert "1. 细化措施" in clauses["一"].text  # 1. stays inside 一、
    assert items[0].clause is None and "各市医保局" in items[0].text


def test_without_articles_or_chinese_items_numbered_items_become_clauses():
    items = chunks("报销须知\n1. 携带身份证。\n2. 携带发票原件。\n3. 在30日内办理。")
    assert [c.clause_no for c in items if c.clause] == ["1", "2", "3"]


def test_items_inside_articles_are_never_clauses():
    items = chunks("第一条 总则。\n一、适用范围\n1. 本省。\n第二条 附则。")
    assert [c.clause for c in items] == ["第一条", "第二条"]


def test_a_line_starting_with_a_reference_is_not_an_article():
    items = chunks("第一条 本办法适用于全省。\n第一条规定的单位，应当备案。\n第二条 附则。")
    assert [c.clause for c in items] == ["第一条", "第二条"]
    assert "第一条规定的单位" in items[0].text


def test_full_width_digits_and_arabic_article_numbers():
    items = chunks("第１２条 内容一。\n第13条 内容二。")
    assert [(c.clause, c.clause_no) for c in items] == [("第１２条", "12"), ("第13条", "13")]


def test_articles_run_together_in_one_paragraph_are_split():
    items = chunks("第一条　为了规范管理，制定本办法。第二条　本办法适用于全省。第三条　本办法自发布之日起施行。")
    assert [c.clause_no for c in items] == ["1", "2", "3"]


def test_markdown_heading_with_statute_label():
    items = chunks("## 第三章 医疗费用\n### 第十二条 报销比例\n住院报销90%。")
    assert items[0].clause == "第十二条"
    assert items[0].path == ["第三章 医疗费用", "第十二条"]


ENGLISH = """# Travel Expense Policy

This policy applies to all staff.

## Chapter 1 General

Article 1 Scope. This policy covers business travel.

Article 2. Employees shall book economy class; see Section 3.
Article 5 of the Labour Act also applies to rest periods.

## Reimbursement

Section 3 Meals and lodging
3.1 Meals are reimbursed up to $50 per day.
3.2 Hotels are reimbursed up to $200 per night.
§ 4 Approval. Claims need the manager's approval.

Note: amounts are reviewed every year.

Appendix A Daily rates
Rates by city are listed below.
"""


@pytest.fixture(scope="module")
def english():
    return chunks(ENGLISH, title="Travel Expense Policy")


def test_english_articles_sections_and_numbered_clauses(english):
    clauses = by_clause(english)
    assert clauses["Article 1"].clause_no == "1"
    assert clauses["Article 1"].path == ["Chapter 1 General", "Article 1"]
    assert clauses["3.1"].path == ["Reimbursement", "Section 3", "3.1"]
    assert clauses["3.1"].text == "3.1 Meals are reimbursed up to $50 per day."
    assert clauses["3.2"].clause_no == "3.2"
    assert clauses["§ 4"].clause_no == "4"
    # "Section 3 Meals and lodging" only heads 3.1 and 3.2: it lives on in their paths
    assert "Section 3" not in clauses


def test_a_clause_line_with_text_of_its_own_keeps_its_chunk():
    items = chunks("Section 3 Meals and lodging\nThese rules cover meals.\n3.1 Meals up to $50.")
    assert [(c.clause, c.text) for c in items] == [
        ("Section 3", "Section 3 Meals and lodging\nThese rules cover meals."), ("3.1", "3.1 Meals up to $50.")]


def test_signature_block_is_not_part_of_the_last_article():
    text = "某某通知\n第一条 内容。\n第二条 本通知自2024年6月1日起施行。\n\n江南省人力资源和社会保障厅　江南省总工会\n2024年5月20日\n"
    items = chunks(text)
    assert items[-2].text == "第二条 本通知自2024年6月1日起施行。"
    assert items[-1].chunk_id == "d1:sig:0"
    assert items[-1].clause is None
    assert items[-1].text == "江南省人力资源和社会保障厅　江南省总工会\n2024年5月20日"


def test_english_sentence_starting_with_article_reference_is_not_a_clause(english):
    assert "Article 5" not in by_clause(english)
    assert "Article 5 of the Labour Act" in by_clause(english)["Article 2"].text


def test_english_title_heading_is_not_part_of_paths(english):
    assert english[0].chunk_id == "d1:p0:0"
    assert all("Travel Expense Policy" not in c.path for c in english)


def test_english_note_and_appendix(english):
    note = next(c for c in english if c.kind == "footnote")
    assert note.text == "Note: amounts are reviewed every year."
    assert note.clause == "Note"
    appx = next(c for c in english if c.kind == "appendix")
    assert (appx.clause, appx.clause_no, appx.chunk_id) == ("Appendix A", "A", "d1:appx-a:0")


def test_markdown_sections_without_clauses_are_chunked_by_heading():
    items = chunks("# Guide\n\nIntro.\n\n## Install\nRun the installer.\n\n## Use\nOpen the app.")
    assert [c.path for c in items] == [[], ["Install"], ["Use"]]
    assert items[1].text == "## Install\nRun the installer."


def test_big_table_is_split_by_rows_and_keeps_its_header():
    rows = "\n".join(f"| 药品{i} | 甲类 | {i}% |" for i in range(200))
    items = chunks("| 药品名称 | 类别 | 报销比例 |\n|---|---|---|\n" + rows, max_chars=300)
    tables = [c for c in items if c.kind == "table"]
    assert len(tables) > 5
    assert all(t.table.headers == ["药品名称", "类别", "报销比例"] for t in tables)
    assert sum(len(t.table.rows) for t in tables) == 200
    assert [t.chunk_id for t in tables[:2]] == ["d1:t1:0", "d1:t1:1"]
    assert all(t.text.startswith("药品名称: 药品") for t in tables)


def test_chunking_is_deterministic():
    assert chunks(STATUTE) == chunks(STATUTE)


def test_empty_and_whitespace_text_give_no_chunks():
    assert chunks("") == []
    assert chunks(" \n\u3000\n") == []


def test_markdown_code_blocks_are_not_structure():
    items = chunks("## Install\n```bash\n# download\n1. not a clause\n```\n## Use\nRun it.")
    assert [c.path for c in items] == [["Install"], ["Use"]]
    assert "# download" in items[0].text


def test_a_clause_that_states_something_keeps_its_text_above_a_deeper_label():
    # a full sentence after the label is no heading, whatever label follows it
    text = ("# Crew Handbook\n\nSection 5(c) Radios are checked before every shift.\n\n"
            "R.2 Spare batteries are kept in the van.\n\nArticle 9ter Night work pays a bonus.\n\n"
            "9.1 The bonus is paid monthly.\n")
    got = chunks(text)
    joined = "\n".join(c.text for c in got)
    for sentence in ("Radios are checked before every shift.", "Spare batteries are kept in the van.",
                     "Night work pays a bonus.", "The bonus is paid monthly."):
        assert sentence in joined
    assert [c.clause for c in got if "Radios" in c.text] == ["Section 5(c)"]


def test_a_short_title_above_its_subclauses_stays_a_heading():
    got = chunks("# Rules\n\nSection 3 Meals\n\n3.1 Lunch is provided.\n\n3.2 Dinner is not.\n")
    assert [c.clause for c in got] == ["3.1", "3.2"]
    assert all(c.path[0] == "Section 3" for c in got)


def test_markdown_sections_are_cited_by_their_headings_and_numbered_lists_stay_in_them():
    text = ("# Expenses Handbook\n\nHow Fernhollow pays back what you spend.\n\n"
            "## Claiming\n\n- **Receipts.** Keep a receipt for every item of EUR 30 or more.\n\n"
            "## 3. Travel abroad\n\n3.1 Trips to a country listed in Appendix B need Risk desk approval.\n\n"
            "## Appendix B — Countries needing approval\n\nThe countries below need approval:\n\n"
            "1. Narnia\n2. Genovia\n3. Wakanda\n")
    parts = chunks(text, title="Expenses Handbook")
    labelled = {c.clause: c.text for c in parts}
    # an unnumbered heading names its section; the document's own title names no section
    assert "Keep a receipt" in labelled["Claiming"]
    assert next(c for c in parts if "pays back" in c.text).clause is None
    assert "3.1" in labelled
    # "1. Narnia" is an item of the appendix's list, not a clause of its own
    assert all(country in labelled["Appendix B"] for country in ("Narnia", "Genovia", "Wakanda"))
    assert not {"1", "2", "3"} & set(labelled)
