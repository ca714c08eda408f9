"""A Chinese question that asks the value of a thing no evidence mentions ("……的门票多少钱" over a
report that never speaks of tickets) abstains naming it, however well the report's other figures
score; asked of a thing the text states, it is answered. The documents are written for the test."""

from __future__ import annotations

import pytest

from agentic_rag import Engine
from tests.ingest.helpers import engine_over

REPORT = """第四届青岚湖国际风筝邀请赛开幕

青岚日报　2025年4月20日　记者 沈知远

4月19日上午，第四届青岚湖国际风筝邀请赛在青岚湖湿地公园开幕。本届邀请赛为期三天，共有来自12个国家和地区的86支队伍参赛，参赛选手逾600人。

组委会介绍，开幕首日入园观众约3.2万人次，带动周边餐饮住宿消费约1800万元。赛事设置传统风筝、软体风筝、运动风筝三个组别，总奖金为30万元。
"""

POLICY = """青岚湖湿地公园游览须知

第一条　本园门票每张40元，六周岁以下儿童免票。

第二条　本园开放时间为每日8时至18时。
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    eng = engine_over(tmp_path_factory.mktemp("asked"), {"青岚湖国际风筝邀请赛开幕_2025.txt": REPORT})
    yield eng
    eng.close()


def test_the_value_of_a_thing_no_evidence_mentions_is_not_answered_with_other_figures(engine: Engine):
    answer = engine.ask("第四届青岚湖国际风筝邀请赛的门票多少钱一张？")
    assert answer.status == "abstained", answer.text
    assert "门票" in answer.text


def test_a_thing_the_report_states_is_answered(engine: Engine):
    answer = engine.ask("第四届青岚湖国际风筝邀请赛的总奖金是多少？")
    assert answer.status == "answered", answer.text
    assert "30万元" in answer.text.split("。")[0]


def test_asked_where_the_documents_state_it_the_value_is_answered(tmp_path):
    eng = engine_over(tmp_path, {"青岚湖国际风筝邀请赛开幕_2025.txt": REPORT, "青岚湖湿地公园游览须知.txt": POLICY})
    try:
        answer = eng.ask("青岚湖湿地公园的门票多少钱一张？")
        assert answer.status == "answered", answer.text
        assert "40元" in answer.text
    finally:
        eng.close()
