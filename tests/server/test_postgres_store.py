"""`arag ingest` and `arag serve` on the PostgreSQL store (a real server with pgvector): the same
commands, the same answers; a database lost mid-run answers 503 with a JSON body, and the next
request succeeds once it is back. A database down at start is one line and a non-zero exit."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest

from tests.server.conftest import ROOT, Served

HEAT = "夏天发的高温补贴，一个月能拿多少钱？"


def _env(pg_server, schema: str) -> dict[str, str]:
    return {"ARAG_STORE__URL": pg_server.url(), "ARAG_STORE__DB_SCHEMA": schema,
            "ARAG_STORE__CONNECT_TIMEOUT_S": "3", "ARAG_EMBEDDER__PROVIDER": "none",
            "ARAG_LLM__PROVIDER": "none"}


def _arag(args: list[str], env: dict[str, str], cwd) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("ARAG_")}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "agentic_rag.cli", *args], env=full, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def pg_served(pg_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("pgserve")
    env = _env(pg_server, "served")
    done = _arag(["ingest", str(ROOT / "examples" / "docs")], env, folder)
    assert done.returncode == 0, done.stderr
    served = Served(folder / "local", env)  # the folder holds only the service's local files
    yield served
    served.close()


def test_ingest_and_ask_through_the_server(pg_served):
    r = httpx.post(f"{pg_served.url}/v1/ask", json={"question": HEAT, "options": {"cache": False}}, timeout=60)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "answered" and ("300" in body["text"] or "三百" in body["text"])
    assert not (pg_served.index / "arag.db").exists()  # nothing of the index on the local disk


def test_lost_database_is_a_503_and_the_next_request_succeeds(pg_served, pg_server):
    pg_server.stop()
    try:
        r = httpx.post(f"{pg_served.url}/v1/ask", json={"question": HEAT, "options": {"cache": False}}, timeout=60)
        assert r.status_code == 503, r.text
        err = r.json()["error"]
        assert err["code"] == "store_unavailable" and "PostgreSQL" in err["message"]
    finally:
        pg_server.start()
    r = httpx.post(f"{pg_served.url}/v1/ask", json={"question": HEAT, "options": {"cache": False}}, timeout=60)
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "answered"


def test_database_down_at_start_is_one_line_and_a_nonzero_exit(tmp_path):
    env = {"ARAG_STORE__URL": f"postgresql://postgres@/postgres?host={tmp_path}",
           "ARAG_STORE__CONNECT_TIMEOUT_S": "2", "ARAG_EMBEDDER__PROVIDER": "none"}
    for args in (["ask", HEAT], ["serve", "--port", "0", "--workers", "2", "--index", str(tmp_path / "i")]):
        done = _arag(args, env, tmp_path)
        assert done.returncode != 0, args
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot connect to PostgreSQL" in lines[0], done.stderr
