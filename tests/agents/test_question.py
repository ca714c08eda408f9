"""Question analysis: the answer type a question asks for, and whether a sentence can carry it."""

from __future__ import annotations

import pytest

from agentic_rag.agents.reasoner.question import (
    analyze,
    asked_count_unit,
    asked_meaning,
    carries,
    defines,
    fills_slot,
    lists_items,
    names_new,
    new_quantity_kinds,
    quotes_new_name,
    restates_question,
    scene,
    split_asks,
)


@pytest.mark.parametrize("question, kind", [
    ("新版考勤制度从哪一天开始执行？", "date"),
    ("年度科技论坛的举办时间", "date"),
    ("When does the spring enrolment window close?", "date"),
    ("What is the release date of the new firmware?", "date"),
    ("去年全省新能源汽车产量是多少？", "number"),
    ("这次暴雨造成的受灾人数", "number"),
    ("How many interns joined the lab last summer?", "number"),
    ("What was the museum's annual revenue?", "number"),
    ("本届艺术节的总策划是谁", "person"),
    ("Who chaired the review panel?", "person"),
    ("哪个部门负责审核差旅报销？", "organization"),
    ("Which agency issues the export licence?", "organization"),
    ("今年马拉松的起点在哪里？", "place"),
    ("Where is the annual shareholder meeting held?", "place"),
    ("报销需要提交哪些材料？", "list"),
    ("What are the documents needed for a visa application?", "list"),
    ("试用期员工是否可以申请年假？", "yes_no"),
    ("Can contractors access the staff canteen?", "yes_no"),
    ("什么是弹性工作制？", "definition"),
    ("How do I request a replacement badge?", "definition"),
    ("Which bridge opened first, the north crossing or the harbour span?", "comparison"),
    # "the first" is an ordinal of the thing asked, not "which came first"
    ("Who was the first conductor of the orchestra which toured Brellin?", "person"),
    # "where" after a noun opens a relative clause: the question asks what its head asks
    ("What is the name of the lighthouse in the county where Harlow Brook rises?", "name"),
    ("What county borders the county where Osterby Mill stands?", "place"),
    ("The ferry leaves from where?", "place"),
    # a work is asked for by its title
    ("去年青岚电影节的最佳影片是哪部电影？", "name"),
    # the penalty for an act: the clause that states the duty is no answer
    ("在绿地里烧烤会被怎么处罚？", "sanction"),
    ("施工单位夜间违规作业会受到什么处罚", "sanction"),
    ("What is the penalty for missing the filing deadline?", "sanction"),
    ("在绿地里烧烤要罚多少钱？", "number"),  # a sum of money is a number
    # "when" inside a clause is a conjunction; opening the question or a clause of it, it asks
    ("Which couriers may be used when the depot van is booked?", "list"),
    ("Who signs the form when the line manager is away?", "person"),
    ("If the train is late, when must I tell my supervisor?", "date"),
])
def test_the_answer_type_comes_from_the_question_wording(question: str, kind: str) -> None:
    assert analyze(question).answer_type == kind


def test_a_duration_question_is_not_a_date_question() -> None:
    asked = analyze("病假审批一般需要多长时间？")
    assert asked.answer_type == "number" and "duration" in asked.kinds


def test_yes_no_questions_do_not_ask_for_a_value() -> None:
    assert not analyze("加班费的计算比例会调整吗？").quantity
    assert analyze("加班费的计算比例是多少？").quantity


