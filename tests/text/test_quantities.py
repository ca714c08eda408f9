"""Quantities as a reader of a policy would read them, in Chinese and English."""

from __future__ import annotations

import pytest

from agentic_rag.text.quantities import (
    bounded_by,
    comparable,
    extract_quantities,
    parse_number,
    rate_periods,
    rounds_to,
    same_value,
    within,
)


def _one(text: str):
    found = extract_quantities(text)
    assert len(found) == 1, f"{text!r} -> {found}"
    return found[0]


@pytest.mark.parametrize(
    ("text", "kind", "value", "unit"),
    [
        # percentages
        ("报销比例为90%", "percent", 90.0, "%"),
        ("报销比例为９０％", "percent", 90.0, "%"),
        ("报销比例为百分之九十", "percent", 90.0, "%"),
        ("支付比例为百分之七点五", "percent", 7.5, "%"),
        # a fraction is a share: voting thresholds, quorums
        ("应当经全体股东三分之二以上同意", "percent", 66.67, "%"),
        ("经占总人数2/3以上的业主同意", "percent", 66.67, "%"),
        ("持有四分之一以上表决权的股东", "percent", 25.0, "%"),
        ("个人负担九成", "percent", 90.0, "%"),
        ("统筹支付九成五", "percent", 95.0, "%"),
        ("滞纳金为千分之五", "percent", 0.5, "%"),
        ("covers 90 percent of the cost", "percent", 90.0, "%"),
        ("covers ninety percent of the cost", "percent", 90.0, "%"),
        # money
        ("最高支付3000元", "money", 3000.0, "CNY"),
        ("最高支付三千元", "money", 3000.0, "CNY"),
        ("年度限额1.5万元", "money", 15000.0, "CNY"),
        # British pence after the figure are hundredths of a pound
        ("mileage is repaid at 38p per mile", "money", 0.38, "GBP"),
        ("a levy of 12 pence per bag", "money", 0.12, "GBP"),
        ("补助￥1,200", "money", 1200.0, "CNY"),
        ("capped at $500", "money", 500.0, "USD"),
        ("capped at USD 1,500", "money", 1500.0, "USD"),
        ("a budget of $1.5 million", "money", 1_500_000.0, "USD"),
        ("up to 2,000 yuan", "money", 2000.0, "CNY"),
        # durations: a working day is not a calendar day
        ("备案需提前3个工作日", "duration", 3.0, "workday"),
        ("备案需提前三个工作日", "duration", 3.0, "workday"),
        ("5日内办结", "duration", 5.0, "day"),
        ("5天内办结", "duration", 5.0, "day"),
        ("5个自然日内", "duration", 5.0, "day"),
        ("三十日内", "duration", 30.0, "day"),
        ("有效期6个月", "duration", 6.0, "month"),
        ("有效期为半年", "duration", 6.0, "month"),
        ("两年内有效", "duration", 2.0, "year"),
        ("within three business days", "duration", 3.0, "workday"),
        ("after five consecutive calendar days", "duration", 5.0, "day"),
        ("within 30 calendar days", "duration", 30.0, "day"),
        ("valid for 6 months", "duration", 6.0, "month"),
        # dates
        ("自2024年3月1日起施行", "date", "2024-03-01", "date"),
        ("自二〇二四年三月一日起施行", "date", "2024-03-01", "date"),
        ("effective 2024-03-01", "date", "2024-03-01", "date"),
        ("effective March 1, 2024", "date", "2024-03-01", "date"),
        ("effective 1 March 2024", "date", "2024-03-01", "date"),
        ("2023年1月起", "date", "2023-01", "month"),
        ("每年3月31日前申报", "date", "--03-31", "monthday"),
        ("days carried over lapse unless taken by 30 June", "date", "--06-30", "monthday"),
        ("claims close on September 15 each year", "date", "--09-15", "monthday"),
        ("2023年发布", "date", "2023", "year"),
        # counts and measures
        ("每年最多报销2次", "count", 2.0, "次"),
        ("每年最多报销两次", "count", 2.0, "次"),
        ("at most 2 times a year", "count", 2.0, "次"),
        ("年满60周岁", "number", 60.0, "岁"),
        ("气温达到40℃以上", "number", 40.0, "℃"),
        ("temperatures above 35°C", "number", 35.0, "℃"),
        ("牵引绳长度不超过1.2米", "number", 1.2, "m"),
        ("每栋楼限停3辆", "count", 3.0, "辆"),
        ("须补种五棵", "count", 5.0, "株"),  # 棵 and 株 count trees alike
        ("须补栽两株", "count", 2.0, "株"),
        ("a note from the fourth consecutive working day: after 3 consecutive working days", "duration", 3.0,
         "workday"),
        # percentage points are a difference of rates, never a rate
        ("支付比例降低10个百分点", "percent", 10.0, "pp"),
        ("reduced by 10 percentage points", "percent", 10.0, "pp"),
    ],
)
def test_extracts_and_normalizes(text, kind, value, unit):
    q = _one(text)
    assert (q.kind, q.value, q.unit) == (kind, value, unit)
    assert q.raw in text


