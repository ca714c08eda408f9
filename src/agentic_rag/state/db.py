"""The service's own SQLite file, ``<index>/server.db`` (WAL): answers (audit), feedback, the
answer cache and abort flags. Every ``arag serve`` worker opens the same file, so sessions,
feedback and aborts are shared between workers; each table's module owns its schema."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentic_rag.errors import StoreError

DB_NAME = "server.db"


class ServerDB:
    """One connection, serialized by a lock (requests run in a thread pool)."""

    def __init__(self, index: str | Path, schema: str) -> None:
        self.path = Path(index) / DB_NAME
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                                         check_same_thread=False)
            self._conn.execute("PRAGMA busy_timeout=30000")
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(schema)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open: {exc}") from exc

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one write; returns the number of rows it changed."""
        with self._lock:
            try:
                return self._conn.execute(sql, params).rowcount
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: write failed: {exc}") from exc

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one INSERT; returns the new row's id."""
        with self._lock:
            try:
                return self._conn.execute(sql, params).lastrowid or 0
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: write failed: {exc}") from exc

    def executemany(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Several writes in one transaction (all or nothing)."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                for sql, params in statements:
                    self._conn.execute(sql, params)
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise StoreError(f"{self.path}: write failed, nothing changed: {exc}") from exc

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: read failed: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()
