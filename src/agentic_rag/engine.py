"""The library's front door: one object that owns the store and the three agents.

    engine = Engine(Settings.load(index=".arag"))
    engine.ingest(["examples/docs"])
    answer = engine.ask("住院报销比例是多少？")

The CLI and (later) the server are thin shells over this class. Agents are built lazily and
only see each other's contracts: Router -> RouteDecision -> Retriever -> Evidence -> Reasoner.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_rag.config import Settings
from agentic_rag.types import Answer, Chunk, Evidence, Filter, RouteDecision, TraceEvent

if TYPE_CHECKING:
    from agentic_rag.agents.reasoner import Reasoner
    from agentic_rag.agents.retriever import Retriever
    from agentic_rag.agents.router import Router
    from agentic_rag.agents.vocabulary import Vocabulary
    from agentic_rag.ingest.pipeline import IngestReport
    from agentic_rag.runtime import AgentRuntime
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
        self._vocabulary: Vocabulary | None = None
        self._embedder: Any = None
        self._vectors: Any = None
        self._vectors_loaded = False
        #: why the dense leg is on or off, for `arag docs`/traces ("embedder unavailable: ...")
        self.dense_status = ""
        self._llm = llm
        self._runtime: AgentRuntime | None = None

    # -- parts ---------------------------------------------------------------------------
    @property
    def store(self) -> EmbeddedStore:
        if self._store is None:
            from agentic_rag.store import open_index

            self._store = open_index(self.settings)
        return self._store

    @property
    def vocabulary(self) -> Vocabulary:
        """Synonyms and colloquial rules (packaged + the user's), shared by the three agents."""
        if self._vocabulary is None:
            from agentic_rag.agents.vocabulary import Vocabulary

            self._vocabulary = Vocabulary.from_settings(self.settings)
        return self._vocabulary

    @property
    def router(self) -> Router:
        if self._router is None:
            from agentic_rag.agents.router import Router

            self._router = Router(self.settings.router, vocabulary=self.vocabulary)
        return self._router

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            from agentic_rag.agents.retriever import Retriever

            embedder, vectors = self._dense()
            self._retriever = Retriever(self.store, self.settings.retrieval,
                                        embedder=embedder, vectors=vectors, vocabulary=self.vocabulary)
        return self._retriever

    @property
    def reasoner(self) -> Reasoner:
        if self._reasoner is None:
            from agentic_rag.agents.reasoner import Reasoner

            self._reasoner = Reasoner(self.settings.reasoner, vocabulary=self.vocabulary)
        return self._reasoner

    def _dense(self) -> tuple[Any, Any]:
        """The embedder and vector index when a dense embedder is configured and reachable.
        An unreachable embedding server drops the vector leg (noted in ``dense_status``), it
        does not stop BM25 and graph retrieval."""
        if not self._vectors_loaded:
            self._vectors_loaded = True
            from agentic_rag.errors import EmbedderError
            from agentic_rag.models.embedder import CachedEmbedder, make_embedder
            from agentic_rag.store.vectors import VectorIndex

            embedder = make_embedder(self.settings.embedder)
            if embedder is None:
                self.dense_status = "no embedder configured: BM25 + graph only"
                return None, None
            folder = Path(self.settings.index) / "vectors"
            try:
                self._embedder = CachedEmbedder(embedder, folder / "cache",
                                                batch_size=self.settings.embedder.batch_size)
                if hasattr(self.store, "vector_index"):  # PostgreSQL: the vectors live with the chunks
                    self._vectors = self.store.vector_index(self._embedder.dim)
                else:
                    self._vectors = VectorIndex.open(folder, dim=self._embedder.dim)
            except EmbedderError as exc:
                self._embedder = self._vectors = None
                self.dense_status = f"embedder unavailable, vector leg off: {exc}"
            else:
                self.dense_status = self._vectors.reset_reason or f"vector leg: {embedder.name}"
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

        # the router's lexicon terms join the segmentation dictionary before any text is
        # tokenized, so documents and queries split them the same way
        self.store.add_terms(self.router.dictionary_terms())
        report = ingest_paths(paths, self.store, self.settings, progress=progress)
        embedder, vectors = self._dense()
        if embedder is not None and vectors is not None:
            from agentic_rag.models.embedder import embed_chunks

            embed_chunks(self.store, embedder, vectors, progress=progress)
        return report

    def ingest_part(self, path: str | Path, lines: Sequence[tuple[int, bytes]] | None = None) -> IngestReport:
        """Ingest one file, or with ``lines`` some (line number, bytes) of a jsonl file, as one
        of several processes writing into the same index (a queue worker). The store's own
        transactions keep documents whole; the written documents' chunks are embedded here
        and added to the shared vector index under an inter-process lock
        (:func:`~agentic_rag.store.vectors.shared_update`), so no worker saves over another's."""
        from agentic_rag.ingest.pipeline import ingest_lines, ingest_paths

        self.store.add_terms(self.router.dictionary_terms())
        if lines is None:
            report = ingest_paths([path], self.store, self.settings)
        else:
            report = ingest_lines(path, lines, self.store, self.settings)
        written = list(dict.fromkeys(f.doc_id for f in report.files
                                     if f.status in ("added", "replaced") and f.doc_id))
        embedder, _ = self._dense()
        if embedder is not None and written:
            self._embed_shared(embedder, written)
        return report

    def _embed_shared(self, embedder: Any, doc_ids: list[str]) -> None:
        from agentic_rag.ingest.chunking import heading_only
        from agentic_rag.models.embedder import chunk_text, content_key
        from agentic_rag.store.vectors import shared_update

        chunks = [c for d in doc_ids for c in self.store.chunks(d) if not heading_only(c.text)]
        texts = [chunk_text(c) for c in chunks]
        # the model runs unlocked, so workers embed in parallel; only the index update is serial.
        # The embedding cache is bypassed: its shards are numbered by one process at a time
        model = getattr(embedder, "inner", embedder)
        vecs = model.embed_documents(texts) if texts else None
        live = {c.chunk_id for c in chunks}
        prefixes = tuple(f"{d}:" for d in doc_ids)
        with shared_update(Path(self.settings.index) / "vectors", dim=embedder.dim) as index:
            if index.model not in (None, embedder.name):
                index.clear()  # vectors of another model live in another space
            index.model = embedder.name
            stale = [cid for cid in index.ids() if cid.startswith(prefixes) and cid not in live]
            index.remove(stale)
            if vecs is not None:
                index.add([c.chunk_id for c in chunks], vecs,
                          hashes=[content_key(embedder.doc_prefix, t) for t in texts])
            index.save()

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

    @property
    def llm(self) -> Any:
        """The configured LLM (None with ``llm.provider = "none"``: deterministic agents only)."""
        if self._llm is None and self.settings.llm.provider != "none":
            from agentic_rag.models.llm import make_llm

            self._llm = make_llm(self.settings)
        return self._llm

    @property
    def runtime(self) -> AgentRuntime:
        if self._runtime is None:
            from agentic_rag.runtime import AgentRuntime

            self._runtime = AgentRuntime.from_engine(self, llm=self.llm)
        return self._runtime

    def ask(self, question: str, *, mode: str | None = None,
            on_event: Callable[[TraceEvent], None] | None = None,
            deadline_s: float | None = None) -> Answer:
        """Answer one question: route, gates, retrieve (up to the round cap), reason, verify.
        ``mode`` is pipeline (default), react or plan; every step is a trace event, passed to
        ``on_event`` as it happens. ``deadline_s`` (None: ``runtime.deadline_s``) bounds the
        question: past it the deterministic answer from what was found is returned. A question
        longer than ``runtime.max_question_chars`` raises ``ValueError``. For multi-turn use,
        see :class:`agentic_rag.runtime.Session`."""
        return self.runtime.run(question, mode=mode, on_event=on_event, deadline_s=deadline_s)
