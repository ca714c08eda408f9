"""The in-memory store passes the conformance suite (all but the cross-process tests, which
need a store that persists) and ranks exactly as the embedded store does."""

from __future__ import annotations

import pytest

from agentic_rag.errors import ConfigError
from agentic_rag.store import open_store
from agentic_rag.store.memory import MemoryStore
from agentic_rag.types import Filter

from .conformance import ENGLISH, LABOUR, SOCIAL, StoreConformance, make_doc


class TestMemory(StoreConformance):
    persistent = False

    @pytest.fixture(autouse=True)
    def _one_store_per_path(self):
        self._stores: dict = {}

    def make_store(self, path):
        # two handles on one path share one store, as two connections share one index folder
        return self._stores.setdefault(str(path), MemoryStore())


def test_rankings_equal_the_embedded_store(tmp_path):
    items = [make_doc("lab", LABOUR), make_doc("soc", SOCIAL, title="社会保险法"),
             make_doc("en", ENGLISH, title="Labour Law", language="en")]
    memory, embedded = MemoryStore(), open_store(tmp_path / "index")
    try:
        for item in items:
            memory.upsert(*item)
            embedded.upsert(*item)
        for query in ("劳动者 工资", "工伤认定", "working hours a day", "用人单位 缴纳", "第二条"):
            mine, theirs = memory.search(query, k=5), embedded.search(query, k=5)
            assert [c for c, _ in mine] == [c for c, _ in theirs], query
            assert [round(s, 4) for _, s in mine] == [round(s, 4) for _, s in theirs], query
    finally:
        embedded.close()


def test_like_filters_take_sql_wildcards_and_bad_fields_name_themselves():
    store = MemoryStore()
    store.upsert(*make_doc("lab", LABOUR))
    assert store.search("工资", where=[Filter(field="title", op="like", value="劳动%")])
    assert store.search("工资", where=[Filter(field="title", op="like", value="%合同_")])
    assert not store.search("工资", where=[Filter(field="title", op="like", value="合同")])
    with pytest.raises(ConfigError, match="colour"):
        store.search("工资", where=[Filter(field="colour", value="red")])
