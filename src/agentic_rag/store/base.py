"""Store seams. Every backend (the embedded default, later Milvus/Redis/Postgres) implements
these Protocols and passes ``tests/store/conformance.py`` unchanged."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, Protocol, runtime_checkable

from agentic_rag.types import Chunk, Document, Edge, EdgeKind, Filter

UpsertResult = Literal["added", "unchanged", "replaced"]


def edge_endpoint(direction: str) -> Literal["src", "dst"]:
    """The edge end ``DocumentStore.edges`` matches ids against: ``src`` for edges leaving
    them (``out``), ``dst`` for edges entering them (``in``); anything else is a ValueError."""
    if direction not in ("out", "in"):
        raise ValueError(f"direction must be 'out' or 'in', got {direction!r}")
    return "src" if direction == "out" else "dst"


@runtime_checkable
class DocumentStore(Protocol):
    """Documents, their chunks and graph edges; writes are atomic per document."""

    def upsert(self, doc: Document, chunks: Sequence[Chunk], edges: Sequence[Edge]) -> UpsertResult:
        """Add a document, or replace it (same source path, different content) atomically.
        Same content hash -> "unchanged" and nothing is written."""
        ...

    def delete(self, doc_id: str) -> bool: ...

    def get_document(self, doc_id: str) -> Document | None: ...

    def documents(self) -> list[Document]: ...

    def chunks(self, doc_id: str) -> list[Chunk]:
        """The chunks of one document in order."""
        ...

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Chunks by id, in the order asked; unknown ids are skipped."""
        ...

    def edges(self, ids: Iterable[str], kind: EdgeKind | None = None,
              direction: Literal["out", "in"] = "out") -> list[Edge]: ...


@runtime_checkable
class KeywordIndex(Protocol):
    """BM25 over chunks, with metadata filters."""

    def search(self, query: str, k: int = 10,
               where: Sequence[Filter] = ()) -> list[tuple[str, float]]:
        """(chunk_id, score) pairs, best first."""
        ...
