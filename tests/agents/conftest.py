"""Shared fixtures for agent tests: a small in-memory store implementing the store Protocols
(DocumentStore + KeywordIndex), and helpers to build documents, chunks and edges by hand.

The in-memory store is deliberately plain (BM25 over the project tokenizer, filters evaluated in
Python) so retriever tests exercise the Retriever, not a storage engine. Integration tests that
need the real embedded store build one with ``agentic_rag.store.open_store`` when it exists.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import pytest

from agentic_rag.text.tokenize import tokenize
from agentic_rag.types import POSITION_WEIGHTS, Chunk, DocMeta, Document, Edge, Filter


class MemoryStore:
    """DocumentStore + KeywordIndex in memory (BM25 k1=1.5, b=0.75)."""

    def __init__(self) -> None:
        self.docs: dict[str, Document] = {}
        self._chunks: dict[str, Chunk] = {}
        self._order: dict[str, list[str]] = {}
        self._edges: list[Edge] = []
        self._tf: dict[str, Counter] = {}
        self.version = 0

    # DocumentStore
    def upsert(self, doc: Document, chunks: Sequence[Chunk], edges: Sequence[Edge]) -> str:
        old = self.docs.get(doc.doc_id)
        if old is not None and old.content_hash == doc.content_hash:
            return "unchanged"
        if old is not None:
            self.delete(doc.doc_id)
        self.docs[doc.doc_id] = doc
        self._order[doc.doc_id] = [c.chunk_id for c in chunks]
        for c in chunks:
            self._chunks[c.chunk_id] = c
            self._tf[c.chunk_id] = Counter(tokenize(f"{c.title} {c.text}"))
        self._edges += list(edges)
        self.version += 1
        return "replaced" if old is not None else "added"

    def add_edges(self, edges: Iterable[Edge]) -> None:
        self._edges += list(edges)

    def delete(self, doc_id: str) -> bool:
        if doc_id not in self.docs:
            return False
        for cid in self._order.pop(doc_id):
            self._chunks.pop(cid, None)
            self._tf.pop(cid, None)
        del self.docs[doc_id]
        return True

    def get_document(self, doc_id: str) -> Document | None:
        return self.docs.get(doc_id)

    def documents(self) -> list[Document]:
        return list(self.docs.values())

    def chunks(self, doc_id: str) -> list[Chunk]:
        return [self._chunks[c] for c in self._order.get(doc_id, [])]

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return [self._chunks[c] for c in chunk_ids if c in self._chunks]

    def edges(self, ids: Iterable[str], kind: str | None = None,
              direction: Literal["out", "in"] = "out") -> list[Edge]:
        ids = set(ids)
        return [e for e in self._edges if (kind is None or e.kind == kind)
                and (e.src if direction == "out" else e.dst) in ids]

    # KeywordIndex
    def search(self, query: str, k: int = 10, where: Sequence[Filter] = ()) -> list[tuple[str, float]]:
        terms = tokenize(query)
        if not terms or not self._tf:
            return []
        n = len(self._tf)
        avg = sum(sum(tf.values()) for tf in self._tf.values()) / n
        df = Counter(t for tf in self._tf.values() for t in set(tf))
        out = []
        for cid, tf in self._tf.items():
            if not all(_match(self._chunks[cid], f) for f in where):
                continue
            length = sum(tf.values())
            s = 0.0
            for t in terms:
                if tf.get(t):
                    idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                    s += idf * tf[t] * 2.5 / (tf[t] + 1.5 * (0.25 + 0.75 * length / avg))
            if s > 0:
                out.append((cid, round(s, 6)))
        out.sort(key=lambda kv: (-kv[1], kv[0]))
        return out[:k]


def _match(chunk: Chunk, f: Filter) -> bool:
    if f.field.startswith("extra."):
        value: Any = chunk.extra.get(f.field[6:])
    else:
        value = getattr(chunk, f.field, None)
    want = f.value
    if value is None:
        return f.op == "!="
    if f.op == "=":
        return value == want
    if f.op == "!=":
        return value != want
    if f.op == "in":
        return value in want
    if f.op == "like":
        return str(want).strip("%").lower() in str(value).lower()
    return {"<": value < want, "<=": value <= want, ">": value > want, ">=": value >= want}[f.op]


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
