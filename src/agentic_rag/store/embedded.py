"""The embedded default store: one folder with a SQLite database (WAL) and a BM25 snapshot.

Layout of ``<path>/``::

    arag.db            documents, chunks (all metadata columns), edges, meta, pending tokens
    bm25-<v>-<id>/     the current BM25 snapshot (plain .npy/.json, memory-mapped)

SQLite is the source of truth. Every write is one transaction that also stores the new chunks'
tokens in ``pending``, so the BM25 index can always be brought up to date from the database
without re-tokenizing: on open (or when another process has written) the store loads the snapshot
named in ``meta`` and replays the chunks added after it. A compaction writes a new snapshot and
empties ``pending``; it runs when the in-memory delta grows large and on ``close()``.

Readers and writers can be separate processes: WAL lets readers read while a writer ingests, and
each read checks the ``version`` counter in ``meta`` (a cheap query) and catches up when it
changed, so a reader always sees the last committed state.
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import os
import re
import shutil
import sqlite3
import sys
import threading
import time
import uuid
from array import array
from collections import Counter
from itertools import groupby
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np

from agentic_rag.errors import ConfigError, NotFoundError, StoreError
from agentic_rag.store.base import UpsertResult, edge_endpoint
from agentic_rag.store.bm25 import BM25Index, rank
from agentic_rag.text.tokenize import TOKENIZER_ID, add_terms, dictionary_generation, tokenize
from agentic_rag.types import Chunk, DocMeta, DocStatus, Document, Edge, EdgeKind, Filter

DB_NAME = "arag.db"
SCHEMA_VERSION = 1
_STATUSES = ("active", "superseded", "repealed")
#: opening an index another process is recovering (its writer died mid-write) is retried this
#: often, waiting 0.25 s, 0.5 s, ... in between (about 10 s in all)
_OPEN_ATTEMPTS, _OPEN_BACKOFF_S = 9, 0.25
# Documents per transaction in upsert_many: bounds memory while keeping commits rare.
_BATCH_DOCS = 2000
# Compact when the delta is at least this many rows and as large as the snapshot (doubling keeps
# the total compaction work linear in the corpus size).
_COMPACT_MIN_ROWS = 50_000
# On close, fold the delta into a new snapshot when the snapshot is cheap to rewrite or the delta
# is a noticeable share of it; otherwise the pending table carries the delta to the next open.
_CLOSE_COMPACT_SNAPSHOT_ROWS = 200_000
_CLOSE_COMPACT_DELTA_SHARE = 0.05
# Batches with at least this many chunks are tokenized by worker processes (when enabled).
_PARALLEL_MIN_CHUNKS = 200

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    title TEXT NOT NULL,
    doc_number TEXT,
    authority TEXT,
    publish_date TEXT,
    effective_date TEXT,
    version TEXT,
    status TEXT NOT NULL,
    language TEXT NOT NULL,
    meta_json TEXT NOT NULL,
    text BLOB NOT NULL  -- zlib-compressed UTF-8: read only for whole-document views
);
CREATE INDEX IF NOT EXISTS documents_source ON documents(source);
CREATE INDEX IF NOT EXISTS documents_title ON documents(title);
CREATE INDEX IF NOT EXISTS documents_number ON documents(doc_number);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    ord INTEGER NOT NULL,
    text TEXT NOT NULL,
    clause TEXT,
    clause_no TEXT,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    position_weight REAL NOT NULL,
    span_start INTEGER NOT NULL,
    span_end INTEGER NOT NULL,
    table_json TEXT,
    title TEXT NOT NULL,
    source TEXT NOT NULL,
    doc_number TEXT,
    authority TEXT,
    publish_date TEXT,
    effective_date TEXT,
    version TEXT,
    status TEXT NOT NULL,
    language TEXT NOT NULL,
    extra TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, ord);
CREATE INDEX IF NOT EXISTS chunks_date ON chunks(publish_date);
CREATE TABLE IF NOT EXISTS edges (
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    kind TEXT NOT NULL,
    phrase TEXT NOT NULL,
    owner TEXT NOT NULL,
    PRIMARY KEY (src, dst, kind)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst, kind);
CREATE INDEX IF NOT EXISTS edges_owner ON edges(owner);
-- BM25 input of chunks not yet in a snapshot: unique terms (space-joined) and their counts
-- (uint32 array), or with counts NULL the whole token sequence
CREATE TABLE IF NOT EXISTS pending (id INTEGER PRIMARY KEY, tokens TEXT NOT NULL, counts BLOB);
CREATE TABLE IF NOT EXISTS terms (term TEXT PRIMARY KEY) WITHOUT ROWID;
"""

_CHUNK_COLS = ("chunk_id, doc_id, ord, text, clause, clause_no, path, kind, position_weight, "
               "span_start, span_end, table_json, title, source, doc_number, authority, "
               "publish_date, effective_date, version, status, language, extra")
_DOC_COLS = ("doc_id, source, content_hash, title, doc_number, authority, publish_date, "
             "effective_date, version, status, language, meta_json, text")

