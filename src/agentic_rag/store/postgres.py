"""The index on PostgreSQL (>= 15) with pgvector: for indexes larger than one machine's folder,
shared by several API processes and ingest workers on several hosts.

Selected with ``store.url = "postgresql://..."`` (or ``ARAG_STORE__URL``); everything lives in
one schema (``store.db_schema``, default ``arag``), so one server can hold several collections::

    meta        key/value: schema version, tokenizer id
    counters    16 slots of (writes, deletes, chunks, total BM25 length): a writer updates the
                slot of its process, so concurrent writers rarely wait on each other; the
                version and the BM25 statistics are the sums
    documents   one row per document (metadata columns, zlib-compressed text)
    chunks      one row per chunk (every metadata column, ``extra`` as jsonb for filters, the
                hashed BM25 terms of the chunk so its postings can be deleted by key)
    postings    (term, chunk row) -> term frequency and chunk length: the BM25 inverted index
    edges       the clause graph (src, dst, kind), owned by the document of ``src``
    terms       words kept whole by the tokenizer (``add_terms``)
    embeddings  chunk id -> ``vector(dim)`` with an HNSW index (cosine on unit vectors)

BM25 is Okapi BM25 exactly as :mod:`agentic_rag.store.bm25` computes it: chunks are tokenized
by the project's tokenizer (jieba / Snowball) in the writing process, raw term frequencies are
stored, and ``N``, ``df`` and the average length are read at query time in the same snapshot
as the postings, so scores equal the embedded store's whatever was added or deleted. Terms are
stored as 64-bit hashes (collisions are negligible at any realistic vocabulary).

A document is written in one transaction: all in or all out. Writers of the same document are
serialized by an advisory lock on its id; writers of different documents run concurrently.
Reads use autocommit connections, so they always see the last committed state.

Connections come from a small pool. A connection that fails is dropped with every idle one
(after a server restart they are all dead); reads are retried once on a fresh connection, and
writes are not (the transaction was rolled back, or its commit is in doubt), so a lost server
fails the request with :class:`StoreError` and the next request reconnects.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np

from agentic_rag.errors import ConfigError, MissingExtraError, NotFoundError, StoreError
from agentic_rag.store.base import UpsertResult, edge_endpoint
from agentic_rag.store.embedded import (_CHUNK_COLS, _DOC_COLS, _EXTRA_KEY, _STATUSES, FILTER_FIELDS,
                                        _chunk, _chunk_row, _doc, _doc_row, _sql_value, bm25_text,
                                        check_chunk_owners, doc_batches, exact_match)
from agentic_rag.text.tokenize import TOKENIZER_ID, add_terms, tokenize
from agentic_rag.types import Chunk, DocStatus, Document, Edge, EdgeKind, Filter

SCHEMA_VERSION = 1
K1, B = 1.5, 0.75  # as BM25Index's defaults
_SLOTS = 16
_BATCH_DOCS = 500  # documents per transaction in upsert_many
_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS counters (
    slot int PRIMARY KEY, writes bigint NOT NULL, deletes bigint NOT NULL,
    n_chunks bigint NOT NULL, total_len bigint NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id text PRIMARY KEY, source text NOT NULL, content_hash text NOT NULL, title text NOT NULL,
    doc_number text, authority text, publish_date text, effective_date text, version text,
    status text NOT NULL, language text NOT NULL, meta_json text NOT NULL, text bytea NOT NULL);
CREATE INDEX IF NOT EXISTS documents_source ON documents(source);
CREATE INDEX IF NOT EXISTS documents_title ON documents(title);
CREATE INDEX IF NOT EXISTS documents_number ON documents(doc_number);
CREATE TABLE IF NOT EXISTS chunks (
    id bigint PRIMARY KEY, chunk_id text NOT NULL UNIQUE, doc_id text NOT NULL, ord int NOT NULL,
    text text NOT NULL, clause text, clause_no text, path text NOT NULL, kind text NOT NULL,
    position_weight double precision NOT NULL, span_start int NOT NULL, span_end int NOT NULL,
    table_json text, title text NOT NULL, source text NOT NULL, doc_number text, authority text,
    publish_date text, effective_date text, version text, status text NOT NULL,
    language text NOT NULL, extra jsonb NOT NULL, terms bigint[] NOT NULL, doclen int NOT NULL);
CREATE SEQUENCE IF NOT EXISTS chunks_id_seq;
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, ord);
CREATE TABLE IF NOT EXISTS postings (
    term bigint NOT NULL, row bigint NOT NULL, tf int NOT NULL, dl int NOT NULL,
    PRIMARY KEY (term, row) INCLUDE (tf, dl));
CREATE TABLE IF NOT EXISTS edges (
    src text NOT NULL, dst text NOT NULL, kind text NOT NULL, phrase text NOT NULL,
    owner text NOT NULL, PRIMARY KEY (src, dst, kind));
CREATE INDEX IF NOT EXISTS edges_dst ON edges(dst, kind);
CREATE INDEX IF NOT EXISTS edges_owner ON edges(owner);
CREATE TABLE IF NOT EXISTS terms (term text PRIMARY KEY);
"""

