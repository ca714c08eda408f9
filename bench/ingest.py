"""Ingest + search benchmark of the embedded store (a script, not a test).

Measures on a jsonl corpus (default: the CRUD-RAG news set, 68,798 Chinese articles):
ingest throughput (chunks/s, BM25 only), index size on disk, peak RSS, reopen time, and search
latency p50/p95 over 200 queries (titles of sampled articles).

    nice -n 10 python bench/ingest.py                       # full corpus, fresh temp index
    python bench/ingest.py --limit 5000 --index /tmp/idx --json

The corpus goes through ``agentic_rag.ingest.pipeline.ingest_paths`` (the same path as
``arag ingest``); ``--loader simple`` uses a minimal line-per-document loader instead, to
measure the store alone.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import resource
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "bench" / "crud_news" / "corpus.jsonl.gz"


def _open_text(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def ingest_pipeline(src: Path, store) -> int:
    """Ingest a .jsonl file the way ``arag ingest`` does; returns the number of chunks."""
    from agentic_rag.ingest.pipeline import ingest_paths

    report = ingest_paths([src], store)
    failed = [f for f in report.files if f.status == "failed"]
    if failed:
        print(f"warning: {len(failed)} failed, first: {failed[0].path}: {failed[0].reason}", file=sys.stderr)
    return sum(f.chunks for f in report.files)


def ingest_simple(records: list[dict], store, max_chars: int = 500) -> int:
    """One document per record, split at sentence ends into pieces of at most ``max_chars``."""
    import re

    from agentic_rag.types import Chunk, DocMeta, Document

    sent = re.compile(r"(?<=[。！？!?；;\n])")
    n_chunks = 0

    def items():
        nonlocal n_chunks
        for r in records:
            text = r["text"]
            doc_id = hashlib.sha1(str(r["id"]).encode()).hexdigest()[:12]
            doc = Document(doc_id=doc_id, source=str(r["id"]),
                           content_hash=hashlib.sha256(text.encode()).hexdigest(), text=text,
                           meta=DocMeta(title=r.get("title", "")))
            pieces, cur, start, pos = [], "", 0, 0
            for s in sent.split(text):
                if cur and len(cur) + len(s) > max_chars:
                    pieces.append((cur, start))
                    cur, start = "", pos
                cur += s
                pos += len(s)
            if cur:
                pieces.append((cur, start))
            chunks = [Chunk(chunk_id=f"{doc_id}:p{i}:0", doc_id=doc_id, ord=i, text=t,
                            span=(s0, s0 + len(t)), title=doc.meta.title, source=doc.source)
                      for i, (t, s0) in enumerate(pieces)]
            n_chunks += len(chunks)
            yield doc, chunks, []

    store.upsert_many(items())
    return n_chunks


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--limit", type=int, default=None, help="only the first N articles")
    ap.add_argument("--index", type=Path, default=None, help="index folder (default: a temp dir, removed)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--loader", choices=["pipeline", "simple"], default="pipeline")
    ap.add_argument("--workers", type=int, default=None, help="tokenizer processes (default: per CPU, up to 4)")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = ap.parse_args(argv)

    from agentic_rag.store import EmbeddedStore
    from agentic_rag.text.tokenize import tokenize
    from agentic_rag.types import Filter

    tmp = Path(tempfile.mkdtemp(prefix="arag-bench-"))
    index = args.index or tmp / "index"
    if index.exists():
        shutil.rmtree(index)
    # one streaming pass: copy the first --limit records to a plain .jsonl for the pipeline (so
    # the corpus never sits in this process's memory) and reservoir-sample the query articles
    rng = random.Random(0)
    sample: list[dict] = []
    records: list[dict] = []
    src = tmp / "corpus.jsonl"
    n_docs = 0
    with _open_text(args.corpus.resolve()) as fh, open(src, "w", encoding="utf-8") as out:
        for line in fh:  # bounded by the file and by --limit
            if args.limit is not None and n_docs >= args.limit:
                break
            if not line.strip():
                continue
            rec = json.loads(line)
            out.write(line if line.endswith("\n") else line + "\n")
            if args.loader == "simple":
                records.append(rec)
            if len(sample) < args.queries:
                sample.append(rec)
            else:
                j = rng.randrange(n_docs + 1)
                if j < args.queries:
                    sample[j] = rec
            n_docs += 1
    queries = [r.get("title") or r["text"][:30] for r in sample]
    del sample
    tokenize("预热")  # load jieba's dictionary outside the timed region (a one-off ~1 s)

    def cpu(who: int | None = None) -> float:
        if who is None:
            return cpu(resource.RUSAGE_SELF) + cpu(resource.RUSAGE_CHILDREN)
        use = resource.getrusage(who)
        return use.ru_utime + use.ru_stime

    c0, m0 = cpu(), cpu(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    store = EmbeddedStore(index, workers=args.workers)
    if args.loader == "pipeline":
        n_chunks = ingest_pipeline(src, store)
    else:
        n_chunks = ingest_simple(records, store)
    store.close()  # includes the final BM25 compaction
    ingest_s = time.perf_counter() - t0
    ingest_cpu_s, main_cpu_s = cpu() - c0, cpu(resource.RUSAGE_SELF) - m0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker_rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

    t0 = time.perf_counter()
    store = EmbeddedStore(index, create=False)
    reopen_s = time.perf_counter() - t0

    def timed(where) -> list[float]:
        out = []
        for q in queries:
            t = time.perf_counter()
            store.search(q, k=10, where=where)
            out.append((time.perf_counter() - t) * 1000)
        return sorted(out)

    lat = timed(())
    con = sqlite3.connect(index / "arag.db")
    dates = [r[0] for r in con.execute("SELECT publish_date FROM chunks WHERE publish_date IS NOT NULL")]
    con.close()
    cut = sorted(dates)[len(dates) // 2] if dates else "2000-01-01"
    lat_f = timed([Filter(field="publish_date", op=">=", value=cut), Filter(field="status", value="active")])
    stats = store.stats()
    store.close()

    def pct(xs: list[float], p: float) -> float | None:
        return round(xs[int(p * (len(xs) - 1))], 2) if xs else None

    result = {
        "corpus": str(args.corpus.name), "loader": args.loader, "docs": n_docs,
        "chunks": n_chunks, "ingest_s": round(ingest_s, 2),
        "chunks_per_s": round(n_chunks / ingest_s, 1) if ingest_s else None,
        # CPU seconds of this process and its tokenizer workers: comparable on a busy machine
        "ingest_cpu_s": round(ingest_cpu_s, 2),
        "chunks_per_cpu_s": round(n_chunks / ingest_cpu_s, 1) if ingest_cpu_s else None,
        "main_cpu_s": round(main_cpu_s, 2),  # the rest ran in tokenizer worker processes
        "index_mb": round(dir_bytes(index) / 2**20, 1), "terms": stats["terms"],
        "peak_rss_mb": round(rss_mb, 1), "worker_peak_rss_mb": round(worker_rss_mb, 1), "reopen_s": round(reopen_s, 3),
        "search_p50_ms": pct(lat, 0.5), "search_p95_ms": pct(lat, 0.95),
        # the same queries restricted to the newer half of the corpus (publish_date >= median)
        "filtered_p50_ms": pct(lat_f, 0.5), "filtered_p95_ms": pct(lat_f, 0.95),
        "queries": len(lat),
    }
    if args.index is None:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:>14}: {v}")
    return result


if __name__ == "__main__":
    main()
