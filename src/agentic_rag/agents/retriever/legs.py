"""The Retriever's search legs behind one small interface (:class:`Leg`): BM25 keyword search
with slot filters, and dense vectors when an embedder and a vector index are given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from agentic_rag.types import Filter

__all__ = ["BM25Leg", "Leg", "LegQuery", "VectorLeg"]


@dataclass(frozen=True)
class LegQuery:
    """What a leg searches for: the query text, its filters, and how many candidates."""

    text: str
    k: int
    where: tuple[Filter, ...] = ()


class Leg(Protocol):
    """One retrieval strategy. ``search`` returns (chunk_id, raw score) pairs, best first."""

    name: str

    def search(self, query: LegQuery) -> list[tuple[str, float]]: ...


class BM25Leg:
    name = "bm25"

    def __init__(self, store: Any) -> None:
        self.store = store

    def search(self, query: LegQuery) -> list[tuple[str, float]]:
        return list(self.store.search(query.text, k=query.k, where=list(query.where)))


class VectorLeg:
    """Dense leg: ``embedder.embed_query`` then ``vectors.search(vector, k)``. Filters are applied
    after fusion as score adjustments, because the vector index does not know chunk metadata."""

    name = "vector"

    def __init__(self, embedder: Any, vectors: Any) -> None:
        self.embedder = embedder
        self.vectors = vectors

    def search(self, query: LegQuery) -> list[tuple[str, float]]:
        vec = self.embedder.embed_query(query.text)
        return [(str(i), float(s)) for i, s in self.vectors.search(vec, query.k)]
