"""The library's front door: one object that owns the store and the three agents.

    engine = Engine(Settings.load(index=".arag"))
    engine.ingest(["examples/docs"])
    answer = engine.ask("住院报销比例是多少？")

The CLI and (later) the server are thin shells over this class. Agents are built lazily and
only see each other's contracts: Router -> RouteDecision -> Retriever -> Evidence -> Reasoner.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_rag.config import Settings
from agentic_rag.types import Answer, Chunk, Evidence, Filter, RouteDecision, TraceEvent

if TYPE_CHECKING:
    from agentic_rag.agents.reasoner import Reasoner
    from agentic_rag.agents.retriever import Retriever
    from agentic_rag.agents.router import Router
    from agentic_rag.ingest.pipeline import IngestReport
    from agentic_rag.store.embedded import EmbeddedStore

Progress = Callable[[int, int], None]


class Engine:
    """Store + Router + Retriever + Reasoner, configured by one :class:`Settings`."""

    def __init__(self, settings: Settings | None = None, *, store: EmbeddedStore | None = None,
                 llm: Any = None) -> None:
        self.settings = settings or Settings.load()
        self._store = store
        self._router: Router | None = None
        self._retriever: Retriever | None = None
        self._reasoner: Reasoner | None = None
        self._embedder: Any = None
        self._vectors: Any = None
        self._vectors_loaded = False
        self._llm = llm

    # -- parts ---------------------------------------------------------------------------
    @property
    def store(self) -> EmbeddedStore:
        if self._store is None:
            from agentic_rag.store import open_store

            self._store = open_store(self.settings.index)
        return self._store

    @property
    def router(self) -> Router:
        if self._router is None:
            from agentic_rag.agents.router import Router

            self._router = Router(self.settings.router)
        return self._router

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            from agentic_rag.agents.retriever import Retriever

            embedder, vectors = self._dense()
            self._retriever = Retriever(self.store, self.settings.retrieval,
                                        embedder=embedder, vectors=vectors)
        return self._retriever

    @property
    def reasoner(self) -> Reasoner:
        if self._reasoner is None:
            from agentic_rag.agents.reasoner import Reasoner

            self._reasoner = Reasoner(self.settings.reasoner)
        return self._reasoner

    def _dense(self) -> tuple[Any, Any]:
        """The embedder and vector index when both are configured and the index has vectors."""
        if not self._vectors_loaded:
            self._vectors_loaded = True
            try:
                from agentic_rag.models.embedder import make_embedder
                from agentic_rag.store.vectors import VectorIndex
            except ImportError:
                return None, None
            self._embedder = make_embedder(self.settings.embedder)
            if self._embedder is not None:
                self._vectors = VectorIndex.open(Path(self.settings.index) / "vectors",
                                                 dim=self._embedder.dim)
        return self._embedder, self._vectors

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- operations ----------------------------------------------------------------------
    def ingest(self, paths: Sequence[str | Path], progress: Progress | None = None) -> IngestReport:
        """Ingest files and folders; embeds new chunks when a dense embedder is configured."""
        from agentic_rag.ingest.pipeline import ingest_paths

        report = ingest_paths(paths, self.store, self.settings, progress=progress)
        embedder, vectors = self._dense()
        if embedder is not None and vectors is not None:
            from agentic_rag.models.embedder import embed_chunks

            embed_chunks(self.store, embedder, vectors, progress=progress)
        return report

    def search(self, query: str, k: int = 10, where: Sequence[Filter] = ()) -> list[tuple[Chunk, float]]:
        """Plain BM25 search with metadata filters (what ``arag search`` shows)."""
        hits = self.store.search(query, k=k, where=where)
        chunks = {c.chunk_id: c for c in self.store.get_chunks([cid for cid, _ in hits])}
        return [(chunks[cid], score) for cid, score in hits if cid in chunks]

    def route(self, question: str) -> RouteDecision:
        return self.router.route(question)

    def retrieve(self, question: str, k: int | None = None) -> tuple[RouteDecision, list[Evidence]]:
        route = self.router.route(question)
        return route, self.retriever.retrieve(route, k=k)

    def ask(self, question: str, *, session_id: str | None = None,
            on_event: Callable[[TraceEvent], None] | None = None) -> Answer:
        """Answer one question with the deterministic pipeline: route, retrieve, reason."""
        session_id = session_id or uuid.uuid4().hex[:12]
        trace: list[TraceEvent] = []

        def record(event: TraceEvent) -> None:
            event = event.model_copy(update={"session_id": session_id, "step": len(trace) + 1})
            trace.append(event)
            if on_event is not None:
                on_event(event)

        t0 = time.perf_counter()
        route = self.router.route(question)
        record(TraceEvent(kind="route", duration_ms=_ms(t0), confidence=route.confidence,
                          args={"intent": route.intent, "query": route.query, "version": route.version},
                          fallback="low confidence: default route" if route.fallback else None))
        t0 = time.perf_counter()
        evidence = self.retriever.retrieve(route)
        for event in getattr(self.retriever, "trace", []) or []:
            record(event)
        record(TraceEvent(kind="retrieve", duration_ms=_ms(t0),
                          evidence_ids=[e.chunk_id for e in evidence]))
        t0 = time.perf_counter()
        answer = self.reasoner.reason(question, route, evidence)
        record(TraceEvent(kind="reason", duration_ms=_ms(t0), detail=answer.status,
                          evidence_ids=[c.chunk_id for c in answer.citations]))
        usage = answer.usage.model_copy(update={"retrieval_rounds": max(
            [e.round for e in evidence], default=0)})
        return answer.model_copy(update={"question": question, "route": route,
                                         "trace": [*trace, *answer.trace], "usage": usage})


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)