@pytest.mark.parametrize("kind, sentence, expected", [
    ("date", "The committee will meet again on 12 March.", True),
    ("date", "新馆将于明年5月对外开放。", True),
    ("date", "The committee will review every proposal carefully.", False),
    ("date", "新馆的设计融合了传统园林元素。", False),
    # a time told by the event it is tied to
    ("date", "The licence ends as of the date such proceedings are filed.", True),
    ("date", "The licence ends if such proceedings are filed.", False),
    ("number", "共有三百余名志愿者参与服务。", True),
    ("number", "志愿者们在现场维持秩序。", False),
    ("person", "The project was led by Marta Ionescu.", True),
    ("person", "本次展览由王建国担任总策展人。", True),
    ("person", "展览分为四个单元，展出作品百余件。", False),
    ("place", "The summit takes place in Lisbon this year.", True),
    ("place", "决赛将在江南体育中心举行。", True),
    ("place", "决赛将延期举行。", False),
    ("definition", "任何句子都可以回答定义类问题。", True),
])
def test_a_sentence_that_cannot_carry_the_type_is_recognised(kind: str, sentence: str, expected: bool) -> None:
    assert carries(kind, sentence) is expected


@pytest.mark.parametrize("question, kinds", [
    ("Up to what trip length does the insurance apply?", {"duration"}),
    ("What is the maximum duration of a secondment?", {"duration"}),
    ("How much notice must a contractor give?", {"duration"}),
])
def test_a_question_asking_for_a_length_of_time_wants_a_duration(question, kinds) -> None:
    asked = analyze(question)
    assert asked.quantity and kinds <= asked.kinds


@pytest.mark.parametrize("question, kind", [
    # a rate per unit is a sum of money for each unit ...
    ("What rate per mile is paid for a private van?", "money"),
    ("What is the hourly rate for weekend cover?", "money"),
    # ... a rate alone a share
    ("What is the employer's contribution rate?", "percent"),
])
def test_a_rate_per_unit_asks_for_money(question: str, kind: str) -> None:
    asked = analyze(question)
    assert asked.quantity and kind in asked.kinds and asked.kinds & {"money", "percent"} == {kind}


@pytest.mark.parametrize("question", ["Forklift drivers must be how old at least?", "多大年纪可以独自乘坐索道？",
                                      "领取补贴的年龄上限是多少？"])
def test_an_age_question_wants_an_age_not_another_number(question) -> None:
    asked = analyze(question)
    assert asked.quantity and "age" in asked.kinds
    assert "age" in new_quantity_kinds("Drivers must be at least 21 years old.", question) | \
        new_quantity_kinds("乘客应当年满十四周岁", question)
    assert "age" not in new_quantity_kinds("The cabin seats 12 people.", question)


def test_what_kinds_of_asks_for_a_list() -> None:
    assert analyze("What kinds of gifts must be declared to compliance?").enumeration


@pytest.mark.parametrize("question, listed", [
    ("Which permits does a food stall need?", True),
    ("In which districts is the levy charged?", True),
    ("Who founded the guild which runs the Tollbridge fair?", False),  # a relative "which" asks nothing
    # a "which" before a noun in the singular asks for one thing
    ("In which pay period is the allowance added?", False),
    ("Which ferry leaves first in the morning?", False),
    ("Which parking zones are free on Sundays?", True),               # the noun before the verb
    ("Which kinds of waste go in the brown bin?", True),
])
def test_which_asks_for_items_only_where_it_asks(question, listed) -> None:
    assert analyze(question).enumeration is listed


def test_enumerations_are_recognised_as_lists() -> None:
    assert lists_items("Countries requiring a visa letter: India, Peru, Ghana")
    assert lists_items("可以通过网站、App或者线下窗口办理")
    assert not lists_items("Each request is reviewed within a week")


def test_the_question_own_title_in_title_marks_is_no_new_name() -> None:
    question = "《山海谣》的作曲是谁"
    assert not names_new("为《山海谣》寻找一位作曲，是剧组开机前最难的事。", question)
    assert names_new("《山海谣》的作曲由青年音乐人林晓舟担任。", question)
    assert names_new("剧组另请了《北风》的原班人马。", question)  # a title the question does not give


def test_a_person_is_not_named_by_a_title_or_a_phrase_in_quotes() -> None:
    question = "纪录片《归途》的摄影是谁"
    assert not names_new("拍摄《归途》时，“慢下来”成了剧组的口头禅。", question, "person")
    assert not names_new("剧组此前拍过《北风》。", question, "person")
    assert names_new("《归途》在青川县取景。", question, "person")  # a place may be a team's name
    assert names_new("《归途》的摄影由周砚秋担任。", question, "person")