#: Chunk fields usable in ``search(where=...)``; ``extra.<key>`` reads the chunk's extra dict.
FILTER_FIELDS = frozenset({
    "kind", "doc_id", "chunk_id", "title", "source", "doc_number", "status", "language",
    "publish_date", "effective_date", "authority", "version", "clause", "clause_no",
    "position_weight",
})
_EXTRA_KEY = re.compile(r"^[A-Za-z0-9_\-\u0080-\uffff]+$")
# IS / IS NOT so that "authority != X" keeps chunks without an authority and "= None" works
_SQL_OPS = {"=": "IS", "!=": "IS NOT", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "like": "LIKE"}


def bm25_text(title: str, path: Sequence[str], text: str) -> str:
    """What BM25 indexes for a chunk: its document title and heading path give a clause the
    context it was written in (a clause rarely repeats the name of the statute it belongs to).
    A title the text already contains (a news lead, a first clause) is not counted twice."""
    if title and title in text:
        title = ""
    return f"{title}\n{' '.join(path)}\n{text}"


Upsert = tuple[Document, list[Chunk], list[Edge]]


def doc_batches(items: Iterable[tuple[Document, Sequence[Chunk], Sequence[Edge]]],
                size: int) -> Iterator[list[Upsert]]:
    """Upserts in batches of at most ``size`` documents; a document id repeated in the input
    starts a new batch, so repeats are applied in order (what every store's ``upsert_many`` does)."""
    batch: list[Upsert] = []
    in_batch: set[str] = set()
    for doc, chunks, edges in items:
        if doc.doc_id in in_batch or len(batch) >= size:
            yield batch
            batch, in_batch = [], set()
        batch.append((doc, list(chunks), list(edges)))
        in_batch.add(doc.doc_id)
    if batch:
        yield batch


def exact_match(fields: dict[str, Any], mark: str) -> tuple[str, list[Any]]:
    """``WHERE col = <mark> AND ...`` for the fields given (not None), and its parameters."""
    given = {col: v for col, v in fields.items() if v is not None}
    where = " AND ".join(f"{col} = {mark}" for col in given)
    return (f"WHERE {where}" if where else ""), list(given.values())


def check_chunk_owners(batch: Sequence[Upsert]) -> None:
    """ValueError when a chunk names another document than the one it is stored with."""
    for doc, chunks, _ in batch:
        for c in chunks:
            if c.doc_id != doc.doc_id:
                raise ValueError(f"chunk {c.chunk_id} has doc_id {c.doc_id!r}, expected {doc.doc_id!r}")



def _snapshot_version(name: str) -> int:
    """The data version in a BM25 snapshot's folder name ``bm25-<version>-<id>`` (-1: not one)."""
    m = re.fullmatch(r"bm25-(\d+)-\w+", name)
    return int(m.group(1)) if m else -1


