"""How a question asks decides what answers it: "几点到几点" asks hours of the day (and two
versions' hours are a conflict), "能不能" asks whether (it says "not" of nothing), "哪几类" asks
which ones (not how many), "多大" asks like "多少", "一共" asks a total, "how many days of paid
study leave" asks of one kind of leave, and "which tools" is answered by the list under "The
following … are approved." A sentence of another document does not join an answer only because
it repeats a verb of the question; versions stating a number in a unit the quantity reader does
not know still disagree, and so do versions saying how often in other periods (每年 / 每季度); of
two changes in one clause, the conflict named is the one asked about. "Length" asks how long only
of something that lasts (a password's length is a number of characters). "一棵树" is a count
and a tree, and "几株" is answered by the count of trees, not by the fine per tree.
The documents and questions are written for the test."""

from __future__ import annotations

import pytest

from agentic_rag import Engine
from agentic_rag.agents.reasoner.question import analyze, measured_kind, scene, split_asks
from agentic_rag.text.quantities import CLOCK_TIME
from agentic_rag.text.terms import content_terms
from tests.ingest.helpers import engine_over

PARKS_2020 = """枫溪市公园管理条例

（2020年3月1日枫溪市第十六届人民代表大会常务委员会第二十次会议通过）

第一条　为了加强公园管理，保护公园资源，制定本条例。

第六条　公园每日六时至二十二时向游客开放。

第七条　公园每天需要延长开放时间举办活动的，应当提前三日向社会公告。

第七条之一　禁止携带宠物进入园内游乐设施区域。

第八条　公园内的设施分为以下三类：游乐设施；健身设施；休憩设施。

第九条　售卖亭不得设在公园主干道上。

第十条　公园管理机构接到游客投诉后，应当在三日内答复。
"""

PARKS_2024 = """枫溪市人民代表大会常务委员会关于修改《枫溪市公园管理条例》的决定

（2024年5月20日枫溪市第十七届人民代表大会常务委员会第十二次会议通过）

枫溪市第十七届人民代表大会常务委员会第十二次会议决定对《枫溪市公园管理条例》作如下修改：

一、将第六条中的“六时至二十二时”修改为“五时至二十三时”。

二、将第七条中的“三日”修改为“五日”。

本决定自2024年7月1日起施行。
"""

NEWS = """枫溪半程马拉松开跑

枫溪日报　2025年4月7日

本报讯　4月6日早上7时，2025枫溪半程马拉松在枫溪体育场鸣枪开跑，8000名跑者沿溪岸奔跑，最终抵达枫溪湿地公园。

本届赛事由枫溪市体育局主办，共设半程马拉松和迷你跑两个项目。
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    eng = engine_over(tmp_path_factory.mktemp("forms"), {"枫溪市公园管理条例_2020.txt": PARKS_2020,
                                                         "枫溪市人大常委会关于修改公园管理条例的决定_2024.txt": PARKS_2024,
                                                         "枫溪半程马拉松开跑.txt": NEWS})
    yield eng
    eng.close()


def _answer(folder, files: dict[str, str], question: str):
    """The answer to ``question`` from a fresh engine over ``files``."""
    eng = engine_over(folder, files)
    try:
        return eng.ask(question)
    finally:
        eng.close()


def test_hours_of_the_day_answer_a_question_asking_from_what_hour_to_what_hour(engine: Engine):
    answer = engine.ask("枫溪的公园每天几点到几点开放？")
    assert answer.status == "answered", answer.text
    assert "五时至二十三时" in answer.text
    # the amendment changed the hours: the two versions are named; the three and five days of an
    # unrelated clause of the same amendment are not what was asked
    assert [sorted(v.value for v in c.values) for c in answer.conflicts] == [["五时至二十三时", "六时至二十二时"]], \
        answer.text
    assert "五日" not in answer.text


def test_a_verb_asked_as_x_not_x_asks_whether_and_negates_nothing(engine: Engine):
    answer = engine.ask("宠物能不能带进公园的游乐设施区域？")
    assert answer.status == "answered", answer.text
    assert "禁止携带宠物" in answer.text
    assert [t.text for t in content_terms("宠物能不能带进游乐设施区域")] == ["宠物", "游乐", "设施", "区域"]


def test_which_kinds_asks_for_the_kinds_not_their_number(engine: Engine):
    assert analyze("公园里的设施分为哪几类？").answer_type == "list"
    assert analyze("公园里的设施一共分几类？").answer_type == "number"
    answer = engine.ask("公园里的设施分为哪几类？")
    assert answer.status == "answered", answer.text
    assert "游乐设施；健身设施；休憩设施" in answer.text


def test_how_big_and_how_fast_ask_like_how_much():
    assert split_asks("湿地公园的保护范围有多大？门票多少钱？") == ["湿地公园的保护范围有多大", "门票多少钱"]
    # the clause that asks nothing sets the scene: 电驴 there is the rider's word, not the thing asked
    assert scene("在非机动车道上骑电驴，最快能跑多快？") == (["在非机动车道上骑电驴"], ["最快能跑多快"])


def test_another_documents_sentence_does_not_join_for_a_verb_of_the_question(engine: Engine):
    answer = engine.ask("这次半程马拉松的起点设在哪里？")
    assert answer.status == "answered", answer.text
    assert "枫溪体育场" in answer.text
    assert "售卖亭" not in answer.text  # "不得设在公园主干道上" shares only 设在 with the question


@pytest.mark.parametrize(("text", "clock"), [
    ("每日七时至二十四时", True), ("晚上10点以后", True), ("opens at 8:30", True), ("closes at 10pm", True),
    ("二十四小时服务电话", False), ("以下三点意见", False), ("一时难以判断", False), ("提前三日报告", False),
])
def test_a_time_of_day_is_told_from_durations_and_other_uses_of_the_same_characters(text: str, clock: bool):
    assert bool(CLOCK_TIME.search(text)) is clock


CARER_POLICY = """Tamsworth Carers' Leave Policy (2025)