@pytest.mark.parametrize("question, unit", [
    ("这趟夜班大巴上有多少人？", "人"),
    ("How many people signed the petition?", "人"),
    ("一年最多能补办几次？", "次"),
    ("全市有几家定点药店", "家"),
    ("补贴多少钱？", None),
    ("试用期几个月？", None),
    # a count of people asked without a measure word
    ("今年马拉松的报名人数是多少", "人"),
    ("本届运动会志愿者数量", "人"),
    ("全省公交车数量", None),
    # "多少" with a noun for people and no measure word
    ("今年灯会一共来了多少游客？", "人"),
    ("开幕式上有多少观众", "人"),
    ("需要缴纳多少生活垃圾处理费", None),
])
def test_the_unit_a_how_many_question_counts_in(question: str, unit: str | None) -> None:
    assert asked_count_unit(question) == unit


def test_a_count_of_other_things_is_not_the_count_asked() -> None:
    question = "这趟夜班大巴上有多少人？"
    # (凌晨两点 is an hour of the day)
    assert new_quantity_kinds("凌晨两点，一辆夜班大巴在山路侧翻。", question) == {"other_count", "time"}
    assert new_quantity_kinds("车上共有38名乘客。", question) == {"count"}
    # a count the quantity reader has no unit for is still a count of something else
    question = "这所中学今年招收了多少名新生？"
    assert not carries("number", "今年的新生来自12个县区，生源质量稳定。", question)
    assert carries("number", "今年共招收新生860人。", question)


def test_a_count_of_people_is_not_answered_by_an_age_or_a_distance() -> None:
    question = "本届运动会志愿者数量"
    assert not carries("number", "21岁的志愿者小周负责10公里赛段的补给。", question)
    assert carries("number", "本届运动会共招募志愿者1260名。", question)


def test_a_countdown_in_quotation_marks_is_no_name() -> None:
    question = "今年读书节的口号是什么"
    assert not quotes_new_name("主持人带领全场倒数“3、2、1”，揭晓了读书节口号。", question)
    assert quotes_new_name("读书节口号为“书香满城”。", question)


def test_an_economic_total_is_not_answered_by_its_growth_rate() -> None:
    assert not carries("number", "去年全县GDP增速为6.2%，高于全省平均水平。", "青川县去年的GDP是多少")
    assert carries("number", "去年全县GDP为318亿元。", "青川县去年的GDP是多少")
    assert carries("number", "去年全县GDP增速为6.2%。", "青川县去年的GDP增长了多少")


def test_a_sentence_that_asks_the_question_again_answers_nothing() -> None:
    question = "这款路由器用的是什么芯片"
    assert restates_question("很多读者想知道这款路由器用的是什么芯片，下面一起来看。", question)
    assert not carries("other", "以上就是这款路由器是什么芯片的全部内容。", question)
    assert carries("other", "这款路由器采用联发科MT7981芯片。", question)
    assert not restates_question("几乎所有型号都支持WiFi 6。", "这款路由器有几根天线")
    assert not restates_question("这段城墙谁都知道有多重要。", "这段城墙是谁修的")


def test_a_time_zone_is_no_place() -> None:
    question = "这次发布会在什么地方举办"
    assert not carries("place", "发布会定于北京时间9日晚8点开始。", question)
    assert carries("place", "发布会在杭州国际博览中心举办。", question)


