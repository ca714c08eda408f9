"""The service's shared state behind one interface: sessions (conversation memory + retrieval
state), which sessions have a question running and their abort flags, the answer cache, and
rate-limit counters.

Two implementations, chosen by ``state.url``:

- embedded (no ``state.url``): SQLite files in the index folder — ``sessions.db``
  (:class:`~agentic_rag.runtime.memory.SessionStore`) and ``server.db``
  (:class:`~agentic_rag.state.runs.RunRegistry`, :class:`~agentic_rag.state.cache.AnswerCache`,
  :class:`~agentic_rag.state.limits.RateLimits`); shared by the workers of one host.
- Redis (``state.url = "redis://…"``, the ``redis`` extra): :mod:`agentic_rag.state.redis`;
  shared by API workers on any number of hosts.

    state = open_state(settings)
    state.sessions.save(SessionState())
    state.runs.start(session_id)       # SessionBusy when a question already runs there
    state.close()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agentic_rag.config import Settings
    from agentic_rag.runtime.memory import SessionState
    from agentic_rag.types import Answer

#: a run claim older than this is left over from a worker that died mid-question
STALE_RUN_S = 600.0


class SessionBusy(Exception):
    """The session already has a question running."""


class Sessions(Protocol):
    def save(self, state: SessionState) -> None: ...

    def load(self, session_id: str) -> SessionState:
        """:class:`~agentic_rag.errors.NotFoundError` when there is no such session."""
        ...

    def list(self) -> list[tuple[str, str, str]]:
        """(session id, last update, status), newest first."""
        ...

    def delete(self, session_id: str) -> bool: ...

    def close(self) -> None: ...


class Runs(Protocol):
    def start(self, session_id: str) -> None:
        """Claim the session for one question (clearing an old abort flag); :class:`SessionBusy`
        when another one runs."""
        ...

    def finish(self, session_id: str) -> None: ...

    def request_abort(self, session_id: str) -> bool:
        """Flag the running question of ``session_id``; False when none is running."""
        ...

    def abort_requested(self, session_id: str) -> bool: ...

    def close(self) -> None: ...


class Cache(Protocol):
    def get(self, key: str, index_version: int) -> Answer | None: ...

    def put(self, key: str, index_version: int, answer: Answer) -> None: ...

    def close(self) -> None: ...


class Limits(Protocol):
    def allow(self, key: str, per_minute: int) -> bool:
        """Count one request of ``key`` in the current minute; False past ``per_minute``."""
        ...

    def close(self) -> None: ...


@dataclass
class State:
    sessions: Sessions
    runs: Runs
    cache: Cache
    limits: Limits
    #: "embedded" or the Redis URL without its password, for /readyz
    where: str = "embedded"

    def close(self) -> None:
        for part in (self.sessions, self.runs, self.cache, self.limits):
            part.close()


def open_sessions(settings: Settings) -> Sessions:
    """The session store alone (``arag chat``): embedded or Redis, as ``state.url`` says."""
    if settings.state.url is None:
        from agentic_rag.runtime.memory import SessionStore

        return SessionStore.for_index(settings.index)
    from agentic_rag.state.redis import RedisState

    return RedisState(settings.state).sessions


def open_state(settings: Settings) -> State:
    """Every part of the service's state, embedded or Redis, as ``state.url`` says."""
    if settings.state.url is not None:
        from agentic_rag.state.redis import RedisState

        redis = RedisState(settings.state)
        return State(redis.sessions, redis.runs, redis.cache, redis.limits, where=redis.where)
    from agentic_rag.runtime.memory import SessionStore
    from agentic_rag.state.cache import AnswerCache
    from agentic_rag.state.limits import RateLimits
    from agentic_rag.state.runs import RunRegistry

    index = settings.index
    return State(SessionStore.for_index(index), RunRegistry(index), AnswerCache(index), RateLimits(index))


__all__ = ["STALE_RUN_S", "Cache", "Limits", "Runs", "SessionBusy", "Sessions", "State",
           "open_sessions", "open_state"]
