"""compare-versions on two versions written for the test: each clause gets the right category,
both citations, and the old and new values side by side; the summary lists material changes first."""

from __future__ import annotations

from agentic_rag.reports import ReportRunner, render


def _by_label(report):
    out = {}
    for c in report.clauses:
        old = c.old.clause if c.old else None
        new = c.new.clause if c.new else None
        out[(old, new)] = c
    return out


def test_chinese_notice_each_clause_in_its_category_with_both_citations(engine, doc_ids):
    report = ReportRunner(engine).run("compare-versions", {"old": doc_ids["notice_2023"],
                                                           "new": doc_ids["notice_2025"]})
    assert report.status == "complete"
    clauses = _by_label(report)
    status = {k: c.status for k, c in clauses.items()}
    assert status == {("第一条", "第一条"): "unchanged", ("第二条", "第二条"): "changed",
                      ("第三条", "第三条"): "changed", ("第四条", None): "removed",
                      ("第五条", "第四条"): "renumbered", (None, "第五条"): "added",
                      ("第六条", "第六条"): "changed"}
    for (old, new), c in clauses.items():  # each side cites its own document
        if old:
            assert c.old.doc_id == doc_ids["notice_2023"] and c.old.clause == old
        if new:
            assert c.new.doc_id == doc_ids["notice_2025"] and c.new.clause == new
    values = {(v.old, v.new, v.kind) for v in clauses[("第二条", "第二条")].changes}
    assert values == {("300元", "450元", "number"), ("24个月", "36个月", "duration")}
    assert [(v.old, v.new, v.kind) for v in clauses[("第三条", "第三条")].changes] == [("30日", "15个工作日", "duration")]
    assert [(v.old, v.new) for v in clauses[("第六条", "第六条")].changes] == [("2023年6月1日", "2025年3月1日")]
    assert clauses[("第五条", "第四条")].changes == [] and not clauses[("第五条", "第四条")].material

    summary = next(s for s in report.sections if s.step == "summary")
    texts = [line.text for line in summary.lines]
    assert any("300元 → 450元" in t for t in texts) and any("30日 → 15个工作日" in t for t in texts)
    # value changes first, then clauses added, then removed; each change line cites both clauses
    kinds = ["added" if t.startswith("新增") else "removed" if t.startswith("删除") else "change" for t in texts]
    assert kinds == sorted(kinds, key=["change", "added", "removed"].index)
    for line in summary.lines:
        assert line.supported, line
        if not line.text.startswith(("新增", "删除")):
            assert {cid.split(":")[0] for cid in line.citations} == {doc_ids["notice_2023"], doc_ids["notice_2025"]}
    assert not any("第一条" in t for t in texts)  # an unchanged clause is not a material change

    md = render(report, "md")
    assert "第五条 → 第四条" in md and "| unchanged | changed | renumbered | added | removed |" in md
    cited = {c.chunk_id for c in report.citations}
    assert all(cid in cited for s in report.sections for line in s.lines for cid in line.citations)


def test_english_policy_likewise(engine, doc_ids):
    report = ReportRunner(engine).run("compare-versions", {"old": doc_ids["policy_v1"], "new": doc_ids["policy_v2"]})
    status = {k: c.status for k, c in _by_label(report).items()}
    assert status == {("Article 1", "Article 1"): "unchanged", ("Article 2", "Article 2"): "changed",
                      ("Article 3", "Article 3"): "changed", ("Article 4", None): "removed",
                      ("Article 5", "Article 4"): "renumbered", (None, "Article 5"): "added"}
    changed = _by_label(report)[("Article 2", "Article 2")]
    assert {(v.old, v.new) for v in changed.changes} == {("USD 0.30", "USD 0.45"), ("USD 60", "USD 90")}
    summary = next(s for s in report.sections if s.step == "summary")
    assert summary.lines[0].text.startswith("Article 2:") and "USD 0.30 → USD 0.45" in summary.lines[0].text
    assert any(line.text.startswith("Added Article 5") for line in summary.lines)
    assert any(line.text.startswith("Removed Article 4") for line in summary.lines)
    check = next(s for s in report.sections if s.step == "complete")
    assert check.status == "done" and "every clause accounted for: 5 old, 5 new" in check.checks


def test_documents_named_by_source_path(engine, corpus):
    report = ReportRunner(engine).run("compare-versions", {"old": corpus["notice_2023"].name,
                                                           "new": corpus["notice_2025"].name})
    assert report.status == "complete" and len(report.clauses) == 7


def test_html_and_json_renderings(engine, doc_ids):
    import json

    report = ReportRunner(engine).run("compare-versions", {"old": doc_ids["policy_v1"], "new": doc_ids["policy_v2"]})
    html = render(report, "html")
    assert html.startswith("<!doctype html>") and "USD 0.30 → USD 0.45" in html and "id='src-1'" in html
    data = json.loads(render(report, "json"))
    assert data["template"] == "compare-versions" and data["clauses"][0]["status"] == "unchanged"


def test_two_clauses_merged_into_one_keep_their_changed_values(engine, doc_ids):
    report = ReportRunner(engine).run("compare-versions", {"old": doc_ids["rules_v1"], "new": doc_ids["rules_v2"]})
    merged = next(c for c in report.clauses if c.merged_into is not None)
    kept = next(c for c in report.clauses if c.merged_from)
    assert merged.status == "removed" and merged.merged_into.clause == "第三条" == kept.new.clause
    both = [(v.old, v.new) for v in merged.changes + kept.changes]
    assert ("10日", "15日") in both  # the deadline changed on the way into the merged clause
    moved = next(c for c in report.clauses if c.old and c.old.clause == "第五条")
    assert moved.status == "renumbered" and moved.new.clause == "第四条"
    assert [(v.old, v.new) for v in moved.changes] == [("2023年1月1日", "2025年1月1日")]
    summary = next(s for s in report.sections if s.step == "summary")
    assert any("10日 → 15日" in line.text and len(line.citations) == 2 for line in summary.lines)
