"""The shared state on Redis (``state.url = "redis://host:6379/0"``, the ``redis`` extra).

Keys (one Redis database per deployment; pick the database number in the URL):

- ``session:{id}`` — a hash: ``data`` (the session's JSON), ``updated``, ``status``; expires
  ``state.session_ttl_s`` after its last save.
- ``run:{id}`` — present while a question runs in the session (expires after 10 minutes, so a
  worker that died mid-question does not lock the session for good).
- ``abort_flag:{session_id}`` — set by ``POST /v1/sessions/{id}/abort`` through any worker; the
  running question reads it at each checkpoint between steps.
- ``answer_cache:{key}`` — a cached answer (the key includes the index version, so a write to the
  index makes older entries unreachable; they expire after ``state.cache_ttl_s``).
- ``rate_limit:{hash of the API key}:{minute}`` — request counters.

Every Redis failure becomes :class:`~agentic_rag.errors.StateError` (a 503 from the API); the
client reconnects by itself, so the next request succeeds once Redis is back.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError

from agentic_rag.config import StateSettings
from agentic_rag.errors import MissingExtraError, NotFoundError, StateError
from agentic_rag.runtime.memory import SessionState
from agentic_rag.state import STALE_RUN_S, SessionBusy
from agentic_rag.types import Answer

T = TypeVar("T")

# set the flag only while the run exists, in one step (no abort of a question that just ended)
_ABORT_IF_RUNNING = """
if redis.call('exists', KEYS[1]) == 1 then
  redis.call('set', KEYS[2], '1', 'EX', ARGV[1])
  return 1
end
return 0
"""


def safe_url(url: str) -> str:
    """``url`` without its password (for messages and /readyz)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class RedisState:
    """One Redis client shared by the four parts (thread-safe: redis-py pools connections)."""

    def __init__(self, settings: StateSettings) -> None:
        try:
            import redis
        except ImportError as exc:
            raise MissingExtraError("the Redis state (state.url)", "redis") from exc
        assert settings.url is not None
        self.where = safe_url(settings.url)
        self._errors = redis.RedisError
        self.client = redis.Redis.from_url(settings.url, socket_timeout=settings.timeout_s,
                                           socket_connect_timeout=settings.timeout_s,
                                           health_check_interval=30, decode_responses=True)
        self.sessions = RedisSessions(self, settings.session_ttl_s)
        self.runs = RedisRuns(self)
        self.cache = RedisCache(self, settings.cache_ttl_s)
        self.limits = RedisLimits(self)
        self.call(self.client.ping)  # an unreachable Redis fails at start, in one line

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except self._errors as exc:
            raise StateError(f"Redis at {self.where} is unavailable: {exc}") from exc

    def close(self) -> None:
        self.client.close()


class _Part:
    def __init__(self, redis: RedisState) -> None:
        self.redis = redis
        self.r = redis.client

    def close(self) -> None:
        self.redis.close()  # idempotent: the pool's connections are dropped once


class RedisSessions(_Part):
    def __init__(self, redis: RedisState, ttl_s: int) -> None:
        super().__init__(redis)
        self.ttl_s = ttl_s

    def save(self, state: SessionState) -> None:
        state.updated = dt.datetime.now(dt.timezone.utc)
        key = f"session:{state.session_id}"
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, mapping={"data": state.model_dump_json(), "updated": state.updated.isoformat(),
                                "status": state.status})
        pipe.expire(key, self.ttl_s)
        self.redis.call(pipe.execute)

    def load(self, session_id: str) -> SessionState:
        data = self.redis.call(self.r.hget, f"session:{session_id}", "data")
        if data is None:
            raise NotFoundError(f"no session {session_id!r} in {self.redis.where}")
        try:
            return SessionState.model_validate_json(data)
        except ValidationError as exc:
            raise StateError(f"{self.redis.where}: session {session_id} is unreadable: {exc}") from exc

    def list(self) -> list[tuple[str, str, str]]:
        keys = self.redis.call(lambda: list(self.r.scan_iter(match="session:*", count=500)))
        pipe = self.r.pipeline(transaction=False)
        for key in keys:
            pipe.hmget(key, "updated", "status")
        rows = [(k.split(":", 1)[1], u, s) for k, (u, s) in zip(keys, self.redis.call(pipe.execute))
                if u is not None]
        return sorted(rows, key=lambda r: r[1], reverse=True)

    def delete(self, session_id: str) -> bool:
        return bool(self.redis.call(self.r.delete, f"session:{session_id}"))


class RedisRuns(_Part):
    def __init__(self, redis: RedisState) -> None:
        super().__init__(redis)
        self._abort = self.r.register_script(_ABORT_IF_RUNNING)

    def start(self, session_id: str) -> None:
        claimed = self.redis.call(self.r.set, f"run:{session_id}", str(time.time()), nx=True,
                                  ex=int(STALE_RUN_S))
        if not claimed:
            raise SessionBusy(session_id)
        self.redis.call(self.r.delete, f"abort_flag:{session_id}")  # an old flag ends no new question

    def finish(self, session_id: str) -> None:
        self.redis.call(self.r.delete, f"run:{session_id}", f"abort_flag:{session_id}")

    def request_abort(self, session_id: str) -> bool:
        return bool(self.redis.call(self._abort, keys=[f"run:{session_id}", f"abort_flag:{session_id}"],
                                    args=[int(STALE_RUN_S)]))

    def abort_requested(self, session_id: str) -> bool:
        return bool(self.redis.call(self.r.exists, f"abort_flag:{session_id}"))


class RedisCache(_Part):
    def __init__(self, redis: RedisState, ttl_s: int) -> None:
        super().__init__(redis)
        self.ttl_s = ttl_s

    def get(self, key: str, index_version: int) -> Answer | None:
        # the key already includes the index version (cache_key); entries of older versions are
        # never asked for again and expire on their own
        data = self.redis.call(self.r.get, f"answer_cache:{key}")
        return Answer.model_validate_json(data) if data is not None else None

    def put(self, key: str, index_version: int, answer: Answer) -> None:
        self.redis.call(self.r.set, f"answer_cache:{key}", answer.model_dump_json(), ex=self.ttl_s)

    def __len__(self) -> int:
        return self.redis.call(lambda: sum(1 for _ in self.r.scan_iter(match="answer_cache:*", count=500)))


class RedisLimits(_Part):
    def allow(self, key: str, per_minute: int) -> bool:
        window = int(time.time() // 60)
        name = f"rate_limit:{hashlib.sha256(key.encode()).hexdigest()[:16]}:{window}"
        pipe = self.r.pipeline(transaction=True)
        pipe.incr(name)
        pipe.expire(name, 120)
        count, _ = self.redis.call(pipe.execute)
        return int(count) <= per_minute
