"""Several API workers sharing their state through Redis (``state.url``): a session created in
one continues in the other, an abort sent to the other stops the run between steps, rate limits
count one budget per key across workers, and Redis lost mid-run is a 503 JSON answer, with the
next request served again once Redis is back."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from tests.server.conftest import Served, sse_events
from tests.server.test_resources import _pinned_clients
from tests.services import PrivateRedis, redis_client

pytest.importorskip("redis", reason="the redis extra is not installed")

URL = "redis://127.0.0.1:6379/15"  # the database these tests own on the local Redis
HEAT = "高温补贴每个月发多少钱？"
PER_MINUTE = 40


@pytest.fixture(scope="module")
def shared_redis():
    client = redis_client(URL)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture(scope="module")
def pair(index_copy, fake_llm, shared_redis):
    """Two API workers on Redis state (with the slow fake LLM for the abort), a client on each."""
    served = Served(index_copy("redis-state"), {
        "ARAG_STATE__URL": URL, "ARAG_LLM__PROVIDER": "openai", "ARAG_LLM__BASE_URL": fake_llm.chat.base_url,
        "ARAG_LLM__MODEL": "fake", "ARAG_LLM_API_KEY": "sk-fake", "ARAG_LLM__MAX_RETRIES": "0",
        "ARAG_SERVER__RATE_LIMIT_PER_MINUTE": str(PER_MINUTE)}, workers=2)
    clients = _pinned_clients(served.url)
    yield list(clients.values())
    for c in clients.values():
        c.close()
    served.close()


def test_a_session_started_in_one_worker_continues_in_the_other(pair, shared_redis, fake_llm):
    assert len(pair) == 2, "the kernel never handed a connection to the second worker"
    fake_llm.delay = 0.0
    a, b = pair
    assert a.get("/readyz").json()["detail"]["state"] == URL
    sid = a.post("/v1/sessions").json()["session_id"]
    first = a.post("/v1/ask", json={"question": "员工请假要提前几天申请？", "session_id": sid,
                                    "llm": "none"}).json()
    follow = b.post("/v1/ask", json={"question": "那病假呢？", "session_id": sid, "llm": "none"}).json()
    assert follow["session_id"] == sid
    view = a.get(f"/v1/sessions/{sid}").json()
    assert [t["answer"]["answer_id"] for t in view["turns"]] == [first["answer_id"], follow["answer_id"]]
    # the conversation the second worker read came from Redis: the follow-up was resolved against it
    assert any(e["kind"] == "contextualize" for e in view["turns"][1]["answer"]["trace"])
    assert shared_redis.exists(f"session:{sid}")
    assert b.delete(f"/v1/sessions/{sid}").status_code == 200
    assert a.get(f"/v1/sessions/{sid}").status_code == 404


def test_an_abort_sent_to_the_other_worker_stops_the_run(pair, fake_llm):
    # each LLM call outlasts the abort's trip through the other worker and Redis, even on a
    # loaded machine: the run is still going when the abort lands
    fake_llm.delay = 2.0
    a, b = pair
    sid = a.post("/v1/sessions").json()["session_id"]
    aborted = threading.Event()
    answer = None
    with a.stream("POST", "/v1/ask", json={"question": HEAT, "session_id": sid, "stream": True,
                                            "options": {"deadline_s": 60}}) as r:
        for name, data in sse_events(r):
            if name == "route" and not aborted.is_set():
                res = b.post(f"/v1/sessions/{sid}/abort")
                assert res.status_code == 200 and res.json()["status"] == "aborting"
                aborted.set()
            if name == "answer":
                answer = data
    assert answer is not None and answer["status"] == "aborted"
    assert b.get(f"/v1/sessions/{sid}").json()["status"] == "aborted"
    fake_llm.delay = 0.0


def test_rate_limits_are_one_budget_per_key_across_workers(pair):
    a, b = pair
    for _ in range(2):  # a minute boundary in the middle resets the counters: measure again
        minute = int(time.time() // 60)
        codes = [(a if i % 2 else b).get("/v1/models").status_code
                 for i in range(PER_MINUTE + 1)]
        if int(time.time() // 60) == minute:
            break
    refused = codes.index(429) if 429 in codes else None
    assert refused is not None and refused <= PER_MINUTE  # earlier tests spent part of this budget
    body = a.get("/v1/models").json()
    assert body["error"]["code"] == "rate_limited"
    assert a.get("/healthz").status_code == 200  # health checks are never limited


def test_redis_lost_mid_run_is_a_503_and_the_next_request_is_served_once_it_is_back(
        index_copy, fake_llm, tmp_path):
    redis = PrivateRedis(tmp_path)
    served = Served(index_copy("redis-lost"), {
        "ARAG_STATE__URL": redis.url, "ARAG_STATE__TIMEOUT_S": "1", "ARAG_LLM__PROVIDER": "openai",
        "ARAG_LLM__BASE_URL": fake_llm.chat.base_url, "ARAG_LLM__MODEL": "fake",
        "ARAG_LLM_API_KEY": "sk-fake", "ARAG_LLM__MAX_RETRIES": "0"})
    try:
        with httpx.Client(base_url=served.url, timeout=60) as c:
            fake_llm.delay = 0.6
            sid = c.post("/v1/sessions").json()["session_id"]
            threading.Timer(1.0, redis.stop).start()  # Redis goes away while the question runs
            r = c.post("/v1/ask", json={"question": HEAT, "session_id": sid, "options": {"deadline_s": 60}})
            assert r.status_code == 503, r.text
            assert r.json()["error"]["code"] == "state_unavailable"
            assert f"127.0.0.1:{redis.port}" in r.json()["error"]["message"]
            down = c.post("/v1/sessions")
            assert down.status_code == 503 and down.json()["error"]["code"] == "state_unavailable"
            redis.start()  # back, empty (no persistence): new sessions work at once
            fake_llm.delay = 0.0
            sid = c.post("/v1/sessions").json()["session_id"]
            again = c.post("/v1/ask", json={"question": "员工请假要提前几天申请？", "session_id": sid,
                                            "llm": "none"})
            assert again.status_code == 200 and again.json()["status"] == "answered"
    finally:
        served.close()
        redis.stop()
