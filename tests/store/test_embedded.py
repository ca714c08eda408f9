"""The embedded store: the conformance suite plus what only this backend promises."""

from __future__ import annotations

import sqlite3

import pytest

from agentic_rag.errors import ConfigError, NotFoundError, StoreError
from agentic_rag.store import EmbeddedStore, open_store
from agentic_rag.store import embedded as embedded_mod
from agentic_rag.types import Filter

from .conformance import ENGLISH, LABOUR, SOCIAL, StoreConformance, make_doc


class TestEmbeddedConformance(StoreConformance):
    store_factory = "agentic_rag.store:open_store"

    def make_store(self, path):
        return EmbeddedStore(path)


@pytest.fixture
def store(tmp_path):
    s = EmbeddedStore(tmp_path / "idx")
    yield s
    s.close()


def test_open_missing_index_without_create_names_the_folder(tmp_path):
    with pytest.raises(StoreError, match="no index at .*nowhere"):
        EmbeddedStore(tmp_path / "nowhere", create=False)


def test_corrupt_database_is_a_store_error(tmp_path):
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "arag.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="arag.db"):
        EmbeddedStore(tmp_path / "idx")


def test_layout_is_sqlite_wal_and_plain_arrays(tmp_path):
    path = tmp_path / "idx"
    with open_store(path) as s:
        s.upsert(*make_doc("lab", LABOUR))
    assert (path / "arag.db").exists()
    snap = [p for p in path.glob("bm25-*") if p.is_dir()]
    assert len(snap) == 1
    names = {p.name for p in snap[0].iterdir()}
    assert {"vocab.json", "manifest.json", "indptr.npy", "rows.npy", "tf.npy"} <= names
    assert not any(n.endswith((".pkl", ".pickle")) for n in names)
    con = sqlite3.connect(path / "arag.db")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()


def test_upsert_many_reports_each_document_in_order(store):
    items = [make_doc("lab", LABOUR), make_doc("soc", SOCIAL, title="社会保险法"),
             make_doc("en", ENGLISH, title="Labour Law", language="en")]
    assert store.upsert_many(items) == ["added", "added", "added"]
    again = [make_doc("lab", LABOUR), make_doc("soc", ["第一条 新规定。"], rev="v2"),
             make_doc("new", SOCIAL, title="社会保险法")]
    assert store.upsert_many(again) == ["unchanged", "replaced", "added"]
    assert store.search("新规定")[0][0] == "soc:a1:0"
    assert store.stats()["docs"] == 4


def test_upsert_many_applies_a_repeated_document_in_order(store):
    items = [make_doc("lab", LABOUR), make_doc("lab", ["第一条 第二版。"], rev="v2")]
    assert store.upsert_many(items) == ["added", "replaced"]
    assert [c.text for c in store.chunks("lab")] == ["第一条 第二版。"]


def test_failed_batch_rolls_back_every_document_of_it(store):
    good = make_doc("soc", SOCIAL, title="社会保险法")
    doc, chunks, edges = make_doc("lab", LABOUR)
    dup = [chunks[0], chunks[1].model_copy(update={"chunk_id": chunks[0].chunk_id})]
    with pytest.raises(StoreError):
        store.upsert_many([good, (doc, dup, edges)])
    assert store.documents() == []
    assert store.search("工伤认定") == []
    assert store.upsert_many([good]) == ["added"]


def test_chunk_of_another_document_is_refused(store):
    doc, chunks, edges = make_doc("lab", LABOUR)
    with pytest.raises(ValueError, match="doc_id"):
        store.upsert(doc, [chunks[0].model_copy(update={"doc_id": "other"})], edges)
    assert store.documents() == []


def test_bm25_failure_after_commit_recovers_from_the_database(store, monkeypatch):
    store.upsert(*make_doc("lab", LABOUR))

    def boom(*a, **k):
        raise MemoryError("simulated")

    monkeypatch.setattr(store._bm25, "add_counted", boom)
    with pytest.raises(MemoryError):
        store.upsert(*make_doc("soc", SOCIAL, title="社会保险法"))
    monkeypatch.undo()
    # the database committed the document; the next read rebuilds the index from it
    assert store.search("工伤认定")[0][0] == "soc:a2:0"
    assert store.search("拖欠")[0][0] == "lab:a2:0"


def test_reopen_uses_snapshot_plus_pending_rows(tmp_path, monkeypatch):
    path = tmp_path / "idx"
    with open_store(path) as s:
        s.upsert(*make_doc("lab", LABOUR))  # compacted into a snapshot on close
    big = open_store(path)
    monkeypatch.setattr(embedded_mod, "_CLOSE_COMPACT_SNAPSHOT_ROWS", -1)
    monkeypatch.setattr(embedded_mod, "_CLOSE_COMPACT_DELTA_SHARE", 100.0)
    big.upsert(*make_doc("soc", SOCIAL, title="社会保险法"))
    big.delete("lab")
    big.close()  # small delta on a "large" snapshot: left in pending, no new snapshot
    # a reopen must not tokenize anything: tokens come from the snapshot and the pending table
    calls = []
    monkeypatch.setattr(embedded_mod, "tokenize", lambda *a, **k: calls.append(a) or [])
    with open_store(path, create=False) as s:
        assert calls == []
        monkeypatch.undo()
        assert s.search("工伤认定")[0][0] == "soc:a2:0"
        assert s.search("拖欠") == []
        assert s.stats()["delta_rows"] == 2


