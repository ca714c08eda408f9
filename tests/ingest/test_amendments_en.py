"""An English amending instrument ("Parking Policy – Amendment No. 2") replaces clauses of the
policy it amends: each of its numbered items is a clause labelled with the clause it sets, it
references that clause, and an answer gives the value as amended, naming both sources. A
Chinese decision's item that adds a paragraph to an article leaves the article's own values in
force, and a decision's "违反本条例第X条" is an article of the act it amends. The documents are
written for this test."""

from __future__ import annotations

import pytest

from agentic_rag import Engine
from agentic_rag.text.clauses import amended_title
from tests.ingest.helpers import engine_over

POLICY = """---
title: "Staff Parking Policy"
version: "1.0"
effective_date: "2023-02-01"
---

# Staff Parking Policy

Orvane Meridian Ltd provides parking for staff at its Hollin Road site.

## 2. Permits

2.1 A parking permit costs £15 per month and is deducted from salary.

2.2 Permits are issued by the Facilities Desk within 5 working days of an application.

## 3. Use of the car park

3.1 Vehicles left in the car park for more than 48 hours without notice may be removed.

3.2 Electric vehicle charging bays may be used for up to 4 hours at a time.
"""

AMENDMENT = """---
title: "Staff Parking Policy – Amendment No. 2"
version: "1.0"
effective_date: "2025-03-01"
amends: "Staff Parking Policy, version 1.0"
---

# Amendment No. 2 to the Staff Parking Policy

## Background

The Operations Board approved the changes below. Clauses not mentioned remain in force.

## Changes

1. Clause 2.1 is deleted and replaced with:

   "2.1 A parking permit costs £22 per month and is deducted from salary."

2. A new clause 2.3 is inserted after clause 2.2:

   "2.3 Car-sharing staff may share one permit between up to three named drivers."

3. In clause 3.2, "4 hours" is replaced by "3 hours".
"""

ACT = """河湾市养老服务条例

（2018年4月2日河湾市人民代表大会常务委员会通过）

第九条　养老机构不得有下列行为：
（一）擅自改变养老设施用途；
（二）歧视、侮辱老年人。

第二十条　违反本条例第九条第一项规定的，由民政部门责令改正，处一万元以上三万元以下罚款。
"""

