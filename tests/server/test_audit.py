"""The audit log (which answers cited a document; which became stale after a re-ingest), the
answer cache's invalidation by the index version, and ``arag warm``."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from agentic_rag.cli import app
from agentic_rag.config import Settings
from agentic_rag.server.schemas import AskRequest
from agentic_rag.server.service import Service

RULE_V1 = """# 会议室预订办法

第一条 会议室须提前1个工作日在行政系统中预订。

第二条 单次预订时长不得超过3小时。
"""
RULE_V2 = RULE_V1.replace("3小时", "2小时")
QUESTION = "会议室一次最多能预订几个小时？"


@pytest.fixture
def setup(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "meeting.md").write_text(RULE_V1, encoding="utf-8")
    index = tmp_path / "index"
    settings = Settings.load(index=index, embedder={"provider": "none"}, llm={"provider": "none"})
    service = Service(settings)
    service.engine.ingest([docs])
    yield service, docs, index
    service.close()


def _cli(*args: str) -> list[dict]:
    result = CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_audit_finds_citing_answers_and_the_stale_ones_after_a_reingest(setup):
    service, docs, index = setup
    first = service.ask(AskRequest(question=QUESTION))
    assert first.status == "answered" and "3" in first.text
    doc_id = first.citations[0].doc_id
    assert service.ask(AskRequest(question=QUESTION)).cached is True
    service.ask(AskRequest(question="员工食堂几点开门？"))  # cites nothing from this document

    cites = _cli("audit", "--cites", doc_id, "--index", str(index))
    assert [e["answer_id"] for e in cites][-1] == first.answer_id
    assert all(doc_id in {s["doc_id"] for s in e["evidence"]} for e in cites)
    source = cites[-1]["evidence"][0]
    assert source["content_hash"] and source["chunk_id"].startswith(doc_id)
    assert _cli("audit", "--stale", "--index", str(index)) == []

    (docs / "meeting.md").write_text(RULE_V2, encoding="utf-8")
    report = service.engine.ingest([docs])
    assert report.count("replaced") == 1
    stale = _cli("audit", "--stale", "--index", str(index))
    assert {e["answer_id"] for e in stale} == {e["answer_id"] for e in cites}
    assert "re-ingested" in stale[0]["stale"]
    # the re-ingest changed the index version: the cached answer is not served again
    again = service.ask(AskRequest(question=QUESTION))
    assert again.cached is False and "2" in again.text


def test_warm_fills_the_cache_for_the_server(setup, tmp_path):
    service, _, index = setup
    questions = tmp_path / "faq.txt"
    questions.write_text(f"{QUESTION}\n\n会议室要提前多久预订？\n", encoding="utf-8")
    runner = CliRunner(env={"ARAG_EMBEDDER__PROVIDER": "none"})
    first = runner.invoke(app, ["warm", str(questions), "--index", str(index), "--json"])
    assert first.exit_code == 0, first.output
    assert [r["cached"] for r in json.loads(first.output)] == [False, False]
    assert service.ask(AskRequest(question="会议室要提前多久预订")).cached is True
    second = runner.invoke(app, ["warm", str(questions), "--index", str(index)])
    assert "0 computed, 2 already cached" in second.output


def test_the_answer_sent_as_json_is_the_one_the_audit_log_keeps(setup):
    service, _, _ = setup
    for cached in (False, True):
        sent = json.loads(service.ask_json(AskRequest(question=QUESTION)))
        assert sent["cached"] is cached and sent["status"] == "answered" and sent["trace"]
        # reloaded (a session's history, feedback) exactly as it was sent, trace and all
        assert service.audit.get(sent["answer_id"]).model_dump(mode="json") == sent
        entry = service.audit.entries(limit=1)[0]
        assert (entry.answer_id, entry.question, entry.status, entry.cached, entry.deadline_fallback) == (
            sent["answer_id"], QUESTION, "answered", cached, False)
        assert {(s.chunk_id, s.doc_id) for s in entry.evidence} == {
            (c["chunk_id"], c["doc_id"]) for c in sent["citations"]}
        assert all(s.content_hash and s.title for s in entry.evidence)
