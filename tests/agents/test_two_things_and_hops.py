"""Questions the Reasoner answers from two passages: about two named things (which comes
first, which has a property, do both have it) and multi-hop chains (the answer is in a passage
about something another passage names). Passages and questions are written for these tests."""

from __future__ import annotations

import re

import pytest

from agentic_rag.agents.reasoner import Reasoner
from agentic_rag.agents.reasoner.comparison import parse
from agentic_rag.agents.reasoner.question import carries
from agentic_rag.types import Chunk, Evidence, RouteDecision


def passage(doc: str, title: str, text: str) -> Chunk:
    return Chunk(chunk_id=f"{doc}:0", doc_id=doc, ord=0, text=text, title=title,
                 span=(0, len(text)), kind="body", language="en")


def ask(question: str, *chunks: Chunk):
    evidence = [Evidence(chunk=c, score=1.0 - i * 0.05, rank=i + 1, legs=["bm25"]) for i, c in enumerate(chunks)]
    route = RouteDecision(question=question, query=question, language="en")
    return Reasoner().reason(question, route, evidence)


ORCHARD = passage("a", "Juniper Lane Quartet", "Juniper Lane Quartet is a folk group from Leeds. "
                  "The quartet was formed in 2004 by two sisters.")
MERIDIAN = passage("b", "Meridian Foxes", "Meridian Foxes is an indie band from Cork. "
                   "The band was formed in 2011 after a college contest.")


def test_which_came_first_names_the_earlier_one_and_cites_both_dates():
    answer = ask("Which group was formed first, Juniper Lane Quartet or Meridian Foxes?", ORCHARD, MERIDIAN)
    assert answer.text.startswith("Juniper Lane Quartet")
    assert "2004" in answer.sentences[0].text and "2011" in answer.sentences[0].text
    assert set(answer.sentences[0].citations) == {"a:0", "b:0"}
    assert all(s.supported for s in answer.sentences)


def test_which_came_later_reverses_the_order():
    answer = ask("Which band was formed later, Juniper Lane Quartet or Meridian Foxes?", ORCHARD, MERIDIAN)
    assert answer.text.startswith("Meridian Foxes")


def test_both_question_says_no_when_one_lacks_the_property():
    answer = ask("Are Juniper Lane Quartet and Meridian Foxes both indie bands?", ORCHARD, MERIDIAN)
    assert answer.text.startswith("No")
    assert len(answer.citations) == 2


def test_both_question_says_yes_when_each_passage_states_it():
    answer = ask("Are Juniper Lane Quartet and Meridian Foxes both from a city?",
                 passage("a", "Juniper Lane Quartet", "Juniper Lane Quartet is a folk group from the city of Leeds."),
                 passage("b", "Meridian Foxes", "Meridian Foxes is an indie band from the city of Cork."))
    assert answer.text.startswith("Yes")


def test_a_question_about_one_thing_is_no_comparison():
    assert parse("What is the hotel limit per night in Tier-1 cities?") is None
    assert parse("Can staff get paid time off to do charity work?") is None
    assert parse("Are Alder Field and Birch Field both in the same state?") is None  # "same" needs two values


def test_the_answer_from_the_second_hop_passage_comes_first_with_its_link():
    walker = passage("p", "Ada Trevelyan", "Ada Trevelyan is a retired long-distance runner. "
                     "She was born in Pellham, a river town, and trained in Ostbury.")
    town = passage("t", "Pellham", "Pellham is a market town on the Wye. "
                   "At the 2016 census, Pellham had a population of 8,412.")
    other = passage("o", "Harrowgate", "Harrowgate is a city in the north. "
                    "At the 2016 census, the city had a population of 51,300.")
    answer = ask("At the 2016 census, what was the population of the town where Ada Trevelyan was born?",
                 walker, other, town)
    assert answer.sentences[0].citations == ["t:0"]
    assert "8,412" in answer.sentences[0].text
    assert any(s.citations == ["p:0"] for s in answer.sentences[1:3])  # the link is cited
    assert "51,300" not in answer.text  # another city's population is no conflict
    assert not answer.conflicts