DECISION = """河湾市人民代表大会常务委员会关于修改《河湾市养老服务条例》的决定

（2024年6月3日河湾市人民代表大会常务委员会通过）

一、在第九条中增加一项，作为第三项：“（三）向老年人推销保健品。”

二、在第二十条中增加一款，作为第二款：“违反本条例第九条第三项规定的，由民政部门责令改正，处二千元以上五千元以下罚款。”

本决定自2024年9月1日起施行。
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    eng = engine_over(tmp_path_factory.mktemp("amend-en"), {
        "orvane-parking-2023.md": POLICY, "orvane-parking-amendment-2-2025.md": AMENDMENT,
        "河湾市养老服务条例_2018.txt": ACT, "河湾市关于修改养老服务条例的决定_2024.txt": DECISION})
    yield eng
    eng.close()


def _chunks(engine: Engine) -> dict[str, object]:
    return {c.chunk_id: c for d in engine.store.documents() for c in engine.store.chunks(d.doc_id)}


@pytest.mark.parametrize("title,amended", [
    ("Staff Parking Policy – Amendment No. 2", "Staff Parking Policy"),
    ("Amendment No. 1 to the Fleet Services Agreement", "Fleet Services Agreement"),
    ("Remote Work Policy (Second Amendment)", "Remote Work Policy"),
    ("Amendments are approved by the Board", None),
    ("Staff Parking Policy", None),
])
def test_an_english_amending_title_names_what_it_amends(title: str, amended: str | None):
    assert amended_title(title) == amended


def test_each_amending_item_is_the_clause_it_sets_and_references_it(engine: Engine):
    chunks = _chunks(engine)
    items = {c.clause: c for c in chunks.values() if "Amendment" in c.title and c.clause and c.clause[0].isdigit()}
    assert set(items) >= {"2.1", "2.3", "3.2"}, sorted(items)
    assert "£22" in items["2.1"].text and "£15" not in items["2.1"].text
    policy_21 = next(c for c in chunks.values() if c.title == "Staff Parking Policy" and c.clause == "2.1")
    amending = [e for e in engine.store.edges([policy_21.chunk_id], kind="REFERENCES", direction="in") if e.amends]
    assert [chunks[e.src].clause for e in amending] == ["2.1"]


def test_the_answer_gives_the_value_as_amended_and_names_both_sources(engine: Engine):
    answer = engine.ask("How much does a staff parking permit cost each month at Orvane Meridian?")
    assert answer.status == "answered", answer.text
    first = answer.text.split(". ")[0]
    assert "£22" in first and "£15" not in first, answer.text
    conflict = answer.conflicts[0]
    winner = next(v for v in conflict.values if v.chunk_id == conflict.winner)
    assert "£22" in winner.value and "Amendment No. 2" in winner.title
    assert "Amendment No. 2" in answer.text  # the source is named whole, not cut inside a word


def test_a_clause_the_amendment_inserts_answers(engine: Engine):
    answer = engine.ask("Can car-sharing staff at Orvane Meridian share one parking permit?")
    assert answer.status == "answered", answer.text
    assert "three named drivers" in answer.text, answer.text


def test_an_added_paragraph_leaves_the_articles_own_penalty_standing(engine: Engine):
    answer = engine.ask("河湾市养老机构擅自改变养老设施用途的，罚款多少？")
    assert "一万元以上三万元以下" in answer.text.split("。")[0], answer.text
    assert not answer.conflicts, answer.text


def test_a_decisions_breach_reference_is_an_article_of_the_amended_act(engine: Engine):
    chunks = _chunks(engine)
    item = next(c for c in chunks.values() if "决定" in c.title and c.clause == "二")
    targets = {(chunks[e.dst].title, chunks[e.dst].clause)
               for e in engine.store.edges([item.chunk_id], kind="REFERENCES", direction="out")}
    assert targets == {("河湾市养老服务条例", "第九条"), ("河湾市养老服务条例", "第二十条")}


@pytest.mark.parametrize("line, clause", [
    ("3. Delete clause 7.2 and insert:", "7.2"),
    ("4) Replace section 9 with the following:", "9"),
    ("Section 5 shall be amended to read as follows:", "5"),
    ("Insert new clause 8.5:", "8.5"),
    ("We may delete section 2 at the next review.", None),
    ("Clause 6.2 of the Agreement remains unchanged.", None),
])
def test_an_amending_item_names_the_clause_it_sets_however_it_is_worded(line: str, clause: str | None):
    from agentic_rag.text.clauses import amending_item_label

    assert amending_item_label(line) == clause


def test_an_instruction_to_replace_a_clause_is_an_amendment_edge():
    from agentic_rag.types import Edge

    assert Edge(src="a", dst="b", kind="REFERENCES", phrase="3. Delete clause 7.2").amends
    assert not Edge(src="a", dst="b", kind="REFERENCES", phrase="see Section 7.2").amends


def test_the_fine_for_an_item_a_decision_adds_comes_from_the_paragraph_it_adds(engine: Engine):
    # the decision adds the item to 第九条 in one place and its fine to 第二十条 in another
    answer = engine.ask("河湾市养老机构向老年人推销保健品，要罚多少钱？")
    first = answer.text.split("。")[0]
    assert "二千元以上五千元以下" in first and "一万元" not in first, answer.text


@pytest.mark.parametrize("item, clause, adds", [
    ("二、第十二条增加一款，作为第二款：“……”", "12", True),
    ("五、第二十条改为第二十二条，第一款修改为：“……”", "20", False),
    ("三、第十五条第二款修改为：“……”", "15", False),
    ("四、违反本条例第十九条规定的，处五百元罚款。", None, False),
])
def test_a_decision_item_that_opens_with_its_article_references_it(item: str, clause: str | None, adds: bool):
    from agentic_rag.ingest.edges import amended_clauses
    from agentic_rag.types import Edge

    found = amended_clauses(item)
    assert [no for no, _ in found] == ([clause] if clause else [])
    for _, phrase in found:
        assert Edge(src="a", dst="b", kind="REFERENCES", phrase=phrase).amends
        assert ("增加" in phrase) is adds
