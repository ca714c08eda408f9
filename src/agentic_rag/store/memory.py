"""An in-memory store: the DocumentStore and KeywordIndex Protocols without a disk.

For tests, notebooks and short-lived jobs over a few thousand chunks: documents, chunks and edges
live in dicts; BM25 is the embedded store's own index (:class:`~agentic_rag.store.bm25.BM25Index`
over :func:`~agentic_rag.store.embedded.bm25_text`), so rankings are the same as on disk; filters
have the embedded store's meaning (``!=`` keeps chunks without the field, dates compare as ISO
strings, ``like`` takes SQL ``%`` wildcards, case-insensitively). Writes are atomic per document:
an upsert that fails leaves everything as it was. Nothing persists: ``persistent`` is False, and
the conformance suite's cross-process tests do not apply.

    store = MemoryStore()
    ingest_paths(["policies/"], store)
    Retriever(store).retrieve(Router().route("住院报销比例是多少？"))
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from agentic_rag.errors import ConfigError, StoreError
from agentic_rag.store.base import UpsertResult, edge_endpoint
from agentic_rag.store.bm25 import BM25Index
from agentic_rag.store.embedded import FILTER_FIELDS, bm25_text
from agentic_rag.text.tokenize import tokenize
from agentic_rag.types import Chunk, DocStatus, Document, Edge, EdgeKind, Filter

__all__ = ["MemoryStore"]


class MemoryStore:
    """DocumentStore + KeywordIndex in memory; see the module docstring."""

    persistent = False

    def __init__(self) -> None:
        self._docs: dict[str, Document] = {}
        self._order: dict[str, list[str]] = {}  # doc id -> its chunk ids in order
        self._chunks: dict[str, Chunk] = {}
        self._rowid: dict[str, int] = {}  # chunk id -> BM25 row
        self._by_row: dict[int, str] = {}
        self._edges: list[Edge] = []
        self._bm25 = BM25Index()
        self._next_row = 1
        self._version = 0
        self._lock = threading.RLock()

    @property
    def version(self) -> int:
        """Grows with every write, as the embedded store's does (caches key on it)."""
        return self._version

    def close(self) -> None:
        """Nothing to release; kept so a MemoryStore stands wherever a store is closed."""

    # -- writes ---------------------------------------------------------------------------------
    def upsert(self, doc: Document, chunks: Sequence[Chunk], edges: Sequence[Edge]) -> UpsertResult:
        """Add a document, or replace it when its content hash changed; same hash -> "unchanged".
        A chunk id that belongs to another document is a StoreError, and nothing is written."""
        with self._lock:
            old = self._docs.get(doc.doc_id)
            if old is not None and old.content_hash == doc.content_hash:
                return "unchanged"
            ids = [c.chunk_id for c in chunks]
            if len(set(ids)) != len(ids):
                raise StoreError(f"{doc.source}: a chunk id appears twice in one document")
            for c in chunks:
                owner = self._chunks.get(c.chunk_id)
                if owner is not None and owner.doc_id != doc.doc_id:
                    raise StoreError(f"{doc.source}: chunk id {c.chunk_id!r} belongs to document "
                                     f"{owner.doc_id!r}")
            tokens = [tokenize(bm25_text(c.title, c.path, c.text), c.language) for c in chunks]
            if old is not None:
                self._remove(doc.doc_id)
            self._docs[doc.doc_id] = doc
            self._order[doc.doc_id] = ids
            rows = list(range(self._next_row, self._next_row + len(chunks)))
            self._next_row += len(chunks)
            for c, row in zip(chunks, rows):
                self._chunks[c.chunk_id] = c
                self._rowid[c.chunk_id] = row
                self._by_row[row] = c.chunk_id
            self._bm25.add(rows, tokens)
            self._edges += list(edges)
            self._version += 1
            return "replaced" if old is not None else "added"

    def delete(self, doc_id: str) -> bool:
        with self._lock:
            if doc_id not in self._docs:
                return False
            self._remove(doc_id)
            self._version += 1
            return True

    def _remove(self, doc_id: str) -> None:
        gone = set(self._order.pop(doc_id, []))
        rows = [self._rowid.pop(cid) for cid in gone if cid in self._rowid]
        for row in rows:
            self._by_row.pop(row, None)
        for cid in gone:
            self._chunks.pop(cid, None)
        self._bm25.remove(rows)
        self._edges = [e for e in self._edges if e.src not in gone and e.dst not in gone
                       and not (e.kind == "SUPERSEDES" and doc_id in (e.src, e.dst))]
        self._docs.pop(doc_id, None)

    def set_status(self, doc_id: str, status: DocStatus) -> None:
        """Mark a document (and its chunks) active, superseded or repealed."""
        with self._lock:
            doc = self._docs.get(doc_id)
            if doc is None:
                raise StoreError(f"unknown document {doc_id!r}")
            self._docs[doc_id] = doc.model_copy(update={"meta": doc.meta.model_copy(update={"status": status})})
            for cid in self._order[doc_id]:
                self._chunks[cid] = self._chunks[cid].model_copy(update={"status": status})
            self._version += 1

    def add_edges(self, edges: Iterable[Edge]) -> int:
        with self._lock:
            new = [e for e in edges if e not in self._edges]
            self._edges += new
            if new:
                self._version += 1
            return len(new)

    def add_terms(self, terms: Iterable[str]) -> int:
        """The embedded store records dictionary terms for its tokenizer; here nothing is kept."""
        return 0

    # -- reads ----------------------------------------------------------------------------------
    def get_document(self, doc_id: str) -> Document | None:
        return self._docs.get(doc_id)

    def documents(self) -> list[Document]:
        return list(self._docs.values())

    def find_documents(self, title: str | None = None, source: str | None = None,
                       doc_number: str | None = None) -> list[Document]:
        return [d for d in self._docs.values()
                if (title is None or d.meta.title == title) and (source is None or d.source == source)
                and (doc_number is None or d.meta.doc_number == doc_number)]

    def chunks(self, doc_id: str) -> list[Chunk]:
        return [self._chunks[c] for c in self._order.get(doc_id, [])]

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        return [self._chunks[c] for c in chunk_ids if c in self._chunks]

    def chunk_counts(self) -> dict[str, int]:
        return {d: len(ids) for d, ids in self._order.items()}

    def all_chunk_ids(self) -> list[str]:
        return [cid for ids in self._order.values() for cid in ids]

    def edges(self, ids: Iterable[str], kind: EdgeKind | None = None,
              direction: Literal["out", "in"] = "out") -> list[Edge]:
        end, wanted = edge_endpoint(direction), set(ids)
        return [e for e in self._edges if (kind is None or e.kind == kind) and getattr(e, end) in wanted]

    def stats(self) -> dict[str, int]:
        return {"docs": len(self._docs), "chunks": len(self._chunks), "edges": len(self._edges),
                "terms": len(self._bm25.terms), "version": self._version}

    # -- search ---------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, where: Sequence[Filter] = ()) -> list[tuple[str, float]]:
        """BM25 ``(chunk_id, score)`` pairs, best first, among chunks matching every filter."""
        for f in where:
            _check_field(f.field)
        if k <= 0:
            return []
        with self._lock:
            rows, scores = self._bm25.scores(tokenize(query))
            hits = [(self._by_row[int(r)], float(s)) for r, s in zip(rows, scores)
                    if int(r) in self._by_row]
            hits = [h for h in hits if all(_matches(self._chunks[h[0]], f) for f in where)]
        hits.sort(key=lambda h: (-h[1], self._rowid[h[0]]))
        return hits[:k]


def _check_field(field: str) -> None:
    if field not in FILTER_FIELDS and not field.startswith("extra."):
        allowed = ", ".join(sorted(FILTER_FIELDS))
        raise ConfigError(f"unknown filter field {field!r}: use one of {allowed}, or extra.<key>")


def _comparable(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def _matches(chunk: Chunk, f: Filter) -> bool:
    """The embedded store's SQL meaning of one filter, on one chunk."""
    have = chunk.extra.get(f.field[6:]) if f.field.startswith("extra.") else getattr(chunk, f.field)
    have = _comparable(have)
    if f.op == "in":
        values = f.value if isinstance(f.value, (list, tuple, set, frozenset)) else [f.value]
        return have is not None and have in {_comparable(v) for v in values}
    want = _comparable(f.value)
    if f.op == "=":
        return have == want
    if f.op == "!=":
        return have != want
    if have is None or want is None:
        return False
    if f.op == "like":
        pattern = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in str(want))
        return re.fullmatch(pattern, str(have), re.S | re.I) is not None
    try:
        return {"<": have < want, "<=": have <= want, ">": have > want, ">=": have >= want}[f.op]
    except TypeError:  # SQLite orders numbers before text; a mixed comparison never matches here
        return False