# chunk columns as read back: jsonb extra as text, in _chunk's order
_CHUNK_READ = _CHUNK_COLS.replace("extra", "extra::text")
_SQL_OPS = {"=": "IS NOT DISTINCT FROM", "!=": "IS DISTINCT FROM", "<": "<", "<=": "<=", ">": ">",
            ">=": ">=", "like": "LIKE"}

# One statement: postings of the query terms, their live df, N and average length from the
# counters, Okapi BM25 per chunk. Everything is read in one snapshot, so scores are consistent
# with the committed state even while writers ingest.
_BM25_SQL = """
WITH p AS MATERIALIZED (SELECT term, row, tf, dl FROM postings WHERE term = ANY(%(terms)s)),
st AS (SELECT sum(n_chunks)::float8 AS n, greatest(sum(total_len)::float8 / greatest(sum(n_chunks), 1), 1e-9) AS avgdl
       FROM counters),
w AS (SELECT p.term, ln(1 + (st.n - count(*) + 0.5) / (count(*) + 0.5)) AS idf
      FROM p, st GROUP BY p.term, st.n),
s AS (SELECT p.row, sum(w.idf * p.tf * %(k1p1)s / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.dl / st.avgdl))) AS score
      FROM p JOIN w USING (term) CROSS JOIN st GROUP BY p.row),
top AS (SELECT row, score FROM s ORDER BY score DESC, row LIMIT %(first)s)
SELECT c.chunk_id, top.score FROM top JOIN chunks c ON c.id = top.row {where}
ORDER BY top.score DESC, top.row LIMIT %(k)s
"""
# Filters are checked on the best candidates first (most filters keep most chunks); when fewer
# than k of them pass, the query runs again over every scored chunk.
_FIRST_CANDIDATES = 512


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise MissingExtraError("psycopg and pgvector (the PostgreSQL store)", "postgres") from exc
    return psycopg


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)