class EmbeddedStore:
    """SQLite + BM25 in one folder; implements ``DocumentStore`` and ``KeywordIndex``.

    >>> with EmbeddedStore(".arag") as store:          # doctest: +SKIP
    ...     store.upsert(doc, chunks, edges)
    ...     store.search("工伤认定 申请时限", k=5, where=[Filter(field="status", value="active")])
    """

    def __init__(self, path: str | Path, *, create: bool = True, workers: int | None = None) -> None:
        """Open (or with ``create`` make) the index in folder ``path``.

        ``workers``: processes that tokenize large ``upsert_many`` batches (tokenizing is most
        of the ingest time); ``None`` means one per CPU up to 4, ``1`` tokenizes in-process.
        Workers are forked, so they are only used where ``fork`` exists (Linux).
        """
        if workers is not None and workers < 1:
            raise ConfigError(f"workers must be at least 1, got {workers}")
        self.path = Path(path)
        self._workers = workers if workers is not None else min(os.cpu_count() or 1, 4)
        self._pool: Any = None
        self._pool_generation = -1
        self.db_path = self.path / DB_NAME
        if not self.db_path.exists():
            if not create:
                raise StoreError(f"no index at {self.path} (expected {self.db_path})")
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create index folder {self.path}: {exc}") from exc
        self._lock = threading.RLock()
        self._closed = False
        self._wrote = False
        fresh = not self.db_path.exists()
        self._conn = None
        for attempt in range(_OPEN_ATTEMPTS):
            try:
                self._open(fresh)
                return
            except StoreError as exc:
                # another process recovering the write-ahead log of a writer that died answers
                # "database is locked" at once, whatever the busy timeout: wait for it
                if "database is locked" not in str(exc) or attempt == _OPEN_ATTEMPTS - 1:
                    raise
                time.sleep(_OPEN_BACKOFF_S * (attempt + 1))

    def _open(self, fresh: bool) -> None:
        try:
            self._conn = sqlite3.connect(self.db_path, timeout=30.0, isolation_level=None,
                                         check_same_thread=False)
            self._conn.execute("PRAGMA busy_timeout=30000")
            if fresh:
                # must come before anything writes the file; lets a compaction return the
                # pages of the emptied ``pending`` table to the disk
                self._conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{self.db_path}: cannot switch to WAL journal mode (got {mode})")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA temp_store=MEMORY")
            self._conn.execute("PRAGMA cache_size=-65536")
            self._init_schema()
            has_terms = self._conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='terms'").fetchone()
            words = [r[0] for r in self._conn.execute("SELECT term FROM terms")] if has_terms else []
            if words:  # the dictionary the index was built with, for the queries too
                add_terms(words)
            self._bm25 = BM25Index()
            self._seen: tuple[int, str, int] | None = None  # (version, snapshot, deletes) in memory
            built_with = self._conn.execute("SELECT value FROM meta WHERE key='tokenizer'").fetchone()
            with self._lock:
                if built_with is None or built_with[0] != TOKENIZER_ID:
                    self.reindex()  # its tokens would not match this version's queries
                else:
                    self._sync()
        except BaseException as exc:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"cannot open index {self.db_path}: {exc}") from exc
            raise

    # ------------------------------------------------------------------ lifecycle
    def _init_schema(self) -> None:
        has_meta = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        if has_meta:
            row = self._conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None or int(row[0]) != SCHEMA_VERSION:
                raise StoreError(f"{self.db_path}: unsupported index schema {row and row[0]!r}")
            if "counts" not in {r[1] for r in self._conn.execute("PRAGMA table_info(pending)")}:
                try:  # an index from before pending stored counted terms
                    self._conn.execute("ALTER TABLE pending ADD COLUMN counts BLOB")
                except sqlite3.Error:
                    pass  # read-only: fine until a write, which then reports the error
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    self._conn.execute(stmt)
            self._conn.executemany(
                "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                [("schema", str(SCHEMA_VERSION)), ("version", "0"), ("deletes", "0"),
                 ("bm25_snapshot", ""), ("tokenizer", TOKENIZER_ID)],
            )
            self._conn.execute("COMMIT")
        except BaseException:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Fold a small delta into the BM25 snapshot when that is cheap, then close the database."""
        with self._lock:
            if self._closed:
                return
            try:
                if self._wrote and self._bm25.delta_rows and (
                        self._bm25.snapshot_rows <= _CLOSE_COMPACT_SNAPSHOT_ROWS
                        or self._bm25.delta_rows >= _CLOSE_COMPACT_DELTA_SHARE * self._bm25.snapshot_rows):
                    self.compact()
            finally:
                self._closed = True
                self._stop_pool()
                self._conn.close()

    def __enter__(self) -> "EmbeddedStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"index {self.path} is closed")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction holding SQLite's write lock; rolled back on any exception."""
        self._check_open()
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.db_path}: cannot start a write: {exc}") from exc
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"{self.db_path}: write failed, nothing changed: {exc}") from exc
            raise

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        self._check_open()
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.db_path}: read failed: {exc}") from exc

    # ------------------------------------------------------------------ tokenizing
    def _tokenize_many(self, chunks: list[Chunk]) -> Callable[[], list[tuple[str, bytes]]]:
        """Start tokenizing chunks; the returned function gives each chunk's BM25 input in the
        form ``pending`` stores (unique terms space-joined, uint32 counts). Large batches go to
        the worker processes and run while the caller writes the chunk rows; small ones are
        done here and now."""
        texts = [(bm25_text(c.title, c.path, c.text), c.language) for c in chunks]
        pool = self._get_pool() if len(texts) >= _PARALLEL_MIN_CHUNKS and self._workers > 1 else None
        if pool is not None:
            step = max(50, -(-len(texts) // (2 * self._workers)))
            try:
                futures = [pool.submit(_tokenize_counted, texts[i:i + step])
                           for i in range(0, len(texts), step)]
            except Exception:  # noqa: BLE001 - a broken pool: tokenize here instead
                self._stop_pool()
                self._workers = 1
            else:
                def collect() -> list[tuple[str, bytes]]:
                    try:
                        return [t for f in futures for t in f.result()]
                    except Exception:  # noqa: BLE001 - a worker died: redo it here, same result
                        self._stop_pool()
                        self._workers = 1
                        return _tokenize_counted(texts)
                return collect
        done = _tokenize_counted(texts)
        return lambda: done

    def _get_pool(self) -> Any:
        if "fork" not in multiprocessing.get_all_start_methods():
            return None
        if self._pool is not None and self._pool_generation != dictionary_generation():
            self._stop_pool()  # forked before add_terms changed the dictionary
        if self._pool is None:
            from concurrent.futures import ProcessPoolExecutor

            tokenize("预热")  # load the dictionary once, before forking, so workers share it
            try:
                self._pool = ProcessPoolExecutor(
                    self._workers, mp_context=multiprocessing.get_context("fork"),
                    initializer=_exit_with_parent,
                    initargs=(os.getpid(), threading.current_thread() is threading.main_thread()))
            except OSError:
                return None
            self._pool_generation = dictionary_generation()
        return self._pool

    def _stop_pool(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    # ------------------------------------------------------------------ BM25 sync
    def _meta(self) -> tuple[int, str, int]:
        rows = dict(self._conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('version', 'bm25_snapshot', 'deletes')"))
        return int(rows["version"]), rows["bm25_snapshot"], int(rows["deletes"])

    def _sync(self) -> None:
        """Bring the in-memory BM25 index up to the last committed state of the database."""
        try:
            for attempt in range(3):  # a concurrent compaction may remove a snapshot mid-load
                try:
                    self._sync_once()
                    return
                except FileNotFoundError:
                    self._seen = None
                    if attempt == 2:
                        raise
        except (sqlite3.Error, OSError, ValueError) as exc:
            self._seen = None
            raise StoreError(f"{self.path}: cannot load the BM25 index: {exc}") from exc

    def _sync_once(self) -> None:
        version, snapshot, deletes = self._meta()
        seen = self._seen
        if seen is not None and seen == (version, snapshot, deletes):
            return
        if seen is None or seen[1] != snapshot:
            if snapshot:
                self._bm25, _ = BM25Index.load(self.path / snapshot)
            else:
                self._bm25 = BM25Index()
            seen = None
        after = self._bm25.max_rowid
        rows = self._conn.execute(
            "SELECT c.id, p.tokens, p.counts, c.title, c.path, c.text, c.language FROM chunks c "
            "LEFT JOIN pending p ON p.id = c.id WHERE c.id > ? ORDER BY c.id", (after,)).fetchall()
        if rows:
            # tokens come from ``pending``; a chunk without them (lost in a crash, or after a
            # tokenizer change) is tokenized again from its text
            for has_counts, group in groupby(rows, key=lambda r: r[2] is not None):  # in id order
                part = list(group)
                if has_counts:
                    self._bm25.add_counted([r[0] for r in part], [r[1].split() for r in part],
                                           [np.frombuffer(r[2], dtype=np.uint32) for r in part])
                else:
                    self._bm25.add([r[0] for r in part], [
                        r[1].split() if r[1] is not None
                        else tokenize(bm25_text(r[3], json.loads(r[4]), r[5]), r[6]) for r in part])
        if seen is None or seen[2] != deletes:
            ids = np.fromiter((r[0] for r in self._conn.execute("SELECT id FROM chunks")),
                              dtype=np.int64)
            self._bm25.keep_only(ids)
        self._seen = (version, snapshot, deletes)

    def refresh(self) -> None:
        """Catch up with writes committed by other processes (reads do this on their own)."""
        with self._lock:
            self._check_open()
            self._sync()

    def compact(self) -> None:
        """Write a new BM25 snapshot holding every live chunk and drop the pending tokens."""
        with self._lock, self._write() as conn:
            self._sync()
            version, superseded, deletes = self._meta()
            name = f"bm25-{version}-{uuid.uuid4().hex[:8]}"
            try:
                self._bm25.save(self.path / name, version=version, tokenizer=TOKENIZER_ID)
            except OSError as exc:
                shutil.rmtree(self.path / name, ignore_errors=True)
                raise StoreError(f"cannot write BM25 snapshot {self.path / name}: {exc}") from exc
            conn.execute("DELETE FROM pending WHERE id <= ?", (self._bm25.max_rowid,))
            conn.execute("UPDATE meta SET value=? WHERE key='bm25_snapshot'", (name,))
        self._seen = (version, name, deletes)
        try:
            self._conn.execute("PRAGMA incremental_vacuum")
        except sqlite3.Error:
            pass  # space reuse only; the data is already committed
        self._drop_superseded(name, superseded, version)

    def _drop_superseded(self, name: str, superseded: str, version: int) -> None:
        """Remove the snapshots compaction ``name`` (at data ``version``) replaced: the one
        current when it began and older ones a crash left behind. A reader that has them mapped
        keeps its mapping (POSIX), and one caught half-way through loading retries with the new
        name (see _sync). A snapshot of the same or a later version that is not the one replaced
        belongs to another process that compacted right after this one committed (two evals
        opening one index): it is the live one now, and deleting it broke the index."""
        for folder in self.path.glob("bm25-*"):
            if folder.is_dir() and folder.name != name and (
                    folder.name == superseded or _snapshot_version(folder.name) < version):
                shutil.rmtree(folder, ignore_errors=True)

    def reindex(self) -> None:
        """Rebuild the BM25 index from the chunk texts (after a tokenizer change; slow: every
        chunk is tokenized again). Runs on its own when an index built by another tokenizer
        version is opened."""
        with self._lock:
            with self._write() as conn:
                conn.execute("DELETE FROM pending")
                conn.execute("UPDATE meta SET value='' WHERE key='bm25_snapshot'")
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('tokenizer', ?)",
                             (TOKENIZER_ID,))
                self._bump(conn, deleted=False)
            self._seen = None
            self._sync()  # chunks without pending tokens are tokenized from their text
            self._wrote = True
            self.compact()

    def _maybe_compact(self) -> None:
        d = self._bm25.delta_rows
        if d >= _COMPACT_MIN_ROWS and d >= self._bm25.snapshot_rows:
            self.compact()

    # ------------------------------------------------------------------ writes
    def upsert(self, doc: Document, chunks: Sequence[Chunk], edges: Sequence[Edge]) -> UpsertResult:
        """Add a document, or replace it atomically when its content hash changed.

        Same content hash -> ``"unchanged"`` and nothing is written. On any error the index
        (database and BM25) is exactly as before and :class:`StoreError` is raised.
        """
        return self.upsert_many([(doc, list(chunks), list(edges))])[0]

    def upsert_many(self, items: Iterable[tuple[Document, list[Chunk], list[Edge]]]) -> list[UpsertResult]:
        """Upsert many documents with few transactions and one BM25 update per batch.

        Results are in input order. Each batch of up to 2,000 documents is one transaction: if
        anything in it fails, that batch is rolled back whole and :class:`StoreError` is raised
        (earlier batches stay committed); retry its documents one by one with :meth:`upsert` to
        find the bad one. A document id repeated in the input is applied in order.
        """
        return [r for batch in doc_batches(items, _BATCH_DOCS) for r in self._upsert_batch(batch)]

    def _upsert_batch(self, batch: list[tuple[Document, list[Chunk], list[Edge]]]) -> list[UpsertResult]:
        check_chunk_owners(batch)
        with self._lock:
            self._check_open()
            ids = [d.doc_id for d, _, _ in batch]
            known = self._hashes(ids)
            todo = [i for i, (d, _, _) in enumerate(batch) if known.get(d.doc_id) != d.content_hash]
            if not todo:
                return ["unchanged"] * len(batch)
            # tokenizing runs in the workers while this process writes the rows
            collect = self._tokenize_many([c for i in todo for c in batch[i][1]])
            with self._write() as conn:
                self._sync()
                known = self._hashes(ids)  # another writer may have committed meanwhile
                results: list[UpsertResult] = ["unchanged"] * len(batch)
                changed = [i for i in todo if known.get(batch[i][0].doc_id) != batch[i][0].content_hash]
                changed_set = set(changed)
                replaced_ids = [batch[i][0].doc_id for i in changed if batch[i][0].doc_id in known]
                old_rows: list[int] = []
                if replaced_ids:
                    old_rows = self._delete_docs(conn, replaced_ids, inbound=False)
                seq_row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name='chunks'").fetchone()
                next_id = (seq_row[0] if seq_row else 0) + 1
                doc_rows, chunk_rows, edge_rows = [], [], []
                new_ids: list[int] = []
                for i in changed:
                    doc, chunks, edges = batch[i]
                    results[i] = "replaced" if doc.doc_id in known else "added"
                    doc_rows.append(_doc_row(doc))
                    for c in chunks:
                        chunk_rows.append((next_id, *_chunk_row(c)))
                        new_ids.append(next_id)
                        next_id += 1
                    edge_rows.extend((e.src, e.dst, e.kind, e.phrase, doc.doc_id) for e in edges)
                conn.executemany(f"INSERT INTO documents({_DOC_COLS}) VALUES ({_qs(13)})", doc_rows)
                conn.executemany(f"INSERT INTO chunks(id, {_CHUNK_COLS}) VALUES ({_qs(23)})", chunk_rows)
                conn.executemany("INSERT OR REPLACE INTO edges(src, dst, kind, phrase, owner) "
                                 "VALUES (?, ?, ?, ?, ?)", edge_rows)
                # tokens of the documents written (a concurrent writer may have made some unchanged)
                flat = collect()
                new_tokens: list[tuple[str, bytes]] = []
                at = 0
                for i in todo:
                    n = len(batch[i][1])
                    if i in changed_set:
                        new_tokens.extend(flat[at:at + n])
                    at += n
                conn.executemany("INSERT INTO pending(id, tokens, counts) VALUES (?, ?, ?)",
                                 [(i, t, c) for i, (t, c) in zip(new_ids, new_tokens)])
                seen = self._bump(conn, deleted=bool(old_rows))
            self._wrote = True
            self._apply(seen, removed=old_rows, added=(new_ids, new_tokens))
            self._maybe_compact()
            return results

    def _apply(self, seen: tuple[int, str, int], removed: Sequence[int] = (),
               added: tuple[Sequence[int], Sequence[tuple[str, bytes]]] = ((), ())) -> None:
        """Mirror a committed write in the in-memory BM25 index."""
        try:
            self._bm25.remove(removed)
            ids, counted = added
            if ids:
                self._bm25.add_counted(ids, [t.split() for t, _ in counted],
                                       [np.frombuffer(c, dtype=np.uint32) for _, c in counted])
            self._seen = seen
        except BaseException:
            self._seen = None  # the next read reloads from the database
            raise

    def _bump(self, conn: sqlite3.Connection, *, deleted: bool) -> tuple[int, str, int]:
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='version'")
        if deleted:
            conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='deletes'")
        return self._meta()

    def _hashes(self, doc_ids: Sequence[str]) -> dict[str, str]:
        rows = self._read("SELECT doc_id, content_hash FROM documents WHERE doc_id IN "
                          "(SELECT value FROM json_each(?))", (json.dumps(list(doc_ids)),))
        return dict(rows)

    def _delete_docs(self, conn: sqlite3.Connection, doc_ids: Sequence[str], *, inbound: bool) -> list[int]:
        """Delete documents with their chunks, pending tokens and owned edges; returns chunk rowids.
        ``inbound`` also removes edges pointing at the documents (a delete, not a replace)."""
        key = json.dumps(list(doc_ids))
        sub = "(SELECT value FROM json_each(?))"
        rows = [r[0] for r in conn.execute(f"SELECT id FROM chunks WHERE doc_id IN {sub}", (key,))]
        conn.execute(f"DELETE FROM pending WHERE id IN (SELECT id FROM chunks WHERE doc_id IN {sub})", (key,))
        if inbound:
            for doc_id in doc_ids:
                conn.execute("DELETE FROM edges WHERE dst = ? OR substr(dst, 1, ?) = ?",
                             (doc_id, len(doc_id) + 1, doc_id + ":"))
        conn.execute(f"DELETE FROM chunks WHERE doc_id IN {sub}", (key,))
        conn.execute(f"DELETE FROM edges WHERE owner IN {sub}", (key,))
        conn.execute(f"DELETE FROM documents WHERE doc_id IN {sub}", (key,))
        return rows

    def delete(self, doc_id: str) -> bool:
        """Remove a document, its chunks and the edges from or to it. False if it did not exist."""
        with self._lock:
            with self._write() as conn:
                self._sync()
                if conn.execute("SELECT 1 FROM documents WHERE doc_id=?", (doc_id,)).fetchone() is None:
                    return False
                rows = self._delete_docs(conn, [doc_id], inbound=True)
                seen = self._bump(conn, deleted=True)
            self._wrote = True
            self._apply(seen, removed=rows)
            return True

    def set_status(self, doc_id: str, status: DocStatus) -> None:
        """Set a document's status (active / superseded / repealed) on it and all its chunks."""
        if status not in _STATUSES:
            raise ConfigError(f"invalid status {status!r}: expected one of {', '.join(_STATUSES)}")
        with self._lock:
            with self._write() as conn:
                self._sync()
                cur = conn.execute(
                    "UPDATE documents SET status=?, meta_json=json_set(meta_json, '$.status', ?) "
                    "WHERE doc_id=?", (status, status, doc_id))
                if cur.rowcount == 0:
                    raise NotFoundError(f"no document {doc_id!r} in {self.path}")
                conn.execute("UPDATE chunks SET status=? WHERE doc_id=?", (status, doc_id))
                seen = self._bump(conn, deleted=False)
            self._wrote = True
            self._apply(seen)

    def add_edges(self, edges: Iterable[Edge]) -> int:
        """Add graph edges between already stored chunks/documents (cross-document references,
        supersedes links). An edge belongs to the document of its source and goes with it.
        Returns how many edges were given."""
        rows = [(e.src, e.dst, e.kind, e.phrase, e.src.split(":", 1)[0]) for e in edges]
        if not rows:
            return 0
        with self._lock:
            with self._write() as conn:
                self._sync()
                conn.executemany("INSERT OR REPLACE INTO edges(src, dst, kind, phrase, owner) "
                                 "VALUES (?, ?, ?, ?, ?)", rows)
                seen = self._bump(conn, deleted=False)
            self._wrote = True
            self._apply(seen)
        return len(rows)

    def add_terms(self, terms: Iterable[str]) -> int:
        """Keep words whole in tokenization (statute names, defined terms), for this process
        now and for every later open of this index. Add them before ingesting the documents
        that use them: chunks already indexed keep their tokens. Returns how many were new."""
        words = sorted({t.strip() for t in terms if t and t.strip()})
        if not words:
            return 0
        with self._lock:
            with self._write() as conn:
                self._sync()
                conn.execute("CREATE TABLE IF NOT EXISTS terms (term TEXT PRIMARY KEY) WITHOUT ROWID")
                before = conn.total_changes
                conn.executemany("INSERT OR IGNORE INTO terms(term) VALUES (?)", [(w,) for w in words])
                added = conn.total_changes - before
                seen = self._bump(conn, deleted=False) if added else None
            if seen is not None:
                self._apply(seen)
            add_terms(words)
            return added

    # ------------------------------------------------------------------ reads
    @property
    def version(self) -> int:
        """A counter that grows with every committed write (a cache key for answers)."""
        with self._lock:
            self._check_open()
            try:
                return self._meta()[0]
            except sqlite3.Error as exc:
                raise StoreError(f"{self.db_path}: read failed: {exc}") from exc

    def get_document(self, doc_id: str) -> Document | None:
        with self._lock:
            rows = self._read(f"SELECT {_DOC_COLS} FROM documents WHERE doc_id=?", (doc_id,))
        return _doc(rows[0]) if rows else None

    def documents(self) -> list[Document]:
        """All documents, ordered by doc id."""
        with self._lock:
            rows = self._read(f"SELECT {_DOC_COLS} FROM documents ORDER BY doc_id")
        return [_doc(r) for r in rows]

    def find_documents(self, title: str | None = None, source: str | None = None,
                       doc_number: str | None = None) -> list[Document]:
        """Documents matching every given field exactly (none given: all documents)."""
        where, params = exact_match({"title": title, "source": source, "doc_number": doc_number}, "?")
        with self._lock:
            rows = self._read(f"SELECT {_DOC_COLS} FROM documents {where} ORDER BY doc_id", params)
        return [_doc(r) for r in rows]

    def chunks(self, doc_id: str) -> list[Chunk]:
        """The chunks of one document in order."""
        with self._lock:
            rows = self._read(f"SELECT {_CHUNK_COLS} FROM chunks WHERE doc_id=? ORDER BY ord", (doc_id,))
        return [_chunk(r) for r in rows]

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Chunks by id, in the order asked; unknown ids are skipped."""
        if not chunk_ids:
            return []
        with self._lock:
            rows = self._read(f"SELECT {_CHUNK_COLS} FROM chunks WHERE chunk_id IN "
                              "(SELECT value FROM json_each(?))", (json.dumps(list(chunk_ids)),))
        by_id = {r[0]: r for r in rows}
        return [_chunk(by_id[c]) for c in chunk_ids if c in by_id]

    def chunk_counts(self) -> dict[str, int]:
        """Number of chunks per document id (cheap, unlike ``len(chunks(doc_id))`` per doc)."""
        with self._lock:
            return dict(self._read("SELECT doc_id, count(*) FROM chunks GROUP BY doc_id"))

    def all_chunk_ids(self) -> list[str]:
        """Every chunk id, in insertion order."""
        with self._lock:
            return [r[0] for r in self._read("SELECT chunk_id FROM chunks ORDER BY id")]

    def edges(self, ids: Iterable[str], kind: EdgeKind | None = None,
              direction: Literal["out", "in"] = "out") -> list[Edge]:
        """Edges leaving (``out``) or entering (``in``) any of ``ids`` (chunk or doc ids)."""
        col = edge_endpoint(direction)
        sql = (f"SELECT src, dst, kind, phrase FROM edges WHERE {col} IN "
               "(SELECT value FROM json_each(?))")
        params: list[Any] = [json.dumps(list(ids))]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        with self._lock:
            rows = self._read(sql + " ORDER BY src, dst, kind", params)
        return [Edge(src=r[0], dst=r[1], kind=r[2], phrase=r[3]) for r in rows]

    def stats(self) -> dict[str, int]:
        """Counts and size: docs, chunks, edges, bytes on disk, BM25 terms and delta rows, version."""
        with self._lock:
            self._check_open()
            self._sync()
            docs, chunks, edges = self._read(
                "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM chunks), "
                "(SELECT count(*) FROM edges)")[0]
            size = sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())
            return {"docs": docs, "chunks": chunks, "edges": edges, "bytes": size,
                    "terms": len(self._bm25.terms), "delta_rows": self._bm25.delta_rows,
                    "version": self._seen[0] if self._seen else 0}

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int = 10, where: Sequence[Filter] = ()) -> list[tuple[str, float]]:
        """BM25 ``(chunk_id, score)`` pairs, best first, among chunks matching every filter.

        Filters: ``Filter(field, op, value)`` on the fields in :data:`FILTER_FIELDS` or
        ``extra.<key>``; dates compare as ISO strings; ``in`` takes a list; ``like`` uses SQL
        wildcards (``%``). An unknown field raises :class:`ConfigError`.
        """
        cond, params = _where_sql(where)
        if k <= 0:
            return []
        tokens = tokenize(query)
        with self._lock:
            self._check_open()
            self._sync()
            ids, scores = self._bm25.scores(tokens)
            if not len(ids):
                return []
            if not cond:
                return self._name(rank(ids, scores, k))
            # Most filters keep most chunks: check the best candidates first. A selective filter
            # (few of them pass) asks SQLite for the allowed rows once instead.
            first = rank(ids, scores, max(512, 8 * k))
            # CROSS JOIN pins the loop order: look up these rows by id, never scan an index of
            # the filtered column (SQLite may otherwise prefer, say, the publish_date index)
            allowed = {r[0] for r in self._read(
                f"SELECT c.id FROM json_each(?) AS j CROSS JOIN chunks AS c ON c.id = j.value "
                f"WHERE {cond}", [json.dumps([h[0] for h in first]), *params])}
            hits = [h for h in first if h[0] in allowed]
            if len(hits) >= k or len(first) == len(ids):
                return self._name(hits[:k])
            allowed_ids = np.fromiter((r[0] for r in self._read(
                f"SELECT c.id FROM chunks AS c WHERE {cond}", params)), dtype=np.int64)
            keep = np.isin(ids, allowed_ids)
            return self._name(rank(ids[keep], scores[keep], k))

    def _name(self, hits: list[tuple[int, float]]) -> list[tuple[str, float]]:
        if not hits:
            return []
        names = dict(self._read("SELECT id, chunk_id FROM chunks WHERE id IN "
                                "(SELECT value FROM json_each(?))", (json.dumps([h[0] for h in hits]),)))
        return [(names[r], s) for r, s in hits if r in names]


#: how often a tokenizer worker checks that the process that started it is still alive
_PARENT_POLL_S = 0.5


def _exit_with_parent(parent: int, death_signal: bool) -> None:
    """Runs first in each tokenizer worker: the worker ends when the ingest that forked it
    dies, even by ``kill -9`` (the pool's pipes stay open in the sibling workers, so a worker
    would otherwise wait on them forever, holding its copy of the dictionary).

    On Linux the kernel sends SIGKILL on the parent's death (``PR_SET_PDEATHSIG``). That signal
    follows the forking *thread*, so it is only asked for when the pool was started from the
    main thread (a pool started by a short-lived thread would be killed with it). Everywhere, a
    daemon thread also checks every half second that the parent is still the one that forked
    this worker and exits when it is not."""
    if death_signal and sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass  # the poll below still ends the worker
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(_PARENT_POLL_S)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="arag-parent-watch", daemon=True).start()


def _tokenize_counted(texts: list[tuple[str, str]]) -> list[tuple[str, bytes]]:
    """(unique terms space-joined, their counts as uint32 bytes) per text; runs in workers."""
    out = []
    for text, lang in texts:
        counts = Counter(tokenize(text, lang))
        out.append((" ".join(counts), array("I", counts.values()).tobytes()))
    return out


# ---------------------------------------------------------------------- rows <-> models
def _qs(n: int) -> str:
    return ", ".join("?" * n)


def _iso(d: dt.date | None) -> str | None:
    return d.isoformat() if d else None


def _json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, default=str)


def _doc_row(doc: Document) -> tuple:
    m = doc.meta
    return (doc.doc_id, doc.source, doc.content_hash, m.title, m.doc_number, m.authority,
            _iso(m.publish_date), _iso(m.effective_date), m.version, m.status, m.language,
            m.model_dump_json(), zlib.compress(doc.text.encode("utf-8"), 1))


def _doc(r: tuple) -> Document:
    meta = DocMeta.model_validate_json(r[11])
    return Document(doc_id=r[0], source=r[1], content_hash=r[2],
                    text=zlib.decompress(r[12]).decode("utf-8"), meta=meta)


def _chunk_row(c: Chunk) -> tuple:
    return (c.chunk_id, c.doc_id, c.ord, c.text, c.clause, c.clause_no, _json(c.path), c.kind,
            c.position_weight, c.span[0], c.span[1],
            c.table.model_dump_json() if c.table is not None else None,
            c.title, c.source, c.doc_number, c.authority, _iso(c.publish_date),
            _iso(c.effective_date), c.version, c.status, c.language, _json(c.extra))


#: rows read recently, with the chunk each one is: the same chunks are read question after
#: question, and validating a row into a ``Chunk`` cost more than the query that read it. Keyed
#: by the whole row, so a changed row is a new entry and nothing needs invalidating; a chunk is
#: frozen, so one instance can be handed to every caller.
_CHUNK_ROWS = 4096


@lru_cache(maxsize=_CHUNK_ROWS)
def _chunk(r: tuple) -> Chunk:
    return Chunk.model_validate({
        "chunk_id": r[0], "doc_id": r[1], "ord": r[2], "text": r[3], "clause": r[4],
        "clause_no": r[5], "path": json.loads(r[6]), "kind": r[7], "position_weight": r[8],
        "span": (r[9], r[10]), "table": json.loads(r[11]) if r[11] else None, "title": r[12],
        "source": r[13], "doc_number": r[14], "authority": r[15], "publish_date": r[16],
        "effective_date": r[17], "version": r[18], "status": r[19], "language": r[20],
        "extra": json.loads(r[21]),
    })


def _sql_value(v: Any) -> Any:
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    if isinstance(v, (list, dict)):
        return _json(v)
    return v


def _where_sql(where: Sequence[Filter]) -> tuple[str, list[Any]]:
    """SQL condition (on the chunks table aliased ``c``) and parameters for ``where``; unknown
    fields raise ConfigError."""
    conds: list[str] = []
    params: list[Any] = []
    for f in where:
        if f.field in FILTER_FIELDS:
            col = f"c.{f.field}"
        elif f.field.startswith("extra.") and _EXTRA_KEY.match(f.field[6:]):
            col = "json_extract(c.extra, ?)"
            params.append(f'$."{f.field[6:]}"')
        else:
            allowed = ", ".join(sorted(FILTER_FIELDS))
            raise ConfigError(f"unknown filter field {f.field!r}: use one of {allowed}, or extra.<key>")
        if f.op == "in":
            values = list(f.value) if isinstance(f.value, (list, tuple, set, frozenset)) else [f.value]
            if not values:
                conds.append("0")
                if col.startswith("json_extract"):
                    params.pop()
                continue
            conds.append(f"{col} IN ({_qs(len(values))})")
            params.extend(_sql_value(v) for v in values)
        else:
            conds.append(f"{col} {_SQL_OPS[f.op]} ?")
            params.append(_sql_value(f.value))
    return " AND ".join(conds), params
