"""`arag ingest --queue` over two real workers: a worker killed with SIGKILL mid-run loses
nothing and doubles nothing (its task is redelivered), the counts are exactly those of an
in-process ingest, a second run changes nothing, and a broker that is down is one line and a
non-zero exit."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import sys
import time

from agentic_rag.config import Settings
from agentic_rag.engine import Engine
from agentic_rag.store.embedded import DB_NAME

N = 1200


def _bulk(path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(N):
            fh.write(json.dumps({"id": f"n{i}", "title": f"第{i}号通知",
                                 "text": f"第一条 第{i}号通知：住院费用报销比例调整为{i % 90}%。\n"
                                         f"第二条 申请材料须在{i % 30 + 1}个工作日内提交至编号{i}的窗口。"},
                                ensure_ascii=False) + "\n")


def _counts(index) -> tuple[int, int, int]:
    with sqlite3.connect(index / DB_NAME) as db:
        docs = db.execute("SELECT count(*) FROM documents").fetchone()[0]
        chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        distinct = db.execute("SELECT count(DISTINCT chunk_id) FROM chunks").fetchone()[0]
    return docs, chunks, distinct


def _ingest(queues, *paths, **popen):
    return subprocess.Popen([sys.executable, "-m", "agentic_rag.cli", "ingest", "--queue", "--json",
                             *map(str, paths)], env={**queues.env, "ARAG_WORKERS__BATCH_RECORDS": "40"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def test_two_workers_one_killed_mid_run_give_exactly_the_in_process_index(queues, tmp_path):
    bulk = tmp_path / "bulk.jsonl"
    _bulk(bulk)
    reference = tmp_path / "reference"
    with Engine(Settings.load(index=reference, embedder={"provider": "none"})) as engine:
        assert engine.ingest([bulk]).ok
    expected = _counts(reference)
    assert expected[0] == N and expected[1] == expected[2] > N

    victim = queues.start_worker("ingest")
    queues.start_worker("ingest")
    queues.wait_consumers(f"{queues.prefix}.ingest", 2)
    run = _ingest(queues, bulk)
    deadline = time.monotonic() + 120
    written = 0
    while time.monotonic() < deadline:  # kill one worker once the run is under way
        if (queues.index / DB_NAME).exists():
            try:
                written = _counts(queues.index)[0]
            except sqlite3.Error:
                written = 0
        if written >= 80:
            break
        time.sleep(0.05)
    assert 0 < written < N, "the run finished before a worker could be killed mid-run"
    victim.send_signal(signal.SIGKILL)
    out, errors = run.communicate(timeout=240)
    assert run.returncode == 0, errors
    files = json.loads(out)["files"]
    assert len(files) == N and {f["status"] for f in files} <= {"added", "unchanged"}
    assert sorted(f["doc_id"] for f in files) == sorted({f["doc_id"] for f in files})
    assert _counts(queues.index) == expected  # nothing lost, nothing twice
    with Engine(Settings.load(index=queues.index, embedder={"provider": "none"})) as engine:
        hits = engine.search("编号1199的窗口", k=3)
        assert hits and hits[0][0].title == "第1199号通知"

    again = _ingest(queues, bulk)
    out, errors = again.communicate(timeout=240)
    assert again.returncode == 0, errors
    assert {f["status"] for f in json.loads(out)["files"]} == {"unchanged"}
    assert _counts(queues.index) == expected


def test_a_broker_that_is_down_is_one_line_and_a_non_zero_exit(queues, tmp_path):
    bulk = tmp_path / "bulk.jsonl"
    _bulk(bulk)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**queues.env, "ARAG_WORKERS__BROKER_URL": f"amqp://guest:guest@127.0.0.1:{port}//"}
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "agentic_rag.cli", "ingest", "--queue", str(bulk)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and time.monotonic() - t0 < 30
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "broker" in lines[0] and f"127.0.0.1:{port}" in lines[0], done.stderr
    assert "guest:guest" not in lines[0]  # the password stays out of the message
    assert not (queues.index / DB_NAME).exists()  # nothing written


def test_a_worker_asked_for_an_unknown_queue_says_so_in_one_line(queues):
    done = subprocess.run([sys.executable, "-m", "agentic_rag.cli", "worker", "--queues", "ingest,answers"],
                          env=queues.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: --queues takes ingest, reason or both (comma-separated), got 'ingest,answers'"]
