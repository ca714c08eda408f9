"""BM25 arrays: exact Okapi scores, deletes, compaction and the on-disk format."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from agentic_rag.store.bm25 import BM25Index, rank

DOCS = {
    10: "a a b c".split(),
    11: "b c d".split(),
    12: "a e e e f g".split(),
    13: "h i".split(),
}


def okapi(docs: dict[int, list[str]], query: list[str], k1=1.5, b=0.75) -> dict[int, float]:
    """Reference implementation, one document at a time."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs.values()) / n
    out = {}
    for rid, d in docs.items():
        s = 0.0
        for t in set(query):
            df = sum(t in x for x in docs.values())
            tf = d.count(t)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avgdl))
        if s > 0:
            out[rid] = s
    return out


def scores(index, query):
    ids, sc = index.scores(query)
    return dict(zip(ids.tolist(), sc.tolist()))


def assert_close(got, want):
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=1e-5)


@pytest.mark.parametrize("query", [["a"], ["a", "b"], ["e", "c", "zz"], ["b", "b", "d"]])
def test_scores_match_reference_okapi(query):
    index = BM25Index()
    index.add(list(DOCS), list(DOCS.values()))
    assert_close(scores(index, query), okapi(DOCS, query))


def test_same_scores_from_delta_snapshot_and_mix(tmp_path):
    query = ["a", "b", "e"]
    index = BM25Index()
    index.add([10, 11], [DOCS[10], DOCS[11]])
    index.save(tmp_path / "s1")
    index.add([12, 13], [DOCS[12], DOCS[13]])  # two in the snapshot, two in the delta
    assert_close(scores(index, query), okapi(DOCS, query))
    loaded, manifest = BM25Index.load(tmp_path / "s1")
    assert manifest["rows"] == 2 and manifest["max_rowid"] == 11
    loaded.add([12, 13], [DOCS[12], DOCS[13]])
    assert_close(scores(loaded, query), okapi(DOCS, query))


def test_removed_rows_leave_statistics_as_if_never_added(tmp_path):
    index = BM25Index()
    index.add(list(DOCS), list(DOCS.values()))
    index.save(tmp_path / "s")
    index.add([14], [["a", "z"]])
    assert index.remove([11, 14, 99]) == 2
    rest = {k: v for k, v in DOCS.items() if k != 11}
    for q in (["a"], ["b", "c"], ["z"]):
        assert_close(scores(index, q), okapi(rest, q))
    assert len(index) == 3
    index.save(tmp_path / "s2")  # compaction drops the removed rows for good
    assert index.snapshot_rows == 3 and index.delta_rows == 0
    assert_close(scores(index, ["b", "c"]), okapi(rest, ["b", "c"]))


def test_keep_only_masks_everything_else():
    index = BM25Index()
    index.add(list(DOCS), list(DOCS.values()))
    index.keep_only(np.array([10, 13]))
    assert set(scores(index, ["a", "b", "h"])) == {10, 13}


def test_files_are_plain_arrays_and_json(tmp_path):
    index = BM25Index(k1=1.2, b=0.5)
    index.add(list(DOCS), list(DOCS.values()))
    index.save(tmp_path / "s")
    names = sorted(p.name for p in (tmp_path / "s").iterdir())
    assert names == ["doclen.npy", "indptr.npy", "manifest.json", "rowids.npy", "rows.npy", "tf.npy", "vocab.json"]
    assert json.loads((tmp_path / "s" / "vocab.json").read_text())[:3] == ["a", "b", "c"]
    for name in ("indptr", "rows", "tf", "rowids", "doclen"):
        np.load(tmp_path / "s" / f"{name}.npy", allow_pickle=False)
    loaded, _ = BM25Index.load(tmp_path / "s")
    assert (loaded.k1, loaded.b) == (1.2, 0.5)
    assert isinstance(loaded._rows, np.memmap)


def test_rank_orders_by_score_then_id():
    ids = np.array([5, 3, 9, 1])
    sc = np.array([1.0, 2.0, 2.0, 0.5], dtype=np.float32)
    assert rank(ids, sc, 3) == [(3, 2.0), (9, 2.0), (5, 1.0)]
    assert rank(ids, sc, 0) == []


def test_empty_index_and_unknown_terms():
    index = BM25Index()
    assert index.top(["a"], 5) == []
    index.add([1], [["a"]])
    assert index.top(["nope"], 5) == []
    assert index.top(["a"], 5)[0][0] == 1


def test_delta_deletes_after_a_query_are_seen_by_the_next_query():
    index = BM25Index()
    index.add(list(DOCS), list(DOCS.values()))
    assert set(scores(index, ["a"])) == {10, 12}  # builds the cached delta arrays
    index.remove([12])
    rest = {k: v for k, v in DOCS.items() if k != 12}
    assert_close(scores(index, ["a"]), okapi(rest, ["a"]))


def test_counted_rows_score_like_token_rows():
    a, b = BM25Index(), BM25Index()
    a.add(list(DOCS), list(DOCS.values()))
    terms = [sorted(set(d)) for d in DOCS.values()]
    counts = [np.array([d.count(t) for t in ts], dtype=np.uint32) for d, ts in zip(DOCS.values(), terms)]
    b.add_counted(list(DOCS), terms, counts)
    for q in (["a", "e"], ["b", "h"]):
        assert_close(scores(b, q), scores(a, q))


def test_row_ids_must_grow():
    index = BM25Index()
    index.add([5], [["a"]])
    with pytest.raises(ValueError, match="increasing"):
        index.add([5], [["b"]])
    with pytest.raises(ValueError, match="increasing"):
        index.add([9, 7], [["b"], ["c"]])
