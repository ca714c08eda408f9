"""Per-key rate limits of the embedded state: request counters per minute in ``<index>/server.db``,
so every worker of one host counts against the same budget (Redis: :mod:`agentic_rag.state.redis`)."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from agentic_rag.state.db import ServerDB

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rate_limits (
  key TEXT NOT NULL, window INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (key, window));
"""


class RateLimits:
    def __init__(self, index: str | Path) -> None:
        self.db = ServerDB(index, _SCHEMA)
        self._swept = 0

    def allow(self, key: str, per_minute: int) -> bool:
        window = int(time.time() // 60)
        if window != self._swept:  # counters of past minutes are no longer read
            self.db.execute("DELETE FROM rate_limits WHERE window < ?", (window - 1,))
            self._swept = window
        name = hashlib.sha256(key.encode()).hexdigest()[:16]  # never the key itself on disk
        rows = self.db.query(
            "INSERT INTO rate_limits (key, window, count) VALUES (?, ?, 1) ON CONFLICT (key, window) "
            "DO UPDATE SET count = count + 1 RETURNING count", (name, window))
        return rows[0][0] <= per_minute

    def close(self) -> None:
        self.db.close()