1. Scope
1.1 This policy applies to all employees of Tamsworth Instruments.

2. Carers' leave
2.1 Employees may take up to 5 days of paid carers' leave in each leave year to look after a dependant.
2.2 Carers' leave is requested from the line manager at least one day in advance where possible.
"""


def test_an_english_question_about_another_kind_of_the_thing_the_documents_speak_of_abstains(tmp_path):
    eng = engine_over(tmp_path, {"tamsworth-carers-leave-2025.md": CARER_POLICY})
    try:
        assert measured_kind("How many days of paid study leave can I take?") == ("study", "leave")
        answer = eng.ask("How many days of paid study leave can a Tamsworth employee take each year?")
        assert answer.status == "abstained", answer.text
        assert "study leave" in answer.text
        answer = eng.ask("How many days of paid carers' leave can a Tamsworth employee take each year?")
        assert answer.status == "answered", answer.text
        assert "5 days" in answer.text
    finally:
        eng.close()


TOOLS_POLICY = """---
title: Harwick Design Software Policy
version: "2.0"
issued: 2025-03-01
---

# Harwick Design Software Policy

## 1. Scope
1.1 This policy applies to every designer at Harwick Design.

## Appendix B. Approved Drawing Tools

The following drawing tools are approved for client work. Client files may be opened only in the first two.

- Inkvale Studio
- Plotwise CAD
- Sketchmere (concept sketches only)
"""


def test_the_items_under_a_the_following_line_answer_a_which_question(tmp_path):
    answer = _answer(tmp_path, {"harwick-software-2025.md": TOOLS_POLICY},
                     "Which drawing tools can designers use for client work?")
    assert answer.status == "answered", answer.text
    for tool in ("Inkvale Studio", "Plotwise CAD", "Sketchmere"):
        assert tool in answer.text, answer.text
    assert answer.text.startswith("The following drawing tools are approved for client work"), answer.text


BOOK_FAIR = """第五届枫溪书展闭幕

枫溪日报　2025年10月9日

本报讯　10月8日，为期六天的第五届枫溪书展在枫溪会展中心闭幕。书展首次开设夜场，10月5日、6日两晚共接待读者1.2万人次。据组委会统计，本届书展累计接待读者18.6万人次，较上届增长约15%。
"""


def test_a_question_asking_a_total_is_answered_by_the_sentence_stating_one(tmp_path):
    answer = _answer(tmp_path, {"第五届枫溪书展闭幕.txt": BOOK_FAIR}, "第五届枫溪书展一共来了多少读者？")
    assert answer.status == "answered", answer.text
    assert answer.text.startswith("据组委会统计，本届书展累计接待读者18.6万人次"), answer.text


def _password_policy(year: int, length: int) -> str:
    return f"""---
title: Quillon Access Policy
issued: {year}-02-01
effective: {year}-03-01
---

# Quillon Access Policy

## 3. Passwords
3.1 Passwords for staff accounts must be at least {length} characters long.
3.2 Passwords are changed after a suspected compromise.
"""


def test_versions_stating_a_number_in_a_unit_the_reader_has_no_rule_for_are_a_conflict(tmp_path):
    # "characters" is no unit the quantity reader knows, and "minimum length" reads as a
    # duration: the two versions still disagree about what was asked, value and unit named
    answer = _answer(tmp_path, {"quillon-access-2023.md": _password_policy(2023, 10),
                                "quillon-access-2025.md": _password_policy(2025, 15)},
                     "What is the minimum length of a Quillon staff password?")
    assert answer.status == "answered", answer.text
    assert answer.text.startswith("Passwords for staff accounts must be at least 15 characters long"), answer.text
    assert [sorted(v.value for v in c.values) for c in answer.conflicts] == [["10 characters", "15 characters"]], \
        answer.text


HEATING_2020 = """枫溪市供热条例

