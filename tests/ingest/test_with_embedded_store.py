"""ingest_paths against the real embedded store (SQLite + BM25) in a temporary folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_rag.ingest import ingest_paths

embedded = pytest.importorskip("agentic_rag.store.embedded")


@pytest.fixture
def store(tmp_path: Path):
    with embedded.EmbeddedStore(tmp_path / "index") as s:
        yield s


def test_ingest_search_and_reopen(files: Path, store, tmp_path: Path):
    report = ingest_paths([files], store)
    assert report.ok and report.count("added") == 5
    hits = store.search("三级医院报销比例", k=3)
    assert hits
    top = store.get_chunks([hits[0][0]])[0]
    assert top.clause == "第三条"
    assert "80%" in top.text
    # a same-document reference became a graph edge
    refs = store.edges([c.chunk_id for c in store.chunks(top.doc_id)], kind="REFERENCES", direction="in")
    assert any(e.phrase == "详见第三条" for e in refs)
    again = ingest_paths([files], store)
    assert {f.status for f in again.files} == {"unchanged"}


def test_bad_file_leaves_the_index_unchanged(files: Path, store):
    ingest_paths([files], store)
    before = store.stats()
    (files / "broken.pdf").write_bytes(b"%PDF-1.4 broken")
    report = ingest_paths([files], store)
    assert [f.status for f in report.files if f.path.endswith("broken.pdf")] == ["failed"]
    assert store.stats()["docs"] == before["docs"] and store.stats()["chunks"] == before["chunks"]


def test_supersession_is_stored(tmp_path: Path, store):
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "v1.md").write_text("差旅费管理办法\n第一条 住宿标准300元。\n\n某某局\n2019年1月1日", encoding="utf-8")
    (folder / "v2.md").write_text("差旅费管理办法\n第一条 住宿标准500元。\n\n某某局\n2024年1月1日", encoding="utf-8")
    ingest_paths([folder], store)
    status = {Path(d.source).stem: d.meta.status for d in store.documents()}
    assert status == {"v1": "superseded", "v2": "active"}
    v1 = next(d for d in store.documents() if d.source.endswith("v1.md"))
    assert all(c.status == "superseded" for c in store.chunks(v1.doc_id))


def test_jsonl_bulk_import(tmp_path: Path, store):
    path = tmp_path / "news.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"n{i}", "title": f"新闻{i}", "text": f"第{i}号新闻：医保政策调整内容{i}。"},
                                         ensure_ascii=False) for i in range(1200)), encoding="utf-8")
    report = ingest_paths([path], store)
    assert report.count("added") == 1200
    assert store.stats()["docs"] == 1200


def test_defined_terms_stay_whole_in_documents_and_questions(tmp_path: Path, store):
    from agentic_rag.text.tokenize import tokenize

    assert "远航津贴" not in tokenize("远航津贴标准")  # jieba alone splits the new word
    rule = tmp_path / "docs" / "津贴办法.md"
    rule.parent.mkdir()
    rule.write_text("# 远洋船员远航津贴管理办法\n\n第一章 总则\n\n"
                    "第一条 本办法所称远航津贴，是指船员连续在外航行期间领取的补助。\n\n"
                    "第二章 发放标准\n\n第二条 远航津贴按每日120元发放。\n", encoding="utf-8")
    assert ingest_paths([rule.parent], store).ok
    assert "远航津贴" in tokenize("远航津贴标准") and "发放标准" in tokenize("发放标准")
    hits = store.search("远航津贴", k=5)
    assert len(hits) == 2
    store.close()
    with embedded.EmbeddedStore(tmp_path / "index") as again:  # a reopened index searches alike
        assert again.search("远航津贴", k=5) == hits
