"""The product's in-memory store, and one that fails on a chosen file as a broken disk would."""

from __future__ import annotations

from collections.abc import Sequence

from agentic_rag.errors import StoreError
from agentic_rag.store.memory import MemoryStore
from agentic_rag.types import Chunk, Document, Edge

__all__ = ["FailingStore", "MemoryStore"]


class FailingStore(MemoryStore):
    """A MemoryStore whose upsert raises for sources containing ``fail_on``."""

    def __init__(self, fail_on: str) -> None:
        super().__init__()
        self.fail_on = fail_on

    def upsert(self, doc: Document, chunks: Sequence[Chunk], edges: Sequence[Edge]) -> str:
        if self.fail_on in doc.source:
            raise StoreError(f"disk full while writing {doc.source}")
        return super().upsert(doc, chunks, edges)
