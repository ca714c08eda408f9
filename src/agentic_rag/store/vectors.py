"""The vector index of the embedded store: chunk id -> unit vector, searched by inner product.

Small indexes are searched exactly (one float32 matrix-vector product); above ``exact_limit``
rows an HNSW graph (``hnswlib``, inner-product space over the L2-normalized vectors) proposes
candidates that are then re-scored exactly against the stored vectors, so scores are always true
cosines and only recall depends on the graph (``bench/vectors.py`` measures it: ≥ 0.98 of the
exact top-k). ``allowed_ids`` restricts a search to a subset, always exactly. Removed or replaced
vectors are tombstoned in the graph (``mark_deleted``); past a fifth of the index the graph is
rebuilt. Graph searches run single-threaded (one query is too small to split, and on few cores
extra threads only fight BLAS).

(The graph used to be ``usearch``; importing it breaks llama-cpp-python's model loading in the
same process, so ``--llm local`` failed on large indexes. An old ``ann.usearch`` file is ignored
and deleted on the next save; the graph is rebuilt from the vectors.)

On disk, one folder holding generations: ``CURRENT`` names the live one, ``gen-<n>-<tag>/``
holds ``vectors.npy`` (float32, or float16 to halve the size), ``labels.npy``, ``meta.json``
(ids, their content hashes, the model name) and, when built, ``ann.hnsw`` (the graph,
hnswlib's own binary format via ``save_index``, not a pickle). A save writes a whole new
generation and then switches ``CURRENT`` with one rename, so a crash at any point leaves either
the old or the new generation in force, never a mix; older generations are removed after the
switch. A reader that finds its generation removed mid-open (another process saved) reads
``CURRENT`` again. A generation whose files disagree anyway (disk damage, or the one-file-at-a-
time layout of earlier versions killed mid-save) is not fatal: the index starts empty,
``reset_reason`` says why, and the next ingest embeds the store's chunks again (from the
embedding cache, so it costs little). float32 vectors are memory-mapped on open, and a graph that
does not match the vectors is rebuilt.

    >>> idx = VectorIndex.open(".arag/vectors", dim=384)                 # doctest: +SKIP
    >>> idx.add(["a", "b"], vectors); idx.save()                         # doctest: +SKIP
    >>> idx.search(query_vector, k=5, allowed_ids={"a"})                 # doctest: +SKIP
    [('a', 0.83)]
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import uuid
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np

from agentic_rag.errors import StoreError

#: Exact search up to this many vectors. Measured (bench/vectors.py, 384-d float32, 2 shared
#: cores): exact top-10 takes ~0.06 ms at 2k rows, ~1 ms at 20k, 12-25 ms at 50k-100k (memory
#: bound, and worse when BLAS threads compete); the graph answers in well under a millisecond at
#: any of those sizes but costs seconds of build time per 20k rows (hnswlib, one thread) and a
#: second copy of the vectors in memory. Up to 20k rows exact search stays far inside a 30 ms
#: query budget, so the graph is only built above that.
EXACT_LIMIT = 20_000

_META, _VECS, _LABELS, _ANN = "meta.json", "vectors.npy", "labels.npy", "ann.hnsw"
_CURRENT = "CURRENT"  # names the live generation folder; replaced by one rename per save
_GEN = re.compile(r"^gen-(\d+)-[0-9a-f]{8}$")
#: files of the one-folder layout of earlier versions (and of the former usearch graph): read
#: when there is no ``CURRENT``, removed by the first save
_FLAT = (_META, _VECS, _LABELS, _ANN, "ann.usearch", f".{_META}.tmp", f".{_VECS}.tmp",
         f".{_LABELS}.tmp", f".{_ANN}.tmp")
_FORMAT = 2
_OPEN_ATTEMPTS = 5  # a reader re-reads CURRENT this often while saves keep replacing generations


class VectorIndex:
    """Chunk ids and their L2-normalized vectors, searched by inner product (= cosine).

    ``path=None`` keeps everything in memory. ``dim=None`` takes the dimension from the first
    :meth:`add`. Re-adding an id replaces its vector. ``hashes`` (optional, per id) record what
    text each vector was made from, so :func:`~agentic_rag.models.embedder.embed_chunks` can
    skip chunks whose text did not change. Thread-safe: one lock guards every read and write.
    """

    def __init__(self, path: str | Path | None = None, dim: int | None = None, *,
                 exact_limit: int = EXACT_LIMIT, dtype: Literal["float32", "float16"] = "float32",
                 connectivity: int = 16, expansion_add: int = 128, expansion_search: int = 200,
                 model: str | None = None) -> None:
        if dim is not None and dim < 1:
            raise ValueError(f"VectorIndex dim must be positive, got {dim}")
        if dtype not in ("float32", "float16"):
            raise ValueError(f"VectorIndex dtype must be 'float32' or 'float16', got {dtype!r}")
        if exact_limit < 0:
            raise ValueError(f"VectorIndex exact_limit must be >= 0, got {exact_limit}")
        self.path = Path(path) if path is not None else None
        self.dim = dim
        self.dtype = dtype
        self.exact_limit = exact_limit
        self.connectivity = connectivity
        self.expansion_add = expansion_add
        self.expansion_search = expansion_search
        #: name of the embedder the vectors came from; vectors of different models never mix
        self.model = model
        #: why a stored index was set aside on open (dimension changed), or "" when it was not
        self.reset_reason = ""
        self._lock = threading.RLock()
        self._vecs = np.zeros((0, dim or 0), np.float32)  # capacity rows; [:_n] are live
        self._n = 0
        self._ids: list[str] = []
        self._hashes: list[str | None] = []
        self._pos: dict[str, int] = {}
        self._labels = np.zeros(0, np.int64)  # stable ANN key per row
        self._row_of_label: dict[int, int] = {}
        self._next_label = 0
        self._ann: Any = None  # hnswlib Index, kept in step with rows once built
        self._ann_removed = 0  # graph entries marked deleted since it was built (tombstones)
        self._dirty = False

    # -- opening and saving ----------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, dim: int | None = None, **kwargs: Any) -> VectorIndex:
        """The index stored in folder ``path``, or an empty one there when nothing is stored.

        A stored index whose dimension differs from ``dim`` (the embedder changed) is derived
        data that can no longer be searched with this embedder: it is set aside (``reset_reason``
        says so) and replaced on the next :meth:`save`. So is a damaged one (files that disagree
        or cannot be read): vectors are derived from the store, so damage costs a re-embedding
        at the next ingest, never an index that cannot be opened.
        """
        idx = cls(path, dim, **kwargs)
        assert idx.path is not None
        for _ in range(_OPEN_ATTEMPTS):
            gen = current_folder(idx.path)
            folder = gen if gen is not None else idx.path
            if not (folder / _META).exists():
                if gen is not None and current_folder(idx.path) == gen:
                    idx._set_aside(f"generation {gen.name} named by {_CURRENT} is missing")
                    return idx
                if gen is None and current_folder(idx.path) is None:
                    return idx  # nothing stored yet
                continue  # a save switched generations meanwhile
            try:
                idx._load(folder)
                return idx
            except FileNotFoundError:
                continue  # removed by a concurrent save: read CURRENT again
            except _Damaged as exc:
                if current_folder(idx.path) != gen:
                    continue  # read while a save replaced it: not damage
                idx._set_aside(str(exc))
                return idx
        raise StoreError(f"{idx.path}: the vector index kept changing while it was opened "
                         f"({_OPEN_ATTEMPTS} generations); try again")

    def _set_aside(self, why: str) -> None:
        self.reset_reason = (f"the stored vectors could not be used ({why}); the vector index "
                             f"starts empty and the next ingest embeds the chunks again")
        self._dirty = True

    def _load(self, folder: Path) -> None:
        """Read one generation (or the flat layout of earlier versions); raises _Damaged when
        its files are unreadable or disagree, FileNotFoundError when one vanished."""
        try:
            meta = json.loads((folder / _META).read_text(encoding="utf-8"))
            ids, hashes = meta["ids"], meta["hashes"]
            if meta["dim"] is None:  # saved before anything was added: nothing to read
                return
            dim, dtype = int(meta["dim"]), meta.get("dtype", "float32")
            # an empty file cannot be memory-mapped; a small one is not worth it
            mmap = "r" if dtype == "float32" and ids else None
            vecs = np.load(folder / _VECS, mmap_mode=mmap, allow_pickle=False)
            labels = np.load(folder / _LABELS, allow_pickle=False)
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
            raise _Damaged(f"unreadable: {exc}") from exc
        if vecs.shape != (len(ids), dim) or len(hashes) != len(ids) or len(labels) != len(ids):
            raise _Damaged(f"files disagree: {vecs.shape} vectors, {len(labels)} labels, "
                           f"{len(ids)} ids")
        if self.dim is not None and dim != self.dim:
            self.reset_reason = (f"stored {dim}-d vectors ({meta.get('model')}) do not match the "
                                 f"{self.dim}-d embedder; the index starts empty")
            self._dirty = True
            return
        self.dim, self.dtype, self.model = dim, dtype, meta.get("model", self.model)
        self._vecs = vecs if dtype == "float32" else vecs.astype(np.float32)
        self._n = len(ids)
        self._ids, self._hashes = list(ids), list(hashes)
        self._pos = {cid: i for i, cid in enumerate(self._ids)}
        self._labels = np.asarray(labels, np.int64)
        self._row_of_label = {int(lab): i for i, lab in enumerate(self._labels)}
        self._next_label = int(meta.get("next_label", int(self._labels.max(initial=-1)) + 1))
        ann_file = folder / _ANN
        removed = meta.get("ann_removed", 0)
        if (ann_file.exists() and meta.get("ann_count") == self._n and self._n
                and isinstance(removed, int) and removed >= 0):
            self._ann = self._load_ann(ann_file, removed)  # None: rebuilt when first needed
            self._ann_removed = removed if self._ann is not None else 0

    def _load_ann(self, ann_file: Path, removed: int) -> Any:
        """The stored graph, or None when hnswlib is missing, the file is unreadable, or it does
        not hold exactly the live rows (plus ``removed`` tombstones) with their vectors."""
        try:
            import hnswlib

            ann = hnswlib.Index(space="ip", dim=self.dim)
            ann.load_index(str(ann_file), max_elements=self._n + removed)
            if ann.element_count != self._n + removed:
                return None
            # hnswlib trusts the caller's dim, so check a few stored vectors against ours (the
            # graph keeps the float32 vectors it was built from; float16 files round them)
            rows = sorted({0, self._n // 2, self._n - 1})
            got = np.asarray(ann.get_items(self._labels[rows].tolist()), np.float32)
            tol = 1e-5 if self.dtype == "float32" else 2e-3
            if got.shape != (len(rows), self.dim) or not np.allclose(
                    got, self._vecs[rows], atol=tol):
                return None
        except (ImportError, RuntimeError, ValueError, OSError, MemoryError):
            return None
        ann.set_num_threads(1)
        return ann

    def save(self) -> None:
        """Write a new generation (vectors, labels, graph when built, meta), switch ``CURRENT``
        to it with one rename, then remove the older generations."""
        if self.path is None:
            raise StoreError("this VectorIndex lives in memory only (path=None); nothing to save")
        with self._lock:
            if self._n > self.exact_limit:
                self._ensure_ann()
            try:
                self._save_generation(self.path)
            except OSError as exc:
                raise StoreError(f"{self.path}: cannot save the vector index: {exc}") from exc
            self._dirty = False
            self.reset_reason = ""

    def _save_generation(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        numbers = [int(m.group(1)) for p in path.iterdir() if (m := _GEN.match(p.name))]
        gen = path / f"gen-{max(numbers, default=0) + 1:06d}-{uuid.uuid4().hex[:8]}"
        gen.mkdir()
        try:
            vecs = np.ascontiguousarray(self._vecs[:self._n], dtype=np.dtype(self.dtype))
            _write(gen / _VECS, lambda fh: np.save(fh, vecs, allow_pickle=False))
            labels = np.ascontiguousarray(self._labels[:self._n])
            _write(gen / _LABELS, lambda fh: np.save(fh, labels, allow_pickle=False))
            ann_count = None
            if self._ann is not None:
                self._ann.save_index(str(gen / _ANN))
                ann_count = self._n
            meta = {"format": _FORMAT, "dim": self.dim, "dtype": self.dtype, "model": self.model,
                    "next_label": self._next_label, "ann_count": ann_count,
                    "ann_removed": self._ann_removed if ann_count is not None else 0,
                    "ids": self._ids, "hashes": self._hashes}
            _write(gen / _META,
                   lambda fh: fh.write(json.dumps(meta, ensure_ascii=False).encode("utf-8")))
            _fsync_dir(gen)
            # the one switch: until this rename the old generation is in force, after it the new
            _write(path / f".{_CURRENT}.tmp", lambda fh: fh.write(f"{gen.name}\n".encode()))
            os.replace(path / f".{_CURRENT}.tmp", path / _CURRENT)
            _fsync_dir(path)
        except BaseException:
            if current_folder(path) != gen:
                shutil.rmtree(gen, ignore_errors=True)
            raise
        # Older generations go now: a reader that has one memory-mapped keeps its mapping
        # (POSIX), one caught half-way through opening it reads CURRENT again. Folders left by
        # a save that crashed before its switch go too.
        for p in path.iterdir():
            if _GEN.match(p.name) and p.name != gen.name:
                shutil.rmtree(p, ignore_errors=True)
        for name in _FLAT:
            (path / name).unlink(missing_ok=True)

    # -- contents ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._pos

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._ids)

    def content_hash(self, chunk_id: str) -> str | None:
        """The hash recorded with ``chunk_id``'s vector, or None (absent, or added without one)."""
        with self._lock:
            row = self._pos.get(chunk_id)
            return None if row is None else self._hashes[row]

    def vector(self, chunk_id: str) -> np.ndarray | None:
        with self._lock:
            row = self._pos.get(chunk_id)
            return None if row is None else np.array(self._vecs[row], np.float32)

    @property
    def uses_ann(self) -> bool:
        """Whether an unfiltered search goes through the HNSW graph (size above exact_limit)."""
        return self._n > self.exact_limit

    def add(self, ids: Sequence[str], vectors: np.ndarray,
            hashes: Sequence[str | None] | None = None) -> None:
        """Add or replace vectors (normalized here, so any non-zero vectors are fine)."""
        ids = list(ids)
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim == 1 and len(ids) == 1:
            vecs = vecs[None, :]
        if vecs.ndim != 2 or vecs.shape[0] != len(ids):
            raise ValueError(f"VectorIndex.add: {len(ids)} ids but vectors of shape {vecs.shape}")
        if hashes is not None and len(hashes) != len(ids):
            raise ValueError(f"VectorIndex.add: {len(ids)} ids but {len(hashes)} hashes")
        if len(set(ids)) != len(ids):
            raise ValueError("VectorIndex.add: duplicate ids in one call")
        if not ids:
            return
        with self._lock:
            if self.dim is None or (self._n == 0 and self._vecs.shape[1] != self.dim):
                self.dim = self.dim or int(vecs.shape[1])
                self._vecs = np.zeros((0, self.dim), np.float32)
            if vecs.shape[1] != self.dim:
                raise ValueError(f"VectorIndex.add: vectors have {vecs.shape[1]} dimensions, "
                                 f"the index holds {self.dim}")
            if not np.isfinite(vecs).all():
                raise ValueError("VectorIndex.add: vectors contain NaN or infinity")
            norms = np.linalg.norm(vecs, axis=1, keepdims=True)
            vecs = vecs / np.where(norms > 0, norms, 1.0)
            self._writable(self._n + len(ids))
            hs = list(hashes) if hashes is not None else [None] * len(ids)
            rows, new_labels = [], []
            for cid, h in zip(ids, hs, strict=True):
                row = self._pos.get(cid)
                if row is None:
                    row = self._n
                    self._n += 1
                    self._ids.append(cid)
                    self._hashes.append(h)
                    self._pos[cid] = row
                else:
                    self._hashes[row] = h
                    old = int(self._labels[row])
                    del self._row_of_label[old]
                    if self._ann is not None:
                        self._ann.mark_deleted(old)
                        self._ann_removed += 1
                label = self._next_label
                self._next_label += 1
                self._labels[row] = label
                self._row_of_label[label] = row
                rows.append(row)
                new_labels.append(label)
            self._vecs[rows] = vecs
            if self._ann is not None:
                need = self._ann.element_count + len(new_labels)
                if need > self._ann.max_elements:  # deleted entries keep their slots
                    self._ann.resize_index(max(need, 2 * self._ann.max_elements))
                self._ann.add_items(vecs, np.asarray(new_labels, np.int64), num_threads=1)
            self._dirty = True

    def remove(self, ids: Iterable[str]) -> int:
        """Drop the given ids (unknown ones are ignored); returns how many were removed."""
        removed = 0
        with self._lock:
            targets = [cid for cid in dict.fromkeys(ids) if cid in self._pos]
            if not targets:
                return 0
            self._writable(self._n)
            for cid in targets:
                row = self._pos.pop(cid)
                label = int(self._labels[row])
                del self._row_of_label[label]
                if self._ann is not None:
                    self._ann.mark_deleted(label)
                    self._ann_removed += 1
                last = self._n - 1
                if row != last:  # move the last row into the hole: O(1), order is not a contract
                    moved = self._ids[last]
                    self._vecs[row] = self._vecs[last]
                    self._ids[row], self._hashes[row] = moved, self._hashes[last]
                    self._labels[row] = self._labels[last]
                    self._pos[moved] = row
                    self._row_of_label[int(self._labels[row])] = row
                self._ids.pop()
                self._hashes.pop()
                self._n -= 1
                removed += 1
            self._dirty = True
        return removed

    def clear(self) -> None:
        """Drop every vector (used when the embedder model changes)."""
        with self._lock:
            self.remove(list(self._ids))
            self._ann = None
            self._ann_removed = 0

    def _writable(self, need: int) -> None:
        """Make the row buffer an in-memory array with room for ``need`` rows (amortized doubling,
        so adding one chunk at a time stays linear); a memory-mapped file is copied on first write."""
        cap = self._vecs.shape[0]
        if isinstance(self._vecs, np.memmap) or not self._vecs.flags.writeable or need > cap:
            new_cap = max(need, cap if need <= cap else max(16, cap * 2))
            buf = np.zeros((new_cap, self.dim or 0), np.float32)
            buf[:self._n] = self._vecs[:self._n]
            self._vecs = buf
            labels = np.zeros(new_cap, np.int64)
            labels[:self._n] = self._labels[:self._n]
            self._labels = labels

    # -- search --------------------------------------------------------------------------------
    def search(self, vector: np.ndarray, k: int = 10,
               allowed_ids: Collection[str] | None = None) -> list[tuple[str, float]]:
        """The ``k`` nearest ids with their cosine scores, best first.

        ``allowed_ids`` limits the search to those ids (unknown ids are ignored).
        """
        if k < 1:
            raise ValueError(f"VectorIndex.search: k must be >= 1, got {k}")
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        with self._lock:
            if self._n == 0:
                return []
            if q.shape[0] != self.dim:
                raise ValueError(f"VectorIndex.search: query has {q.shape[0]} dimensions, "
                                 f"the index holds {self.dim}")
            norm = float(np.linalg.norm(q))
            if norm == 0 or not np.isfinite(norm):
                return []
            q = q / norm
            if allowed_ids is not None:
                rows = np.fromiter((self._pos[c] for c in allowed_ids if c in self._pos),
                                   dtype=np.int64)
                if rows.size == 0:
                    return []
                return self._rank(rows, self._vecs[rows] @ q, k)
            if self._n <= self.exact_limit:
                return self._rank(None, self._vecs[:self._n] @ q, k)
            return self._search_ann(q, k)

    def _rank(self, rows: np.ndarray | None, scores: np.ndarray, k: int) -> list[tuple[str, float]]:
        k = min(k, scores.shape[0])
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(k)
        top = top[np.argsort(-scores[top], kind="stable")]
        real = top if rows is None else rows[top]
        return [(self._ids[int(r)], float(scores[int(t)])) for r, t in zip(real, top, strict=True)]

    def _search_ann(self, q: np.ndarray, k: int) -> list[tuple[str, float]]:
        self._ensure_ann()
        # over-fetch, then re-score exactly: true scores, and recall no longer hinges on the
        # graph ranking its own top-k perfectly
        want = min(self._n, max(2 * k, k + 16))
        self._ann.set_ef(max(self.expansion_search, want))
        try:
            keys, _ = self._ann.knn_query(q[None, :], k=want, num_threads=1)
        except RuntimeError:  # fewer than `want` reachable live entries (tombstones): go exact
            return self._rank(None, self._vecs[:self._n] @ q, k)
        rows = np.fromiter((self._row_of_label[int(key)] for key in keys[0]
                            if int(key) in self._row_of_label), dtype=np.int64)
        if rows.size == 0:
            return self._rank(None, self._vecs[:self._n] @ q, k)
        return self._rank(rows, self._vecs[rows] @ q, k)

    def _ensure_ann(self) -> None:
        if self._ann is not None and self._ann_removed > max(1000, self._n // 5):
            # HNSW removals leave tombstones that the graph still walks through; past a fifth
            # of the index a rebuild restores both speed and recall
            self._ann = None
        if self._ann is not None:
            return
        try:
            import hnswlib
        except ImportError as exc:
            from agentic_rag.errors import MissingExtraError

            raise MissingExtraError("hnswlib (ANN search for large vector indexes)", "local") from exc
        ann = hnswlib.Index(space="ip", dim=self.dim)
        # one build thread: as fast as two on 2 shared cores, and the graph is deterministic
        ann.init_index(max_elements=max(16, self._n + self._n // 4), M=self.connectivity,
                       ef_construction=self.expansion_add, random_seed=100)
        ann.set_num_threads(1)
        if self._n:
            ann.add_items(np.ascontiguousarray(self._vecs[:self._n], dtype=np.float32),
                          np.ascontiguousarray(self._labels[:self._n]), num_threads=1)
        ann.set_ef(self.expansion_search)
        self._ann = ann
        self._ann_removed = 0

    def __repr__(self) -> str:
        where = str(self.path) if self.path is not None else "memory"
        return f"VectorIndex({where!r}, n={self._n}, dim={self.dim}, ann={self.uses_ann})"


class _Damaged(Exception):
    """A stored generation whose files are unreadable or disagree."""


@contextmanager
def shared_update(path: str | Path, dim: int, **kwargs: Any) -> Iterator[VectorIndex]:
    """The index in ``path`` as it is on disk now, for one change by one of several processes
    (ingest workers): an exclusive lock on ``<path>/.lock`` is held from the read until the
    :meth:`VectorIndex.save` the caller makes inside the block, so no process saves over
    vectors another one added meanwhile.

        with shared_update(".arag/vectors", dim=384) as idx:     # doctest: +SKIP
            idx.add(ids, vectors); idx.save()
    """
    import fcntl

    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield VectorIndex.open(folder, dim=dim, **kwargs)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def current_folder(path: str | Path) -> Path | None:
    """The live generation folder of the vector index in ``path``, or None (nothing saved, or
    the flat layout of earlier versions). A ``CURRENT`` that names no generation counts as none
    only when it is empty; otherwise the named folder is returned even when it is missing."""
    try:
        name = (Path(path) / _CURRENT).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        name = "?"
    if not _GEN.match(name):
        return Path(path) / "gen-invalid" if name else None
    return Path(path) / name


def _write(target: Path, write: Any) -> None:
    with open(target, "wb") as fh:
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # not every platform opens directories; the rename is still atomic
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["EXACT_LIMIT", "VectorIndex", "current_folder"]
