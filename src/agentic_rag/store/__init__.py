"""Stores: the Protocols every backend implements and the embedded default (SQLite + BM25)."""

from __future__ import annotations

from pathlib import Path

from agentic_rag.store.base import DocumentStore, KeywordIndex, UpsertResult
from agentic_rag.store.embedded import FILTER_FIELDS, EmbeddedStore


def open_store(path: str | Path, *, create: bool = True) -> EmbeddedStore:
    """Open (or create) the embedded store in folder ``path``."""
    return EmbeddedStore(path, create=create)


__all__ = ["DocumentStore", "EmbeddedStore", "FILTER_FIELDS", "KeywordIndex", "UpsertResult",
           "open_store"]