@functools.lru_cache(maxsize=1 << 20)  # a corpus repeats its vocabulary: hash each word once
def term_id(term: str) -> int:
    """A term's 64-bit id in ``postings`` (signed, as PostgreSQL's bigint)."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def _lock_key(doc_id: str) -> int:
    return term_id("doc\x00" + doc_id)


class _Pool:
    """A few open connections, bounded; broken ones are dropped, new ones made on demand."""

    def __init__(self, url: str, schema: str, size: int, timeout: float) -> None:
        self.url, self.schema, self.timeout = url, schema, timeout
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(size)
        self._closed = False

    def connect(self) -> Any:
        psycopg = _psycopg()
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=max(1, round(self.timeout)),
                                   application_name="agentic-rag")
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL at {redact(self.url)}: "
                             f"{' '.join(str(exc).split())}") from exc
        try:
            # JIT compiling a BM25 query costs more than it saves (tens of ms per query)
            conn.execute("SET jit = off")
            conn.execute(f'SET search_path TO "{self.schema}", public')
            from pgvector.psycopg import register_vector

            register_vector(conn)
        except psycopg.Error:
            pass  # before the schema / extension exist (first open): set again after creating them
        except ImportError as exc:
            conn.close()
            raise MissingExtraError("pgvector (the PostgreSQL store)", "postgres") from exc
        return conn

    @contextmanager
    def connection(self) -> Iterator[Any]:
        if self._closed:
            raise StoreError(f"PostgreSQL index {redact(self.url)} is closed")
        if not self._slots.acquire(timeout=self.timeout):
            raise StoreError(f"PostgreSQL {redact(self.url)}: no free connection within {self.timeout:g} s")
        conn = None
        try:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None or conn.closed:
                conn = self.connect()
            yield conn
        except BaseException:
            if conn is not None and (conn.closed or conn.broken):
                self.drop_idle()  # after a server restart every idle connection is dead too
                conn = None
            raise
        finally:
            if conn is not None and not conn.closed:
                if conn.info.transaction_status != 0:  # not idle: never reuse mid-transaction
                    conn.close()
                else:
                    with self._lock:
                        self._idle.append(conn)
            self._slots.release()

    def drop_idle(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def close(self) -> None:
        self._closed = True
        self.drop_idle()


class PostgresStore:
    """Documents, chunks, BM25 postings, edges and vectors in PostgreSQL; implements
    ``DocumentStore`` and ``KeywordIndex`` like :class:`~agentic_rag.store.EmbeddedStore`.

    >>> store = PostgresStore("postgresql://arag@db:5432/arag")       # doctest: +SKIP
    >>> store.upsert(doc, chunks, edges); store.search("工伤认定", k=5)  # doctest: +SKIP
    """

    def __init__(self, url: str, *, schema: str = "arag", pool_size: int = 8,
                 connect_timeout_s: float = 5.0, ef_search: int = 100, create: bool = True) -> None:
        if not _SCHEMA_NAME.match(schema):
            raise ConfigError(f"invalid PostgreSQL schema name {schema!r}: lowercase letters, digits, _")
        self.url = url
        self.schema = schema
        self.ef_search = ef_search
        self._pool = _Pool(url, schema, pool_size, connect_timeout_s)
        self._slot = os.getpid() % _SLOTS
        self._vectors: PgVectorIndex | None = None
        psycopg = _psycopg()
        try:
            with self._pool.connection() as conn:
                self._init_schema(conn, create)
                words = [r[0] for r in conn.execute("SELECT term FROM terms")]
                built_with = conn.execute("SELECT value FROM meta WHERE key='tokenizer'").fetchone()
        except psycopg.Error as exc:
            self._pool.close()
            raise StoreError(f"cannot open the index in PostgreSQL {redact(url)} "
                             f"(schema {schema}): {' '.join(str(exc).split())}") from exc
        except BaseException:
            self._pool.close()
            raise
        if words:
            add_terms(words)
        if built_with is None or built_with[0] != TOKENIZER_ID:
            self.reindex()

    @property
    def path(self) -> str:
        """Where the index is, for messages (the URL without its password)."""
        return f"{redact(self.url)} (schema {self.schema})"

    def __repr__(self) -> str:
        return f"PostgresStore({self.path})"

    # ------------------------------------------------------------------ lifecycle
    def _init_schema(self, conn: Any, create: bool) -> None:
        exists = conn.execute("SELECT 1 FROM information_schema.tables WHERE table_schema=%s "
                              "AND table_name='meta'", (self.schema,)).fetchone()
        if exists:
            row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None or int(row[0]) != SCHEMA_VERSION:
                raise StoreError(f"{self.path}: unsupported index schema {row and row[0]!r}")
            return
        if not create:
            raise StoreError(f"no index in {self.path}")
        with conn.transaction():
            # one creator at a time (two processes opening a fresh server at once)
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (term_id("schema\x00" + self.schema),))
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
            conn.execute(f'SET LOCAL search_path TO "{self.schema}", public')
            for stmt in _DDL.split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            conn.execute("INSERT INTO meta(key, value) VALUES ('schema', %s), ('tokenizer', %s) "
                         "ON CONFLICT DO NOTHING", (str(SCHEMA_VERSION), TOKENIZER_ID))
            conn.execute("INSERT INTO counters SELECT g, 0, 0, 0, 0 FROM generate_series(0, %s) g "
                         "ON CONFLICT DO NOTHING", (_SLOTS - 1,))
        conn.execute(f'SET search_path TO "{self.schema}", public')
        from pgvector.psycopg import register_vector

        register_vector(conn)

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> "PostgresStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _error(self, what: str, exc: BaseException) -> StoreError:
        return StoreError(f"PostgreSQL {self.path}: {what}: {' '.join(str(exc).split())}")

    def _read(self, sql: str, params: Any = None) -> list[tuple]:
        """One read on a pooled connection; retried once on a fresh connection when the one it
        had was dead (a server restart), since reading twice changes nothing."""
        psycopg = _psycopg()
        for attempt in (0, 1):
            try:
                with self._pool.connection() as conn:
                    return conn.execute(sql, params).fetchall()
            except psycopg.OperationalError as exc:
                if attempt == 1:
                    raise self._error("read failed", exc) from exc
            except psycopg.Error as exc:
                raise self._error("read failed", exc) from exc
        raise AssertionError("unreachable")

    @contextmanager
    def _write(self) -> Iterator[Any]:
        """One transaction; rolled back on any exception (nothing half-written)."""
        psycopg = _psycopg()
        try:
            with self._pool.connection() as conn:
                with conn.transaction():
                    yield conn
        except psycopg.Error as exc:
            raise self._error("write failed, nothing changed", exc) from exc

    def _bump(self, conn: Any, *, chunks: int = 0, length: int = 0, deleted: bool = False) -> None:
        conn.execute("UPDATE counters SET writes = writes + 1, deletes = deletes + %s, "
                     "n_chunks = n_chunks + %s, total_len = total_len + %s WHERE slot = %s",
                     (int(deleted), chunks, length, self._slot))

    # ------------------------------------------------------------------ writes
    def upsert(self, doc: Document, chunks: Sequence[Chunk], edges: Sequence[Edge]) -> UpsertResult:
        """Add a document, or replace it atomically when its content hash changed.
        Same content hash -> ``"unchanged"`` and nothing is written."""
        return self.upsert_many([(doc, list(chunks), list(edges))])[0]

    def upsert_many(self, items: Iterable[tuple[Document, list[Chunk], list[Edge]]]) -> list[UpsertResult]:
        """Upsert many documents, up to 500 per transaction (a failed batch is rolled back whole
        and raises :class:`StoreError`; earlier batches stay committed). Results in input order."""
        return [r for batch in doc_batches(items, _BATCH_DOCS) for r in self._upsert_batch(batch)]

    def _hashes(self, doc_ids: Sequence[str], conn: Any = None) -> dict[str, str]:
        sql = "SELECT doc_id, content_hash FROM documents WHERE doc_id = ANY(%s)"
        rows = conn.execute(sql, (list(doc_ids),)).fetchall() if conn else self._read(sql, (list(doc_ids),))
        return dict(rows)

    def _upsert_batch(self, batch: list[tuple[Document, list[Chunk], list[Edge]]]) -> list[UpsertResult]:
        check_chunk_owners(batch)
        ids = [d.doc_id for d, _, _ in batch]
        known = self._hashes(ids)
        todo = [i for i, (d, _, _) in enumerate(batch) if known.get(d.doc_id) != d.content_hash]
        if not todo:
            return ["unchanged"] * len(batch)
        # tokenized before the transaction opens: it holds its locks only for the writes
        counted = {i: [Counter(tokenize(bm25_text(c.title, c.path, c.text), c.language))
                       for c in batch[i][1]] for i in todo}
        results: list[UpsertResult] = ["unchanged"] * len(batch)
        with self._write() as conn:
            for doc_id in sorted({batch[i][0].doc_id for i in todo}):
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(doc_id),))
            known = self._hashes(ids, conn)  # another writer may have committed meanwhile
            changed = [i for i in todo if known.get(batch[i][0].doc_id) != batch[i][0].content_hash]
            if not changed:
                return results
            replaced = [batch[i][0].doc_id for i in changed if batch[i][0].doc_id in known]
            gone_chunks, gone_len = self._delete_docs(conn, replaced, inbound=False) if replaced else (0, 0)
            n_new = sum(len(batch[i][1]) for i in changed)
            row_ids = [r[0] for r in conn.execute(
                "SELECT nextval('chunks_id_seq') FROM generate_series(1, %s)", (n_new,))] if n_new else []
            at = 0
            added_len = 0
            with conn.cursor() as cur:
                with cur.copy(f"COPY documents({_DOC_COLS}) FROM STDIN") as copy:
                    for i in changed:
                        copy.write_row(_doc_row(batch[i][0]))
                with cur.copy(f"COPY chunks(id, {_CHUNK_COLS}, terms, doclen) FROM STDIN") as copy:
                    for i in changed:
                        for c, counts in zip(batch[i][1], counted[i]):
                            copy.write_row((row_ids[at], *_chunk_row(c),
                                            "{" + ",".join(str(term_id(t)) for t in counts) + "}",
                                            sum(counts.values())))
                            at += 1
                # postings are most of the rows written: sent as COPY text, a chunk per write
                at = 0
                with cur.copy("COPY postings(term, row, tf, dl) FROM STDIN") as copy:
                    for i in changed:
                        for counts in counted[i]:
                            row, dl = row_ids[at], sum(counts.values())
                            added_len += dl
                            tail = f"\t{row}\t"
                            copy.write("".join(f"{term_id(t)}{tail}{tf}\t{dl}\n" for t, tf in counts.items()))
                            at += 1
            edge_rows = [(e.src, e.dst, e.kind, e.phrase, batch[i][0].doc_id)
                         for i in changed for e in batch[i][2]]
            if edge_rows:
                conn.cursor().executemany(
                    "INSERT INTO edges(src, dst, kind, phrase, owner) VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (src, dst, kind) DO UPDATE SET phrase = EXCLUDED.phrase, owner = EXCLUDED.owner",
                    edge_rows)
            self._bump(conn, chunks=n_new - gone_chunks, length=added_len - gone_len, deleted=bool(replaced))
            for i in changed:
                results[i] = "replaced" if batch[i][0].doc_id in known else "added"
        return results

    def _delete_docs(self, conn: Any, doc_ids: Sequence[str], *, inbound: bool) -> tuple[int, int]:
        """Delete documents with their chunks, postings, vectors and owned edges (``inbound``: also
        the edges pointing at them). Returns (chunks removed, their total BM25 length)."""
        n, length = conn.execute("SELECT count(*), coalesce(sum(doclen), 0) FROM chunks WHERE doc_id = ANY(%s)",
                                 (list(doc_ids),)).fetchone()
        conn.execute("DELETE FROM postings p USING (SELECT c.id, unnest(c.terms) AS term FROM chunks c "
                     "WHERE c.doc_id = ANY(%s)) x WHERE p.term = x.term AND p.row = x.id", (list(doc_ids),))
        if inbound:
            for doc_id in doc_ids:
                conn.execute("DELETE FROM edges WHERE dst = %s OR left(dst, %s) = %s",
                             (doc_id, len(doc_id) + 1, doc_id + ":"))
        conn.execute("DELETE FROM chunks WHERE doc_id = ANY(%s)", (list(doc_ids),))
        conn.execute("DELETE FROM edges WHERE owner = ANY(%s)", (list(doc_ids),))
        conn.execute("DELETE FROM documents WHERE doc_id = ANY(%s)", (list(doc_ids),))
        return int(n), int(length)

    def delete(self, doc_id: str) -> bool:
        """Remove a document, its chunks and the edges from or to it. False if it did not exist."""
        with self._write() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(doc_id),))
            if conn.execute("SELECT 1 FROM documents WHERE doc_id = %s", (doc_id,)).fetchone() is None:
                return False
            n, length = self._delete_docs(conn, [doc_id], inbound=True)
            self._bump(conn, chunks=-n, length=-length, deleted=True)
        return True

    def set_status(self, doc_id: str, status: DocStatus) -> None:
        """Set a document's status (active / superseded / repealed) on it and all its chunks."""
        if status not in _STATUSES:
            raise ConfigError(f"invalid status {status!r}: expected one of {', '.join(_STATUSES)}")
        with self._write() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(doc_id),))
            row = conn.execute("SELECT meta_json FROM documents WHERE doc_id = %s", (doc_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"no document {doc_id!r} in {self.path}")
            meta = json.loads(row[0])
            meta["status"] = status
            conn.execute("UPDATE documents SET status = %s, meta_json = %s WHERE doc_id = %s",
                         (status, json.dumps(meta, ensure_ascii=False), doc_id))
            conn.execute("UPDATE chunks SET status = %s WHERE doc_id = %s", (status, doc_id))
            self._bump(conn)

    def add_edges(self, edges: Iterable[Edge]) -> int:
        """Add graph edges between stored chunks/documents; an edge belongs to the document of
        its source. Returns how many edges were given."""
        rows = [(e.src, e.dst, e.kind, e.phrase, e.src.split(":", 1)[0]) for e in edges]
        if not rows:
            return 0
        with self._write() as conn:
            conn.cursor().executemany(
                "INSERT INTO edges(src, dst, kind, phrase, owner) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (src, dst, kind) DO UPDATE SET phrase = EXCLUDED.phrase, owner = EXCLUDED.owner",
                rows)
            self._bump(conn)
        return len(rows)

    def add_terms(self, terms: Iterable[str]) -> int:
        """Keep words whole in tokenization, for this process now and every later open of this
        index (add them before ingesting the documents that use them). Returns how many were new."""
        words = sorted({t.strip() for t in terms if t and t.strip()})
        if not words:
            return 0
        with self._write() as conn:
            added = conn.execute("INSERT INTO terms(term) SELECT unnest(%s::text[]) ON CONFLICT DO NOTHING "
                                 "RETURNING 1", (words,)).fetchall()
            if added:
                self._bump(conn)
        add_terms(words)
        return len(added)

    def reindex(self) -> None:
        """Tokenize every chunk again and rebuild the postings (after a tokenizer change; slow).
        Runs on its own when an index built by another tokenizer version is opened."""
        with self._write() as conn:
            conn.execute("LOCK TABLE chunks IN EXCLUSIVE MODE")
            conn.execute("TRUNCATE postings")
            rows = conn.execute("SELECT id, title, path, text, language FROM chunks ORDER BY id").fetchall()
            total = 0
            with conn.cursor() as cur, cur.copy("COPY postings(term, row, tf, dl) FROM STDIN") as copy:
                updates = []
                for row, title, path, text, lang in rows:
                    counts = Counter(tokenize(bm25_text(title, json.loads(path), text), lang))
                    dl = sum(counts.values())
                    total += dl
                    updates.append(([term_id(t) for t in counts], dl, row))
                    for t, tf in counts.items():
                        copy.write_row((term_id(t), row, tf, dl))
            conn.cursor().executemany("UPDATE chunks SET terms = %s, doclen = %s WHERE id = %s", updates)
            conn.execute("UPDATE counters SET n_chunks = 0, total_len = 0")
            conn.execute("UPDATE counters SET n_chunks = %s, total_len = %s, writes = writes + 1 WHERE slot = 0",
                         (len(rows), total))
            conn.execute("INSERT INTO meta(key, value) VALUES ('tokenizer', %s) "
                         "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", (TOKENIZER_ID,))

    def refresh(self) -> None:
        """Reads always see the last commit; nothing to catch up with."""

    def compact(self) -> None:
        """Refresh the planner's statistics and the visibility map (index-only scans of the
        postings) after a large ingest."""
        psycopg = _psycopg()
        try:
            with self._pool.connection() as conn:
                conn.execute("VACUUM (ANALYZE) postings")
                conn.execute("ANALYZE chunks")
        except psycopg.Error as exc:
            raise self._error("vacuum failed", exc) from exc

    # ------------------------------------------------------------------ reads
    @property
    def version(self) -> int:
        """A counter that grows with every committed write (a cache key for answers)."""
        return int(self._read("SELECT sum(writes) FROM counters")[0][0] or 0)

    def get_document(self, doc_id: str) -> Document | None:
        rows = self._read(f"SELECT {_DOC_COLS} FROM documents WHERE doc_id = %s", (doc_id,))
        return _doc(rows[0]) if rows else None

    def documents(self) -> list[Document]:
        """All documents, ordered by doc id."""
        return [_doc(r) for r in self._read(f"SELECT {_DOC_COLS} FROM documents ORDER BY doc_id COLLATE \"C\"")]

    def find_documents(self, title: str | None = None, source: str | None = None,
                       doc_number: str | None = None) -> list[Document]:
        """Documents matching every given field exactly (none given: all documents)."""
        where, params = exact_match({"title": title, "source": source, "doc_number": doc_number}, "%s")
        rows = self._read(f"SELECT {_DOC_COLS} FROM documents {where} ORDER BY doc_id COLLATE \"C\"", params)
        return [_doc(r) for r in rows]

    def chunks(self, doc_id: str) -> list[Chunk]:
        """The chunks of one document in order."""
        rows = self._read(f"SELECT {_CHUNK_READ} FROM chunks WHERE doc_id = %s ORDER BY ord", (doc_id,))
        return [_chunk(r) for r in rows]

    def get_chunks(self, chunk_ids: Sequence[str]) -> list[Chunk]:
        """Chunks by id, in the order asked; unknown ids are skipped."""
        if not chunk_ids:
            return []
        rows = self._read(f"SELECT {_CHUNK_READ} FROM chunks WHERE chunk_id = ANY(%s)", (list(chunk_ids),))
        by_id = {r[0]: r for r in rows}
        return [_chunk(by_id[c]) for c in chunk_ids if c in by_id]

    def chunk_counts(self) -> dict[str, int]:
        """Number of chunks per document id."""
        return dict(self._read("SELECT doc_id, count(*) FROM chunks GROUP BY doc_id"))

    def all_chunk_ids(self) -> list[str]:
        """Every chunk id, in insertion order."""
        return [r[0] for r in self._read("SELECT chunk_id FROM chunks ORDER BY id")]

    def edges(self, ids: Iterable[str], kind: EdgeKind | None = None,
              direction: Literal["out", "in"] = "out") -> list[Edge]:
        """Edges leaving (``out``) or entering (``in``) any of ``ids`` (chunk or doc ids)."""
        col = edge_endpoint(direction)
        sql = f"SELECT src, dst, kind, phrase FROM edges WHERE {col} = ANY(%s)"
        params: list[Any] = [list(ids)]
        if kind is not None:
            sql += " AND kind = %s"
            params.append(kind)
        rows = self._read(sql + ' ORDER BY src COLLATE "C", dst COLLATE "C", kind', params)
        return [Edge(src=r[0], dst=r[1], kind=r[2], phrase=r[3]) for r in rows]

    def stats(self) -> dict[str, int]:
        """Counts and size: docs, chunks, edges, bytes (tables and indexes of the schema), version."""
        docs, chunks, edges, size, version = self._read(
            "SELECT (SELECT count(*) FROM documents), (SELECT sum(n_chunks) FROM counters), "
            "(SELECT count(*) FROM edges), "
            "(SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'), "
            "(SELECT sum(writes) FROM counters)", (self.schema,))[0]
        return {"docs": int(docs), "chunks": int(chunks or 0), "edges": int(edges), "bytes": int(size),
                "delta_rows": 0, "version": int(version or 0)}

    def table_sizes(self) -> dict[str, int]:
        """Bytes on disk per table of the schema, indexes and TOAST included."""
        return dict(self._read(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r' ORDER BY 2 DESC",
            (self.schema,)))

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int = 10, where: Sequence[Filter] = ()) -> list[tuple[str, float]]:
        """BM25 ``(chunk_id, score)`` pairs, best first, among chunks matching every filter
        (the same filters as the embedded store, evaluated in SQL)."""
        cond, params = _where_sql(where)
        if k <= 0:
            return []
        terms = sorted({term_id(t) for t in tokenize(query)})
        if not terms:
            return []
        sql = _BM25_SQL.format(where=f"WHERE {cond}" if cond else "")
        args = {"terms": terms, "k": k, "k1": K1, "k1p1": K1 + 1.0, "b": B, **params}
        first = k if not cond else max(_FIRST_CANDIDATES, 8 * k)
        rows = self._read(sql, {**args, "first": first})
        if cond and len(rows) < k:
            rows = self._read(sql, {**args, "first": None})  # LIMIT NULL: every scored chunk
        return [(r[0], float(r[1])) for r in rows]

    # ------------------------------------------------------------------ vectors
    def vector_index(self, dim: int) -> "PgVectorIndex":
        """The dense vectors of this index (table ``embeddings``, HNSW), for ``dim``-sized vectors."""
        if self._vectors is None or self._vectors.dim != dim:
            self._vectors = PgVectorIndex(self, dim)
        return self._vectors


