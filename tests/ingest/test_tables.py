"""Tables: Markdown round trip, searchable rendering, row groups."""

from agentic_rag.ingest.tables import parse_markdown_table, render_markdown, searchable_text, split_rows
from agentic_rag.types import Table


def test_render_and_parse_round_trip_with_pipes_and_newlines():
    md = render_markdown(["名称", "说明"], [["A|B", "两行\n文字"], ["短"]])
    table = parse_markdown_table(md.split("\n"))
    assert table == Table(headers=["名称", "说明"], rows=[["A|B", "两行 文字"], ["短", ""]])


def test_not_a_table_without_separator_row():
    assert parse_markdown_table(["| a | b |", "| 1 | 2 |"]) is None


def test_searchable_text_repeats_headers_and_skips_empty_cells():
    t = Table(headers=["药品名称", "类别", "报销比例"], rows=[["阿莫西林", "甲类", "90%"], ["布洛芬", "", "70%"]])
    assert searchable_text(t) == "药品名称: 阿莫西林; 类别: 甲类; 报销比例: 90%\n药品名称: 布洛芬; 报销比例: 70%"


def test_split_rows_keeps_header_and_all_rows():
    t = Table(headers=["k", "v"], rows=[[str(i), "x" * 20] for i in range(50)])
    groups = split_rows(t, 100)
    assert len(groups) > 1
    assert all(g.headers == ["k", "v"] for g in groups)
    assert [r for g in groups for r in g.rows] == t.rows
    assert all(len(searchable_text(g)) <= 100 for g in groups)
