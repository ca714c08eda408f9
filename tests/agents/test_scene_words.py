"""The words a person uses to set their case are not what they ask about: an everyday word that
no question word stands by ("……要去哪儿上户口": the place of an act is asked, not the 户口) or
a thing named only in a sentence that asks nothing ("My bike got stolen outside the station.
How soon …") does not put a question out of scope when the documents answer the rest; a
question whose only thing is an everyday word the documents never mention still abstains. An
answer given whole does not end by naming such words as missing. The documents and questions are
written for the test."""

from __future__ import annotations

import pytest

from agentic_rag import Engine
from tests.ingest.helpers import engine_over

RULES_ZH = """溪桥市电动自行车登记办法

第一条　为了加强本市电动自行车登记管理，保障道路交通安全，制定本办法。

第二条　本办法适用于本市行政区域内电动自行车的登记。

第三条　电动自行车所有人应当自购车之日起三十日内，到公安机关交通管理部门设立的登记点办理登记，领取号牌和行驶证。

第四条　办理登记应当提交购车发票、产品合格证和所有人身份证明。
"""

POLICY_EN = """Fernhollow Cycle-to-Work Policy (2025)

1. Scope
1.1 This policy covers company bicycles lent to employees for commuting.

2. Loss and theft
2.1 A lost or stolen company bicycle must be reported to Facilities within 2 working days.
2.2 Employees must also obtain a police crime reference number for a theft.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    eng = engine_over(tmp_path_factory.mktemp("scene"), {"溪桥市电动自行车登记办法.txt": RULES_ZH,
                                                         "fernhollow-cycle-to-work-2025.md": POLICY_EN})
    yield eng
    eng.close()


def test_an_everyday_word_no_question_word_stands_by_does_not_put_the_question_out_of_scope(engine: Engine):
    answer = engine.ask("新买的电动自行车要去哪儿上户口？")
    assert answer.status == "answered", answer.text
    assert "登记点" in answer.text


def test_a_thing_named_only_in_the_sentence_that_sets_the_scene_does_not_either(engine: Engine):
    answer = engine.ask("My bicycle got stolen at the station. How soon must I report it?")
    assert answer.status == "answered", answer.text
    assert "2 working days" in answer.text


def test_a_question_about_nothing_but_an_everyday_word_the_documents_never_mention_abstains(engine: Engine):
    answer = engine.ask("孩子每个月能领多少钱？")
    assert answer.status == "abstained", answer.text


@pytest.mark.parametrize(("question", "stated"), [
    ("刚买的电动自行车放在楼下车棚里，要去哪儿上户口？", "登记点"),
    ("My bicycle got stolen outside the train station near my flat. How soon must I report it?", "2 working days"),
])
def test_an_answer_given_whole_does_not_end_naming_words_of_the_question_as_missing(engine: Engine, question, stated):
    # the search rules find no passage with 放在 or "train" and run out of queries; the Reasoner
    # answers all that was asked: the words stay in ``gaps``, the reader is not told they are missing
    answer = engine.ask(question)
    assert answer.status == "answered", answer.text
    assert stated in answer.text
    assert not any(mark in answer.text for mark in ("仍缺少", "still missing", "未找到", "Not found")), answer.text


def _policy(year: int, days: str, version: str) -> str:
    return f"""---
title: Larchmere Hybrid Working Policy
version: "{version}"
issued: {year}-01-10
effective: {year}-02-01
---

# Larchmere Hybrid Working Policy

## 1. Scope
1.1 This policy applies to all employees of Larchmere Analytics.

## 2. Working from home
2.1 Employees may work from home for up to {days} days per week.
2.2 Home working days are agreed with the line manager each month.
"""


def test_versions_that_differ_only_in_a_number_written_as_a_word_are_a_conflict(tmp_path):
    # "two days" and "three days" state different rules: the older clause is brought beside the
    # newer one (a depth of 2 leaves it no room of its own), not skipped as the rule restated
    eng = engine_over(tmp_path, {"larchmere-hybrid-2024.md": _policy(2024, "two", "1.0"),
                                 "larchmere-hybrid-2025.md": _policy(2025, "three", "2.0")}, retrieval={"k": 2})
    try:
        answer = eng.ask("How many days a week can Larchmere staff work from home?")
        assert answer.status == "answered", answer.text
        assert answer.text.startswith("Employees may work from home for up to three days"), answer.text
        assert answer.conflicts and {"two days", "three days"} <= {v.value for v in answer.conflicts[0].values}, \
            answer.text
    finally:
        eng.close()
