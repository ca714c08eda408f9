"""Shared fixtures for agent tests: the product's in-memory store
(:class:`agentic_rag.store.memory.MemoryStore`, which ranks as the embedded store does), and
helpers to build documents, chunks and edges by hand."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from typing import Any

import pytest

from agentic_rag.store.memory import MemoryStore
from agentic_rag.types import POSITION_WEIGHTS, Chunk, DocMeta, Document


def make_doc(store: MemoryStore, doc_id: str, title: str, clauses: Sequence[tuple[str | None, str]],
             *, publish_date: dt.date | None = None, status: str = "active", kind: str = "body",
             extra: dict[str, Any] | None = None, language: str = "zh") -> list[Chunk]:
    """Add a document made of (clause label, text) pairs; returns its chunks. Clause labels like
    第七条 get clause_no "7"; kinds other than body get their position weight."""
    from agentic_rag.text.numerals import cn_to_int

    text = "\n".join(t for _, t in clauses)
    meta = DocMeta(title=title, publish_date=publish_date, status=status, language=language,
                   extra=extra or {})
    doc = Document(doc_id=doc_id, source=f"{doc_id}.txt",
                   content_hash=hashlib.sha256(text.encode()).hexdigest(), text=text, meta=meta)
    chunks = []
    for i, (label, body) in enumerate(clauses):
        no = None
        if label and label.startswith("第") and label.endswith("条"):
            no = str(cn_to_int(label[1:-1]))
        chunks.append(Chunk(chunk_id=f"{doc_id}:{'a' + no if no else 'p'}:{i}", doc_id=doc_id, ord=i,
                            text=body, clause=label, clause_no=no, kind=kind,
                            position_weight=POSITION_WEIGHTS[kind], title=title,
                            source=doc.source, publish_date=publish_date, status=status,
                            language=language, extra=extra or {}))
    store.upsert(doc, chunks, [])
    return chunks


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def add_doc():
    """:func:`make_doc` as a fixture (test modules here are not a package)."""
    return make_doc
