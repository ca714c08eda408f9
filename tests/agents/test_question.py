"""Question analysis: the answer type a question asks for, and whether a sentence can carry it."""

from __future__ import annotations

import pytest

from agentic_rag.agents.reasoner.question import analyze, carries, lists_items


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


def test_enumerations_are_recognised_as_lists() -> None:
    assert lists_items("Countries requiring a visa letter: India, Peru, Ghana")
    assert lists_items("可以通过网站、App或者线下窗口办理")
    assert not lists_items("Each request is reviewed within a week")