def test_a_hop_through_a_name_both_passages_give_answers_from_the_second_passage():
    # the journal's passage names the society; the answer's passage, titled otherwise, names
    # the society again and says who chaired it first
    journal = passage("j", "Quarterly of Marsh Ecology", "The Quarterly of Marsh Ecology is a journal "
                      "published by the Northfen Wetland Society since 1962.")
    peat = passage("p", "Peat surveys in the fens", "The first peat surveys were made on foot. "
                   "Edda Marrow, who was the first chair of the Northfen Wetland Society, mapped the bogs in 1931.")
    other = passage("o", "Fen Drainage Board", "The Fen Drainage Board is chaired by Tom Ashby.")
    answer = ask("Who was the first chair of the society which publishes the Quarterly of Marsh Ecology?",
                 journal, other, peat)
    assert "Edda Marrow" in answer.sentences[0].text
    assert any(s.citations == ["j:0"] for s in answer.sentences[1:3])  # the link is cited


def test_the_relation_to_the_next_hop_need_not_be_written_and_names_match_without_accents():
    # "birthplace" is how the question reaches the town, not a word the passages write; the
    # question types "Jonas Vingaard" without the accent the passage writes
    runner = passage("r", "Jonas Vingård", "Jonas Vingård (born 4 May 1931 in Pellham) is a retired runner.")
    town = passage("t", "Rivers of the Marches", "Several rivers cross the Marches. "
                   "The river Wye flows through Pellham on its way to the sea.")
    answer = ask("Which river flows through Jonas Vingard's birthplace?", runner, town)
    assert answer.status == "answered"
    assert "Wye" in answer.text


def test_a_passage_sharing_only_a_place_with_the_first_hop_is_no_next_hop():
    team = passage("t", "Harbour Gulls", "The Harbour Gulls are a netball team in the Coastal Women's League. "
                   "The club is based in Port Ellery, Westmark. The club was formed in 1987.")
    season = passage("s", "2015 Westmark rowing season", "The 2015 Westmark rowing season was the last one "
                     "held on the old course in Westmark.")
    answer = ask("The Coastal Women's League includes the Port Ellery team that was formed in what year?",
                 team, season)
    assert "1987" in answer.sentences[0].text


@pytest.mark.parametrize("question, sentence, expected", [
    ("How many cars did Lumen Motors deliver in 2022?",
     "In the second quarter of 2022 Lumen Motors saw deliveries fall.", False),
    ("Lumen Motors 2022年交付量", "Lumen Motors 2022年第二季度交付量下滑，下半年压力增大", False),
    ("Lumen Motors 2022年交付量", "Lumen Motors 2022年全年交付131万辆", True),
    ("2022年Lumen Motors全球销量是多少？", "Lumen Motors在本地市场的销量占全球销量的34%", False),
    ("Lumen Motors 2022年销量同比增长多少？", "全年销量同比增长14.8%", True),
    ("失业保险金最长能领多久？", "最长可以领取24个月", True),
    # a share is answered by a share, not by a period or a sum
    ("青岚市门诊费用的报销比例是多少？", "报销申请应当在费用发生之日起六十日内提出", False),
    ("青岚市门诊费用的报销比例是多少？", "门诊费用按七成报销，年度最高支付3000元", True),
    ("退休人员的报销比例比在职职工高多少？", "退休人员的报销比例提高5个百分点", True),
    ("What percentage of the fare is refunded?", "Refund requests must be filed within 30 days.", False),
    ("What percentage of the fare is refunded?", "Cancelled trips are refunded at 80 per cent of the fare.", True),
])
def test_an_amount_question_needs_an_amount_of_the_asked_kind(question, sentence, expected):
    from agentic_rag.agents.reasoner.question import analyze

    assert carries(analyze(question).answer_type, sentence, question) is expected


def test_answer_markers_are_well_formed():
    answer = ask("Which group was formed first, Juniper Lane Quartet or Meridian Foxes?", ORCHARD, MERIDIAN)
    for n in {int(m) for m in re.findall(r"\[(\d+)\]", answer.text)}:
        assert 1 <= n <= len(answer.citations)


# -- what a question asks for, read more closely ----------------------------------------------

def zh(doc: str, text: str, *, title: str = "", published=None) -> Chunk:
    return Chunk(chunk_id=f"{doc}:0", doc_id=doc, ord=0, text=text, title=title, span=(0, len(text)),
                 kind="body", language="zh", publish_date=published)


def ask_zh(question: str, *chunks: Chunk, years: list[int] | None = None):
    from agentic_rag.types import Slots

    evidence = [Evidence(chunk=c, score=1.0 - i * 0.05, rank=i + 1, legs=["bm25"]) for i, c in enumerate(chunks)]
    route = RouteDecision(question=question, query=question, language="zh", slots=Slots(years=years or []))
    return Reasoner().reason(question, route, evidence)