@pytest.mark.parametrize("question, sentence, fills", [
    ("年度颁奖礼将在哪里举行？", "颁奖礼在西湖国际会议中心举行，门票已售罄。", True),
    ("年度颁奖礼将在哪里举行？", "颁奖礼将于12月3日晚举行。", False),  # a date in the frame is no place
    ("年度颁奖礼将在哪里举行？", "颁奖礼周六（12月3日）在西湖国际会议中心（West Lake Center）举行", True),
    ("这款耳机的售价是多少", "新款耳机售价399元", True),
    ("这款耳机的售价是多少", "耳机售价一直是用户关心的话题，", False),  # nothing new in the frame
    ("这部纪录片的导演是谁？", "这部纪录片的导演为周晓岚", True),
    ("谁执导了这部纪录片？", "该片由周晓岚执导", True),
    ("全县去年招聘了多少名教师？", "全县去年共招聘了126名教师", True),
    # a role the question ends on is filled by the name right after it, listed in no dictionary
    ("这部纪录片的导演", "该片导演韦青近日在首映礼上说，拍摄用了三年", True),
    ("这部纪录片的编剧是谁？", "编剧邹岚溪表示，剧本改了七稿", True),
    ("这部纪录片的编剧是谁？", "面对平台的质疑以及编剧的个人想法，他没有让步", False),
    ("这部纪录片的导演", "导演也透露，续集已在筹备", False),
    ("这届比赛的主教练是谁", "主教练和队员们一起观看了录像", False),
    ("这部纪录片的导演是谁？", "由韦青摄影、邹岚导演的这部纪录片今晚首播", True),  # the name before the role
    ("谁是本届运动会的第一棒火炬手", "他把火炬交给了第一棒火炬手——韩立秋", True),
    ("谁是本届运动会的第一棒火炬手", "今年62岁的火炬手代表说，这是莫大的荣誉", False),
    ("How much does the ticket cost?", "The ticket costs 20 dollars.", False),  # Chinese frames only
    # "X是哪个部门" read backwards: the answer before the copula, the question's words after it
    ("全市供水管理的主管部门是哪个部门？", "市水务局是本市供水管理的主管部门，负责组织实施本条例。", True),
    ("全市供水管理的主管部门是哪个部门？", "市水务局应当会同有关部门编制供水规划。", False),
])
def test_a_sentence_fills_the_place_of_the_question_word(question: str, sentence: str, fills: bool) -> None:
    assert fills_slot(sentence, question) is fills


def test_a_search_result_s_date_stamp_is_no_date() -> None:
    question = "青溪大桥什么时候恢复通车？"
    assert not carries("date", "Mar 3, 2023 ... 青溪大桥恢复通车后，过桥费维持不变。", question)
    assert not carries("date", "2 days ago ... 青溪大桥恢复通车后，过桥费维持不变。", question)
    assert carries("date", "Mar 3, 2023 ... 青溪大桥于3月2日恢复通车。", question)
    assert new_quantity_kinds("Mar 3, 2023 ... 青溪大桥恢复通车后，过桥费维持不变。", question) == frozenset()


def test_a_bare_year_naming_an_edition_is_no_amount() -> None:
    question = "第二届江州国际龙舟赛有多少支队伍参赛"
    assert not carries("number", "在随后举行的2024江州国际龙舟赛开幕式上，嘉宾为龙舟点睛。", question)
    assert carries("number", "本届比赛共有28支队伍参加。", question)
    assert carries("number", "本届比赛共有队伍2024支。", "今年有多少支队伍报名")


def test_a_count_or_sum_question_does_not_ask_for_a_rate_or_a_period_unless_it_says_so():
    from agentic_rag.agents.reasoner.question import unasked_kind

    assert unasked_kind("2023年星桥汽车的全年营收", "percent")
    assert unasked_kind("How much revenue did Larkspur make in 2023?", "percent")
    assert not unasked_kind("2023年星桥汽车的营收增长了多少？", "percent")
    assert not unasked_kind("2023年星桥汽车的全年营收", "money")
    assert unasked_kind("青岚港的年吞吐量是多少？", "duration")
    assert not unasked_kind("报销比例是多少？", "percent")  # no count or sum asked


def test_a_thousands_separator_does_not_split_a_question():
    from agentic_rag.agents.reasoner.question import split_asks

    assert split_asks("Who approves a £12,500 purchase at Larkspur, and what form goes with it?") == [
        "Who approves a £12,500 purchase at Larkspur", "what form goes with it"]
    assert analyze("Is a 1,200-euro desk allowed?").asks == 1


