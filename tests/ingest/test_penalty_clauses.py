"""A penalty clause names the act it punishes only by the number of the clause that forbids it
("违反本条例第六条第一项至第三项规定的，……处五十元罚款"): asked what a breach costs, the
Retriever brings the penalty clause (as amended) beside the clause that forbids the act, and the
answer states the penalty, not the duty. The acts are written for this test."""

from __future__ import annotations

import pytest

from agentic_rag import Engine
from tests.ingest.helpers import engine_over

# clauses about shared bicycles that do not state a penalty fill a keyword ranking first
FILLER = "\n\n".join(
    f"第{n}条　共享单车运营企业应当做好第{i}类停放区域的共享单车{topic}工作。"
    for i, (n, topic) in enumerate(zip("七八九十", ("调度", "清洁", "维修", "巡查")), 1))
ACT = f"""柘川市共享单车停放管理规定

（2021年3月2日柘川市人民政府令第8号公布）

第一条　为了规范共享单车停放秩序，制定本规定。

第五条　市城市管理部门负责共享单车停放秩序的监督管理。

第六条　停放共享单车不得有下列行为：
（一）在盲道上停放共享单车；
（二）在消防车通道停放共享单车；
（三）在公交站台停放共享单车；
（四）在绿地内停放共享单车。

{FILLER}

第二十条　违反本规定第六条第一项至第三项规定的，由城市管理部门责令改正，处五十元罚款。

第二十一条　违反本规定第六条第四项规定的，由城市管理部门责令改正，处二十元罚款。
"""
AMENDMENT = """柘川市人民政府关于修改《柘川市共享单车停放管理规定》的决定

（2024年5月6日柘川市人民政府令第31号公布）

一、将第二十条中的“五十元”修改为“八十元”。

本决定自2024年7月1日起施行。
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    eng = engine_over(tmp_path_factory.mktemp("bikes"), {"柘川市共享单车停放管理规定_2021.txt": ACT,
                                                         "柘川市关于修改共享单车停放管理规定的决定_2024.txt": AMENDMENT},
                      retrieval={"k": 4})
    yield eng
    eng.close()


def test_the_penalty_for_a_listed_act_is_the_clause_that_punishes_its_item(engine: Engine):
    answer = engine.ask("把共享单车停在消防车通道里会被怎么处罚？")
    assert answer.status != "abstained", answer.text
    assert answer.citations[0].clause in ("第二十条", "一"), answer.text
    assert "八十元" in answer.text, answer.text  # the penalty as amended is the one in force
    assert "二十元" not in answer.text, answer.text  # the penalty for another item of the list


def test_without_a_penalty_in_the_documents_the_duty_is_no_answer(tmp_path):
    with engine_over(tmp_path / "docs", {"柘川市共享单车停放管理规定_2021.txt": ACT.split("第二十条")[0]}) as eng:
        answer = eng.ask("把共享单车停在盲道上会被怎么处罚？")
    assert answer.status == "abstained", answer.text
    assert "处罚" in answer.text


def test_an_amending_item_disagrees_only_with_the_clause_it_amends(engine: Engine):
    # the decision changes 第二十条's fine; 第二十一条 punishes another item of the list, in
    # words alike, and keeps its own fine
    answer = engine.ask("把共享单车停在绿地里会被怎么处罚？")
    assert answer.status != "abstained", answer.text
    assert answer.citations[0].clause == "第二十一条", answer.text
    assert "二十元" in answer.text and "八十元" not in answer.text, answer.text
    assert not answer.conflicts, answer.text
