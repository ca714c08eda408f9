"""Real services for the tests: the local Redis on 127.0.0.1:6379 (a database of the tests' own,
emptied before and after), and a private ``redis-server`` a test may stop and start again.
Import the fixtures into a conftest: ``from tests.services import local_redis, private_redis``."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

#: the database number the tests own on the shared local Redis
TEST_DB = 14
LOCAL = f"redis://127.0.0.1:6379/{TEST_DB}"


def redis_client(url: str):
    redis = pytest.importorskip("redis", reason="the redis extra is not installed")
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


@pytest.fixture
def local_redis() -> Iterator[str]:
    client = redis_client(LOCAL)
    try:
        client.ping()
    except Exception as exc:  # the machine's Redis is part of the test setup
        pytest.fail(f"no Redis on 127.0.0.1:6379 ({exc}); start it: redis-server --daemonize yes "
                    "--bind 127.0.0.1 --port 6379 --save '' --appendonly no")
    client.flushdb()
    yield LOCAL
    client.flushdb()
    client.close()


class PrivateRedis:
    """A ``redis-server`` of the test's own on a free port; :meth:`stop` and :meth:`start` it."""

    def __init__(self, folder: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (Debian package redis-server)")
        self.binary, self.folder = binary, folder
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [self.binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis_client(self.url)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
            finally:
                client.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def private_redis(tmp_path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    yield server
    server.stop()