@pytest.mark.parametrize(
    "text",
    [
        "依照第十二条办理",  # an ordinal clause number is not a quantity
        "一次性补助",  # 一次 inside 一次性
        "成为会员后一成不变",
        "每月15日前申报",  # day of the month, not a 15-day duration
        "参保人员应当按规定办理",
        "于2024/3/1起施行",  # a date written with slashes is no fraction
    ],
)
def test_ignores_numbers_that_are_not_quantities(text):
    assert [q for q in extract_quantities(text) if q.kind in ("count", "duration", "percent")] == []


def test_the_verb_may_after_a_number_is_no_date():
    assert extract_quantities("up to 2 may be carried over to the next year") == []
    assert [q.value for q in extract_quantities("the office closes on 2 May")] == ["--05-02"]


def test_reading_order_and_multiple_kinds():
    found = extract_quantities("备案需提前3个工作日，报销比例为九成，最高3000元")
    assert [q.kind for q in found] == ["duration", "percent", "money"]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("5日", "5天", True),
        ("5日", "5 days", True),
        ("百分之九十", "90%", True),
        ("九成", "90%", True),
        ("1.5万元", "15000元", True),
        ("二〇二四年三月一日", "2024-03-01", True),
        ("2周", "14天", True),
        ("1年", "12个月", True),
        ("3个工作日", "3日", False),
        ("3 business days", "3 days", False),
        ("3个工作日", "5个工作日", False),
        ("80%", "90%", False),
        ("10个百分点", "10%", False),
    ],
)
def test_same_value(a, b, same):
    assert same_value(_one(a), _one(b)) is same


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("3个工作日", "5日", True),  # both durations: a real disagreement when about the same matter
        ("80%", "九成", True),
        ("3000元", "$500", False),  # different currencies
        ("2024年3月1日", "2024年", False),  # different precision
        ("3次", "5人", False),
        ("90%", "3000元", False),
    ],
)
def test_comparable(a, b, expected):
    assert comparable(_one(a), _one(b)) is expected


@pytest.mark.parametrize(
    ("text", "value"),
    [("1,500", 1500.0), ("1.5万", 15000.0), ("三千五百", 3500.0), ("七点五", 7.5),
     ("二〇二四", 2024.0), ("twenty-five", 25.0), ("保险", None), ("", None)],
)
def test_parse_number(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text, periods", [
    ("Staff may claim up to two taxi rides per week.", {"week"}),
    ("Each team gets 12 training days a year and 1 offsite per quarter.", {"year", "quarter"}),
    ("水箱每半年清洗一次", {"half-year"}),
    ("交通补贴每月300元", {"month"}),
    ("年度累计不超过10次，每日最多2次", {"year", "day"}),
    ("The allowance is paid on request.", set()),
])
def test_the_period_a_rate_is_stated_per(text, periods):
    assert rate_periods(text) == periods


