"""Queue workers for the tests: ``arag worker`` processes started here on RabbitMQ
(127.0.0.1:5672) with results in the local Redis (a database of their own), on queues whose
prefix is unique to the test, deleted afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("celery", reason="the workers extra is not installed")
pytest.importorskip("redis", reason="the workers extra is not installed")

BROKER = "amqp://guest:guest@127.0.0.1:5672//"
RESULTS = "redis://127.0.0.1:6379/13"


def _check_services() -> None:
    import kombu
    import redis

    try:
        with kombu.Connection(BROKER, connect_timeout=3) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as exc:
        pytest.fail(f"no RabbitMQ on 127.0.0.1:5672 ({exc}); start it: rabbitmq-server -detached")
    try:
        redis.Redis.from_url(RESULTS, socket_connect_timeout=2).ping()
    except Exception as exc:
        pytest.fail(f"no Redis on 127.0.0.1:6379 ({exc})")


class Queues:
    """The environment of one test's workers and commands, and its queues on the broker."""

    def __init__(self, index: Path) -> None:
        _check_services()
        self.prefix = f"test-{uuid.uuid4().hex[:10]}"
        self.index = index
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ARAG_")}
        self.env.update({"ARAG_INDEX": str(index), "ARAG_EMBEDDER__PROVIDER": "none",
                         "ARAG_LLM__PROVIDER": "none", "ARAG_WORKERS__BROKER_URL": BROKER,
                         "ARAG_WORKERS__RESULT_URL": RESULTS, "ARAG_WORKERS__QUEUE_PREFIX": self.prefix,
                         "ARAG_WORKERS__INGEST_TIMEOUT_S": "240"})
        self.workers: list[subprocess.Popen] = []

    def names(self) -> list[str]:
        return [f"{self.prefix}.ingest", f"{self.prefix}.reason"]

    def consumers(self, queue: str) -> int:
        import kombu

        try:
            with kombu.Connection(BROKER, connect_timeout=3) as conn:
                return conn.default_channel.queue_declare(queue, passive=True).consumer_count
        except Exception:
            return 0

    def start_worker(self, queues: str = "ingest,reason") -> subprocess.Popen:
        log = self.index.parent / f"worker-{len(self.workers)}.log"
        proc = subprocess.Popen([sys.executable, "-m", "agentic_rag.cli", "worker", "--queues", queues],
                                env=self.env, cwd=self.index.parent, stdout=log.open("wb"),
                                stderr=subprocess.STDOUT)
        self.workers.append(proc)
        return proc

    def wait_consumers(self, queue: str, n: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while self.consumers(queue) < n:
            if time.monotonic() > deadline:
                logs = "\n".join(p.read_text(errors="replace")[-2000:]
                                 for p in sorted(self.index.parent.glob("worker-*.log")))
                raise RuntimeError(f"{n} workers did not start consuming {queue}:\n{logs}")
            time.sleep(0.2)

    def stop(self, proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def close(self) -> None:
        import kombu

        for proc in self.workers:
            self.stop(proc)
        try:
            with kombu.Connection(BROKER, connect_timeout=3) as conn:
                for q in self.names():
                    try:
                        conn.default_channel.queue_delete(q)
                    except Exception:
                        pass
        except Exception:
            pass


@pytest.fixture
def queues(tmp_path) -> Iterator[Queues]:
    q = Queues(tmp_path / "index")
    yield q
    q.close()
