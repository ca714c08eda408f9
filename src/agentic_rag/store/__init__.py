"""Stores: the Protocols every backend implements, the embedded default (SQLite + BM25) and
PostgreSQL + pgvector (``store.url``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentic_rag.store.base import DocumentStore, KeywordIndex, UpsertResult
from agentic_rag.store.embedded import FILTER_FIELDS, EmbeddedStore


def open_store(path: str | Path, *, create: bool = True) -> EmbeddedStore:
    """Open (or create) the embedded store in folder ``path``."""
    return EmbeddedStore(path, create=create)


def open_index(settings: Any, *, create: bool = True) -> Any:
    """The store the settings name: PostgreSQL when ``store.url`` is set, else the embedded
    store in folder ``index``. A database that cannot be reached raises :class:`StoreError`."""
    if settings.store.url:
        from agentic_rag.store.postgres import PostgresStore

        cfg = settings.store
        return PostgresStore(cfg.url.get_secret_value(), schema=cfg.db_schema, pool_size=cfg.pool_size,
                             connect_timeout_s=cfg.connect_timeout_s, ef_search=cfg.ef_search,
                             create=create)
    return EmbeddedStore(settings.index, create=create)


__all__ = ["DocumentStore", "EmbeddedStore", "FILTER_FIELDS", "KeywordIndex", "UpsertResult",
           "open_index", "open_store"]
