"""Which penalty, and the clause as amended: a penalty clause is about the act the clause it names
forbids ("违反本办法第八条规定的"), an amending item follows whatever clause it changes into
the evidence, an amending act's penalty for an item it adds is found from that item, and a
clause an item rewrites is quoted as rewritten. The acts are written for this test."""

from __future__ import annotations

import pytest

from agentic_rag import Engine
from agentic_rag.text.clauses import breached_clauses
from tests.ingest.helpers import engine_over

# clauses about the boats that state no hours and no penalty fill a keyword ranking first
FILLER = "\n\n".join(
    f"第{n}条　漪湖游船运营期间，游船经营者应当每天做好{i}号码头游船的{topic}工作。"
    for i, (n, topic) in enumerate(zip(("十", "十一", "十二", "十三", "十四", "十五"),
                                       ("清洁", "检修", "巡查", "调度", "登记", "消毒")), 1))
ACT = f"""漪湖游船管理办法

（2020年4月8日漪湖市人民政府令第12号公布）

第一条　为了规范漪湖游船经营活动，保障乘客安全，制定本办法。

第三条　市交通运输部门负责漪湖游船的监督管理。

第五条　漪湖游船每日八时至十八时运营，其他时间游船不得载客。

第六条　游船经营者应当对客运游船每两年至少进行一次全面检验，对非客运游船每年至少进行一次全面检验。

第七条　游船码头的安全保护范围为码头边线向外二十米。

第八条　乘坐游船不得有下列行为：
（一）在船舱内吸烟；
（二）擅自开启救生设备；
（三）向湖中抛弃杂物。

第九条　游船经营者应当按照核定载客人数为每名乘客配备救生衣。

{FILLER}

第二十条　违反本办法第五条规定，游船在运营时间以外载客的，由市交通运输部门责令改正，处二千元以上一万元以下罚款。

第二十二条　违反本办法第七条规定，损害游船码头设施的，由市交通运输部门责令改正，处五百元罚款。

第二十一条　违反本办法第八条规定的，由市交通运输部门责令改正，处五十元以上二百元以下罚款。
"""
AMENDMENT = """漪湖市人民政府关于修改《漪湖游船管理办法》的决定

（2024年3月12日漪湖市人民政府令第40号公布）

一、将第五条中的“八时至十八时”修改为“九时至十七时”。

二、在第三条中增加一款，作为第二款：“游船码头禁止垂钓。”

三、在第二十一条中增加一款，作为第二款：“违反本办法第三条第二款规定的，处一百元罚款。”

四、将第六条修改为：“游船经营者应当对客运游船每年至少进行一次全面检验，对非客运游船每半年至少进行一次全面检验。”

五、将第二十二条修改为：“违反本办法第七条规定，损害游船码头设施的，由市交通运输部门责令改正，处一千元罚款。”

本决定自2024年5月1日起施行。
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    with engine_over(tmp_path_factory.mktemp("boats"), {"漪湖游船管理办法_2020.txt": ACT,
                                                        "漪湖市关于修改游船管理办法的决定_2024.txt": AMENDMENT},
                     retrieval={"k": 8}) as eng:
        yield eng


def test_the_clauses_a_penalty_names_as_breached_are_read_from_it():
    assert breached_clauses("违反本条例第八条、第九条、第十五条规定燃放的，处罚款") == ["8", "9", "15"]
    assert breached_clauses("违反本办法第十二条第二款规定的，处一百元罚款") == ["12"]
    assert breached_clauses("依照本办法第八条的规定办理") == []


def test_the_penalty_is_the_one_for_the_act_the_question_names(engine: Engine):
    # both penalties name only clause numbers; the act (smoking in the cabin) is in 第八条
    answer = engine.ask("在漪湖坐游船时在船舱里吸烟，会被罚多少钱？")
    assert answer.status != "abstained", answer.text
    assert answer.citations[0].clause == "第二十一条", answer.text
    assert "五十元以上二百元以下" in answer.text, answer.text
    assert "二千元" not in answer.text, answer.text


def test_a_clause_found_low_in_the_ranking_comes_with_the_item_that_amends_it(engine: Engine):
    _, evidence = engine.retrieve("漪湖游船每天几点到几点运营？")
    assert len(evidence) <= 8
    labels = [e.chunk.clause for e in evidence]
    assert "第五条" in labels and "一" in labels, labels
    answer = engine.ask("漪湖游船每天几点到几点运营？")
    assert answer.status != "abstained", answer.text
    assert "九时至十七时" in answer.text, answer.text
    assert any(c.winner and "九时至十七时" in next(v.value for v in c.values if v.chunk_id == c.winner)
               for c in answer.conflicts), answer.conflicts


def test_the_penalty_for_an_item_an_amendment_adds_is_found_from_that_item(engine: Engine):
    answer = engine.ask("在漪湖的游船码头钓鱼，被抓到会怎么罚？")
    assert answer.status != "abstained", answer.text
    assert "一百元罚款" in answer.text, answer.text


def test_a_clause_an_item_rewrites_is_quoted_as_rewritten(engine: Engine):
    # 第六条 sets two intervals, one for 客运游船 and one for 非客运游船; the decision rewrites it
    answer = engine.ask("漪湖的客运游船多久要做一次全面检验？")
    assert answer.status != "abstained", answer.text
    assert "客运游船每年至少进行一次" in answer.text, answer.text
    assert "每两年" not in answer.text, answer.text  # the wording the decision replaced
    # the interval for 非客运游船 is not what was asked: no disagreement over it is named
    assert not any("半年" in v.value for c in answer.conflicts for v in c.values), answer.conflicts


def test_a_penalty_is_no_answer_to_a_question_about_the_duty_it_names(engine: Engine):
    # 第二十二条 punishes a breach of 第七条; asked what 第七条 sets, the penalty's fine is not
    # the answer, however much of 第七条 it stands for
    answer = engine.ask("漪湖游船码头的安全保护范围有多大？")
    assert answer.status != "abstained", answer.text
    assert answer.citations[0].clause == "第七条", answer.text
    assert "二十米" in answer.text and "五百元" not in answer.text, answer.text
    assert not answer.conflicts, answer.conflicts  # the decision's new fine is another matter


@pytest.mark.parametrize(("k", "clauses"), [(1, ["第六条"]), (2, ["第六条", "四"])])
def test_with_room_for_one_the_top_hit_stays_and_with_two_its_item_follows(tmp_path, k, clauses):
    with engine_over(tmp_path / "docs", {"漪湖游船管理办法_2020.txt": ACT,
                                         "漪湖市关于修改游船管理办法的决定_2024.txt": AMENDMENT},
                     retrieval={"k": k}) as eng:
        _, evidence = eng.retrieve("漪湖游船的全面检验多久做一次？")
    assert [e.chunk.clause for e in evidence] == clauses
