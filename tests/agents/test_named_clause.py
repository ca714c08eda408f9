"""A question that names a clause is answered from that clause of that document, not from a
sentence that merely mentions it."""

from __future__ import annotations

import pytest

from agentic_rag import Engine, Settings

LAW = """# 中华人民共和国示范用工法

第二十条 用人单位应当在每月十日前足额支付工资。

第二十一条 职工连续工作满一年的，享受带薪年休假五天。

第二十二条 依照本法第二十一条享受年休假的职工，年休假期间的工资照发；第二十一条的天数不包括法定节假日。
"""
POLICY = """# Field Staff Handbook

Version 2. Effective 2025-02-01.

## Section 7 Equipment

Section 7(a) Laptops are replaced every four years.

Section 7(b) Phones are replaced every two years.

K.3 Safety boots are provided once a year.

Section 8 Under Section 7(b), a lost phone is replaced once at no cost.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("named")
    (root / "law.md").write_text(LAW, encoding="utf-8")
    (root / "handbook.md").write_text(POLICY, encoding="utf-8")
    eng = Engine(Settings.load(index=root / "index", embedder={"provider": "none"}))
    eng.ingest([root / "law.md", root / "handbook.md"])
    yield eng
    eng.close()


@pytest.mark.parametrize("question, clause, says", [
    ("第二十一条规定了什么？", "第二十一条", "五天"),
    ("《中华人民共和国示范用工法》第二十一条是怎么说的", "第二十一条", "五天"),
    ("What does Section 7(b) say?", "Section 7(b)", "two years"),
    ("What does clause K.3 of the handbook say?", "K.3", "once a year"),
])
def test_the_named_clause_is_the_answer(engine, question, clause, says):
    answer = engine.ask(question)
    assert answer.status == "answered", answer.text
    assert answer.citations[0].clause == clause
    assert says in answer.text


@pytest.mark.parametrize("question, clause, says", [
    ("按照第二十一条休年假的职工，假期里的工资怎么发？", "第二十二条", "照发"),
    ("Under Section 7(b), what happens if a phone is lost?", "Section 8", "no cost"),
])
def test_a_clause_named_as_the_rule_applied_is_answered_by_the_clause_that_applies_it(engine, question, clause,
                                                                                      says):
    answer = engine.ask(question)
    assert answer.status == "answered", answer.text
    assert answer.citations[0].clause == clause, answer.text
    assert says in answer.text
