"""Tokenizer worker processes end with the ingest that started them, even after ``kill -9``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="workers are forked (POSIX only)")

# An ingest big enough for the worker pool (200+ chunks in one batch), then a pause with the pool
# still alive, as during the embedding step of `arag ingest`.
_INGEST = textwrap.dedent("""
    import sys, threading, time
    from agentic_rag.ingest import ingest_paths
    from agentic_rag.store.embedded import EmbeddedStore
    store = EmbeddedStore(sys.argv[2], workers=2)
    def run():
        report = ingest_paths([sys.argv[1]], store)
        assert report.ok, report
    if sys.argv[3] == "thread":  # a pool started by a thread that has ended since
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
        time.sleep(1)
    else:
        run()
    print(" ".join(str(pid) for pid in store._pool._processes), flush=True)
    time.sleep(120)
""")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"  # a zombie has exited; only its parent's wait is missing


@pytest.mark.parametrize("started_in", ["main", "thread"])
def test_kill_9_of_an_ingest_takes_its_tokenizer_workers_with_it(tmp_path, started_in):
    docs = tmp_path / "bulk.jsonl"
    with docs.open("w", encoding="utf-8") as fh:
        for i in range(300):
            fh.write(json.dumps({"id": f"r{i}", "title": f"记录 {i}",
                                 "text": f"第{i}号通知：住院费用报销比例调整为{i % 90}%。"}) + "\n")
    proc = subprocess.Popen([sys.executable, "-c", _INGEST, str(docs), str(tmp_path / "idx"), started_in],
                            stdout=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        line = proc.stdout.readline()
        workers = [int(p) for p in line.split()]
        assert len(workers) == 2 and all(_alive(p) for p in workers)  # alive while the parent is
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [p for p in workers if _alive(p)] == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
