"""ingest_paths end to end: statuses, idempotence, failures, sidecars, jsonl, supersession."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pytest

from agentic_rag.config import IngestSettings, Settings
from agentic_rag.errors import IngestError
from agentic_rag.ingest import doc_id_for_record, ingest_paths, parse_document
from agentic_rag.store.base import DocumentStore

from .conftest import make_pdf
from .fakes import FailingStore, MemoryStore


def _status(report) -> dict[str, str]:
    return {Path(f.path).name: f.status for f in report.files}


def test_fake_store_satisfies_the_protocol():
    assert isinstance(MemoryStore(), DocumentStore)


def test_folder_of_every_format_is_added(files: Path):
    store = MemoryStore()
    calls: list[tuple[int, int]] = []
    report = ingest_paths([files], store, progress=lambda done, total: calls.append((done, total)))
    assert _status(report) == {"notice.txt": "added", "page.html": "added", "policy.md": "added",
                               "rules.docx": "added", "scan.pdf": "added"}
    assert report.ok and report.count("added") == 5
    assert calls[-1] == (5, 5)
    pdf = next(d for d in store.documents() if d.source.endswith("scan.pdf"))
    assert [c.clause for c in store.chunks(pdf.doc_id)] == [None, "第一条", "第二条", "第三条", "第四条"]
    assert pdf.meta.effective_date == dt.date(2024, 3, 1)
    docx = next(d for d in store.documents() if d.source.endswith("rules.docx"))
    assert docx.meta.title == "差旅费管理办法"
    table = next(c for c in store.chunks(docx.doc_id) if c.kind == "table")
    assert table.text == "城市: 北京; 标准: 500元\n城市: 南昌; 标准: 350元"
    assert table.clause == "第二条"


def test_reingest_is_a_no_op_and_a_change_replaces(files: Path):
    store = MemoryStore()
    ingest_paths([files], store)
    writes = store.version
    again = ingest_paths([files], store)
    assert set(_status(again).values()) == {"unchanged"}
    assert store.version == writes
    md = files / "policy.md"
    old_id = next(f.doc_id for f in again.files if f.path.endswith("policy.md"))
    md.write_text("# 医保办法\n\n第一条 新的内容。", encoding="utf-8")
    report = ingest_paths([files], store)
    assert _status(report)["policy.md"] == "replaced"
    assert [c.text for c in store.chunks(old_id)] == ["第一条 新的内容。"]


def test_bad_files_fail_with_reasons_and_others_go_on(files: Path):
    (files / "empty.txt").write_bytes(b"")
    (files / "broken.pdf").write_bytes(b"%PDF-1.4 this is not a pdf")
    make_pdf(files / "locked.pdf", password="pw")
    (files / "blob.txt").write_bytes(bytes(range(256)) * 8)
    store = MemoryStore()
    report = ingest_paths([files, files / "missing.md"], store)
    by_name = {Path(f.path).name: f for f in report.files}
    assert by_name["empty.txt"].reason == "empty file"
    assert "corrupt or unreadable PDF" in by_name["broken.pdf"].reason
    assert "encrypted PDF" in by_name["locked.pdf"].reason
    assert "unknown encoding" in by_name["blob.txt"].reason
    assert by_name["missing.md"].reason == "no such file or folder"
    assert report.count("added") == 5 and not report.ok
    assert len(store.documents()) == 5


def test_store_failure_fails_only_that_file(files: Path):
    store = FailingStore(fail_on="policy.md")
    report = ingest_paths([files], store)
    assert _status(report)["policy.md"] == "failed"
    assert "disk full" in next(f.reason for f in report.files if f.path.endswith("policy.md"))
    assert report.count("added") == 4


def test_file_above_size_limit_fails(tmp_path: Path):
    big = tmp_path / "big.txt"
    big.write_text("第一条 内容。" * 20_000, encoding="utf-8")
    settings = Settings(ingest=IngestSettings(max_file_mb=0.01))
    report = ingest_paths([big], MemoryStore(), settings)
    assert report.files[0].status == "failed"
    assert "file too large" in report.files[0].reason and "max_file_mb" in report.files[0].reason


def test_sidecar_overrides_metadata_and_its_change_reingests(tmp_path: Path):
    doc = tmp_path / "rule.md"
    doc.write_text("某某办法\n第一条 内容。\n\n某某局\n2020年1月1日", encoding="utf-8")
    sidecar = tmp_path / "rule.md.meta.json"
    sidecar.write_text(json.dumps({"publish_date": "2021-05-01", "place": "南昌"}), encoding="utf-8")
    store = MemoryStore()
    report = ingest_paths([tmp_path], store)
    assert [f.status for f in report.files] == ["added"]  # the sidecar is not a document
    meta = store.documents()[0].meta
    assert meta.publish_date == dt.date(2021, 5, 1)
    assert meta.provenance["publish_date"] == "override"
    assert meta.extra == {"place": "南昌"}
    assert store.chunks(store.documents()[0].doc_id)[0].extra == {"place": "南昌"}
    sidecar.write_text(json.dumps({"publish_date": "2022-05-01"}), encoding="utf-8")
    assert ingest_paths([tmp_path], store).files[0].status == "replaced"


def test_bad_sidecar_fails_the_file(tmp_path: Path):
    (tmp_path / "a.txt").write_text("第一条 内容。", encoding="utf-8")
    (tmp_path / "a.txt.meta.json").write_text("{not json", encoding="utf-8")
    report = ingest_paths([tmp_path], MemoryStore())
    assert report.files[0].status == "failed"
    assert "sidecar a.txt.meta.json: invalid JSON" in report.files[0].reason


def _jsonl(path: Path, records: list, gz: bool = False) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if gz:
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def test_jsonl_one_document_per_line_and_bad_lines_named(tmp_path: Path):
    path = _jsonl(tmp_path / "corpus.jsonl", [
        {"id": "civil", "title": "中华人民共和国民法典", "text": "第五十四条 自然人从事工商业经营，经依法登记，为个体工商户。",
         "meta": {"published": "2020-05-28", "articles": 1}},
        "{broken json",
        {"id": "no-text", "title": "空"},
        {"id": "patent", "title": "专利法", "text": "第六条 职务发明创造申请专利的权利属于该单位。"},
    ])
    store = MemoryStore()
    calls: list[tuple[int, int]] = []
    report = ingest_paths([path], store, progress=lambda d, t: calls.append((d, t)))
    assert [(f.path.rsplit(":", 1)[1], f.status) for f in report.files] == [
        ("1", "added"), ("2", "failed"), ("3", "failed"), ("4", "added")]
    assert "line 2" in report.files[1].reason
    assert 'no "text"' in report.files[2].reason
    assert calls[-1] == (4, 4)
    civil = store.get_document(doc_id_for_record("civil"))
    assert civil is not None and civil.meta.title == "中华人民共和国民法典"
    assert civil.meta.publish_date == dt.date(2020, 5, 28)
    assert civil.meta.extra == {"articles": 1, "source_id": "civil"}
    assert store.chunks(civil.doc_id)[0].clause == "第五十四条"
    assert {f.status for f in ingest_paths([path], store).files if f.doc_id} == {"unchanged"}


def test_gzipped_jsonl(tmp_path: Path):
    path = _jsonl(tmp_path / "corpus.jsonl.gz", [{"id": str(i), "title": f"新闻{i}", "text": f"第{i}条新闻内容。"}
                                                 for i in range(30)], gz=True)
    store = MemoryStore()
    report = ingest_paths([path], store)
    assert report.count("added") == 30 and len(store.documents()) == 30


def test_explicit_repeal_and_newer_version(tmp_path: Path):
    (tmp_path / "old.md").write_text("医疗保障办法（2019年修订）\n第一条 旧规定。\n\n某某局\n2019年1月1日",
                                     encoding="utf-8")
    (tmp_path / "older.md").write_text("医疗保障办法（2015年修订）\n第一条 更旧的规定。\n\n某某局\n2015年1月1日",
                                       encoding="utf-8")
    (tmp_path / "rule.md").write_text("关于住院报销的通知\n第一条 内容。\n\n某某局\n2018年1月1日", encoding="utf-8")
    (tmp_path / "new.md").write_text(
        "医疗保障办法（2024年修订）\n第一条 新规定。\n第二条 本办法自2024年3月1日起施行，《关于住院报销的通知》同时废止。"
        "\n\n某某局\n2024年2月1日", encoding="utf-8")
    store = MemoryStore()
    report = ingest_paths([tmp_path], store)
    status = {Path(d.source).stem: d.meta.status for d in store.documents()}
    assert status == {"new": "active", "old": "superseded", "older": "superseded", "rule": "repealed"}
    ids = {Path(d.source).stem: d.doc_id for d in store.documents()}
    supersedes = {(e.src, e.dst) for e in _all_edges(store) if e.kind == "SUPERSEDES"}
    assert {(ids["new"], ids["rule"]), (ids["new"], ids["old"]), (ids["old"], ids["older"])} <= supersedes
    assert report.status_changes[ids["rule"]] == "repealed"


def test_newer_version_ingested_in_a_later_run_supersedes_the_stored_one(tmp_path: Path):
    store = MemoryStore()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "v1.md").write_text("差旅费管理办法\n第一条 旧。\n\n某某局\n2019年1月1日", encoding="utf-8")
    ingest_paths([tmp_path / "a"], store)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "v2.md").write_text("差旅费管理办法\n第一条 新。\n\n某某局\n2024年1月1日", encoding="utf-8")
    ingest_paths([tmp_path / "b"], store)
    status = {Path(d.source).stem: d.meta.status for d in store.documents()}
    assert status == {"v1": "superseded", "v2": "active"}


def test_cross_document_reference_resolves_after_all_documents_are_stored(tmp_path: Path):
    _jsonl(tmp_path / "laws.jsonl", [
        {"id": "civil", "title": "民法典", "text": "第五十四条 自然人从事工商业经营，经依法登记，为个体工商户。"}])
    (tmp_path / "guide.md").write_text("个体户指南\n第一条 依照《中华人民共和国民法典》第五十四条登记。", encoding="utf-8")
    store = MemoryStore()
    report = ingest_paths([tmp_path], store)
    refs = [e for e in _all_edges(store) if e.kind == "REFERENCES"]
    assert [e.dst for e in refs] == [f"{doc_id_for_record('civil')}:a54:0"]
    assert report.edges >= 1


def test_parse_document_without_a_store(tmp_path: Path):
    path = tmp_path / "a.md"
    path.write_text("第一条 甲。\n第二条 详见第一条。", encoding="utf-8")
    [(doc, chunks, edges)] = parse_document(path)
    assert [c.clause for c in chunks] == ["第一条", "第二条"]
    assert [(e.src, e.dst) for e in edges] == [(chunks[1].chunk_id, chunks[0].chunk_id)]
    with pytest.raises(IngestError, match="empty file"):
        (tmp_path / "e.txt").write_text("")
        parse_document(tmp_path / "e.txt")


def test_repeal_naming_one_version_repeals_only_that_version(tmp_path: Path):
    for year in (2015, 2019):
        (tmp_path / f"v{year}.md").write_text(
            f"医疗保障办法（{year}年修订）\n第一条 规定。\n\n某某局\n{year}年1月1日", encoding="utf-8")
    (tmp_path / "v2024.md").write_text(
        "医疗保障办法（2024年修订）\n第一条 新规定。\n第二条 《医疗保障办法（2019年修订）》同时废止。"
        "\n\n某某局\n2024年1月1日", encoding="utf-8")
    store = MemoryStore()
    ingest_paths([tmp_path], store)
    status = {Path(d.source).stem: d.meta.status for d in store.documents()}
    assert status == {"v2015": "superseded", "v2019": "repealed", "v2024": "active"}


def test_title_only_markdown_is_kept(tmp_path: Path):
    (tmp_path / "t.md").write_text("# 只有标题的文件\n", encoding="utf-8")
    store = MemoryStore()
    report = ingest_paths([tmp_path], store)
    assert report.files[0].status == "added" and report.files[0].chunks == 1
    assert store.documents()[0].meta.title == "只有标题的文件"


def test_jsonl_of_non_documents_fails_once(tmp_path: Path):
    path = _jsonl(tmp_path / "questions.jsonl", [{"id": "q1", "question": "报销比例？"},
                                                {"id": "q2", "question": "起付线？"}])
    report = ingest_paths([path], MemoryStore())
    assert len(report.files) == 1
    assert report.files[0].status == "failed"
    assert report.files[0].reason.startswith("not a document file")


def test_corrupt_gzip_fails_that_file_only(tmp_path: Path):
    (tmp_path / "bad.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00 definitely not gzip")
    (tmp_path / "ok.md").write_text("第一条 内容。", encoding="utf-8")
    report = ingest_paths([tmp_path], MemoryStore())
    assert _status(report) == {"bad.jsonl.gz": "failed", "ok.md": "added"}


def test_a_parser_crash_fails_that_file_only(tmp_path: Path, monkeypatch):
    import agentic_rag.ingest.pipeline as pipeline

    real = pipeline.parse_bytes

    def flaky(data, path, *options):
        if str(path).endswith("boom.txt"):
            raise RuntimeError("parser bug")
        return real(data, path, *options)

    monkeypatch.setattr(pipeline, "parse_bytes", flaky)
    (tmp_path / "boom.txt").write_text("第一条 内容。", encoding="utf-8")
    (tmp_path / "fine.txt").write_text("第一条 内容。", encoding="utf-8")
    report = ingest_paths([tmp_path], MemoryStore())
    assert _status(report) == {"boom.txt": "failed", "fine.txt": "added"}
    assert "RuntimeError: parser bug" in report.files[0].reason


# -- issue 11 (11): a bad override is one line naming the file, the field and the problem -------

@pytest.mark.parametrize("meta, field, problem", [
    ({"status": "draft"}, "status='draft'", "'active', 'superseded' or 'repealed'"),
    ({"title": 5}, "title=5", "valid string"),
    ({"supersedes": {"a": 1}}, "supersedes=", "valid list"),
    ({"publish_date": "sometime"}, "publish_date='sometime'", "not a date"),
])
def test_a_bad_sidecar_value_is_one_line_naming_sidecar_field_and_problem(tmp_path: Path, meta,
                                                                            field, problem):
    (tmp_path / "a.txt").write_text("第一条 出差住宿标准为每晚500元。", encoding="utf-8")
    (tmp_path / "a.txt.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    report = ingest_paths([tmp_path / "a.txt"], MemoryStore())
    (result,) = report.files
    assert result.status == "failed" and "\n" not in result.reason
    assert result.reason.startswith("sidecar a.txt.meta.json: field ")
    assert field in result.reason and problem in result.reason


def test_a_bad_jsonl_meta_value_is_one_line_naming_the_line(tmp_path: Path):
    path = _jsonl(tmp_path / "bulk.jsonl", [{"id": "1", "text": "第一条 内容。"},
                                            {"id": "2", "text": "第二条 内容。", "meta": {"status": 3}}])
    report = ingest_paths([path], MemoryStore())
    bad = [f for f in report.files if f.status == "failed"]
    assert len(bad) == 1 and bad[0].path.endswith(":2") and "\n" not in bad[0].reason
    assert bad[0].reason.startswith('line 2 "meta": field status=3')


def _all_edges(store: MemoryStore) -> list:
    """Every edge out of a document or a chunk of the store."""
    return store.edges([d.doc_id for d in store.documents()] + store.all_chunk_ids())


def test_handbook_pages_dated_only_by_effective_date_are_versions(tmp_path: Path):
    # front matter as handbook pages write it: an id, a version, the date it takes effect, no
    # publication date; the older page still says "status: active"
    page = ("---\ntitle: Remote Work\npolicy_id: WX-HR-9\nversion: \"{v}\"\neffective_date: {d}\n"
            "status: active\n---\n\n# Remote Work\n\n## Days at home\n\nStaff may work from home {n} days a week.\n")
    (tmp_path / "remote-old.md").write_text(page.format(v="1.0", d="2021-05-01", n="two"), encoding="utf-8")
    (tmp_path / "remote-new.md").write_text(page.format(v="2.0", d="2024-09-01", n="three"), encoding="utf-8")
    store = MemoryStore()
    ingest_paths([tmp_path], store)
    docs = {Path(d.source).stem: d.meta for d in store.documents()}
    assert {k: m.status for k, m in docs.items()} == {"remote-old": "superseded", "remote-new": "active"}
    assert docs["remote-new"].doc_number == "WX-HR-9"
