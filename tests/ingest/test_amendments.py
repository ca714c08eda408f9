"""An amending act ("关于修改《X》的决定") changes clauses of X: its items reference the clauses
they change, the Retriever brings them beside those clauses, and the answer states the clause as
amended. The acts are written for this test."""

from __future__ import annotations


import pytest

from agentic_rag import Engine
from agentic_rag.ingest.edges import amended_title
from agentic_rag.types import ConflictValue
from tests.ingest.helpers import engine_over

ACT = """岚溪市电动自行车管理条例

（2020年5月20日岚溪市人民代表大会常务委员会通过）

第一条　为了加强电动自行车管理，制定本条例。

第二条　市公安机关交通管理部门负责电动自行车登记工作。

第三条　电动自行车应当在购买之日起十五日内办理登记。

第四条　驾驶电动自行车未佩戴安全头盔的，处二十元罚款。
"""
AMENDMENT = """岚溪市人民代表大会常务委员会关于修改《岚溪市电动自行车管理条例》的决定

（2023年9月1日岚溪市人民代表大会常务委员会通过）

一、将第三条修改为：“电动自行车应当在购买之日起三十日内办理登记。”

二、将第四条中的“处二十元罚款”修改为“处五十元罚款”。

三、将第二条中的“市公安机关交通管理部门”修改为“市交通运输主管部门”。

本决定自2023年10月1日起施行。
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    eng = engine_over(tmp_path_factory.mktemp("acts"), {"岚溪市电动自行车管理条例_2020.txt": ACT,
                                                        "岚溪市关于修改电动自行车管理条例的决定_2023.txt": AMENDMENT})
    yield eng
    eng.close()


def _winner(engine: Engine, question: str) -> tuple[ConflictValue, str]:
    """The winning value of the answer's first conflict, and the answer's text."""
    answer = engine.ask(question)
    assert answer.status != "abstained", answer.text
    assert answer.conflicts, answer.text
    conflict = answer.conflicts[0]
    return next(v for v in conflict.values if v.chunk_id == conflict.winner), answer.text


def test_the_amended_act_is_read_from_the_title():
    assert amended_title("岚溪市人民代表大会常务委员会关于修改《岚溪市电动自行车管理条例》的决定") == "岚溪市电动自行车管理条例"
    assert amended_title("《岚溪市电动自行车管理条例》修正案") == "岚溪市电动自行车管理条例"
    assert amended_title("岚溪市电动自行车管理条例") is None


def test_an_amending_item_references_the_clause_it_changes(engine: Engine):
    chunks = {c.chunk_id: c for d in engine.store.documents() for c in engine.store.chunks(d.doc_id)}
    clause4 = next(c for c in chunks.values() if c.clause == "第四条")
    amending = [e for e in engine.store.edges([clause4.chunk_id], kind="REFERENCES", direction="in") if e.amends]
    assert [chunks[e.src].text.startswith("二、将第四条中的“处二十元罚款”修改为“处五十元罚款”") for e in amending] == [True]


def test_the_answer_states_the_clause_as_amended(engine: Engine):
    winner, _ = _winner(engine, "岚溪骑电动车不戴头盔罚多少钱？")
    assert "五十元" in winner.value and "决定" in winner.title


def test_an_item_that_puts_another_body_in_a_clause_is_a_newer_value_of_it(engine: Engine):
    winner, text = _winner(engine, "岚溪市的电动自行车归哪个部门登记？")
    assert "交通运输主管部门" in winner.value and "决定" in winner.title
    assert "交通运输主管部门" in text.split("。")[0]


def test_the_promulgation_note_answers_only_how_the_act_was_made(engine: Engine):
    answer = engine.ask("岚溪市电动自行车管理条例是哪天通过的？")
    assert "2020年5月20日" in answer.text, answer.text
    # when a rule starts to apply is said by the act's own clause, not by the date it was adopted
    answer = engine.ask("岚溪市电动自行车管理条例什么时候开始实行新的头盔规定？")
    assert "2023年10月1日" in answer.text.split("。")[0], answer.text
    assert "2023年9月1日" not in answer.text, answer.text