@pytest.mark.parametrize("question, text, lang", [
    ("青岚马拉松的终点设在什么地方？", "本届青岚马拉松终点设在滨江湿地公园。", "zh"),
    ("青岚市的养鸽登记由哪个部门负责？", "市公安机关负责养鸽登记和监督检查。", "zh"),
    ("Which countries need an entry letter?", "Holders of passports of Peru, Chile or Ghana need an entry letter.", "en"),
    # the role a "who is the ..." question asks for, which the text says with a verb
    ("Who is the Harbour Poetry Prize winner in 2021?", "Marta Kowal wins the Harbour Poetry Prize for 2021.", "en"),
    ("Who was the director of Lanternfall?", "Lanternfall, directed by Edda Marrow, opened in May.", "en"),
])
def test_the_class_a_question_word_names_is_not_what_the_documents_must_contain(question, text, lang):
    # the text names the place, the office, the countries: never the words 地方, 部门, "countries"
    chunk = zh("r", text, title="青岚") if lang == "zh" else passage("r", "Visitor Rules", text)
    evidence = [Evidence(chunk=chunk, score=1.0, rank=1, legs=["bm25"])]
    route = RouteDecision(question=question, query=question, language=lang)
    plan = Reasoner()._plan(question, route, evidence)
    assert plan.missing == [], [t.text for t in plan.missing]
    assert plan.coverage == 1.0


def test_a_list_is_quoted_whole_and_its_items_are_not_repeated():
    rule = zh("r", "第五条 办理养鸽登记应当提交下列材料：\n（一）养鸽人身份证明；\n（二）鸽舍位置图；\n"
                   "（三）鸽只免疫证明；\n（四）鸽环编号清单。", title="青岚市养鸽管理办法")
    answer = ask_zh("办理养鸽登记需要哪些材料？", rule)
    for item in ("身份证明", "鸽舍位置图", "免疫证明", "鸽环编号清单"):
        assert answer.text.count(item) == 1, answer.text


def test_two_things_joined_by_and_each_get_their_own_sentence():
    a = zh("a", "2023年，星桥汽车全年交付新车42万辆，同比增长18%。", title="星桥汽车年报")
    b = zh("b", "2023年，远帆汽车全年交付新车27万辆，创历史新高。", title="远帆汽车年报")
    answer = ask_zh("2023年星桥汽车和远帆汽车的交付量是多少？", a, b, years=[2023])
    assert "42万辆" in answer.text and "27万辆" in answer.text, answer.text


def test_an_ordinal_is_part_of_what_is_asked():
    from agentic_rag.text.terms import content_terms

    assert "第二棒" in [t.text for t in content_terms("青岚火炬传递的第二棒火炬手是谁？")]
    relay = zh("r", "第一棒火炬手为林远航。随后，火炬交给第二棒火炬手周晓岚，她是本地的游泳冠军。", title="青岚火炬传递")
    assert "周晓岚" in ask_zh("青岚火炬传递的第二棒火炬手是谁？", relay).sentences[0].text


def test_a_sentence_about_another_year_yields_to_the_year_asked():
    stats = zh("s", "2022年青岚市出生率为6.9‰，比上年下降0.4个千分点。2023年青岚市出生率为6.5‰。", title="青岚统计公报")
    answer = ask_zh("2023年青岚市出生率是多少？", stats, years=[2023])
    assert "6.5‰" in answer.sentences[0].text, answer.text


def test_a_year_in_a_titled_name_is_not_the_time_a_sentence_states():
    # “青岚统计年鉴2023” is a publication; the figure beside it is for 2022
    old = zh("o", "“青岚统计年鉴2023”显示，2022年青岚市出生率为6.9‰。", title="年鉴摘要")
    new = zh("n", "青岚市统计局公布，2023年青岚市出生率降至6.5‰。", title="统计快讯")
    answer = ask_zh("2023年青岚市出生率是多少？", old, new, years=[2023])
    assert "6.5‰" in answer.sentences[0].text, answer.text


def test_a_byline_block_run_into_the_first_sentence_leaves_the_sentence():
    page = zh("p", "青岚灯会闭幕  日期：2023-02-26 10:30    来源：青岚日报  　　原标题：青岚灯会闭幕 　　"
                   "记者从市文旅局获悉，为期20天的青岚灯会于2月25日闭幕。灯会期间共接待游客80万人次。",
              title="青岚灯会闭幕")
    answer = ask_zh("青岚灯会什么时候闭幕？", page)
    assert "2月25日" in answer.sentences[0].text, answer.text
    assert "来源" not in answer.sentences[0].text


