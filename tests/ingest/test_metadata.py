"""Metadata rules: each field, and the rule recorded for it."""

from __future__ import annotations

import datetime as dt

import pytest

from agentic_rag.errors import IngestError
from agentic_rag.ingest.metadata import apply_overrides, extract_metadata, find_supersessions, parse_date

NOTICE = """江西省医疗保障局文件
江医保发〔2024〕9号
关于调整职工医保住院报销比例的通知
各设区市医疗保障局：
一、三级医院住院报销比例调整为80%。
二、本通知自2024年3月1日起施行，《关于职工医保住院报销比例的通知》（赣医保发〔2019〕3号）同时废止。

江西省医疗保障局
2024年2月5日
"""


@pytest.mark.parametrize(("raw", "value"), [
    ("2024年3月1日", dt.date(2024, 3, 1)), ("二〇二四年三月一日", dt.date(2024, 3, 1)),
    ("二〇二三年十二月二十九日", dt.date(2023, 12, 29)), ("2024-03-01", dt.date(2024, 3, 1)),
    ("2024/3/1", dt.date(2024, 3, 1)), ("2024.03.01", dt.date(2024, 3, 1)),
    ("2023-08-16 18:24:57", dt.date(2023, 8, 16)), ("March 1, 2024", dt.date(2024, 3, 1)),
    ("1 March 2024", dt.date(2024, 3, 1)), ("Sept. 5, 2023", dt.date(2023, 9, 5)),
])
def test_parse_date_forms(raw, value):
    assert parse_date(raw) == value


@pytest.mark.parametrize("raw", ["2024年2月30日", "not a date", "", "2024年"])
def test_parse_date_rejects(raw):
    assert parse_date(raw) is None


def test_notice_fields_and_their_rules():
    m = extract_metadata(NOTICE)
    assert m.title == "关于调整职工医保住院报销比例的通知"
    assert m.doc_number == "江医保发〔2024〕9号"
    assert m.authority == "江西省医疗保障局"
    assert m.provenance["authority"] == "signature block"
    assert m.publish_date == dt.date(2024, 2, 5)
    assert m.provenance["publish_date"] == "signature date"
    assert m.effective_date == dt.date(2024, 3, 1)
    assert m.provenance["effective_date"] == "自…起施行"
    assert m.version == "2024" and m.provenance["version"] == "publish year"
    assert m.language == "zh"


def test_repeal_statement_names_title_and_doc_number():
    m = extract_metadata(NOTICE)
    assert m.supersedes == ["关于职工医保住院报销比例的通知", "赣医保发〔2019〕3号"]
    assert dict(find_supersessions(NOTICE)) == {
        "关于职工医保住院报销比例的通知": "repealed", "赣医保发〔2019〕3号": "repealed"}


def test_repeal_from_commencement_of_this_measure():
    text = "第三十条 本办法自2024年1月1日起施行。自本办法施行之日起，《某市住房公积金管理办法》废止。"
    assert find_supersessions(text) == [("某市住房公积金管理办法", "repealed")]


def test_a_mention_without_repeal_is_not_a_supersession():
    assert find_supersessions("依照《中华人民共和国社会保险法》第十条执行。") == []


def test_publish_date_line_beats_signature_date():
    m = extract_metadata("某某办法\n发布日期：2024年1月10日\n正文。\n\n某某局\n2024年1月5日")
    assert m.publish_date == dt.date(2024, 1, 10)
    assert m.provenance["publish_date"] == "发布日期 line"


def test_chinese_numeral_signature_date_and_issued_statement():
    m = extract_metadata("国务院关于加强某工作的意见\n国发〔2023〕5号\n正文。\n\n国务院\n二〇二三年三月一日")
    assert m.publish_date == dt.date(2023, 3, 1)
    assert m.doc_number == "国发〔2023〕5号"
    assert m.authority == "国务院"
    m = extract_metadata("某条例\n（2023年5月12日国务院第5次常务会议通过）\n第一条 目的。")
    assert m.publish_date == dt.date(2023, 5, 12)
    assert m.provenance["publish_date"] == "通过 line"  # the promulgation note


def test_effective_on_publication():
    m = extract_metadata("某办法\n第九条 本办法自印发之日起施行。\n\n某某市人民政府\n2024年1月5日")
    assert m.effective_date == dt.date(2024, 1, 5)
    assert m.provenance["effective_date"] == "自发布之日起施行"


def test_effective_date_line():
    m = extract_metadata("某规定\n施行日期：2024年7月1日\n正文。")
    assert m.effective_date == dt.date(2024, 7, 1)
    assert m.provenance["effective_date"] == "施行日期 line"


def test_authority_from_issuing_field_head_line_and_title():
    assert extract_metadata("某通知\n发文机关：国家医疗保障局\n正文。").authority == "国家医疗保障局"
    m = extract_metadata("江西省人力资源和社会保障厅\n关于某事的通知\n正文内容。")
    assert (m.authority, m.provenance["authority"]) == ("江西省人力资源和社会保障厅", "head line")
    m = extract_metadata("国家医疗保障局关于做好某工作的通知\n正文内容。")
    assert (m.authority, m.provenance["authority"]) == ("国家医疗保障局", "title prefix")


