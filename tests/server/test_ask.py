"""/v1/ask as JSON and as server-sent events, the three agents' endpoints, health, OpenAPI, and
bad input: every refusal is a 4xx with ``{error: {code, message}}``."""

from __future__ import annotations

import httpx
import pytest

from tests.server.conftest import sse_events

HEAT = "夏天发的高温补贴，一个月能拿多少钱？"
UNKNOWN = "公司食堂的晚餐几点开始供应？"


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


def test_ask_json_returns_a_cited_answer_with_an_id(client):
    r = client.post("/v1/ask", json={"question": HEAT, "options": {"cache": False}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "answered"
    assert "300" in body["text"] or "三百" in body["text"]
    assert body["answer_id"] and body["cached"] is False and body["deadline_fallback"] is False
    cite = body["citations"][0]
    assert cite["chunk_id"].startswith(cite["doc_id"]) and cite["quote"] and cite["clause"]
    start, end = cite["span"]
    assert end > start
    assert [e["kind"] for e in body["trace"]][0] == "route"
    assert body["trace"][-1]["kind"] == "final"


def test_a_question_the_documents_do_not_cover_abstains(client):
    body = client.post("/v1/ask", json={"question": UNKNOWN}).json()
    assert body["status"] == "abstained" and body["gaps"]


def test_sse_streams_each_step_then_the_answer_then_done(client):
    with client.stream("POST", "/v1/ask", json={"question": HEAT, "options": {"cache": False}},
                       headers={"Accept": "text/event-stream"}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        assert r.headers["cache-control"] == "no-cache"
        assert r.headers["x-accel-buffering"] == "no"
        events = [(name, data) for name, data in sse_events(r) if name != ":"]
    names = [n for n, _ in events]
    assert names[0] == "route"
    assert names[-2:] == ["answer", "done"]
    steps = events[:-2]
    assert {"route", "gate", "reason", "verify", "final"} <= {n for n, _ in steps}
    assert all(data["kind"] == name for name, data in steps)  # the event name is the step's kind
    assert [d["step"] for _, d in steps] == sorted(d["step"] for _, d in steps)
    answer = events[-2][1]
    assert answer["status"] == "answered" and answer["citations"]
    assert set(answer["citations"][0]) >= {"chunk_id", "title", "clause", "quote", "span"}
    assert events[-1][1] == {"answer_id": answer["answer_id"], "status": "answered"}


def test_stream_true_in_the_body_also_streams(client):
    with client.stream("POST", "/v1/ask", json={"question": HEAT, "stream": True}) as r:
        names = [n for n, _ in sse_events(r)]
    assert names[-2:] == ["answer", "done"]


def test_the_cache_marks_a_repeated_question_and_ignores_punctuation(client):
    q = "What is the hotel limit per night for business trips in Tier 1 cities"
    first = client.post("/v1/ask", json={"question": q}).json()
    second = client.post("/v1/ask", json={"question": "  what is the hotel limit per night for "
                                                       "business trips in tier 1 cities?"}).json()
    assert first["cached"] is False and second["cached"] is True
    assert second["text"] == first["text"] and second["answer_id"] != first["answer_id"]
    fresh = client.post("/v1/ask", json={"question": q, "options": {"cache": False}}).json()
    assert fresh["cached"] is False


def test_route_retrieve_reason_chain_through_their_contracts(client):
    route = client.post("/v1/route", json={"question": HEAT})
    assert route.status_code == 200
    decision = route.json()
    assert decision["question"] == HEAT and decision["query"] and decision["intent"]
    got = client.post("/v1/retrieve", json={"route": decision, "k": 3}).json()
    assert got["route"] == decision
    evidence = got["evidence"]
    assert 1 <= len(evidence) <= 3 and [e["rank"] for e in evidence] == [1, 2, 3][:len(evidence)]
    assert {"chunk", "score", "scores", "legs"} <= set(evidence[0])
    by_question = client.post("/v1/retrieve", json={"question": HEAT, "k": 3}).json()
    assert [e["chunk"]["chunk_id"] for e in by_question["evidence"]] == [e["chunk"]["chunk_id"] for e in evidence]
    answer = client.post("/v1/reason", json={"question": HEAT, "route": decision, "evidence": evidence}).json()
    assert answer["status"] == "answered"
    assert {c["chunk_id"] for c in answer["citations"]} <= {e["chunk"]["chunk_id"] for e in evidence}
    empty = client.post("/v1/reason", json={"question": HEAT, "evidence": []}).json()
    assert empty["status"] == "abstained"


@pytest.mark.parametrize("send, status, code", [
    (dict(content=b'{"question": "x"', headers={"content-type": "application/json"}), 400, "malformed_json"),
    (dict(json={"question": 12}), 422, "invalid_request"),
    (dict(json={"question": ["a"]}), 422, "invalid_request"),
    (dict(json={}), 422, "invalid_request"),
    (dict(json={"question": ""}), 422, "invalid_request"),
    (dict(json={"question": "   \n "}), 422, "empty_question"),
    (dict(json={"question": "x", "k": 0}), 422, "invalid_request"),
    (dict(json={"question": "x", "mode": "guess"}), 422, "invalid_request"),
    (dict(json={"question": "x", "typo_field": 1}), 422, "invalid_request"),
    (dict(json={"question": "x", "session_id": "no-such-session"}), 404, "not_found"),
    (dict(json={"question": "问" * 10_000}), 413, "question_too_long"),
    (dict(json={"question": "q" * (10 * 1024 * 1024)}), 413, "body_too_large"),
])
def test_bad_requests_get_a_4xx_with_a_json_error(client, send, status, code):
    r = client.post("/v1/ask", **send)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] == code and err["message"]
    assert "Traceback" not in r.text


def test_the_agents_endpoints_refuse_bad_input_with_json_errors(client):
    r = client.post("/v1/retrieve", json={"k": 3})
    assert r.status_code == 422 and r.json()["error"]["code"] == "missing_field"
    r = client.post("/v1/route", json={"question": " "})
    assert r.status_code == 422 and r.json()["error"]["code"] == "empty_question"
    r = client.post("/v1/reason", json={"question": "x", "evidence": [{"score": 1}]})
    assert r.status_code == 422 and "evidence.0.chunk" in r.json()["error"]["message"]


def test_unknown_paths_and_methods_are_json_errors(client):
    r = client.get("/v1/nothing-here")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    r = client.get("/v1/ask")
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


def test_health_readiness_docs_and_openapi(client):
    assert client.get("/healthz").json()["status"] == "ok"
    ready = client.get("/readyz").json()
    assert ready["status"] == "ready" and ready["detail"]["docs"] >= 5
    spec = client.get("/openapi.json").json()
    for path in ("/v1/ask", "/v1/route", "/v1/retrieve", "/v1/reason", "/v1/chat/completions",
                 "/v1/sessions/{session_id}/abort", "/v1/documents", "/v1/feedback"):
        assert path in spec["paths"], path
    assert "RouteDecision" in spec["components"]["schemas"]
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_metrics_count_requests_stages_answers_and_cache(client):
    q = "Stellar River 的标准工作时间是几点到几点？"
    client.post("/v1/ask", json={"question": q})
    client.post("/v1/ask", json={"question": q})
    text = client.get("/metrics").text
    assert 'arag_requests_total{endpoint="/v1/ask",method="POST",status="200"}' in text
    assert 'arag_request_seconds_bucket{endpoint="/v1/ask",le="0.1"}' in text
    assert 'arag_stage_seconds_count{stage="route"}' in text
    assert 'arag_stage_seconds_count{stage="reason"}' in text
    assert 'arag_cache_total{result="hit"}' in text
    assert 'arag_answers_total{status="answered"}' in text or 'arag_answers_total{status="abstained"}' in text


def test_cors_is_off_by_default(client):
    r = client.options("/v1/ask", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in r.headers


def test_api_keys_are_required_when_configured(llm_server):
    from tests.server.conftest import API_KEY

    with httpx.Client(base_url=llm_server.url, timeout=30) as c:
        assert c.get("/healthz").status_code == 200  # probes stay open
        r = c.post("/v1/route", json={"question": HEAT})
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
        assert c.post("/v1/route", json={"question": HEAT},
                      headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert c.post("/v1/route", json={"question": HEAT},
                      headers={"Authorization": f"Bearer {API_KEY}"}).status_code == 200
        assert c.post("/v1/route", json={"question": HEAT}, headers={"X-API-Key": API_KEY}).status_code == 200
