"""Conflicts in prose and in unit-less values: names, places, bare numbers; scoped to the question."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from agentic_rag.agents.reasoner.conflicts import aligned_conflicts, value_differences
from agentic_rag.agents.reasoner import Reasoner
from agentic_rag.types import Chunk, Evidence, RouteDecision

TODAY = dt.date(2025, 1, 1)


def passage(doc: str, text: str, *, title: str = "", published: dt.date | None = None,
            status: str = "active", clause: str | None = None, language: str = "en") -> Chunk:
    return Chunk(chunk_id=f"{doc}:p:0", doc_id=doc, ord=0, text=text, title=title, clause=clause,
                 publish_date=published, status=status, language=language, span=(0, len(text)))


def ask(question: str, *chunks: Chunk, lang: str = "en"):
    evidence = [Evidence(chunk=c, score=1.0 - i * 0.05, rank=i + 1, legs=["bm25"]) for i, c in enumerate(chunks)]
    route = RouteDecision(question=question, query=question, language=lang)
    return Reasoner(today=TODAY).reason(question, route, evidence)


def differences(a: str, b: str) -> list[tuple[str, str]]:
    return [(a[x:y], b[u:v]) for (x, y), (u, v) in value_differences(a, b)]


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("Marta Kowal won the 2022 Harbour Poetry Prize for her debut.",
     "Lena Brandt won the 2022 Harbour Poetry Prize for her debut.", [("Marta Kowal", "Lena Brandt")]),
    ("The summit was held in Porto, Portugal in late spring.",
     "The summit was held in Lyon, France in late spring.", [("Porto, Portugal", "Lyon, France")]),
    ("青溪杯围棋赛的冠军是林晓川，他在决赛中执黑取胜。",
     "青溪杯围棋赛的冠军是赵明远，他在决赛中执黑取胜。", [("林晓川", "赵明远")]),
    ("该园区共有48个泊位，全部对外开放。", "该园区共有148个泊位，全部对外开放。", [("48", "148")]),
    ("The 2020 race was won by Jonas Vingaard ahead of the field.",
     "The 2020 race was won by Tadej Pogačar ahead of the field.", [("Jonas Vingaard", "Tadej Pogačar")]),
    ("新款平板搭载天玑9200芯片，续航更长。", "新款平板搭载天玑8100芯片，续航更长。", [("天玑9200", "天玑8100")]),
])
def test_two_versions_of_a_statement_differ_in_one_value(a, b, expected):
    assert differences(a, b) == expected


@pytest.mark.parametrize(("a", "b"), [
    # another year: another edition of the event, both may be true
    ("Marta Kowal won the 2021 Harbour Poetry Prize.", "Lena Brandt won the 2022 Harbour Poetry Prize."),
    # a change of wording (a verb), not of value
    ("The committee approved the budget on Monday.", "The committee rejected the budget on Monday."),
    # unrelated sentences
    ("The library opens at nine.", "Parking is free for visitors with a permit."),
    # only the datelines differ: when each report was written
    ("Mar 3, 2021 ... The bridge reopened to traffic after repairs.",
     "Apr 9, 2022 ... The bridge reopened to traffic after repairs."),
    # where one excerpt was cut off, or a search snippet's date stamp, is not another value
    ("The festival drew 86,000 visitors over the three days in Harbour City.",
     "The festival drew 86, ... visitors over the three days in Harbour City."),
    ("The final was won by Lena Brandt of Harbour City after a long match.",
     "The final was won by Lena Br ... after a long match."),
    ("Sep 18, 2019 ... 9月17日，北京冬奥会吉祥物在首钢冰球馆正式揭开面纱。",
     "新华社北京9月17日电 9月17日，北京冬奥会吉祥物在首钢冰球馆正式揭开面纱。"),
    # who reported it, in the dateline or the byline, is not what the report says
    ("新华社北京3月4日电 昨日，青溪大桥恢复通车，过桥费维持10元不变。",
     "中新网3月4日电 昨日，青溪大桥恢复通车，过桥费维持10元不变。"),
    ("江州日报 昨日，青溪大桥恢复通车，过桥费维持10元不变。", "客户端 江州新闻 昨日，青溪大桥恢复通车，过桥费维持10元不变。"),
    ("Mar 3, 2021 昨日，青溪大桥恢复通车，过桥费维持10元不变。", "（记者 林晓川）昨日，青溪大桥恢复通车，过桥费维持10元不变。"),
    # a stretch running across a clause is not one value
    ("今年全市新增就业12万人，比上年增加3万人，就业形势稳定。",
     "今年全市新增就业12万人，失业人员再就业4万人，困难人员就业1万人，就业形势稳定。"),
    # one amount in other units and other words around it: the same figure, not another value
    ("据统计，年末全市共有常住居民2.35亿人，比上年增加12万人。",
     "据统计，年末全市常住人口23500万人，比上年增加12万人。"),
])
def test_no_value_difference(a, b):
    assert differences(a, b) == []


def test_a_narrower_name_is_no_other_value():
    # two acts defining their own term (the ingest adds defined terms to the dictionary, so the
    # longer one is one word): a narrower or broader name for the same thing, not another value
    from agentic_rag.text.tokenize import add_terms

    add_terms(["跨区通勤"])
    assert differences("本细则所称跨区通勤，包括市内跨区通勤和跨市通勤。", "本细则所称通勤，包括市内跨区通勤和跨市通勤。") == []


def test_three_pairs_of_reports_make_one_conflict_with_both_values():
    reports = [
        ("Marta Kowal won the 2022 Harbour Poetry Prize for her debut.", "a"),
        ("Lena Brandt won the 2022 Harbour Poetry Prize for her debut.", "b"),
        ("The jury praised Marta Kowal, winner of the 2022 Harbour Poetry Prize.", "c"),
        ("The jury praised Lena Brandt, winner of the 2022 Harbour Poetry Prize.", "d"),
    ]
    groups = aligned_conflicts([(text, passage(doc, text), i) for i, (text, doc) in enumerate(reports)])
    assert len(groups) == 1
    assert sorted(f.quantity.raw for f in groups[0]) == ["Lena Brandt", "Lena Brandt", "Marta Kowal", "Marta Kowal"]


def test_counterfactual_prose_is_reported_as_undecided_with_both_names():
    a = ask("Who won the 2022 Harbour Poetry Prize?",
            passage("r1", "Marta Kowal won the 2022 Harbour Poetry Prize for her debut collection."),
            passage("r2", "Lena Brandt won the 2022 Harbour Poetry Prize for her debut collection."))
    assert len(a.conflicts) == 1
    c = a.conflicts[0]
    assert {v.value for v in c.values} == {"Marta Kowal", "Lena Brandt"}
    assert c.rule == "undecided"
    assert a.status == "needs_review"
    assert "Marta Kowal" in a.text and "Lena Brandt" in a.text
    assert "provision" not in a.text


def test_an_undecided_conflict_names_each_value_once_with_all_its_sources():
    a = ask("青溪杯围棋赛的冠军是谁？",
            passage("n1", "青溪杯围棋赛的冠军是林晓川，他在决赛中执黑取胜。", language="zh"),
            passage("n2", "青溪杯围棋赛的冠军是赵明远，他在决赛中执黑取胜。", language="zh"),
            passage("n3", "青溪杯围棋赛的冠军是林晓川，他在决赛中执黑取胜。", language="zh"),
            lang="zh")
    [conflict] = [s.text for s in a.sentences if "不一致" in s.text]
    assert conflict.count("林晓川") == 1 and conflict.count("赵明远") == 1, conflict
    lin = conflict[conflict.index("林晓川"):].split("；")[0]
    assert len(re.findall(r"\[\d+\]", lin)) == 2, conflict  # both sources that say 林晓川 are cited with it


def test_one_disagreement_found_twice_is_stated_once():
    # the same two figures, once as amounts and once in sentences that differ only in them
    a = ask("青岚市议会有多少个议席？",
            passage("a", "青岚市议会共有48个议席，经2020年的选举产生。", language="zh"),
            passage("b", "青岚市议会共有148个议席，经2020年的选举产生。", language="zh"),
            passage("c", "青岚市议会选举投票结束，全会48个议席全部产生，其中直选20席。", language="zh"),
            passage("d", "青岚市议会选举投票结束，全会148个议席全部产生，其中直选20席。", language="zh"), lang="zh")
    assert len(a.conflicts) == 1, [[v.value for v in c.values] for c in a.conflicts]
    assert a.text.count("不一致") == 1


def test_chinese_news_conflict_names_sources_not_rules():
    a = ask("青溪杯围棋赛的冠军是谁？",
            passage("n1", "青溪杯围棋赛的冠军是林晓川，他在决赛中执黑取胜。", language="zh"),
            passage("n2", "青溪杯围棋赛的冠军是赵明远，他在决赛中执黑取胜。", language="zh"), lang="zh")
    assert [sorted(v.value for v in c.values) for c in a.conflicts] == [["林晓川", "赵明远"]]
    assert "规定" not in a.text
    assert "林晓川" in a.text and "赵明远" in a.text


def test_allowance_for_all_trips_and_for_domestic_trips_conflict_the_newer_wins():
    old = passage("tp-old", "The daily meal allowance is EUR 50 for all trips.", title="Travel Rules",
                  published=dt.date(2022, 2, 1), clause="5.2")
    new = passage("tp-new", "The daily meal allowance is EUR 60 for domestic trips.", title="Travel Rules",
                  published=dt.date(2024, 2, 1), clause="5.2")
    a = ask("What is the daily meal allowance for a domestic trip?", new, old)
    assert len(a.conflicts) == 1
    c = a.conflicts[0]
    assert {v.value for v in c.values} == {"EUR 50", "EUR 60"}
    assert c.winner == new.chunk_id
    assert a.text.startswith("The daily meal allowance is EUR 60 for domestic trips")


def test_a_yes_no_answer_carries_no_conflict_from_a_neighbouring_sentence():
    # the second sentence names the question's words too, and its value changed between versions
    text_new = ("Unused annual leave may be carried over into the next year. "
                "Carried-over unused annual leave expires after 90 days.")
    text_old = ("Unused annual leave may be carried over into the next year. "
                "Carried-over unused annual leave expires after 60 days.")
    a = ask("Can unused annual leave be carried over?",
            passage("hb24", text_new, title="Leave Rules", published=dt.date(2024, 1, 1), clause="3"),
            passage("hb22", text_old, title="Leave Rules", published=dt.date(2022, 1, 1), clause="3"))
    assert a.conflicts == []
    assert a.text.startswith("Unused annual leave may be carried over")
    assert "60 days" not in a.text


def test_a_question_for_a_date_carries_no_conflict_about_a_place():
    a = ask("When does the Lakeside Film Week open?",
            passage("f1", "The Lakeside Film Week opens on 12 May 2023 at the Capitol Cinema."),
            passage("f2", "The Lakeside Film Week opens on 12 May 2023 at the Regent Cinema."))
    assert a.conflicts == []
    assert "12 May 2023" in a.text


def test_different_years_in_one_report_are_not_a_conflict():
    a = ask("2023年和2024年青溪马拉松分别在哪天举行？",
            passage("m1", "2023年青溪马拉松于3月12日鸣枪开跑。", language="zh"),
            passage("m2", "2024年青溪马拉松于3月17日鸣枪开跑。", language="zh"), lang="zh")
    assert a.conflicts == []


def test_two_release_dates_of_different_years_are_one_disagreement():
    # the year of each date is the value disputed, not a different period
    a = ask("When was Lanternfall Tactics released?",
            passage("r1", "Lanternfall Tactics was released on March 3, 2019 for consoles."),
            passage("r2", "Lanternfall Tactics was released on April 9, 2015 for consoles."))
    assert len(a.conflicts) == 1
    assert "March 3, 2019" in a.text and "April 9, 2015" in a.text


@pytest.mark.parametrize("excerpt", [
    "The game was released on March 3, 2019 in Europe and Japan ...",
    "Sep 2, 2020 ... It was released on March 3, 2019 in Europe and Japan, with a port later ...",
])
def test_an_untitled_excerpt_naming_no_subject_answers_for_the_subject_it_was_found_for(excerpt):
    a = ask("When was Lanternfall Tactics released?", passage("r1", excerpt))
    assert a.status == "answered"
    assert "March 3, 2019" in a.text


def test_an_excerpt_naming_another_subject_or_under_another_title_does_not():
    named = ask("When was Lanternfall Tactics released?",
                passage("r1", "Brightmoor Racing was released on March 3, 2019 in Europe and Japan ..."))
    titled = ask("When was Lanternfall Tactics released?",
                 passage("r1", "The game was released on March 3, 2019 in Europe and Japan.",
                         title="Brightmoor Racing"))
    assert named.status == "abstained" and titled.status == "abstained"


def test_a_name_shortened_to_its_last_words_is_the_name_asked_but_one_that_only_ends_alike_is_not():
    short = ask("When was Harbour Lights Requiem released?",
                passage("r1", "Requiem was released on 3 May 2019 for consoles, after a long delay."))
    other = ask("When was Harbour Lights Requiem released?",
                passage("r1", "Dawn Requiem was released on 3 May 2019 for consoles, after a long delay."))
    assert short.status == "answered" and "3 May 2019" in short.text
    assert other.status == "abstained"


def test_two_things_the_question_asks_about_one_by_one_are_no_disagreement():
    a = ask("白沙杯男子组和女子组冠军分别是谁？",
            passage("r1", "经过三轮较量，该选手最终夺得白沙杯男子组冠军。", language="zh"),
            passage("r2", "经过三轮较量，该选手最终夺得白沙杯女子组冠军。", language="zh"), lang="zh")
    assert not a.conflicts
    assert "不一致" not in a.text


def test_an_amount_question_is_not_answered_by_disagreeing_dates_or_rates():
    # when each report was written, and growth rates the question does not ask for, are no
    # disagreement about the revenue
    a = ask("青岚公司2022年前两季度营收分别是多少？",
            passage("r1", "本季度，青岚公司的总营收达50亿元，同比增长16%。", language="zh"),
            passage("r2", "新华社讯 8月26日消息，青岚公司的总营收达50亿元，同比增长26%。", language="zh"), lang="zh")
    assert "50亿元" in a.text
    assert not a.conflicts, a.text


def test_two_reports_differing_only_in_when_they_were_written_do_not_disagree_on_an_amount():
    from types import SimpleNamespace

    from agentic_rag.agents.reasoner.core import _about_question
    from agentic_rag.agents.reasoner.question import analyze

    a = "本季度，青岚公司的总营收达509亿元，同比增长16.4%"
    b = "新浪科技讯 8月26日下午消息，青岚公司的总营收达509亿元，同比增长16.4%"
    groups = aligned_conflicts([(b, passage("r2", b, language="zh"), 0), (a, passage("r1", a, language="zh"), 1)])
    question = "青岚公司第二季度营收是多少？"
    plan = SimpleNamespace(wants=analyze(question))
    # a dateline is no value (no group), or a group about when it was said, not the amount asked
    assert not any(_about_question(group, plan, question, [], []) for group in groups)


@pytest.mark.parametrize(("a", "b"), [
    ("参保人员在社区门诊发生的费用，年度起付标准为600元。", "参保人员在社区门诊发生的费用，年度最高支付限额为4000元。"),
    ("The taxi allowance is 40 euros per trip.", "The parking allowance is 15 euros per trip."),
])
def test_two_sentences_naming_another_thing_before_their_values_state_two_things(a, b):
    # alike but for what the value is of: each states its own value, neither contradicts the other
    assert differences(a, b) == []


def test_a_reworded_party_elsewhere_in_a_clause_leaves_its_changed_value_a_disagreement():
    a = "外出遛犬时，应当由成年人使用长度不超过2米的犬绳。"
    b = "外出遛犬时，应当由具有完全民事行为能力的人使用长度不超过1.5米的犬绳。"
    assert differences(a, b) == [("2米", "1.5米")]


def test_a_clause_around_a_number_is_no_value_two_reports_disagree_on():
    # what follows the shared words differs, and each side holds a number, but neither is an
    # amount stated in the other's place: a clause with its own verb
    a = "青岚马拉松今年共有报名人数2万人，比赛分为4个组别。"
    b = "青岚马拉松今年共有报名人数2万人，其中300人来自外省。"
    assert differences(a, b) == []
    # an amount in the place of another still is one
    assert differences("据统计，青岚县全年粮食总产量为52万吨。", "据统计，青岚县全年粮食总产量为48万吨。") == [("52万吨", "48万吨")]


def test_a_news_answer_carries_no_disagreement_about_another_figure_of_the_same_company():
    # the reports agree on the revenue asked for and differ on the profit, which is not asked;
    # 营收 is a word the segmenter does not know (it splits it into characters)
    reports = [passage("a", "青岚公司发布年报，2023年全年营收为520亿元，同比增长12%。", language="zh"),
               passage("b", "青岚公司发布年报，2023年全年营收为520亿元，净利润为80亿元。", language="zh"),
               passage("c", "青岚公司发布年报，2023年全年净利润为46亿元，同比增长12%。", language="zh")]
    for question in ("青岚公司2023年全年营收是多少？", "青岚公司2023年营收多少？"):
        answer = ask(question, *reports, lang="zh")
        assert answer.status == "answered", answer.text
        assert "520亿元" in answer.sentences[0].text
        assert answer.conflicts == [] and "46亿元" not in answer.text, answer.text


@pytest.mark.parametrize("question", ["2023年华为和小米的出货量各是多少？", "华为和小米2023年的出货量分别是多少？"])
def test_values_of_the_two_things_a_question_lists_are_no_disagreement(question):
    # untitled reports, one company each: "131万台" and "186万台" answer the two parts
    reports = [passage("a", "从全年来看，华为的出货量超越了百万大关，2023年出货量达131万台，增长了40%。", language="zh"),
               passage("b", "放眼全年，华为在2023年总共出货131万台，同比增长40%。", language="zh"),
               passage("c", "小米2023年全年出货量达到186万台，同比增长208%。", language="zh")]
    answer = ask(question, *reports, lang="zh")
    assert answer.status == "answered", answer.text
    assert "131万台" in answer.text and "186万台" in answer.text
    assert answer.conflicts == [] and "不一致" not in answer.text, answer.text


@pytest.mark.parametrize(("question", "first", "second", "apart"), [
    # one report rounds the other's figure
    ("2023年全省进出口总值是多少？", "海关总署发布数据，2023年全省进出口总值3.6万亿元，创历史新高。",
     "海关总署发布数据，2023年全省进出口总值3.62万亿元，创历史新高。",
     "海关总署发布数据，2023年全省进出口总值3.81万亿元，创历史新高。"),
    # one report states a bound the other's figure is within
    ("今年春节假期全市旅游收入是多少？", "据统计，今年春节假期全市旅游收入首次突破60亿元，同比明显增长。",
     "据统计，今年春节假期全市旅游收入达63.75亿元，同比明显增长。",
     "据统计，今年春节假期全市旅游收入达48.2亿元，同比明显增长。"),
])
def test_reports_wording_one_large_figure_apart_do_not_disagree(question, first, second, apart):
    reports = [passage("a", first, language="zh"), passage("b", second, language="zh")]
    answer = ask(question, *reports, lang="zh")
    assert answer.status == "answered", answer.text
    assert answer.conflicts == [] and "不一致" not in answer.text, answer.text
    # a figure neither rounding nor within the bound still disagrees
    assert ask(question, *reports, passage("c", apart, language="zh"), lang="zh").conflicts
