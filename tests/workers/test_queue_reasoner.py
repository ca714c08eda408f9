"""server.reasoner = "queue": the API process routes and retrieves, a worker reasons (the trace
names it), the answer is the one the API process would give itself; with the worker stopped the
deadline returns the deterministic answer in time, marked as a fallback."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from agentic_rag.config import Settings
from agentic_rag.engine import Engine
from tests.server.conftest import Served

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "员工请假要提前几天申请？"
DEADLINE_S = 8.0  # generous: the machine running the tests may be loaded


def test_reasoning_through_the_queue_and_the_deadline_when_no_worker_answers(queues):
    settings = Settings.load(index=queues.index, embedder={"provider": "none"}, llm={"provider": "none"})
    with Engine(settings) as engine:
        assert engine.ingest([ROOT / "examples" / "docs"]).ok
        local = engine.ask(QUESTION)
    assert local.status == "answered"
    worker = queues.start_worker("reason")
    queues.wait_consumers(f"{queues.prefix}.reason", 1)
    env = {k: v for k, v in queues.env.items() if k.startswith("ARAG_")}
    served = Served(queues.index, {**env, "ARAG_SERVER__REASONER": "queue",
                                   "ARAG_SERVER__DEADLINE_S": str(DEADLINE_S)})
    try:
        with httpx.Client(base_url=served.url, timeout=60) as c:
            assert c.get("/readyz").json()["detail"]["reasoner"] == "queue"
            body = c.post("/v1/ask", json={"question": QUESTION, "options": {"cache": False}}).json()
            assert body["deadline_fallback"] is False
            sent = [e for e in body["trace"] if e["kind"] == "queue"]
            assert len(sent) == 1 and str(worker.pid) in sent[0]["args"]["worker"]
            assert body["text"] == local.text
            assert [x["chunk_id"] for x in body["citations"]] == [x.chunk_id for x in local.citations]

            queues.stop(worker)  # no worker on the reasoning queue now
            assert queues.consumers(f"{queues.prefix}.reason") == 0
            t0 = time.monotonic()
            r = c.post("/v1/ask", json={"question": QUESTION, "options": {"cache": False}})
            elapsed = time.monotonic() - t0
            assert r.status_code == 200, r.text
            late = r.json()
            assert elapsed < DEADLINE_S + 4.0
            assert late["deadline_fallback"] is True
            first = late["trace"][0]
            assert first["kind"] == "fallback" and first["tool"] == "deadline"
            assert "queued reasoning" in first["fallback"]
            assert late["text"] == local.text and late["status"] == "answered"
    finally:
        served.close()
