"""The Retriever's search legs behind one small interface (:class:`Leg`): BM25 keyword search
with slot filters, and dense vectors when an embedder and a vector index are given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from agentic_rag.models.embedder import embed_queries
from agentic_rag.types import Filter

__all__ = ["BM25Leg", "Leg", "LegQuery", "VectorLeg"]


@dataclass(frozen=True)
class LegQuery:
    """What a leg searches for: the query text, its filters, and how many candidates. ``also``
    holds other wordings of the same query (the question as the user asked it); a dense leg
    searches with the mean of all their embeddings, a keyword leg with ``text`` alone."""

    text: str
    k: int
    where: tuple[Filter, ...] = ()
    also: tuple[str, ...] = ()


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
    """Dense leg: the query and its other wordings embedded in one model call
    (:func:`~agentic_rag.models.embedder.embed_queries`), then ``vectors.search(vector, k)``.
    Filters are applied after fusion as score adjustments, because the vector index does not know
    chunk metadata."""

    name = "vector"

    def __init__(self, embedder: Any, vectors: Any) -> None:
        self.embedder = embedder
        self.vectors = vectors

    def search(self, query: LegQuery) -> list[tuple[str, float]]:
        vecs = embed_queries(self.embedder, [query.text, *query.also])
        vec = vecs[0]
        if query.also:
            # the centroid of unit vectors, back to unit length: each wording counts alike
            vec = np.mean(vecs, axis=0)
            vec = (vec / max(float(np.linalg.norm(vec)), 1e-12)).astype(np.float32)
        return [(str(i), float(s)) for i, s in self.vectors.search(vec, query.k)]