@pytest.mark.parametrize("text, holds", [
    ("£10,000.01 to £60,000", True),
    ("Up to £10,000", False),
    ("Over £60,000", False),
    ("above £20,000", True),
    ("£45,000 or more", False),
    ("a budget of £30,000", False),  # a value, not a band
])
def test_a_band_holds_the_value_asked(text, holds):
    asked = extract_quantities("a £30,000 contract")[0]
    assert within(asked, text) is holds


def test_a_chinese_band_holds_the_value_asked():
    asked = extract_quantities("一笔3万元的采购")[0]
    assert within(asked, "1万元至5万元的，由分管领导审批")
    assert not within(asked, "5万元以上的，由总经理审批") and not within(asked, "不超过2万元的，由部门负责人审批")


def test_the_quantities_of_a_text_are_shared_and_cannot_be_changed():
    import pydantic

    found = extract_quantities("报销比例为90%")
    with pytest.raises(pydantic.ValidationError):
        found[0].value = 80.0  # the next reader of the same text gets the same objects
    found.clear()  # the list is the caller's own
    assert [q.value for q in extract_quantities("报销比例为90%")] == [90.0]


@pytest.mark.parametrize(("fine", "coarse", "rounds"), [
    ("3.62万亿元", "3.6万亿元", True),   # a report rounds a large figure to its multiplier
    ("47.6万辆", "48万辆", True),
    ("3.62万亿元", "3.7万亿元", False),  # rounded, but not from this figure
    ("3.6万亿元", "3.62万亿元", False),  # the coarse one is not a rounding of the precise one
    ("1.5米", "2米", False),            # written out in full: exact
    ("620元", "600元", False),
])
def test_a_large_figure_written_with_a_multiplier_is_rounded(fine, coarse, rounds):
    assert rounds_to(extract_quantities(fine)[0], extract_quantities(coarse)[0]) is rounds


@pytest.mark.parametrize(("value", "bound", "sentence", "held"), [
    ("63.75亿元", "60亿元", "旅游收入首次突破60亿元", True),
    ("236万辆", "200万辆", "全年销量超过200万辆", True),
    ("58.4亿元", "60亿元", "票房近60亿元", True),
    ("48.2亿元", "60亿元", "旅游收入首次突破60亿元", False),  # below the bound
    ("63.75亿元", "60亿元", "旅游收入为60亿元", False),        # a figure, no bound
    ("1.5米", "2米", "使用不超过2米的牵引绳", False),           # a limit in rule text is exact
])
def test_a_large_figure_stated_as_a_bound_holds_the_figures_within_it(value, bound, sentence, held):
    assert bounded_by(extract_quantities(value)[0], extract_quantities(bound)[0], sentence) is held


@pytest.mark.parametrize(("text", "kind", "value", "unit"), [
    # an approximate figure ("3000余人", "100多名") is still a figure, read at its stated number
    ("活动共吸引市民3000余人参加", "count", 3000.0, "人"),
    ("现场来了100多名志愿者", "count", 100.0, "人"),
    ("灯会接待游客4万余人次", "count", 40000.0, "人次"),
    ("追回欠薪30余万元", "money", 300000.0, "CNY"),
    ("每人补助一千多元", "money", 1000.0, "CNY"),
    ("线路全长20余公里", "number", 20.0, "km"),
    ("工期延长了10多天", "duration", 10.0, "day"),
])
def test_an_approximate_figure_is_read_at_its_stated_number(text, kind, value, unit):
    q = _one(text)
    assert (q.kind, q.value, q.unit) == (kind, value, unit)
    assert extract_quantities("其余人员由街道统一安排") == []