def test_chunks_without_pending_tokens_are_retokenized(tmp_path, monkeypatch):
    path = tmp_path / "idx"
    s = open_store(path)
    monkeypatch.setattr(s, "compact", lambda: None)  # no snapshot: the chunks live only in SQLite
    s.upsert(*make_doc("lab", LABOUR))
    s.close()
    con = sqlite3.connect(path / "arag.db")
    assert con.execute("SELECT count(*) FROM pending").fetchone()[0] == 3
    con.execute("DELETE FROM pending")  # as if a crash lost them
    con.commit()
    con.close()
    with open_store(path) as s2:
        assert s2.search("拖欠")[0][0] == "lab:a2:0"


def test_compaction_keeps_results_identical(store):
    store.upsert_many([make_doc(f"d{i}", [f"第一条 第{i}号 关于工资支付的规定{'。工资' * i}"], rev=str(i))
                       for i in range(20)])
    store.delete("d3")
    before = store.search("工资支付", k=20)
    store.compact()
    assert store.stats()["delta_rows"] == 0
    after = store.search("工资支付", k=20)
    assert [c for c, _ in after] == [c for c, _ in before]
    assert [round(s, 4) for _, s in after] == [round(s, 4) for _, s in before]


def test_a_compaction_right_after_another_keeps_the_live_snapshot(tmp_path, monkeypatch):
    """Two processes compact one index in turn (two evals opening it at once): the first one's
    clean-up, running after the second committed, leaves the second's snapshot alone."""
    path = tmp_path / "idx"
    first, second = EmbeddedStore(path), EmbeddedStore(path)
    first.upsert_many([make_doc(f"d{i}", [f"第一条 第{i}号 关于工资支付的规定"], rev="1") for i in range(5)])
    late: list[tuple] = []
    monkeypatch.setattr(EmbeddedStore, "_drop_superseded", lambda self, *a: late.append((self, a)))
    first.compact()  # its clean-up is held back ...
    second.upsert_many([make_doc("d9", ["第一条 第9号 关于工资支付的规定"], rev="1")])
    second.compact()  # ... while the second process compacts and commits
    monkeypatch.undo()
    held = {id(store): args for store, args in late}
    second._drop_superseded(*held[id(second)])  # ... then both clean up, the first one last
    first._drop_superseded(*held[id(first)])
    first.close()
    second.close()
    again = EmbeddedStore(path)
    try:
        assert len(again.search("工资支付", k=10)) == 6
    finally:
        again.close()


def test_set_status_rejects_unknown_status_and_document(store):
    store.upsert(*make_doc("lab", LABOUR))
    with pytest.raises(ConfigError, match="expired"):
        store.set_status("lab", "expired")
    with pytest.raises(NotFoundError, match="ghost"):
        store.set_status("ghost", "repealed")


def test_find_documents_and_stats(store):
    store.upsert(*make_doc("lab", LABOUR))
    store.upsert(*make_doc("soc", SOCIAL, title="社会保险法"))
    assert [d.doc_id for d in store.find_documents(title="社会保险法")] == ["soc"]
    assert [d.doc_id for d in store.find_documents(source="/docs/lab.txt")] == ["lab"]
    assert store.find_documents(title="社会保险法", source="/docs/lab.txt") == []
    st = store.stats()
    assert (st["docs"], st["chunks"], st["edges"]) == (2, 5, 2)
    assert st["bytes"] > 0
    assert store.all_chunk_ids() == [c.chunk_id for c in store.chunks("lab") + store.chunks("soc")]
    assert store.chunk_counts() == {"lab": 3, "soc": 2}


def test_closed_store_refuses_use(tmp_path):
    s = open_store(tmp_path / "idx")
    s.close()
    s.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        s.search("工资")


def test_unknown_filter_op_value_in_empty_list_matches_nothing(store):
    store.upsert(*make_doc("lab", LABOUR))
    assert store.search("工资", where=[Filter(field="doc_id", op="in", value=[])]) == []
    assert store.search("工资", where=[Filter(field="extra.place", op="in", value=[])]) == []