def test_a_question_of_no_kind_that_joins_kinds_of_answer_gets_a_sentence_for_each():
    # "时间及结果": when, and what came of it
    vote = zh("v", "白沙县第三届县长选举于5月8日在县会堂举行，投票时间为上午9时至11时。", title="选举安排")
    result = zh("r", "点票结果显示，梁思远获得412票，当选第三届县长。", title="选举结果")
    answer = ask_zh("白沙县第三届县长选举时间及结果", vote, result)
    assert "5月8日" in answer.text and "梁思远" in answer.text, answer.text


def test_a_sentence_about_another_ordinal_yields_to_the_one_asked():
    # 第四棒 is another torchbearer than 最后一棒, however well the rest of its sentence matches
    fourth = zh("a", "白沙杯火炬传递启动，第四棒火炬手林晓川接过火炬。", title="白沙杯火炬传递")
    last = zh("b", "最终，最后一棒梁思远点燃主火炬。", title="收官")
    answer = ask_zh("白沙杯火炬传递的最后一棒火炬手是谁？", fourth, last)
    assert "梁思远" in answer.sentences[0].text, answer.text


def test_the_year_a_span_starts_is_not_the_time_a_sentence_states():
    # "1998年以来首位" says who won this year; the year only starts the span
    event = zh("e", "2023年白沙杯围棋赛女子组比赛在青岚市体育馆举行，共有64名棋手参赛。"
                    "林晓川在决赛中击败赵明远，获得白沙杯女子组冠军，成为1998年以来首位获得该项冠军的本地棋手。",
               title="白沙杯快讯")
    answer = ask_zh("2023年白沙杯女子组冠军是谁？", event, years=[2023])
    assert "林晓川" in answer.sentences[0].text, answer.text


def test_what_something_is_called_is_answered_with_the_quoted_name():
    news = zh("n", "青岚灯会的吉祥物由本地美术学院的林远航和设计团队完成，经评审委员会确认。"
                   "青岚灯会评审最终选定了设计团队精心设计的“岚小灯”作为吉祥物。", title="青岚灯会")
    answer = ask_zh("青岚灯会的吉祥物叫什么？", news)
    assert "岚小灯" in answer.sentences[0].text, answer.text


def test_an_english_quoted_title_does_not_count_as_the_name_asked():
    # English quotes mostly give the title of a work: no answer to "the name of the band"
    quoted = passage("q", "Tomas Rell", 'Tomas Rell of the pop band starred in "Quiet Fields".')
    plain = passage("p", "Tomas Rell", "Tomas Rell of the pop band starred in Quiet Fields.")
    question = "What is the name of the pop band of Tomas Rell?"
    evidence = [Evidence(chunk=c, score=1.0, rank=1, legs=["bm25"]) for c in (quoted, plain)]
    route = RouteDecision(question=question, query=question, language="en")
    reasoner = Reasoner()
    plan = reasoner._plan(question, route, evidence)
    scores = {s.chunk.doc_id: s.score for s in reasoner._candidates(evidence, plan, route, "en")}
    assert abs(scores["q"] - scores["p"]) < 0.04, scores  # the quote bonus would add 0.075


def test_a_proper_name_answers_where_before_a_place_word():
    news = zh("n", "首趟青岚号货运班列开往港口城市。首趟青岚号货运班列从滨江国际铁路港发出，运往河内。",
              title="青岚号班列")
    assert "滨江" in ask_zh("首趟青岚号货运班列从哪里发出？", news).sentences[0].text


def test_a_deadline_question_is_answered_with_the_date():
    rule = passage("r", "Leave Policy", "Up to 5 unused days may be carried over to the next year. "
                   "Carried-over days must be used by 31 May; days not used by then lapse.")
    assert "31 May" in ask("What is the deadline for using carried-over days?", rule).sentences[0].text


def test_a_what_is_meant_question_is_answered_with_the_definition():
    rule = passage("r", "Leave Policy", "Requests for leave are filed in the HR portal. "
                   "\"Rest day\" means a day on which the employee is not scheduled to work.")
    answer = ask("What does the policy mean by a rest day?", rule)
    assert answer.sentences[0].text.startswith('"Rest day" means'), answer.text