def test_a_name_after_the_role_asked_carries_the_answer() -> None:
    # 韦青 is in no dictionary: without the role in front of it, nothing marks it as a name
    question = "这部纪录片的导演是谁？"
    assert carries("person", "该片导演韦青近日在首映礼上说", question)
    assert not carries("person", "该片导演近日在首映礼上说", question)



def test_a_work_is_named_in_title_marks_not_in_quotation_marks() -> None:
    question = "今年暑期档票房冠军是哪部电影？"
    assert quotes_new_name("暑期档票房冠军由《山海谣》摘得。", question)
    assert not quotes_new_name("今年堪称“史上最热”暑期档。", question)
    assert quotes_new_name("吉祥物名为“青青”。", "吉祥物叫什么名字？")  # a name is still quoted either way
    assert analyze("这项规定由哪部门负责解释？").answer_type != "name"  # 哪部门 asks for a body


@pytest.mark.parametrize("question, term", [
    ("什么是质押率？", "质押率"),
    ("停车位配比是指什么？", "停车位配比"),
    ("何谓善意取得", "善意取得"),
    ("What is meant by 'qualifying service'?", "qualifying service"),
    ("What does the travel policy mean by a home station?", "home station"),
    ("Define eligible dependant", "eligible dependant"),
])
def test_a_question_for_the_meaning_of_a_term_names_the_term(question: str, term: str) -> None:
    assert asked_meaning(question) == term
    # the term's own words do not turn the question into one for an amount ("质押率" is a rate)
    assert analyze(question).answer_type == "definition"


@pytest.mark.parametrize("question", ["质押率是多少？", "What is the deposit for a home station?",
                                      "停车位配比由谁确定？"])
def test_a_question_for_a_value_of_a_term_does_not_ask_its_meaning(question: str) -> None:
    assert asked_meaning(question) is None


def test_a_sentence_defines_the_term_it_opens_not_one_it_mentions() -> None:
    assert defines("质押率是指贷款金额与质押物价值的比例。", "质押率")
    assert defines("本办法所称质押率，是指贷款金额与质押物价值的比例。", "质押率")
    assert defines("Home station: the office named in the employee's contract.", "home station")
    assert defines("'Home station' means the office named in the contract.", "home station")
    assert not defines("超额质押是指质押物价值超过质押率上限的部分。", "质押率")
    assert not defines("Travel from the home station is reimbursed at cost.", "home station")
    # the defining sentence fills the slot "什么是……" opens; a sentence mentioning the term does not
    assert fills_slot("质押率是指贷款金额与质押物价值的比例。", "什么是质押率？")
    assert not fills_slot("质押率最高不超过百分之七十。", "什么是质押率？")


def test_a_count_of_people_in_person_times_answers_how_many_people_came() -> None:
    question = "今年灯会一共来了多少游客？"
    assert carries("number", "灯会累计接待游客12.6万人次，比上届增加两成。", question)
    assert not carries("number", "为期十天的灯会昨晚在滨江公园闭幕。", question)  # a span is no count


@pytest.mark.parametrize("question, money", [
    ("小区物业每月最多能收多少停车费？", True),
    ("What is the maximum fine the regulator can impose for a late report?", True),
    ("What is the annual fee for a parking permit?", True),
    ("摆摊的商户每年要缴纳多少卫生费？", True),
    ("这所学校今年招收多少学生？", False),
    ("要缴纳多少年社保才能退休？", False),
    ("窗口每天收到多少份申请？", False),
])
def test_a_question_for_a_sum_charged_asks_for_money(question: str, money: bool) -> None:
    from agentic_rag.agents.reasoner.question import asks_money

    assert asks_money(question) is money


