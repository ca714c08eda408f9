"""Opens the PostgreSQL store for a test's index path: one schema per path, on the session's
test server (its URL in the environment, so the conformance suite's child processes reach it)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from agentic_rag.store.postgres import PostgresStore

PG_URL_ENV = "AGENTIC_RAG_TEST_PG_URL"


def schema_for(path: str | Path) -> str:
    return "t_" + hashlib.sha1(str(Path(path).resolve()).encode()).hexdigest()[:16]


def open_for_path(path: str | Path, **kwargs) -> PostgresStore:
    return PostgresStore(os.environ[PG_URL_ENV], schema=schema_for(path), **kwargs)