（2020年9月1日枫溪市第十六届人民代表大会常务委员会第二十二次会议通过）

第九条　供热单位接到用户报修后，对一般故障应当在四十八小时内修复；涉及暖气管道破裂漏水等紧急情况的，应当在两小时内到达现场。
"""

HEATING_2024 = """枫溪市人民代表大会常务委员会关于修改《枫溪市供热条例》的决定

（2024年9月1日枫溪市第十七届人民代表大会常务委员会第十五次会议通过）

一、将第九条修改为：“供热单位接到用户报修后，对一般故障应当在二十四小时内修复；涉及暖气管道破裂漏水等紧急情况的，应当在一小时内到达现场。”

本决定自2024年10月1日起施行。
"""


def test_of_two_changed_values_in_one_clause_the_conflict_named_is_the_one_asked_about(tmp_path):
    answer = _answer(tmp_path, {"枫溪市供热条例_2020.txt": HEATING_2020,
                                "枫溪市人大常委会关于修改供热条例的决定_2024.txt": HEATING_2024},
                     "暖气管子爆了漏水，供热公司最晚多久要赶到？")
    assert answer.status == "answered", answer.text
    assert [sorted(v.value for v in c.values) for c in answer.conflicts][:1] == [["一小时", "两小时"]], \
        answer.text


TANKS_2019 = """枫溪市二次供水管理办法

（2019年6月1日枫溪市人民政府令第12号公布）

第八条　二次供水设施的管理单位应当对水箱进行清洗消毒，每年不少于一次。
"""

TANKS_2024 = """枫溪市人民政府关于修改《枫溪市二次供水管理办法》的决定

（2024年6月1日枫溪市人民政府令第30号公布）

一、将第八条中的“每年不少于一次”修改为“每季度不少于一次”。

本决定自2024年7月1日起施行。
"""


def test_versions_that_differ_in_how_often_name_the_two_periods(tmp_path):
    answer = _answer(tmp_path, {"枫溪市二次供水管理办法_2019.txt": TANKS_2019,
                                "枫溪市人民政府关于修改二次供水管理办法的决定_2024.txt": TANKS_2024},
                     "楼里的水箱现在多久要清洗消毒一次？")
    assert answer.status == "answered", answer.text
    assert answer.conflicts, answer.text
    conflict = answer.conflicts[0]
    assert {v.value for v in conflict.values} == {"每年", "每季度"}, answer.text
    # the newer decision's period prevails
    assert next(v.value for v in conflict.values if v.chunk_id == conflict.winner) == "每季度", answer.text


WIFI = """---
title: Guest Wi-Fi Policy
effective_date: 2025-02-01
---
# Guest Wi-Fi Policy

## 2. Guest network password

2.1 The guest network password is replaced every 30 days by the IT service desk.

2.2 The guest network password must be at least 16 characters long.
"""


@pytest.mark.parametrize(("question", "says"), [
    ("What is the minimum guest network password length?", "16 characters"),
    ("How long is the guest network password kept before it is replaced?", "30 days"),
])
def test_length_asks_how_long_only_of_something_that_lasts(tmp_path, question, says):
    # a password's length is a number of characters, not a span of time: the sentence stating
    # one answers, not the one stating "30 days"
    answer = _answer(tmp_path / "docs", {"wifi.md": WIFI}, question)
    assert answer.status == "answered", answer.text
    assert says in answer.sentences[0].text, answer.text


BRIDGES = """岑川市古桥保护办法

（2021年5月10日岑川市人民政府令第17号公布）

第一条　为了加强古桥保护，制定本办法。

第二十条　建成一百年以上的古桥实行一级保护；建成五十年以上不满一百年的古桥实行二级保护。

第二十一条　古桥的保护范围为桥体外缘向外十五米。

第二十二条　市文物主管部门每三年组织开展一次古桥普查。
"""


def test_each_part_of_a_two_part_question_gets_the_sentence_about_it(tmp_path):
    # the second part asks how often (a span of time); the first asks how large, and neither the
    # survey's three years nor the ages of the protection grades answer it
    answer = _answer(tmp_path / "docs", {"bridges.txt": BRIDGES},
                     "岑川市古桥的保护范围是多大？市文物主管部门多久组织一次古桥普查？")
    assert answer.status == "answered", answer.text
    assert "十五米" in answer.sentences[0].text, answer.text
    assert any("每三年" in s.text for s in answer.sentences), answer.text


LEAVE = """---
title: Holiday Policy
effective_date: 2025-01-01
---
# Holiday Policy