def test_a_life_span_in_parentheses_says_when_someone_was_born():
    award = passage("a", "Harbour Medal", "The 1998 Harbour Medal was awarded to Ilse Marwood for her bridge designs.")
    person = passage("p", "Ilse Marwood", "Ilse Marwood (3 May 1931 – 9 October 2010) was a structural engineer.")
    answer = ask("In what year was the engineer who received the 1998 Harbour Medal born?", award, person)
    assert answer.status != "abstained"
    assert "1931" in answer.text


def test_a_list_under_a_heading_answers_which_ones():
    text = "## Annex B. Regions where field trips need a risk assessment\n- Highlands\n- Coastal islands\n- Border zones"
    annex = Chunk(chunk_id="a:0", doc_id="a", ord=0, text=text, title="Field Trip Rules", clause="Annex B",
                  path=["Annex B. Regions where field trips need a risk assessment"], span=(0, len(text)),
                  kind="body", language="en")
    answer = ask("Which regions need a risk assessment for field trips?", annex)
    assert answer.sentences[0].text.startswith("Annex B. Regions where field trips need a risk assessment: Highlands")
    assert "Border zones" in answer.sentences[0].text


def test_a_scraped_page_header_is_no_answer():
    page = zh("w", "欢迎来到青岚车讯 首页 登录 / 注册 热点推荐　来源：车讯网      作者：王一      编辑：李二\n"
                   "2023年，星桥汽车全年销量同比增长12.5%，达到42万辆。", title="青岚车讯")
    answer = ask_zh("星桥汽车2023年销量同比增长多少？", page, years=[2023])
    assert answer.sentences[0].text.startswith("2023年，星桥汽车全年销量同比增长12.5%"), answer.text


def test_a_value_for_part_of_the_year_yields_to_the_whole_year():
    report = zh("r", "2023年上半年，星桥汽车交付新车19万辆。2023年，星桥汽车全年交付新车42万辆。", title="星桥汽车年报")
    assert "42万辆" in ask_zh("2023年星桥汽车交付了多少辆车？", report, years=[2023]).sentences[0].text


def test_two_joined_years_are_two_sub_questions():
    a = zh("a", "2022年，青岚油田油气产量达到3010万吨油当量，同比增长4%。", title="青岚油田年报2022")
    b = zh("b", "青岚油田2023年油气产量为3180万吨油当量，再创新高。", title="青岚油田年报2023")
    answer = ask_zh("青岚油田2022年和2023年的油气产量分别是多少？", a, b, years=[2022, 2023])
    assert "3010万吨" in answer.text and "3180万吨" in answer.text, answer.text


def test_two_words_of_one_kind_joined_inside_a_phrase_are_the_items():
    # 女子 / 男子 are what is joined, the words around them are asked of both; a sentence about
    # the men's race is no answer for the women's, however many of the shared words it has
    men = zh("m1", "青岚冬运会速滑男子500米金牌由周晨曦获得。", title="冬运会快讯")
    final = zh("m2", "青岚冬运会男子500米速滑决赛在冰上中心举行，周晨曦夺冠。", title="冬运会快讯二")
    women = zh("w", "林小舟成为首位在冬运会夺得速滑金牌的女选手。", title="冬运会人物")
    answer = ask_zh("青岚冬运会女子和男子500米速滑金牌分别是谁？", men, final, women)
    assert "林小舟" in answer.text and "周晨曦" in answer.text, answer.text


def test_what_follows_de_is_asked_of_every_listed_item():
    from agentic_rag.agents.reasoner.core import _listed_items

    assert _listed_items("青岚冬运会和冬残运会的开幕日期分别是什么时候？") == ["青岚冬运会", "冬残运会"]


def test_the_second_item_keeps_the_words_after_it_when_the_first_names_a_kind_of_answer():
    from agentic_rag.agents.reasoner.core import _coordinated

    assert _coordinated("青岚音乐节的日期和学生票价格是多少？") == ["日期", "学生票价格"]
    assert _coordinated("青岚渡轮停航的时间和地点？") == ["时间", "地点"]


def test_a_documents_title_joined_by_and_lists_no_items():
    from agentic_rag.agents.reasoner.core import _coordinated

    assert _coordinated("Under the Noise and Nuisance Policy, how many days' notice do contractors give?") == []
    assert _coordinated("How much did Larkspur and Fenwick pay out in 2024?") == ["Larkspur", "Fenwick"]