def _where_sql(where: Sequence[Filter]) -> tuple[str, dict[str, Any]]:
    """SQL condition on chunks ``c`` and named parameters for ``where``, with the embedded
    store's meaning (``=``/``!=`` treat None as a value, dates compare as ISO strings, ``extra.<key>``
    compares JSON values); unknown fields raise ConfigError."""
    conds: list[str] = []
    params: dict[str, Any] = {}
    for n, f in enumerate(where):
        p = f"f{n}"
        if f.field in FILTER_FIELDS:
            col, as_json = f"c.{f.field}", False
        elif f.field.startswith("extra.") and _EXTRA_KEY.match(f.field[6:]):
            params[p + "k"] = f.field[6:]
            col, as_json = f"(c.extra -> %({p}k)s)", f.op != "like"
            if f.op == "like":
                col = f"(c.extra ->> %({p}k)s)"
        else:
            allowed = ", ".join(sorted(FILTER_FIELDS))
            raise ConfigError(f"unknown filter field {f.field!r}: use one of {allowed}, or extra.<key>")

        def value(v: Any) -> Any:
            if as_json:
                return json.dumps(v if not hasattr(v, "isoformat") else v.isoformat(), ensure_ascii=False)
            return _sql_value(v)

        cast = "::jsonb" if as_json else ""
        if f.op == "in":
            values = list(f.value) if isinstance(f.value, (list, tuple, set, frozenset)) else [f.value]
            if not values:
                conds.append("false")
                continue
            params[p] = [value(v) for v in values]
            conds.append(f"{col} = ANY(%({p})s{'::jsonb[]' if as_json else ''})")
        elif f.value is None and as_json:
            conds.append(f"{col} IS {'NOT ' if f.op == '!=' else ''}NULL")
        else:
            params[p] = value(f.value)
            conds.append(f"{col} {_SQL_OPS[f.op]} %({p})s{cast}")
    return " AND ".join(conds), params


