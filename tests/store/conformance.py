"""The store conformance suite: every DocumentStore + KeywordIndex backend passes it unchanged.

A backend's test module subclasses :class:`StoreConformance` and provides two hooks::

    class TestEmbedded(StoreConformance):
        store_factory = "agentic_rag.store:open_store"   # importable in a fresh process

        def make_store(self, path):
            return EmbeddedStore(path)

The factory path is needed because persistence and concurrency are checked across real
processes: one process writes, another one reads.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from agentic_rag.errors import AragError, StoreError
from agentic_rag.types import Chunk, DocMeta, Document, Edge, Filter

LABOUR = [
    "第一条 为了完善劳动合同制度，明确劳动合同双方当事人的权利和义务，制定本法。",
    "第二条 用人单位应当按月以货币形式支付劳动者工资，不得克扣或者无故拖欠。",
    "第三条 劳动者每日工作时间不超过八小时，详见第二条。",
]
SOCIAL = [
    "第一条 职工应当参加基本养老保险，由用人单位和职工共同缴纳基本养老保险费。",
    "第二条 工伤认定申请应当自事故伤害发生之日起三十日内提出。",
]
ENGLISH = [
    "Article 1 Employers shall pay wages to workers monthly in legal tender.",
    "Article 2 Working hours shall not exceed eight hours a day; see Article 1.",
]


def make_doc(doc_id: str, clauses: list[str], *, title: str = "劳动合同法", rev: str = "v1",
             language: str = "zh", publish: dt.date = dt.date(2020, 1, 1),
             status: str = "active", authority: str | None = "全国人大常委会",
             extra: dict | None = None, kind: str = "body") -> tuple[Document, list[Chunk], list[Edge]]:
    """A document made of clause chunks, with a REFERENCES edge from the last clause to the first."""
    text = "\n".join(clauses)
    extra = extra or {}
    meta = DocMeta(title=title, authority=authority, publish_date=publish, status=status,
                   language=language, extra=extra)
    doc = Document(doc_id=doc_id, source=f"/docs/{doc_id}.txt",
                   content_hash=hashlib.sha256(f"{rev}\n{text}".encode()).hexdigest(),
                   text=text, meta=meta)
    chunks, pos = [], 0
    for i, clause in enumerate(clauses):
        chunks.append(Chunk(
            chunk_id=f"{doc_id}:a{i + 1}:0", doc_id=doc_id, ord=i, text=clause,
            clause=clause.split(" ", 1)[0], clause_no=str(i + 1), path=[clause.split(" ", 1)[0]],
            kind=kind, span=(pos, pos + len(clause)), title=title, source=doc.source,
            authority=authority, publish_date=publish, status=status, language=language, extra=extra))
        pos += len(clause) + 1
    edges = [Edge(src=chunks[-1].chunk_id, dst=chunks[0].chunk_id, kind="REFERENCES", phrase="详见")]
    return doc, chunks, edges


def _dump(item: tuple[Document, list[Chunk], list[Edge]]) -> dict:
    doc, chunks, edges = item
    return {"doc": doc.model_dump(mode="json"), "chunks": [c.model_dump(mode="json") for c in chunks],
            "edges": [e.model_dump(mode="json") for e in edges]}


# Runs in a child process: opens the store with the backend's factory and upserts the documents
# of a JSON file, printing a line after each commit.
_WRITER = textwrap.dedent("""
    import importlib, json, sys
    from agentic_rag.types import Chunk, Document, Edge
    mod, _, name = sys.argv[1].partition(":")
    factory = getattr(importlib.import_module(mod), name)
    with open(sys.argv[3], encoding="utf-8") as fh:
        items = json.load(fh)
    store = factory(sys.argv[2])
    for it in items:
        store.upsert(Document.model_validate(it["doc"]),
                     [Chunk.model_validate(c) for c in it["chunks"]],
                     [Edge.model_validate(e) for e in it["edges"]])
        print("committed", it["doc"]["doc_id"], flush=True)
    store.close()