def test_worker_processes_tokenize_like_the_main_process(tmp_path, monkeypatch):
    monkeypatch.setattr(embedded_mod, "_PARALLEL_MIN_CHUNKS", 10)
    items = [make_doc(f"d{i:02d}", [f"第一条 第{i}号规定：劳动者工资按月支付。",
                                    f"Article 2 Worker number {i} is paid monthly."], rev=str(i))
             for i in range(30)]
    results = {}
    for workers in (1, 2):
        with EmbeddedStore(tmp_path / f"w{workers}", workers=workers) as s:
            s.upsert_many(items)
            results[workers] = [s.search(q, k=5) for q in ("第7号 工资", "worker paid monthly")]
    assert results[1] == results[2]
    assert results[2][0][0][0] == "d07:a1:0"


def test_workers_must_be_positive(tmp_path):
    with pytest.raises(ConfigError, match="workers"):
        EmbeddedStore(tmp_path / "idx", workers=0)


def test_selective_filter_over_many_candidates(store):
    # more matching chunks than the first candidate window, and only two of them pass the filter
    store.upsert_many([make_doc(f"d{i:03d}", [f"第一条 工资{'。工资' * (i % 7)}"], rev=str(i),
                                extra={"n": i}) for i in range(700)])
    hits = store.search("工资", k=5, where=[Filter(field="extra.n", op="in", value=[3, 650])])
    assert sorted(cid for cid, _ in hits) == ["d003:a1:0", "d650:a1:0"]
    assert store.search("工资", k=5, where=[Filter(field="extra.n", value=-1)]) == []


def test_added_terms_are_kept_with_the_index(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "idx"
    with open_store(path) as s:
        assert s.add_terms(["医保个账家庭共济", " ", "医保个账家庭共济"]) == 1
        s.upsert(*make_doc("med", ["第一条 参保人可以申请医保个账家庭共济。"], title="医保办法"))
        assert s.search("医保个账家庭共济")[0][0] == "med:a1:0"
    # a fresh process knows the term from the index alone
    code = ("import sys; from agentic_rag.store import open_store; from agentic_rag.text.tokenize import tokenize;"
            "s = open_store(sys.argv[1], create=False);"
            "print('医保个账家庭共济' in tokenize('申请医保个账家庭共济'), s.search('医保个账家庭共济')[0][0])")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["True", "med:a1:0"], out.stderr


def test_index_from_another_tokenizer_version_is_rebuilt_on_open(tmp_path):
    path = tmp_path / "idx"
    with open_store(path) as s:
        s.upsert(*make_doc("lab", LABOUR))
    con = sqlite3.connect(path / "arag.db")
    con.execute("UPDATE meta SET value='some-older-tokenizer' WHERE key='tokenizer'")
    con.commit()
    con.close()
    with open_store(path) as s:
        assert s.search("拖欠")[0][0] == "lab:a2:0"
    con = sqlite3.connect(path / "arag.db")
    assert con.execute("SELECT value FROM meta WHERE key='tokenizer'").fetchone()[0] == embedded_mod.TOKENIZER_ID
    con.close()


def test_pending_rows_in_the_plain_token_form_still_load(tmp_path):
    path = tmp_path / "idx"
    s = open_store(path)
    s.compact = lambda: None  # keep everything in pending
    s.upsert(*make_doc("lab", LABOUR))
    s.close()
    con = sqlite3.connect(path / "arag.db")
    (rowid,) = con.execute("SELECT id FROM chunks WHERE chunk_id='lab:a2:0'").fetchone()
    con.execute("UPDATE pending SET tokens=?, counts=NULL WHERE id=?", ("拖欠 拖欠 工资", rowid))
    con.commit()
    con.close()
    with open_store(path) as s2:
        assert s2.search("拖欠")[0][0] == "lab:a2:0"


def test_opening_an_index_another_process_is_recovering_waits_for_it(tmp_path, monkeypatch):
    EmbeddedStore(tmp_path / "idx").close()
    real_open, calls = EmbeddedStore._open, []

    def busy_twice(self, fresh):
        calls.append(fresh)
        if len(calls) <= 2:  # what a reader gets while a dead writer's log is recovered
            raise StoreError(f"cannot open index {self.db_path}: database is locked")
        return real_open(self, fresh)

    monkeypatch.setattr(EmbeddedStore, "_open", busy_twice)
    monkeypatch.setattr(embedded_mod, "_OPEN_BACKOFF_S", 0.0)
    store = EmbeddedStore(tmp_path / "idx")
    assert len(calls) == 3 and store.documents() == []
    store.close()


def test_an_index_that_stays_locked_is_one_clear_error(tmp_path, monkeypatch):
    EmbeddedStore(tmp_path / "idx").close()

    def always_busy(self, fresh):
        raise StoreError(f"cannot open index {self.db_path}: database is locked")

    monkeypatch.setattr(EmbeddedStore, "_open", always_busy)
    monkeypatch.setattr(embedded_mod, "_OPEN_BACKOFF_S", 0.0)
    with pytest.raises(StoreError, match="database is locked"):
        EmbeddedStore(tmp_path / "idx")
