"""Okapi BM25 as array code, persisted as plain ``.npy``/``.json`` files (no pickle).

Rows are identified by an integer row id chosen by the caller (the embedded store uses the
SQLite rowid of the chunk, which only ever grows). The index has two parts:

- a **snapshot**: a term-major (CSC) matrix of raw term frequencies written to a folder and
  opened with ``mmap_mode="r"``, so reopening costs a JSON vocabulary load, not a re-tokenize;
- a **delta**: rows added since the snapshot, kept in memory as small arrays.

Deleted rows are masked, not rewritten. Term frequencies are stored raw and BM25 is computed at
query time from the live statistics (N, df, average length), so scores are exact whatever the
mix of snapshot, delta and deletions. :meth:`BM25Index.save` merges everything into a new
snapshot (the compaction step).

Scoring (Okapi, as bm25s/Lucene)::

    idf(t)   = ln(1 + (N - df + 0.5) / (df + 0.5))
    score(d) = sum over unique query terms t of idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))
"""

from __future__ import annotations

import json
import os
from collections import Counter
from itertools import chain
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

FORMAT = "arag-bm25/1"
_FILES = ("indptr", "rows", "tf", "rowids", "doclen")


class BM25Index:
    """A BM25 index over integer row ids; see the module docstring for the layout."""

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = float(k1)
        self.b = float(b)
        self.terms: list[str] = []
        self.vocab: dict[str, int] = {}
        # snapshot arrays (memory-mapped when loaded from disk)
        self._indptr = np.zeros(1, dtype=np.int64)
        self._rows = np.zeros(0, dtype=np.int32)
        self._tf = np.zeros(0, dtype=np.float32)
        self._rowids = np.zeros(0, dtype=np.int64)
        self._doclen = np.zeros(0, dtype=np.float32)
        self._alive = np.ones(0, dtype=bool)
        self._dead_main = 0
        # delta rows
        self._d_rowids: list[int] = []
        self._d_len: list[float] = []
        self._d_cols: list[np.ndarray] = []
        self._d_tf: list[np.ndarray] = []
        self._d_pos: dict[int, int] = {}  # rowid -> delta position, for deletes
        self._d_alive: list[bool] = []
        self._d_dead = 0
        self._d_csc: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._norm_cache: tuple[tuple[int, float], np.ndarray] | None = None
        # live statistics
        self._n = 0
        self._total_len = 0.0

    # ------------------------------------------------------------------ size
    def __len__(self) -> int:
        """Number of live rows."""
        return self._n

    @property
    def snapshot_rows(self) -> int:
        return len(self._rowids)

    @property
    def delta_rows(self) -> int:
        return len(self._d_rowids)

    @property
    def max_rowid(self) -> int:
        """The largest row id ever added (0 for an empty index)."""
        if self._d_rowids:
            return max(self._d_rowids[-1], int(self._rowids[-1]) if len(self._rowids) else 0)
        return int(self._rowids[-1]) if len(self._rowids) else 0

    # ------------------------------------------------------------------ writes
    def add(self, rowids: Sequence[int], token_lists: Iterable[Sequence[str]]) -> None:
        """Add rows from their token sequences (row ids must be new and increasing)."""
        counted = [Counter(tokens) for tokens in token_lists]
        self.add_counted(rowids, [list(c) for c in counted],
                         [np.fromiter(c.values(), dtype=np.uint32, count=len(c)) for c in counted])

    def add_counted(self, rowids: Sequence[int], terms: Sequence[Sequence[str]],
                    counts: Sequence[np.ndarray]) -> None:
        """Add rows given as unique terms with their counts (what the tokenizer workers send).
        New terms join the vocabulary."""
        rowids = [int(r) for r in rowids]
        if not (len(rowids) == len(terms) == len(counts)):
            raise ValueError(f"{len(rowids)} row ids, {len(terms)} term lists, {len(counts)} counts")
        if not rowids:
            return
        if rowids[0] <= self.max_rowid or any(a >= b for a, b in zip(rowids, rowids[1:])):
            raise ValueError("row ids must be new and increasing")
        sizes = np.fromiter((len(t) for t in terms), dtype=np.int64, count=len(terms))
        if not np.array_equal(sizes, [len(c) for c in counts]):
            raise ValueError("every term list needs one count per term")
        # every (row, term) pair of the batch in C-level loops: new terms join the vocabulary
        # first, so the lookup needs no per-item branch
        flat = list(chain.from_iterable(terms))
        vocab = self.vocab
        for t in [t for t in dict.fromkeys(flat) if t not in vocab]:  # first-seen order
            vocab[t] = len(self.terms)
            self.terms.append(t)
        cols = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat)).astype(np.int32)
        tf = (np.concatenate([np.asarray(c) for c in counts]) if flat else np.zeros(0)).astype(np.float32)
        ends = np.cumsum(sizes)
        starts = ends - sizes
        csum = np.concatenate(([0.0], np.cumsum(tf, dtype=np.float64)))
        lengths = (csum[ends] - csum[starts]).tolist()
        for rowid, s0, e0, length in zip(rowids, starts.tolist(), ends.tolist(), lengths):
            self._d_pos[rowid] = len(self._d_rowids)
            self._d_rowids.append(rowid)
            self._d_len.append(length)
            self._d_cols.append(cols[s0:e0])
            self._d_tf.append(tf[s0:e0])
            self._d_alive.append(True)
        self._n += len(rowids)
        self._total_len += float(sum(lengths))
        self._d_csc = None

    def remove(self, rowids: Iterable[int]) -> int:
        """Mask rows as deleted; unknown ids are ignored. Returns how many rows were removed."""
        ids = np.fromiter((int(r) for r in rowids), dtype=np.int64)
        if not len(ids):
            return 0
        removed = 0
        if len(self._rowids):
            hit = self._main_positions(ids)
            live = hit[self._alive[hit]]
            if len(live):
                self._alive[live] = False
                self._dead_main += len(live)
                self._n -= len(live)
                self._total_len -= float(np.asarray(self._doclen[live], dtype=np.float64).sum())
                removed += len(live)
        for rowid in ids.tolist():
            p = self._d_pos.get(rowid)
            if p is not None and self._d_alive[p]:
                self._d_alive[p] = False
                self._d_dead += 1
                self._d_csc = None  # the cached live mask is stale
                self._n -= 1
                self._total_len -= self._d_len[p]
                removed += 1
        return removed

    def _main_positions(self, ids: np.ndarray) -> np.ndarray:
        pos = np.searchsorted(self._rowids, ids)
        pos = np.minimum(pos, len(self._rowids) - 1)
        return pos[np.asarray(self._rowids[pos]) == ids]

    def keep_only(self, rowids: np.ndarray) -> int:
        """Mask every live row whose id is not in ``rowids`` (syncs with the source of truth)."""
        ids = np.asarray(rowids, dtype=np.int64)
        gone: list[int] = []
        if len(self._rowids):
            gone.extend(self._rowids[self._alive & ~np.isin(self._rowids, ids)].tolist())
        if self._d_rowids:
            d = np.asarray(self._d_rowids, dtype=np.int64)
            d_alive = np.fromiter(self._d_alive, dtype=bool, count=len(d))
            gone.extend(d[d_alive & ~np.isin(d, ids)].tolist())
        return self.remove(gone)

    # ------------------------------------------------------------------ reads
    def _delta_matrix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """The delta as CSC arrays (indptr, rows, tf) plus row lengths and the live mask (None
        when nothing was deleted); rebuilt after a change."""
        if self._d_csc is None:
            n = len(self._d_rowids)
            if n:
                lens = np.fromiter((len(c) for c in self._d_cols), dtype=np.int64, count=n)
                rows = np.repeat(np.arange(n, dtype=np.int32), lens)
                mat = sp.csc_matrix(
                    (np.concatenate(self._d_tf), (rows, np.concatenate(self._d_cols))),
                    shape=(n, len(self.terms)),
                )
                csc = (mat.indptr.astype(np.int64), mat.indices, mat.data.astype(np.float32))
            else:
                csc = (np.zeros(len(self.terms) + 1, dtype=np.int64),
                       np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))
            alive = np.fromiter(self._d_alive, dtype=bool, count=n) if self._d_dead else None
            self._d_csc = (*csc, np.asarray(self._d_len, dtype=np.float32), alive)
        return self._d_csc

    def _norms(self, avgdl: float) -> np.ndarray:
        key = (self._n, round(avgdl, 6))
        if self._norm_cache is None or self._norm_cache[0] != key:
            dl = np.asarray(self._doclen, dtype=np.float32)
            norm = (self.k1 * (1.0 - self.b + self.b * dl / np.float32(avgdl))).astype(np.float32)
            self._norm_cache = (key, norm)
        return self._norm_cache[1]

    def scores(self, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Every live row with a positive score: ``(rowids, scores)``, unordered."""
        cols = sorted({self.vocab[t] for t in tokens if t in self.vocab})
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
        if not cols or self._n == 0:
            return empty
        n_main = len(self._rowids)
        avgdl = max(self._total_len / self._n, 1e-9)
        k1, b = self.k1, self.b
        d_indptr, d_rows, d_tf, d_len, d_alive = self._delta_matrix()
        n_d_cols = len(d_indptr) - 1
        main_scores = np.zeros(n_main, dtype=np.float32) if n_main else None
        d_scores = np.zeros(len(self._d_rowids), dtype=np.float32)
        norms = self._norms(avgdl) if n_main else None
        n_main_terms = len(self._indptr) - 1
        for col in cols:
            m_rows = m_tf = None
            df = 0
            if col < n_main_terms:
                s, e = int(self._indptr[col]), int(self._indptr[col + 1])
                if e > s:
                    m_rows = np.asarray(self._rows[s:e])
                    m_tf = np.asarray(self._tf[s:e])
                    df += int(self._alive[m_rows].sum()) if self._dead_main else e - s
            dr = dt = None
            if col < n_d_cols:
                s, e = int(d_indptr[col]), int(d_indptr[col + 1])
                if e > s:
                    dr, dt = d_rows[s:e], d_tf[s:e]
                    df += int(d_alive[dr].sum()) if d_alive is not None else e - s
            if df == 0:
                continue
            idf = np.float32(np.log1p((self._n - df + 0.5) / (df + 0.5)))
            if m_rows is not None:
                main_scores[m_rows] += idf * m_tf * (k1 + 1.0) / (m_tf + norms[m_rows])
            if dr is not None:
                dn = k1 * (1.0 - b + b * d_len[dr] / np.float32(avgdl))
                d_scores[dr] += idf * dt * (k1 + 1.0) / (dt + dn)
        out_ids, out_scores = [], []
        if main_scores is not None:
            if self._dead_main:
                main_scores[~self._alive] = 0.0
            nz = np.flatnonzero(main_scores > 0)
            out_ids.append(np.asarray(self._rowids[nz], dtype=np.int64))
            out_scores.append(main_scores[nz])
        if len(d_scores):
            if d_alive is not None:
                d_scores[~d_alive] = 0.0
            nz = np.flatnonzero(d_scores > 0)
            out_ids.append(np.asarray(self._d_rowids, dtype=np.int64)[nz])
            out_scores.append(d_scores[nz])
        if not out_ids:
            return empty
        return np.concatenate(out_ids), np.concatenate(out_scores)

    def top(self, tokens: Sequence[str], k: int) -> list[tuple[int, float]]:
        """The ``k`` best ``(rowid, score)`` pairs, best first (ties: lower row id first)."""
        ids, sc = self.scores(tokens)
        return rank(ids, sc, k)

    # ------------------------------------------------------------------ persistence
    def save(self, folder: str | Path, **manifest: object) -> None:
        """Write a compacted snapshot (snapshot + delta - deletions) into ``folder``.

        Writes every file under a temporary name and renames it, so a crash leaves either no
        snapshot or a complete one. The in-memory index switches to the new snapshot.
        """
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        n_terms = len(self.terms)
        parts_rows, parts_cols, parts_tf = [], [], []
        n_main = len(self._rowids)
        alive = np.asarray(self._alive, dtype=bool)
        new_pos = np.cumsum(alive, dtype=np.int64) - 1
        n_main_alive = int(alive.sum())
        if n_main and len(self._rows):
            counts = np.diff(np.asarray(self._indptr))
            cols = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
            rows = np.asarray(self._rows)
            keep = alive[rows] if self._dead_main else slice(None)
            parts_rows.append(new_pos[rows[keep]].astype(np.int32))
            parts_cols.append(cols[keep])
            parts_tf.append(np.asarray(self._tf)[keep])
        d_keep = [i for i, a in enumerate(self._d_alive) if a]
        if d_keep:
            lens = np.fromiter((len(self._d_cols[i]) for i in d_keep), dtype=np.int64, count=len(d_keep))
            parts_rows.append(np.repeat(np.arange(n_main_alive, n_main_alive + len(d_keep), dtype=np.int32), lens))
            parts_cols.append(np.concatenate([self._d_cols[i] for i in d_keep]))
            parts_tf.append(np.concatenate([self._d_tf[i] for i in d_keep]))
        n_rows = n_main_alive + len(d_keep)
        rowids = np.concatenate([np.asarray(self._rowids)[alive],
                                 np.asarray([self._d_rowids[i] for i in d_keep], dtype=np.int64)])
        doclen = np.concatenate([np.asarray(self._doclen)[alive],
                                 np.asarray([self._d_len[i] for i in d_keep], dtype=np.float32)])
        if parts_rows:
            mat = sp.csc_matrix(
                (np.concatenate(parts_tf), (np.concatenate(parts_rows), np.concatenate(parts_cols))),
                shape=(n_rows, n_terms),
            )
            indptr, rows, tf = mat.indptr.astype(np.int64), mat.indices.astype(np.int32), mat.data.astype(np.float32)
            del mat
        else:
            indptr = np.zeros(n_terms + 1, dtype=np.int64)
            rows, tf = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        arrays = {"indptr": indptr, "rows": rows, "tf": tf, "rowids": rowids.astype(np.int64),
                  "doclen": doclen.astype(np.float32)}
        for name, arr in arrays.items():
            tmp = folder / f"{name}.npy.tmp"
            with open(tmp, "wb") as fh:
                np.save(fh, arr, allow_pickle=False)
            os.replace(tmp, folder / f"{name}.npy")
        _write_json(folder / "vocab.json", self.terms)
        _write_json(folder / "manifest.json", {
            "format": FORMAT, "k1": self.k1, "b": self.b, "rows": n_rows, "terms": n_terms,
            "postings": int(len(rows)), "max_rowid": int(rowids.max()) if n_rows else 0, **manifest,
        })
        self._set_snapshot(indptr, rows, tf, arrays["rowids"], arrays["doclen"])

    def _set_snapshot(self, indptr, rows, tf, rowids, doclen) -> None:
        self._indptr, self._rows, self._tf = indptr, rows, tf
        self._rowids, self._doclen = rowids, doclen
        self._alive = np.ones(len(rowids), dtype=bool)
        self._dead_main = 0
        self._d_rowids, self._d_len, self._d_cols, self._d_tf = [], [], [], []
        self._d_pos, self._d_alive, self._d_dead, self._d_csc = {}, [], 0, None
        self._norm_cache = None
        self._n = len(rowids)
        self._total_len = float(np.asarray(doclen, dtype=np.float64).sum())

    @classmethod
    def load(cls, folder: str | Path, *, mmap: bool = True) -> tuple["BM25Index", dict]:
        """Open a snapshot written by :meth:`save`; returns the index and its manifest."""
        folder = Path(folder)
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT:
            raise ValueError(f"{folder}: unknown BM25 format {manifest.get('format')!r}")
        index = cls(k1=manifest["k1"], b=manifest["b"])
        arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r" if mmap else None,
                                allow_pickle=False) for name in _FILES}
        index.terms = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        index.vocab = {t: i for i, t in enumerate(index.terms)}
        # small per-row arrays are read into memory; postings stay mapped
        index._set_snapshot(arrays["indptr"], arrays["rows"], arrays["tf"],
                            np.array(arrays["rowids"]), np.array(arrays["doclen"]))
        return index, manifest


def rank(ids: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Top ``k`` of ``(ids, scores)`` best first; ties broken by the smaller id."""
    if k <= 0 or not len(ids):
        return []
    if len(ids) > k:
        part = np.argpartition(-scores, k - 1)[:k]
        ids, scores = ids[part], scores[part]
    order = np.lexsort((ids, -scores))
    return [(int(ids[i]), float(scores[i])) for i in order]


def _write_json(path: Path, obj: object) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
