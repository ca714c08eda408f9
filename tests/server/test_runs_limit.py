"""``server.max_concurrent_runs``: at most that many deterministic questions are answered at once
in one worker; the others wait their turn and are all answered."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest

from agentic_rag.config import Settings
from agentic_rag.server.app import create_app
from agentic_rag.server.service import Service

QUESTION = "夏天发的高温补贴，一个月能拿多少钱？"


def _busiest(index, limit: int | None, requests: int = 4) -> tuple[int, list[httpx.Response]]:
    """(most questions running at one moment, the responses) for ``requests`` sent together;
    ``limit`` None leaves ``server.max_concurrent_runs`` at its default."""
    server = {} if limit is None else {"max_concurrent_runs": limit}
    settings = Settings.load(index=index, embedder={"provider": "none"}, llm={"provider": "none"},
                             server=server)
    service = Service(settings)
    runtime = service.runtime(False)  # the one every default /v1/ask question runs on
    real_run = runtime.run
    running, most, lock = [0], [0], threading.Lock()

    def run(*args, **kwargs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            time.sleep(0.2)  # long enough for the other requests to arrive meanwhile
            return real_run(*args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    runtime.run = run  # type: ignore[method-assign]

    async def send_all() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=create_app(service=service))
        async with httpx.AsyncClient(transport=transport, base_url="http://test", timeout=30) as c:
            return await asyncio.gather(*(c.post("/v1/ask", json={"question": QUESTION,
                                                                   "options": {"cache": False}})
                                          for _ in range(requests)))

    try:
        responses = asyncio.run(send_all())
        return most[0], responses
    finally:
        service.close()


@pytest.mark.parametrize("limit", [1, 2])
def test_questions_past_the_limit_wait_their_turn_and_are_all_answered(index_copy, limit):
    most, responses = _busiest(index_copy(f"limit{limit}"), limit)
    assert most == limit
    assert [r.status_code for r in responses] == [200] * 4
    assert all(r.json()["status"] == "answered" and r.json()["citations"] for r in responses)
    assert len({r.json()["answer_id"] for r in responses}) == 4


def test_by_default_two_questions_run_at_once_over_the_embedded_store(index_copy):
    most, responses = _busiest(index_copy("default"), None)
    assert most == 2
    assert [r.status_code for r in responses] == [200] * 4


def test_by_default_runs_over_postgresql_are_not_limited():
    embedded = Settings.load(llm={"provider": "none"})
    remote = Settings.load(llm={"provider": "none"}, store={"url": "postgresql://arag@127.0.0.1:5432/test"})
    assert embedded.server.run_slots(embedded.store) == 2
    assert remote.server.run_slots(remote.store) == 0  # its runs wait on the server, not the CPU
    pinned = Settings.load(llm={"provider": "none"}, server={"max_concurrent_runs": 3},
                           store={"url": "postgresql://arag@127.0.0.1:5432/test"})
    assert pinned.server.run_slots(pinned.store) == 3


def test_without_a_limit_questions_run_side_by_side(index_copy):
    most, responses = _busiest(index_copy("nolimit"), 0)
    assert most > 1
    assert [r.status_code for r in responses] == [200] * 4
