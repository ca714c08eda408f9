"""POST /v1/reports against a real `arag serve` over the examples: JSON, server-sent events per
step, and bad input as a 4xx with one clear message."""

from __future__ import annotations

import httpx
import pytest

from tests.server.conftest import sse_events

OLD, NEW = "职工医保待遇办法_2023.txt", "职工医保待遇办法_2024.md"


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


def test_the_templates_are_listed(client):
    names = {t["name"]: t for t in client.get("/v1/reports").json()}
    assert {"compare-versions", "topic-brief"} <= set(names)
    assert [i["name"] for i in names["compare-versions"]["inputs"]] == ["old", "new"]


def test_compare_versions_as_json(client):
    r = client.post("/v1/reports", json={"template": "compare-versions", "inputs": {"old": OLD, "new": NEW}})
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["status"] == "complete"
    changed = [c for c in report["clauses"] if c["status"] == "changed"]
    assert any(v["old"] == "30万元" and v["new"] == "40万元" for c in changed for v in c["changes"])
    cited = {c["chunk_id"] for c in report["citations"]}
    assert all(cid in cited for s in report["sections"] for line in s["lines"] for cid in line["citations"])


def test_the_steps_stream_as_they_run_then_the_report(client):
    body = {"template": "topic-brief", "inputs": {"topic": "异地就医备案"}, "stream": True}
    with client.stream("POST", "/v1/reports", json=body) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = [(name, data) for name, data in sse_events(r) if name != ":"]
    names = [n for n, _ in events]
    assert names[0] == "plan" and names[-2:] == ["report", "done"]
    assert names.count("step") == 4 and "verify" in names and "final" in names
    report = events[-2][1]
    assert report["template"] == "topic-brief" and report["conflicts"]


@pytest.mark.parametrize("body, status, code, says", [
    ({"template": "compare-versions", "inputs": {"old": "no-such-doc", "new": NEW}}, 404, "not_found", "no-such-doc"),
    ({"template": "no-such-template", "inputs": {}}, 404, "not_found", "no-such-template"),
    ({"template": "compare-versions", "inputs": {"old": OLD}}, 422, "invalid_request", "'new'"),
    ({"template": "topic-brief", "inputs": {"topic": "x"}, "colour": 1}, 422, "invalid_request", "colour"),
    ({"template": "../../arag.toml", "inputs": {}}, 422, "invalid_request", "template"),
])
def test_bad_input_is_a_4xx_naming_it(client, body, status, code, says):
    r = client.post("/v1/reports", json=body)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["code"] == code and says in error["message"]


def test_aborting_the_session_stops_the_report_between_steps(tmp_path):
    """POST /v1/sessions/{id}/abort reaches a running report through the shared run registry."""
    from agentic_rag import Settings
    from agentic_rag.server.schemas import ReportRequest
    from agentic_rag.server.service import Service
    from tests.server.conftest import ROOT

    settings = Settings.load(index=tmp_path / "index", embedder={"provider": "none"}, llm={"provider": "none"})
    service = Service(settings)
    try:
        service.engine.ingest([ROOT / "examples" / "docs" / "医保"])
        session = service.create_session().session_id
        said = []

        def on_event(event):
            if event.kind == "verify" and not said:  # the first step is done: abort, as another request would
                said.append(service.abort(session))

        body = ReportRequest(template="compare-versions", inputs={"old": OLD, "new": NEW}, session_id=session)
        report = service.report(body, on_event=on_event)
    finally:
        service.close()
    assert said == ["aborting"]
    assert report.status == "aborted" and [s.step for s in report.sections] == ["clauses"]
