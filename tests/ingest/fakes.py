"""An in-memory DocumentStore for pipeline unit tests (no SQLite, no BM25)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentic_rag.errors import StoreError
from agentic_rag.types import Chunk, Document, Edge


class MemoryStore:
    def __init__(self, fail_on: str | None = None) -> None:
        self.docs: dict[str, Document] = {}
        self.doc_chunks: dict[str, list[Chunk]] = {}
        self.doc_edges: list[Edge] = []
        self.writes = 0
        self.fail_on = fail_on  # a source substring whose upsert raises, as a broken disk would

    def upsert(self, doc: Document, chunks: Sequence[Chunk], edges: Sequence[Edge]) -> str:
        if self.fail_on and self.fail_on in doc.source:
            raise StoreError(f"disk full while writing {doc.source}")
        old = self.docs.get(doc.doc_id)
        if old is not None and old.content_hash == doc.content_hash:
            return "unchanged"
        self.writes += 1
        self.docs[doc.doc_id] = doc
        self.doc_chunks[doc.doc_id] = list(chunks)
        self.doc_edges = [e for e in self.doc_edges if not e.src.startswith(doc.doc_id)] + list(edges)
        return "replaced" if old is not None else "added"

    def delete(self, doc_id: str) -> bool:
        return self.docs.pop(doc_id, None) is not None

    def get_document(self, doc_id: str) -> Document | None:
        return self.docs.get(doc_id)

    def documents(self) -> list[Document]:
        return list(self.docs.values())

    def chunks(self, doc_id: str) -> list[Chunk]:
        return list(self.doc_chunks.get(doc_id, []))

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        index = {c.chunk_id: c for cs in self.doc_chunks.values() for c in cs}
        return [index[i] for i in chunk_ids if i in index]

    def edges(self, ids: Iterable[str], kind=None, direction="out") -> list[Edge]:
        wanted = set(ids)
        side = (lambda e: e.src) if direction == "out" else (lambda e: e.dst)
        return [e for e in self.doc_edges if side(e) in wanted and (kind is None or e.kind == kind)]

    def add_edges(self, edges: Iterable[Edge]) -> int:
        edges = list(edges)
        self.doc_edges.extend(edges)
        return len(edges)

    def set_status(self, doc_id: str, status: str) -> None:
        doc = self.docs[doc_id]
        self.docs[doc_id] = doc.model_copy(update={"meta": doc.meta.model_copy(update={"status": status})})

    def find_documents(self, title=None, source=None, doc_number=None) -> list[Document]:
        return [d for d in self.docs.values()
                if (title is None or d.meta.title == title) and (source is None or d.source == source)
                and (doc_number is None or d.meta.doc_number == doc_number)]