def test_english_policy():
    text = ("Travel Policy\nIssued: March 5, 2024\nIssued by: Finance Department\n"
            "Effective date: 2024-04-01\nThis policy supersedes the Travel Policy 2019.\n")
    m = extract_metadata(text)
    assert m.title == "Travel Policy"
    assert m.publish_date == dt.date(2024, 3, 5) and m.provenance["publish_date"] == "Issued line"
    assert m.effective_date == dt.date(2024, 4, 1) and m.provenance["effective_date"] == "Effective line"
    assert m.authority == "Finance Department"
    assert m.supersedes == ["Travel Policy 2019"]
    assert find_supersessions(text) == [("Travel Policy 2019", "superseded")]
    assert m.language == "en"


def test_english_hereby_repealed():
    assert find_supersessions("The Expense Rules of 2015 are hereby repealed.") == [
        ("Expense Rules of 2015", "repealed")]


@pytest.mark.parametrize(("title", "version"), [
    ("某某办法（2024年修订）", "2024"), ("医保药品目录2023版", "2023"), ("Handbook Version 2", "2"),
    ("实施细则（修订版）", "修订版"),
])
def test_explicit_version_marks(title, version):
    assert extract_metadata(f"{title}\n正文。").version == version


def test_title_hint_and_fallback():
    m = extract_metadata("正文", title_hint="网页标题", title_rule="<title>")
    assert (m.title, m.provenance["title"]) == ("网页标题", "<title>")
    m = extract_metadata("第一条 " + "很长的条文内容。" * 30, fallback_title="policy")
    assert (m.title, m.provenance["title"]) == ("policy", "file name")


def test_overrides_win_and_are_marked():
    m = apply_overrides(extract_metadata(NOTICE), {"publish_date": "2024-02-01", "place": "江西",
                                                   "authority": "省医保局"}, "x.txt")
    assert m.publish_date == dt.date(2024, 2, 1)
    assert m.authority == "省医保局"
    assert m.provenance["publish_date"] == "override" and m.provenance["authority"] == "override"
    assert m.extra == {"place": "江西"}


def test_override_aliases_and_bad_values():
    m = apply_overrides(extract_metadata("正文"), {"published": "2023-08-16 18:24:57"}, "x")
    assert m.publish_date == dt.date(2023, 8, 16)
    with pytest.raises(IngestError, match="publish_date"):
        apply_overrides(extract_metadata("正文"), {"publish_date": "someday"}, "x.txt")
    with pytest.raises(IngestError, match="status"):
        apply_overrides(extract_metadata("正文"), {"status": "deleted"}, "x.txt")


# -- index terms ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text, term", [
    ("第三条 各设区市医疗保障经办机构（以下简称经办机构）负责待遇审核。", "经办机构"),
    ("第一条 为规范门诊慢性病和特殊疾病(以下简称“门诊慢特病”)保障工作。", "门诊慢特病"),
    ("第二条 本办法所称门诊慢特病，包括高血压等五类病种。", "门诊慢特病"),
    ("第三条 本法所称的作品，是指文学、艺术和科学领域内的智力成果。", "作品"),
    ("第一条 “双通道”是指参保人员可以在定点零售药店购买谈判药品。", "双通道"),
])
def test_index_terms_finds_defined_terms(text, term):
    from agentic_rag.ingest.metadata import index_terms

    assert index_terms(text) == [term]


def test_index_terms_reads_headings_of_structured_documents_only():
    from agentic_rag.ingest.metadata import index_terms
    from agentic_rag.types import Chunk

    def chunk(path, clause):
        return Chunk(chunk_id=f"d:{clause}", doc_id="d", ord=0, text="x", clause=clause, path=list(path))

    structured = [chunk(("第二章 假期类别", "第三条"), "第三条"), chunk(("第一章 总则", "第一条"), "第一条"),
                  chunk(("第三节　婚假与产假", "第九条"), "第九条")]
    assert index_terms("", structured) == ["假期类别", "婚假与产假", "总则"]
    news = [chunk((), None)]
    assert index_terms("某公司（以下简称甲公司）发布公告。", news) == []
    assert index_terms("第三条 本制度适用于全体员工。") == []


def test_a_news_report_takes_its_headline_as_title_and_its_dateline_as_date():
    text = ("2.4万人次游客涌入古镇　示范县端午文化周闭幕\n\n示范晚报　2026年6月21日　记者 王一然 通讯员 李夏\n\n"
            "本报讯　6月20日晚，为期五天的示范县端午文化周在古镇码头闭幕。")
    meta = extract_metadata(text)
    assert meta.title == "2.4万人次游客涌入古镇　示范县端午文化周闭幕"
    assert meta.publish_date == dt.date(2026, 6, 21) and meta.provenance["publish_date"] == "news dateline"


def test_a_front_matter_company_is_the_issuer_before_the_owning_team():
    from agentic_rag.ingest.metadata import declared_fields

    fields, extra = declared_fields({"title": "Hybrid Work", "owner": "People Team", "company": "Tarnwell Ltd"},
                                    "YAML front matter: {}")
    assert fields["authority"] == ("Tarnwell Ltd", "YAML front matter: company")
    assert "company" not in extra
