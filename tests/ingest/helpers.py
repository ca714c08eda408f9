"""Shared helpers for the ingest tests."""

from __future__ import annotations

from agentic_rag.ingest.chunking import chunk_document
from agentic_rag.types import Chunk, DocMeta, Document


def doc(text: str, doc_id: str = "d1", title: str = "测试办法") -> Document:
    return Document(doc_id=doc_id, source=f"{doc_id}.txt", content_hash="h", text=text,
                    meta=DocMeta(title=title))


def chunks(text: str, max_chars: int = 500, **kw) -> list[Chunk]:
    return chunk_document(doc(text, **kw), max_chars)


def by_clause(items: list[Chunk]) -> dict[str, Chunk]:
    """First chunk per clause label."""
    out: dict[str, Chunk] = {}
    for c in items:
        if c.clause is not None:
            out.setdefault(c.clause, c)
    return out
