"""Candidate dates a person can check (`arag docs --dates`) and confirm (`arag docs confirm`),
the confirmation kept in the file's sidecar so that it survives every re-ingest."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from agentic_rag.cli import app

from .test_documents_as_they_come import arag, docs, ingest

NOTICE = """关于调整差旅费标准的通知
发布日期：2024年6月20日
第一条 住宿费标准按附表执行。
第二条 本通知自2024年7月1日起施行。
江西省财政厅
2024年6月18日
"""


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notice.txt").write_text(NOTICE, encoding="utf-8")
    return folder


def test_docs_dates_shows_three_candidates_with_rule_and_text(tmp_path: Path):
    folder, index = _folder(tmp_path), tmp_path / "idx"
    ingest(folder, index)
    code, out = arag("docs", "--dates", "--index", str(index), "--json")
    assert code == 0
    found = json.loads(out)[0]["date_candidates"]
    assert [(c["kind"], c["date"], c["rule"]) for c in found] == [
        ("publish", "2024-06-20", "发布日期 line"), ("effective", "2024-07-01", "自…起施行"),
        ("signature", "2024-06-18", "signature date")]
    assert found[0]["text"] == "发布日期：2024年6月20日"
    start, end = found[1]["span"]
    assert NOTICE[start:end] == "2024年7月1日"
    code, table = arag("docs", "--dates", "--index", str(index))
    assert code == 0 and "signature" in table and "2024-06-18" in table


def test_confirm_stores_the_date_and_it_survives_re_ingest(tmp_path: Path):
    folder, index = _folder(tmp_path), tmp_path / "idx"
    ingest(folder, index)
    doc_id = docs(index)["notice.txt"]["doc_id"]
    code, out = arag("docs", "confirm", doc_id, "publish_date=2024-06-18", "--index", str(index))
    assert code == 0 and "publish_date=2024-06-18 confirmed" in out
    sidecar = json.loads((folder / "notice.txt.meta.json").read_text(encoding="utf-8"))
    assert sidecar["publish_date"] == "2024-06-18" and sidecar["confirmed"] == {"publish_date": "2024-06-18"}
    assert docs(index)["notice.txt"]["publish_date"] == "2024-06-18"
    # the text changes and is ingested again: the confirmation still holds
    (folder / "notice.txt").write_text(NOTICE.replace("附表", "附件"), encoding="utf-8")
    assert ingest(folder, index)["notice.txt"]["status"] == "replaced"
    shown = docs(index)["notice.txt"]
    assert shown["publish_date"] == "2024-06-18" and shown["provenance"]["publish_date"] == "override"
    code, out = arag("docs", "--dates", "--index", str(index), "--json")
    publish = json.loads(out)[0]["date_candidates"][0]
    assert publish["rule"] == "confirmed" and publish["date"] == "2024-06-18"


def test_confirm_refuses_a_bad_value_and_leaves_the_sidecar_alone(tmp_path: Path):
    folder, index = _folder(tmp_path), tmp_path / "idx"
    ingest(folder, index)
    doc_id = docs(index)["notice.txt"]["doc_id"]
    for args, message in ((["publish_date=soon"], "not a date"), (["colour=red"], "cannot confirm 'colour'"),
                          (["publish_date"], "expected FIELD=VALUE")):
        result = CliRunner().invoke(app, ["docs", "confirm", doc_id, *args, "--index", str(index)])
        assert result.exit_code != 0 and message in result.stderr, result.output
    result = CliRunner().invoke(app, ["docs", "confirm", "nosuchdoc", "publish_date=2024-06-18",
                                      "--index", str(index)])
    assert result.exit_code != 0 and "no document 'nosuchdoc'" in result.stderr
    assert not (folder / "notice.txt.meta.json").exists()
    assert docs(index)["notice.txt"]["publish_date"] == "2024-06-20"
