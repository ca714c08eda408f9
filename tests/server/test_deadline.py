"""The LLM never leaves a request unanswered: a hung LLM is abandoned at server.deadline_s and
the deterministic answer comes back in time, marked; a slow run can be aborted from a second
connection, and a client that disconnects stops its run."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from tests.server.conftest import API_KEY, FakeLLM, sse_events

HEAT = "高温补贴每个月发多少钱？"
AUTH = {"Authorization": f"Bearer {API_KEY}"}


@pytest.fixture
def client(llm_server):
    with httpx.Client(base_url=llm_server.url, timeout=60, headers=AUTH) as c:
        yield c


def test_a_hanging_llm_gets_the_deterministic_answer_within_the_deadline(client, fake_llm):
    fake_llm.delay = None  # every LLM call hangs
    calls = fake_llm.calls
    t0 = time.monotonic()
    r = client.post("/v1/ask", json={"question": HEAT, "options": {"cache": False}})
    elapsed = time.monotonic() - t0
    assert r.status_code == 200, r.text
    body = r.json()
    # the answer came at the 1 s deadline, not when the hung LLM would have replied (a bound
    # far from both: the deterministic run after the deadline is slower on a busy machine)
    assert elapsed < FakeLLM.HANG_S / 3, elapsed
    assert fake_llm.calls > calls  # the LLM was really asked
    assert body["deadline_fallback"] is True
    assert body["status"] == "answered" and body["citations"]
    first = body["trace"][0]
    assert first["kind"] == "fallback" and first["tool"] == "deadline" and "deadline" in first["fallback"]


def test_the_deadline_fallback_is_streamed_as_a_fallback_event(client, fake_llm):
    fake_llm.delay = None
    t0 = time.monotonic()
    with client.stream("POST", "/v1/ask", json={"question": HEAT, "stream": True,
                                                 "options": {"cache": False}}) as r:
        events = [(n, d) for n, d in sse_events(r) if n != ":"]
    assert time.monotonic() - t0 < FakeLLM.HANG_S / 3
    names = [n for n, _ in events]
    assert "fallback" in names and names[-2:] == ["answer", "done"]
    # the abandoned LLM run may stream its own fallbacks (a gate whose call was cut off) first;
    # the server's deadline note is the one that hands over to the deterministic run
    at = next(i for i, (n, d) in enumerate(events) if n == "fallback" and d.get("tool") == "deadline")
    # after the deadline note, only the deterministic run's steps: it starts again at route
    assert names[at + 1] == "route"
    assert events[-2][1]["deadline_fallback"] is True


def test_a_fast_llm_answers_itself(client, fake_llm):
    fake_llm.delay = 0.0
    body = client.post("/v1/ask", json={"question": HEAT, "options": {"cache": False}}).json()
    assert body["deadline_fallback"] is False and body["status"] == "answered"
    assert body["usage"]["llm_calls"] >= 1


def test_abort_from_a_second_connection_stops_the_run_between_steps(llm_server, fake_llm):
    fake_llm.delay = 0.6
    with httpx.Client(base_url=llm_server.url, timeout=60, headers=AUTH) as first, \
            httpx.Client(base_url=llm_server.url, timeout=60, headers=AUTH) as second:
        sid = first.post("/v1/sessions").json()["session_id"]
        seen: list[str] = []
        aborted = threading.Event()
        with first.stream("POST", "/v1/ask", json={"question": HEAT, "session_id": sid, "stream": True,
                                                    "options": {"deadline_s": 60}}) as r:
            for name, data in sse_events(r):
                seen.append(name)
                if name == "route" and not aborted.is_set():
                    res = second.post(f"/v1/sessions/{sid}/abort")
                    assert res.status_code == 200 and res.json()["status"] == "aborting"
                    aborted.set()
                if name == "answer":
                    answer = data
        assert answer["status"] == "aborted" and "abort" in seen and seen[-1] == "done"
        view = second.get(f"/v1/sessions/{sid}").json()
        assert view["status"] == "aborted"
        assert view["turns"][-1]["answer"]["status"] == "aborted"
        # the next question in the session is not aborted by the old flag
        assert second.post(f"/v1/sessions/{sid}/abort").json()["status"] == "aborted"


def test_a_client_that_disconnects_stops_its_run(llm_server, fake_llm):
    fake_llm.delay = 0.6
    with httpx.Client(base_url=llm_server.url, timeout=60, headers=AUTH) as c:
        sid = c.post("/v1/sessions").json()["session_id"]
        with c.stream("POST", "/v1/ask", json={"question": HEAT, "session_id": sid, "stream": True,
                                                "options": {"deadline_s": 60}}) as r:
            for name, _ in sse_events(r):
                if name == "route":
                    break  # leaving the block closes the connection
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            state = c.get(f"/v1/sessions/{sid}").json()["status"]
            if state == "aborted":
                break
            time.sleep(0.2)
        assert state == "aborted"


def test_heartbeat_comments_keep_a_quiet_stream_open(llm_server, fake_llm):
    # heartbeat_s is 1 s on this server; each LLM call is traced as it ends, so one call must be
    # quiet for longer than that
    fake_llm.delay = 1.6
    with httpx.Client(base_url=llm_server.url, timeout=60, headers=AUTH) as c:
        with c.stream("POST", "/v1/ask", json={"question": "员工请假要提前几天申请？", "stream": True,
                                                "options": {"deadline_s": 60, "cache": False}}) as r:
            names = [n for n, _ in sse_events(r)]
    assert ":" in names and names[-1] == "done"