""")


class StoreConformance:
    """Behaviour every store backend must show. Subclasses set the two hooks below."""

    #: "module:callable" taking a path and returning an open store (used in child processes)
    store_factory: str = ""
    #: False for a store that keeps nothing after it is closed (the in-memory store): the
    #: tests across processes and restarts do not apply to it
    persistent: bool = True

    def make_store(self, path: Path):
        raise NotImplementedError

    # -------------------------------------------------------------- helpers
    @pytest.fixture
    def store(self, tmp_path):
        s = self.make_store(tmp_path / "index")
        yield s
        s.close()

    def _needs_persistence(self) -> None:
        if not self.persistent:
            pytest.skip(f"{type(self).__name__}: the store keeps nothing across processes")

    def _run_writer(self, path: Path, items: list, tag: str = "") -> subprocess.Popen:
        data = path.parent / f"{path.name}-items{tag}.json"
        data.write_text(json.dumps([_dump(i) for i in items]), encoding="utf-8")
        return subprocess.Popen([sys.executable, "-c", _WRITER, self.store_factory, str(path), str(data)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    # -------------------------------------------------------------- add / get
    def test_add_then_read_back(self, store):
        doc, chunks, edges = make_doc("lab", LABOUR)
        assert store.upsert(doc, chunks, edges) == "added"
        got = store.get_document("lab")
        assert got == doc
        assert store.chunks("lab") == chunks
        assert [d.doc_id for d in store.documents()] == ["lab"]
        assert store.get_document("nope") is None
        assert store.chunks("nope") == []

    def test_get_chunks_keeps_order_and_skips_unknown(self, store):
        _, chunks, _ = item = make_doc("lab", LABOUR)
        store.upsert(*item)
        ids = [chunks[2].chunk_id, "lab:missing:0", chunks[0].chunk_id]
        assert [c.chunk_id for c in store.get_chunks(ids)] == [chunks[2].chunk_id, chunks[0].chunk_id]
        assert store.get_chunks([]) == []

    def test_edges_both_directions(self, store):
        _, chunks, _ = item = make_doc("lab", LABOUR)
        store.upsert(*item)
        out = store.edges([chunks[-1].chunk_id])
        assert [(e.src, e.dst, e.kind) for e in out] == [(chunks[-1].chunk_id, chunks[0].chunk_id, "REFERENCES")]
        inbound = store.edges([chunks[0].chunk_id], direction="in")
        assert [e.src for e in inbound] == [chunks[-1].chunk_id]
        assert store.edges([chunks[0].chunk_id], kind="SUPERSEDES", direction="in") == []

    # -------------------------------------------------------------- replace / unchanged / delete
    def test_same_content_is_unchanged_and_writes_nothing(self, store):
        store.upsert(*make_doc("lab", LABOUR))
        before = store.version
        assert store.upsert(*make_doc("lab", LABOUR)) == "unchanged"
        assert store.version == before

    def test_changed_content_replaces_chunks(self, store):
        store.upsert(*make_doc("lab", LABOUR))
        new = ["第一条 用人单位应当按季度支付劳动者报酬。"]
        assert store.upsert(*make_doc("lab", new, rev="v2")) == "replaced"
        assert [c.text for c in store.chunks("lab")] == new
        assert store.search("八小时") == []  # the removed clause is gone from the index
        assert [cid for cid, _ in store.search("按季度支付")] == ["lab:a1:0"]
        assert store.get_document("lab").text == new[0]

    def test_a_chunk_read_before_a_write_is_read_as_written_after_it(self, store):
        store.upsert(*make_doc("lab", LABOUR))
        assert store.get_chunks(["lab:a1:0"])[0].status == "active"
        store.set_status("lab", "superseded")
        assert store.get_chunks(["lab:a1:0"])[0].status == "superseded"
        new = ["第一条 用人单位应当按季度支付劳动者报酬。"]
        store.upsert(*make_doc("lab", new, rev="v2"))
        assert [c.text for c in store.get_chunks(["lab:a1:0"])] == new
        assert [c.text for c in store.chunks("lab")] == new

    def test_delete_removes_document_chunks_and_edges(self, store):
        store.upsert(*make_doc("lab", LABOUR))
        store.upsert(*make_doc("soc", SOCIAL, title="社会保险法"))
        store.add_edges([Edge(src="soc:a1:0", dst="lab:a2:0", kind="REFERENCES", phrase="依照")])
        assert store.delete("lab") is True
        assert store.get_document("lab") is None
        assert store.chunks("lab") == []
        assert store.search("工资") == []
        assert store.edges(["lab:a3:0"]) == []
        assert store.edges(["lab:a2:0"], direction="in") == []
        assert store.delete("lab") is False
        assert store.search("工伤认定")  # the other document is untouched

    def test_set_status_updates_document_and_chunks(self, store):
        store.upsert(*make_doc("lab", LABOUR))
        store.set_status("lab", "superseded")
        assert store.get_document("lab").meta.status == "superseded"
        assert {c.status for c in store.chunks("lab")} == {"superseded"}
        assert store.search("工资", where=[Filter(field="status", value="active")]) == []

    def test_version_grows_with_every_write(self, store):
        v0 = store.version
        store.upsert(*make_doc("lab", LABOUR))
        v1 = store.version
        store.set_status("lab", "repealed")
        v2 = store.version
        store.delete("lab")
        assert v0 < v1 < v2 < store.version

    # -------------------------------------------------------------- search and filters
    def test_search_ranks_the_matching_clause_first(self, store):
        store.upsert(*make_doc("lab", LABOUR))
        store.upsert(*make_doc("soc", SOCIAL, title="社会保险法"))
        store.upsert(*make_doc("en", ENGLISH, title="Labour Law", language="en"))
        assert store.search("工伤认定申请的期限")[0][0] == "soc:a2:0"
        assert store.search("拖欠劳动者工资")[0][0] == "lab:a2:0"
        assert store.search("wage payment to the worker")[0][0] == "en:a1:0"
        hits = store.search("劳动者", k=2)
        assert len(hits) == 2 and hits[0][1] >= hits[1][1] > 0
        assert store.search("完全无关的词汇组合") == []
        assert store.search("工资", k=0) == []

    def test_filters(self, store):
        store.upsert(*make_doc("old", LABOUR, publish=dt.date(2012, 12, 28), extra={"place": "北京"}))
        store.upsert(*make_doc("new", LABOUR, rev="v2", publish=dt.date(2024, 5, 1),
                               extra={"place": "江苏"}, authority=None))
        F = Filter

        def docs(*where):
            return sorted({cid.split(":")[0] for cid, _ in store.search("工资", where=list(where))})

        assert docs() == ["new", "old"]
        assert docs(F(field="doc_id", value="old")) == ["old"]
        assert docs(F(field="publish_date", op=">=", value=dt.date(2020, 1, 1))) == ["new"]
        assert docs(F(field="publish_date", op="<", value="2020-01-01")) == ["old"]
        assert docs(F(field="extra.place", value="江苏")) == ["new"]
        assert docs(F(field="extra.place", op="in", value=["北京", "上海"])) == ["old"]
        assert docs(F(field="authority", op="!=", value="全国人大常委会")) == ["new"]
        assert docs(F(field="title", op="like", value="%合同%"), F(field="kind", value="body")) == ["new", "old"]
        assert docs(F(field="kind", value="appendix")) == []
        assert docs(F(field="clause", value="第二条"), F(field="status", value="active")) == ["new", "old"]

    def test_unknown_filter_field_is_an_error_naming_it(self, store):
        store.upsert(*make_doc("lab", LABOUR))
        with pytest.raises(AragError, match="colour"):
            store.search("工资", where=[Filter(field="colour", value="red")])

    def test_filter_keeps_k_results_when_best_hits_are_filtered_out(self, store):
        for i in range(30):
            store.upsert(*make_doc(f"d{i:02d}", [f"第一条 工资 支付 规定 {'工资 ' * (30 - i)}"],
                                   extra={"n": i}))
        hits = store.search("工资", k=3, where=[Filter(field="extra.n", op=">=", value=25)])
        assert [cid.split(":")[0] for cid, _ in hits] == ["d25", "d26", "d27"]

    # -------------------------------------------------------------- atomicity
    def test_failed_upsert_leaves_index_unchanged(self, store):
        store.upsert(*make_doc("lab", LABOUR))
        store.upsert(*make_doc("soc", SOCIAL, title="社会保险法"))
        before = (store.version, store.search("工资"), store.chunks("lab"))
        # the new version of "lab" reuses a chunk id that belongs to "soc": the write must fail
        doc, chunks, edges = make_doc("lab", ["第一条 按季度支付报酬。", "第二条 另有规定。"], rev="v2")
        bad = [chunks[0], chunks[1].model_copy(update={"chunk_id": "soc:a1:0"})]
        with pytest.raises(StoreError):
            store.upsert(doc, bad, edges)
        assert (store.version, store.search("工资"), store.chunks("lab")) == before
        assert store.search("季度") == []
        assert store.get_document("lab").content_hash == make_doc("lab", LABOUR)[0].content_hash

    # -------------------------------------------------------------- persistence and concurrency
    def test_persists_across_process_restart(self, tmp_path):
        self._needs_persistence()
        path = tmp_path / "index"
        proc = self._run_writer(path, [make_doc("lab", LABOUR), make_doc("soc", SOCIAL, title="社会保险法")])
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        store = self.make_store(path)
        try:
            assert {d.doc_id for d in store.documents()} == {"lab", "soc"}
            assert store.search("工伤认定")[0][0] == "soc:a2:0"
            assert store.edges(["lab:a3:0"])[0].dst == "lab:a1:0"
            store.upsert(*make_doc("lab", ["第一条 新的规定。"], rev="v2"))
        finally:
            store.close()
        again = self.make_store(path)
        try:
            assert [c.text for c in again.chunks("lab")] == ["第一条 新的规定。"]
            assert again.search("拖欠") == []
        finally:
            again.close()

    def test_reader_sees_commits_of_a_writer_process(self, tmp_path):
        self._needs_persistence()
        path = tmp_path / "index"
        reader = self.make_store(path)
        try:
            items = [make_doc(f"d{i:02d}", [f"第一条 文档{i:02d}号 关于工资支付的第{i}项规定。"], rev=str(i))
                     for i in range(40)]
            proc = self._run_writer(path, items)
            seen_counts = []
            for line in proc.stdout:  # bounded by the writer's output, one line per commit
                doc_id = line.split()[1]
                hits = reader.search(f"文档{doc_id[1:]}号", k=50)
                assert f"{doc_id}:a1:0" in [cid for cid, _ in hits]  # a committed doc is visible
                found = reader.get_chunks([cid for cid, _ in reader.search("工资支付", k=100)])
                assert all(c.text for c in found)
                seen_counts.append(len(found))
            assert proc.wait(timeout=120) == 0, proc.stderr.read()
            assert seen_counts == sorted(seen_counts)  # never goes backwards
            assert len(reader.search("工资支付", k=100)) == 40
            assert len(reader.documents()) == 40
        finally:
            reader.close()

    def test_reader_thread_while_writer_thread_ingests(self, tmp_path):
        path = tmp_path / "index"
        writer = self.make_store(path)
        reader = self.make_store(path)
        errors: list[BaseException] = []
        done = threading.Event()

        def write():
            try:
                for i in range(25):
                    writer.upsert(*make_doc(f"w{i:02d}", [f"第一条 条款{i}：劳动者的休息休假权利。"], rev=str(i)))
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)
            finally:
                done.set()

        t = threading.Thread(target=write)
        t.start()
        counts = []
        try:
            for _ in range(10_000):  # bounded; the writer finishes long before
                counts.append(len(reader.search("休息休假", k=100)))
                if done.is_set():
                    break
            t.join(timeout=120)
            assert not errors, errors
            assert counts == sorted(counts)
            assert len(reader.search("休息休假", k=100)) == 25
        finally:
            writer.close()
            reader.close()

    def test_two_writer_processes(self, tmp_path):
        self._needs_persistence()
        path = tmp_path / "index"
        self.make_store(path).close()  # created once; then two processes write at the same time
        shared = [make_doc("shared", [f"第一条 共同文档第{v}版 关于加班工资。"], rev=f"p{v}") for v in (1, 2)]
        first = [make_doc(f"a{i:02d}", [f"第一条 甲方文档{i} 关于加班工资的规定。"], rev=str(i)) for i in range(15)]
        second = [make_doc(f"b{i:02d}", [f"第一条 乙方文档{i} 关于加班工资的规定。"], rev=str(i)) for i in range(15)]
        procs = [self._run_writer(path, first + [shared[0]], "-1"), self._run_writer(path, second + [shared[1]], "-2")]
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err
        store = self.make_store(path)
        try:
            assert len(store.documents()) == 31
            hits = store.search("加班工资", k=100)
            assert len(hits) == 31  # every chunk once: nothing lost, nothing doubled
            texts = [c.text for c in store.chunks("shared")]
            assert texts in ([shared[0][1][0].text], [shared[1][1][0].text])  # one whole version
        finally:
            store.close()
