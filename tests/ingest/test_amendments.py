"""An amending act ("关于修改《X》的决定") changes clauses of X: its items reference the clauses
they change, the Retriever brings them beside those clauses, and the answer states the clause as
amended. The acts are written for this test."""

from __future__ import annotations


import pytest

from agentic_rag import Engine, Settings
from agentic_rag.ingest.edges import amended_title

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

本决定自2023年10月1日起施行。
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    folder = tmp_path_factory.mktemp("acts")
    (folder / "岚溪市电动自行车管理条例_2020.txt").write_text(ACT, encoding="utf-8")
    (folder / "岚溪市关于修改电动自行车管理条例的决定_2023.txt").write_text(AMENDMENT, encoding="utf-8")
    settings = Settings.load(index=folder / "index")
    settings = settings.model_copy(update={"embedder": settings.embedder.model_copy(update={"provider": "none"})})
    eng = Engine(settings)
    eng.ingest([folder])
    yield eng
    eng.close()


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
    answer = engine.ask("岚溪骑电动车不戴头盔罚多少钱？")
    assert answer.status != "abstained", answer.text
    assert answer.conflicts, answer.text
    conflict = answer.conflicts[0]
    winner = next(v for v in conflict.values if v.chunk_id == conflict.winner)
    assert "五十元" in winner.value and "决定" in winner.title