def test_a_report_about_another_edition_answers_nothing_about_the_edition_asked():
    expo = zh("e", "开幕当天，共有42个项目现场签约，签约总金额31.2亿元。", title="第四届青岚国际花卉博览会开幕")
    race = zh("r", "本届龙舟赛男女全程冠军各获得奖金5万元，赛事总奖金为60万元。", title="第二届青岚湖龙舟赛落幕")
    answer = ask_zh("第三届青岚国际花卉博览会的签约总金额是多少？", expo, race)
    assert answer.status == "abstained" and "第三届" in answer.text, answer.text
    answer = ask_zh("第四届青岚国际花卉博览会的签约总金额是多少？", expo, race)
    assert answer.text.startswith("开幕当天，共有42个项目现场签约，签约总金额31.2亿元"), answer.text


def test_each_listed_item_is_answered_by_a_sentence_that_names_it():
    # the rule about every gold medal shares more words with the question, but names neither
    rule = zh("t", "青岚运动会上获得金牌的运动员，每枚金牌奖励2万元。", title="青岚运动会奖励办法")
    north = zh("n", "北岭代表团本届摘得9金4银。", title="北岭代表团")
    south = zh("s", "南湾代表团共收获14金，位列榜首。", title="南湾代表团")
    answer = ask_zh("青岚运动会北岭和南湾分别获得多少金牌？", rule, north, south)
    assert "9金" in answer.sentences[0].text and "14金" in answer.sentences[1].text, answer.text


def test_a_rule_for_a_group_the_question_does_not_name_yields_to_the_general_rule():
    special = passage("a", "Larkspur hybrid working", "Trainees may work from home on one day per week with their "
                      "mentor's consent. Contractors are not covered by this policy.")
    general = passage("b", "Larkspur hybrid working", "Employees may work from home on up to two days per week.")
    answer = ask("How many days per week may I work from home at Larkspur?", special, general)
    assert answer.sentences[0].text.startswith("Employees may work from home on up to two days"), answer.text


def test_a_case_is_named_by_things_not_by_how_an_action_is_worded():
    from agentic_rag.agents.reasoner.core import _unasked_condition
    from agentic_rag.agents.vocabulary import TextCover

    asked = TextCover("多大年纪才可以开摩托艇下水？")
    # 驾驶 / 进入 / 行驶 are how the riding is worded; the case names only 摩托艇 and 水域
    assert not _unasked_condition("驾驶摩托艇进入水域行驶的，驾驶人应当年满十八周岁。", asked)
    # a case of other things (a club, a licence, a race) is a special case the question does not name
    assert _unasked_condition("俱乐部会员持竞赛执照参加比赛的，驾驶人应当年满十六周岁。", asked)


def test_each_is_no_part_of_what_the_documents_lack():
    rule = zh("r", "第三条 高温津贴标准为每人每月300元。", title="青岚市高温津贴发放办法")
    answer = ask_zh("养蜂每个月能领多少补贴？", rule)
    assert answer.status == "abstained" and answer.gaps == ["未找到关于养蜂的规定"], answer.gaps


def test_a_sentence_that_opens_with_a_decimal_keeps_its_number():
    report = zh("r", "1.8万名跑者参加了青岚半程马拉松，人数创历届新高。", title="青岚半程马拉松开跑")
    answer = ask_zh("青岚半程马拉松有多少名跑者参加？", report)
    assert answer.sentences[0].text.startswith("1.8万名跑者"), answer.text



def test_named_events_whose_titles_open_with_a_year_are_separate_subjects_not_a_conflict():
    # four storms, each passage reporting its own toll: no disagreement to state, whether the
    # title opens with a word ("Ice storm of February 1974") or with the year ("1990 Harrowgate ice storm")
    storms = [
        passage("a", "Early-March 1961 ice storm sequence", "The Early-March 1961 ice storm sequence was a series of "
                "winter storms over the Carrow Valley. The sequence was most notable due to a storm that hit the "
                "crowded centre of Ostbury, killing 14 people and injuring 90 or more."),
        passage("b", "Ice storm of February 1974", "The ice storm of February 1974 struck the northern plains. "
                "Downing 300 power lines, the storm killed at least 9 people, including 5 in Pellham alone."),
        passage("c", "1987 Carrow Valley ice storm", "The 1987 Carrow Valley ice storm was a severe winter event. "
                "At least 12 freezing squalls struck the valley, killing more than 40 people and injuring 300."),
        passage("d", "1990 Harrowgate ice storm", "The 1990 Harrowgate ice storm hit the coast in March. "
                "Six people died at Harrowgate and at least 20 were killed in the county by this and two other storms."),
    ]
    answer = ask("Which of the two ice storms killed the most people?", *storms)
    assert not answer.conflicts
    assert "Sources differ" not in answer.text
