"""Real servers for the service tests: ``arag serve`` started as a subprocess on 127.0.0.1 on a
free port, over an index built once per session from ``examples/docs`` (BM25 + graph, no
embedder: the legs the service adds nothing to), and a fake OpenAI-compatible LLM whose
behaviour a test sets (answer slowly, or hang)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentic_rag.config import Settings
from agentic_rag.engine import Engine
from tests.conftest import ChatServer

ROOT = Path(__file__).resolve().parents[2]
BASE_ENV = {"ARAG_EMBEDDER__PROVIDER": "none", "ARAG_LLM__PROVIDER": "none"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """One ``arag serve`` process; ``url`` is its root."""

    def __init__(self, index: Path, env: dict[str, str], workers: int = 1) -> None:
        self.index = index
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        full = {k: v for k, v in os.environ.items() if not k.startswith("ARAG_")}
        full.update(BASE_ENV)
        full.update(env)
        self.log = index.parent / f"serve-{self.port}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentic_rag.cli", "serve", "--index", str(index),
             "--port", str(self.port), "--workers", str(workers)],
            env=full, cwd=index.parent, stdout=self.log.open("wb"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"arag serve exited: {self.log.read_text()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.close()
        raise RuntimeError(f"arag serve did not become ready: {self.log.read_text()}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture(scope="session")
def built_index(tmp_path_factory) -> Path:
    """The examples corpus, ingested once; tests get copies (servers write into their index)."""
    folder = tmp_path_factory.mktemp("served") / "index"
    settings = Settings.load(index=folder, embedder={"provider": "none"}, llm={"provider": "none"})
    with Engine(settings) as engine:
        report = engine.ingest([ROOT / "examples" / "docs"])
    assert report.ok and report.count("added") >= 5
    return folder


@pytest.fixture(scope="session")
def index_copy(built_index, tmp_path_factory):
    def copy(name: str) -> Path:
        target = tmp_path_factory.mktemp(name) / "index"
        shutil.copytree(built_index, target)
        return target
    return copy


@pytest.fixture(scope="session")
def server(index_copy) -> Iterator[Served]:
    """The deterministic server most tests talk to."""
    served = Served(index_copy("plain"), {"ARAG_SERVER__HEARTBEAT_S": "10"})
    yield served
    served.close()


class FakeLLM:
    """An OpenAI-compatible endpoint whose replies are never usable, sent after ``delay`` seconds
    (``delay=None``: it hangs). Every gate then falls back to its rules, so the run is the
    deterministic one plus the LLM's latency: what the deadline and abort tests need."""

    #: how long a hung call takes to reply: a run that waited for it would take this long
    HANG_S = 30.0

    def __init__(self) -> None:
        self.delay: float | None = 0.0
        self.calls = 0
        self.chat = ChatServer(self.reply)

    def reply(self, body: dict[str, Any]) -> str:
        self.calls += 1
        if self.delay is None:
            time.sleep(self.HANG_S)
        else:
            time.sleep(self.delay)
        return json.dumps({"unexpected": True})

    def close(self) -> None:
        self.chat.close()


@pytest.fixture(scope="session")
def fake_llm() -> Iterator[FakeLLM]:
    llm = FakeLLM()
    yield llm
    llm.close()


API_KEY = "test-key-1"


@pytest.fixture(scope="session")
def llm_server(index_copy, fake_llm) -> Iterator[Served]:
    """A server with the fake LLM plugged in, a 1 s deadline, a 1 s heartbeat and API keys."""
    served = Served(index_copy("llm"), {
        "ARAG_LLM__PROVIDER": "openai", "ARAG_LLM__BASE_URL": fake_llm.chat.base_url,
        "ARAG_LLM__MODEL": "fake", "ARAG_LLM_API_KEY": "sk-fake", "ARAG_LLM__TIMEOUT_S": "40",
        "ARAG_LLM__MAX_RETRIES": "0", "ARAG_SERVER__DEADLINE_S": "1.0",
        "ARAG_SERVER__HEARTBEAT_S": "1.0", "ARAG_API_KEYS": f"other-key,{API_KEY}"})
    yield served
    served.close()


def sse_events(response: httpx.Response) -> Iterator[tuple[str, Any]]:
    """``(event name, parsed data)`` per frame of a streaming response, as they arrive;
    comments come out as ``(":", text)``."""
    event, data = "message", []
    for line in response.iter_lines():
        if line.startswith(":"):
            yield ":", line[1:].strip()
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and data:
            text = "\n".join(data)
            yield event, (text if text == "[DONE]" else json.loads(text))
            event, data = "message", []