def test_a_penalty_question_is_answered_by_a_sentence_stating_a_penalty() -> None:
    question = "在绿地里烧烤会被怎么处罚？"
    assert not carries("sanction", "禁止在公园绿地内烧烤、露营。", question)
    assert carries("sanction", "违反本条例第十二条规定的，由城市管理部门责令改正，处二百元以上一千元以下罚款。", question)
    assert carries("sanction", "Anyone who misses the deadline twice faces disciplinary action.",
                   "What is the penalty for missing the deadline?")



def test_a_body_named_in_the_place_the_question_asks_carries_the_answer() -> None:
    # the question's own words (主管部门) make up the body's name; read backwards, the sentence
    # still names the body that answers
    question = "全市供水管理的主管部门是哪个部门？"
    assert carries("organization", "市城乡建设主管部门是本市供水管理的主管部门。", question)
    assert not carries("organization", "供水管理的主管部门应当公布服务标准。", question)


def test_a_clause_a_sentence_refers_to_is_no_amount() -> None:
    question = "How often does the wardens' equipment check happen?"
    assert not carries("number", "Wardens carry out the equipment checks described in section 3.2.", question)
    assert carries("number", "Each extinguisher is checked monthly by a warden.", question)
    question = "违反规定要罚多少钱？"
    assert not carries("number", "违反本条例第十八条规定的，依照有关法律处理。", question)


@pytest.mark.parametrize("question, kind", [
    ("What is the annual loyalty bonus for warehouse staff?", "number"),
    ("What is the refundable key deposit for a locker?", "number"),
    ("What are the late fees for overdue library books?", "number"),
    ("What is the bonus scheme meant to reward?", "definition"),  # "bonus" qualifies "scheme"
    ("What are the rules on deposits?", "list"),  # a preposition: rules are asked, not a sum
])
def test_a_sum_paid_named_by_its_noun_asks_for_an_amount(question: str, kind: str) -> None:
    assert analyze(question).answer_type == kind


def test_one_of_many_is_no_amount() -> None:
    question = "What is the annual loyalty bonus for warehouse staff?"
    assert not carries("number", "Our warehouse team is one of the most loyal in the region.", question)
    assert carries("number", "Warehouse staff receive a loyalty bonus of one week's pay.", question)


def test_a_length_of_time_is_not_answered_by_a_count_of_times() -> None:
    question = "办完居住登记以后，居住证的有效期是几年？"
    assert not carries("number", "逾期未签注的，有效期自最后一次签注之日起计算。", question)
    assert carries("number", "居住证有效期为五年。", question)
    # unless the question asks for a count as well
    assert carries("number", "每年最多签注两次。", "居住证每年能签注几次？有效期多久？")


def test_a_question_after_its_scene_asks_once_and_yes_or_no() -> None:
    question = "If I book the room and then cancel before the deposit is charged, do I still lose it?"
    asked = analyze(question)
    assert asked.yes_no and asked.asks == 1
    assert split_asks(question) == [question.rstrip("?")]
    # an auxiliary inside a clause states; one that opens a clause asks
    assert analyze("Is the deposit refundable, and when is it returned?").asks == 2


def test_the_amount_of_a_fine_is_answered_by_a_fine() -> None:
    from agentic_rag.agents.reasoner.question import asks_money

    question = "在小区消防通道上停车，罚款是多少？"
    assert asks_money(question)
    # a fee waived or a share of places is a sum, but no fine
    assert not carries("number", "持残疾人专用车标志的机动车在公共停车场停放的，首二小时免收停车费。", question)
    assert not carries("number", "新建停车场应当按照不低于总车位百分之十五的比例设置无障碍车位。", question)
    assert carries("number", "占用消防车通道停放机动车的，处二百元罚款。", question)


def test_a_sentence_that_asks_nothing_sets_the_scene_of_the_question_after_it():
    question = "My scooter was taken from the bike shed. Who do I tell first?"
    assert scene(question) == (["My scooter was taken from the bike shed"], ["Who do I tell first"])
    assert split_asks(question) == ["My scooter was taken from the bike shed, Who do I tell first"]
    # an abbreviation's full stop ends no sentence
    assert scene("Did Mr. Lowe sign it?") == ([], [])
