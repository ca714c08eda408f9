"""Which sessions have a question running, in any worker, and their abort flags.

``POST /v1/sessions/{id}/abort`` may reach a different worker process than the one running the
question, so the flag lives in the shared state: ``<index>/server.db`` here (the embedded
:class:`~agentic_rag.state.Runs`), Redis in :mod:`agentic_rag.state.redis`; the run's
:class:`RunAbort` reads it at each checkpoint between steps (the runtime's abort event is asked
``is_set()`` there)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from agentic_rag.state import STALE_RUN_S, Runs, SessionBusy
from agentic_rag.state.db import ServerDB

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  session_id TEXT PRIMARY KEY, started REAL NOT NULL, abort INTEGER NOT NULL DEFAULT 0);
"""

__all__ = ["RunAbort", "RunRegistry", "SessionBusy"]


class RunRegistry:
    def __init__(self, index: str | Path) -> None:
        self.db = ServerDB(index, _SCHEMA)

    def start(self, session_id: str) -> None:
        """Claim the session for one question; :class:`SessionBusy` when another one runs."""
        now = time.time()
        self.db.execute("DELETE FROM runs WHERE session_id = ? AND started < ?",
                        (session_id, now - STALE_RUN_S))
        if not self.db.execute("INSERT OR IGNORE INTO runs (session_id, started) VALUES (?, ?)",
                               (session_id, now)):
            raise SessionBusy(session_id)

    def finish(self, session_id: str) -> None:
        self.db.execute("DELETE FROM runs WHERE session_id = ?", (session_id,))

    def request_abort(self, session_id: str) -> bool:
        """Flag the running question of ``session_id``; False when none is running."""
        return self.db.execute("UPDATE runs SET abort = 1 WHERE session_id = ?", (session_id,)) > 0

    def abort_requested(self, session_id: str) -> bool:
        rows = self.db.query("SELECT abort FROM runs WHERE session_id = ?", (session_id,))
        return bool(rows and rows[0][0])

    def close(self) -> None:
        self.db.close()


class RunAbort(threading.Event):
    """The abort event handed to the runtime: set by its own ``set()`` (the deadline, a client
    gone), by a ``parent`` event, or by a flag in the shared state's
    :class:`~agentic_rag.state.Runs` (another connection, maybe another worker)."""

    def __init__(self, parent: threading.Event | None = None, registry: Runs | None = None,
                 session_id: str | None = None) -> None:
        super().__init__()
        self.parent = parent
        self.registry = registry
        self.session_id = session_id

    def is_set(self) -> bool:
        if super().is_set() or (self.parent is not None and self.parent.is_set()):
            return True
        return bool(self.registry is not None and self.session_id
                    and self.registry.abort_requested(self.session_id))
