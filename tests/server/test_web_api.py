"""What the web page needs from the server: the page and its static files at ``/``, ``/v1/info``,
and the three sliders (``controls`` of ``/v1/ask``) honoured by the engine behind it."""

from __future__ import annotations

import httpx
import pytest

from tests.server.conftest import API_KEY

PARTIAL = "江南省2021年退休人员门诊报销比例是多少？"  # the examples have no 2021 rules


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


def ask(client, question, **body):
    r = client.post("/v1/ask", json={"question": question, "options": {"cache": False}, **body})
    assert r.status_code == 200, r.text
    return r.json()


def test_the_page_and_its_files_are_served_at_the_root(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script src="/static/app.js">' in page.text and 'lang="zh"' in page.text
    js = client.get("/static/app.js")
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]
    assert "/v1/ask" in js.text
    assert client.get("/static/app.css").headers["content-type"].startswith("text/css")
    assert client.get("/static/nothing.js").status_code == 404
    assert "/" not in client.get("/openapi.json").json()["paths"]  # the page is not an API


def test_info_tells_the_page_the_modes_controls_and_llm(client):
    info = client.get("/v1/info").json()
    assert info["llm"] is None and info["modes"] == ["pipeline", "react", "plan"]
    assert {c["name"]: (c["min"], c["max"], c["default"]) for c in info["controls"]} == {
        "retrieval": (1, 4, 3), "reflection": (0, 2, 1), "latitude": (0, 2, 1)}
    assert info["docs"] >= 5 and info["chunks"] > info["docs"]


def test_the_page_needs_no_key_but_the_api_does(llm_server):
    with httpx.Client(base_url=llm_server.url, timeout=30) as c:
        assert c.get("/").status_code == 200 and c.get("/static/app.css").status_code == 200
        assert c.get("/v1/info").status_code == 401
        info = c.get("/v1/info", headers={"X-API-Key": API_KEY}).json()
        assert info["llm"] == "openai"


def test_retrieval_intensity_sets_the_rounds_and_queries_the_engine_runs(client):
    low = ask(client, PARTIAL, controls={"retrieval": 1})
    high = ask(client, PARTIAL, controls={"retrieval": 4})
    assert low["usage"]["retrieval_rounds"] == 1
    assert len([e for e in low["trace"] if e["kind"] == "tool"]) == 1
    assert high["usage"]["retrieval_rounds"] > 1


def test_reflection_depth_zero_skips_the_gates_and_says_so(client):
    quick = ask(client, PARTIAL, controls={"reflection": 0})
    # the runtime's gate (the Retriever's own per-round check, args.round, is not a slider's)
    gates = [e for e in quick["trace"] if e["kind"] == "gate" and e["tool"] == "sufficiency"
             and "round" not in e["args"]]
    assert [g["args"]["verdict"] for g in gates] == ["SKIPPED"]
    assert quick["usage"]["retrieval_rounds"] == 1
    assert any(e["kind"] == "verify" and e["detail"].startswith("skipped") for e in quick["trace"])


def test_inference_latitude_decides_between_a_partial_answer_and_an_abstention(client):
    normal = ask(client, PARTIAL)
    strict = ask(client, PARTIAL, controls={"latitude": 0})
    assert normal["status"] in ("answered", "needs_review") and normal["gaps"]
    assert strict["status"] == "abstained" and not strict["citations"] and strict["gaps"]


def test_controls_are_part_of_the_cache_key(client):
    q = "高温津贴一个月发多少钱？"
    first = client.post("/v1/ask", json={"question": q, "controls": {"retrieval": 2}}).json()
    other = client.post("/v1/ask", json={"question": q, "controls": {"retrieval": 1}}).json()
    again = client.post("/v1/ask", json={"question": q, "controls": {"retrieval": 2}}).json()
    assert other["cached"] is False and again["cached"] is True and first["text"] == again["text"]


@pytest.mark.parametrize("controls", [{"retrieval": 0}, {"retrieval": 5}, {"reflection": 3},
                                      {"latitude": -1}, {"depth": 1}])
def test_out_of_range_controls_are_refused(client, controls):
    r = client.post("/v1/ask", json={"question": "高温津贴", "controls": controls})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