## 3. Time off

3.1 Moving house: 1 working day at full pay once per leave year.

3.2 Full-time employees are entitled to 28 working days of paid annual leave in each leave year.
"""


def test_the_unit_a_question_counts_in_is_no_value_it_states(tmp_path):
    # "how many days" names the unit of the answer: "28 working days" is a value the question
    # does not state, as much as "1 working day" is
    answer = _answer(tmp_path / "docs", {"holiday.md": LEAVE},
                     "How many days of paid holiday does a full-time employee get per year?")
    assert answer.status == "answered", answer.text
    assert "28 working days" in answer.sentences[0].text, answer.text


GREENING = """柳川市树木保护条例

第七条　确需迁移或者砍伐树木的，应当经区绿化主管部门批准，并按照迁移或者砍伐一株补植两株的标准，在当年种植季节内补植。

第十五条　违反本条例第七条规定，擅自砍伐树木的，由区绿化主管部门责令限期补植，并按照每株二千元处以罚款。
"""


def test_a_count_asked_of_one_thing_is_answered_by_the_count_not_the_fine(tmp_path) -> None:
    # 一棵树 is a count and a tree, not a word the regulation must write; 几株 asks a count,
    # which 补植两株 states and the fine per tree does not
    answer = _answer(tmp_path, {"柳川市树木保护条例.txt": GREENING}, "砍了一棵树，要补植几株？")
    assert answer.status == "answered"
    assert "两株" in answer.sentences[0].text


KIT_2023 = """---
title: Home Working Standard
version: "1.0"
effective_date: 2023-01-01
---

# Home Working Standard

## 2. Equipment

2.1 The Company provides a laptop and two monitors. A one-off set-up payment of GBP 150 is made on request.
"""

KIT_2025 = (KIT_2023.replace('version: "1.0"', 'version: "2.0"').replace("2023-01-01", "2025-01-01")
            .replace("GBP 150", "GBP 300"))


def test_how_many_of_a_thing_carries_no_disagreement_about_another_thing(tmp_path) -> None:
    # "how many monitors": the monitors are the matter, even as the class of the answer; the two
    # versions' set-up payments disagree in the same clause, about something not asked
    answer = _answer(tmp_path, {"home-working-2023.md": KIT_2023, "home-working-2025.md": KIT_2025},
                     "How many monitors do I get?")
    assert answer.status == "answered"
    assert "two monitors" in answer.text
    assert "GBP" not in answer.text and not answer.conflicts


CLAIMS_EN = """# Expense Claims

4.1 Claims must be submitted within 20 days of the purchase.

4.2 Approved claims are paid with the next monthly payroll.
"""

CLAIMS_ZH = """报销管理规定

第十条 报销申请应当在费用发生后二十日内提交。

第十一条 审核通过的报销款随下月工资一并发放。
"""


@pytest.mark.parametrize(("files", "question", "says"), [
    ({"expense-claims.md": CLAIMS_EN}, "When are approved claims paid?", "next monthly payroll"),
    ({"报销管理规定.txt": CLAIMS_ZH}, "审核通过的报销款什么时候发放？", "随下月工资"),
])
def test_a_time_tied_to_the_pay_cycle_answers_when(tmp_path, files, question: str, says: str) -> None:
    # "with the next monthly payroll" tells when as a date would; the filing deadline beside it
    # is a span of days for another act
    answer = _answer(tmp_path, files, question)
    assert answer.status == "answered"
    assert says in answer.sentences[0].text


@pytest.mark.parametrize(("question", "first", "other"), [
    ("What was the set-up payment before the change?", "GBP 150", "GBP 300"),
    ("How much is the set-up payment?", "GBP 300", "GBP 150"),
])
def test_a_question_for_the_value_before_a_change_is_answered_by_the_older_version(
        tmp_path, question: str, first: str, other: str) -> None:
    answer = _answer(tmp_path, {"home-working-2023.md": KIT_2023, "home-working-2025.md": KIT_2025}, question)
    assert answer.status == "answered"
    assert first in answer.sentences[0].text
    # the other version is named in the conflict, which the asked one wins
    conflict = answer.conflicts[0]
    assert first in conflict.values[0].value and other in conflict.values[1].value


def test_a_chinese_question_for_the_rule_before_its_amendment():
    from agentic_rag.agents.reasoner.question import ASKS_FORMER

    assert ASKS_FORMER.search("修改前砍一棵树要补植几株？") and ASKS_FORMER.search("原来的标准是多少？")
    assert not ASKS_FORMER.search("修改后的标准是多少？") and not ASKS_FORMER.search("What is the limit now?")