class PgVectorIndex:
    """Chunk vectors in the ``embeddings`` table (``vector(dim)``, HNSW over cosine distance),
    with the interface of :class:`~agentic_rag.store.vectors.VectorIndex` that the retriever and
    :func:`~agentic_rag.models.embedder.embed_chunks` use. Vectors follow their chunk: deleting
    or replacing a document deletes its vectors (foreign key), and the next ingest embeds the
    new chunks (from the embedding cache when their text is unchanged)."""

    path = None  # nothing on the local disk: the embedding cache is the engine's

    def __init__(self, store: PostgresStore, dim: int) -> None:
        if dim < 1:
            raise ValueError(f"vector dim must be positive, got {dim}")
        self.store = store
        self.dim = dim
        self.reset_reason = ""
        self._hashes: dict[str, str] = {}
        with store._write() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (term_id("embeddings\x00" + store.schema),))
            row = conn.execute("SELECT value FROM meta WHERE key = 'vector_dim'").fetchone()
            if row is not None and int(row[0]) != dim:
                self.reset_reason = (f"stored vectors have {row[0]} dimensions, the embedder makes {dim}: "
                                     "set aside, every chunk is embedded again")
                conn.execute("DROP TABLE IF EXISTS embeddings")
            conn.execute(f"CREATE TABLE IF NOT EXISTS embeddings (chunk_id text PRIMARY KEY "
                         f"REFERENCES chunks(chunk_id) ON DELETE CASCADE, content_hash text, "
                         f"embedding vector({dim}) NOT NULL)")
            # m / ef_construction as the embedded graph (connectivity 16, expansion_add 128)
            conn.execute("CREATE INDEX IF NOT EXISTS embeddings_hnsw ON embeddings USING hnsw "
                         "(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 128)")
            conn.execute("INSERT INTO meta(key, value) VALUES ('vector_dim', %s) "
                         "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", (str(dim),))
            model = conn.execute("SELECT value FROM meta WHERE key = 'vector_model'").fetchone()
        self._model = model[0] if model else None
        self.ids()

    @property
    def model(self) -> str | None:
        """Name of the embedder the vectors came from; vectors of different models never mix."""
        return self._model

    @model.setter
    def model(self, name: str | None) -> None:
        if name == self._model:
            return
        with self.store._write() as conn:
            conn.execute("INSERT INTO meta(key, value) VALUES ('vector_model', %s) "
                         "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", (name or "",))
        self._model = name

    def __len__(self) -> int:
        return int(self.store._read("SELECT count(*) FROM embeddings")[0][0])

    def __contains__(self, chunk_id: object) -> bool:
        return bool(self.store._read("SELECT 1 FROM embeddings WHERE chunk_id = %s", (chunk_id,)))

    def ids(self) -> list[str]:
        """Every chunk id with a vector (and a refresh of the content hashes known here)."""
        rows = self.store._read("SELECT chunk_id, content_hash FROM embeddings")
        self._hashes = {r[0]: r[1] for r in rows}
        return list(self._hashes)

    def content_hash(self, chunk_id: str) -> str | None:
        """What text the chunk's vector was made from (as of the last :meth:`ids` or write here)."""
        return self._hashes.get(chunk_id)

    def uses_ann(self) -> bool:
        return True

    def vector(self, chunk_id: str) -> np.ndarray | None:
        rows = self.store._read("SELECT embedding FROM embeddings WHERE chunk_id = %s", (chunk_id,))
        return np.asarray(rows[0][0].to_numpy(), dtype=np.float32) if rows else None

    def add(self, ids: Sequence[str], vectors: np.ndarray, hashes: Sequence[str | None] | None = None) -> None:
        """Add or replace vectors (L2-normalized here). Ids whose chunk is no longer stored are skipped."""
        vecs = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1) if len(ids) else vectors
        if not len(ids):
            return
        if vecs.shape[1] != self.dim:
            raise StoreError(f"vectors have {vecs.shape[1]} dimensions, the index {self.dim}")
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs = vecs / np.where(norms > 0, norms, 1.0)
        hashes = list(hashes) if hashes is not None else [None] * len(ids)
        from pgvector import Vector

        for start in range(0, len(ids), 1000):
            part = range(start, min(start + 1000, len(ids)))
            with self.store._write() as conn:
                conn.execute("CREATE TEMP TABLE IF NOT EXISTS new_vecs (chunk_id text, content_hash text, "
                             f"embedding vector({self.dim})) ON COMMIT DELETE ROWS")
                with conn.cursor() as cur, cur.copy("COPY new_vecs FROM STDIN") as copy:
                    for i in part:
                        copy.write_row((ids[i], hashes[i], Vector(vecs[i]).to_text()))
                conn.execute("INSERT INTO embeddings SELECT n.* FROM new_vecs n JOIN chunks c USING (chunk_id) "
                             "ON CONFLICT (chunk_id) DO UPDATE SET content_hash = EXCLUDED.content_hash, "
                             "embedding = EXCLUDED.embedding")
            for i in part:
                self._hashes[ids[i]] = hashes[i]

    def remove(self, ids: Iterable[str]) -> int:
        gone = list(ids)
        if not gone:
            return 0
        with self.store._write() as conn:
            n = conn.execute("DELETE FROM embeddings WHERE chunk_id = ANY(%s)", (gone,)).rowcount
        for cid in gone:
            self._hashes.pop(cid, None)
        return n

    def clear(self) -> None:
        with self.store._write() as conn:
            conn.execute("DELETE FROM embeddings")
        self._hashes = {}

    def save(self) -> None:
        """Every write is committed when it returns; nothing to save."""

    def search(self, vector: np.ndarray, k: int = 10,
               allowed_ids: Iterable[str] | None = None) -> list[tuple[str, float]]:
        """``(chunk_id, cosine)`` best first: HNSW (``hnsw.ef_search`` candidates), or an exact
        scan of ``allowed_ids`` when given."""
        if k <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.dim:
            raise StoreError(f"query vector has {q.shape[0]} dimensions, the index {self.dim}")
        from pgvector import Vector

        qv = Vector(q / (np.linalg.norm(q) or 1.0))
        psycopg = _psycopg()
        try:
            with self.store._pool.connection() as conn, conn.transaction():
                if allowed_ids is not None:
                    rows = conn.execute(
                        "SELECT chunk_id, 1 - (embedding <=> %s) FROM embeddings WHERE chunk_id = ANY(%s) "
                        "ORDER BY embedding <=> %s LIMIT %s", (qv, list(allowed_ids), qv, k)).fetchall()
                else:
                    conn.execute(f"SET LOCAL hnsw.ef_search = {max(int(self.store.ef_search), k)}")
                    rows = conn.execute("SELECT chunk_id, 1 - (embedding <=> %s) FROM embeddings "
                                        "ORDER BY embedding <=> %s LIMIT %s", (qv, qv, k)).fetchall()
        except psycopg.Error as exc:
            raise self.store._error("vector search failed", exc) from exc
        return [(r[0], float(r[1])) for r in rows]

    def __repr__(self) -> str:
        return f"PgVectorIndex({self.store.path}, dim={self.dim})"


def open_postgres(url: str, *, create: bool = True, **kwargs: Any) -> PostgresStore:
    """Open (or create) the PostgreSQL index at ``url``."""
    return PostgresStore(url, create=create, **kwargs)


__all__ = ["PgVectorIndex", "PostgresStore", "open_postgres", "redact", "term_id"]
