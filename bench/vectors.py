"""Vector index benchmark (a script, not a test): where exact search stops being cheap, and how
well the HNSW path (hnswlib, inner product on unit vectors, single-threaded search) recalls the
exact top-k.

For each size N it builds a :class:`VectorIndex` twice (exact only, and ANN with
``exact_limit=0``) over clustered unit vectors of the real dimension (384, multilingual-e5-small)
or over real embeddings (``--vectors file.npy``, sampled with replacement plus noise past their
count), then reports: exact and ANN search latency p50 (top-10), ANN build seconds, ANN
recall@10 against exact, the graph file size, and save/open times. The crossover decides
``EXACT_LIMIT``. The machine's load average is printed with the results: on shared cores latency
and build times move with it, recall does not.

    nice -n 10 python bench/vectors.py                          # sizes 2k..100k, dim 384
    python bench/vectors.py --sizes 5000 20000 --queries 100
    python bench/vectors.py --vectors /tmp/arag-bench-embed/2wiki.npy
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def clustered(n: int, dim: int, rng: np.random.Generator, topics: int = 200) -> np.ndarray:
    """Unit vectors around topic centres: text embeddings are clumped, not isotropic."""
    centres = rng.standard_normal((topics, dim)).astype(np.float32)
    x = centres[rng.integers(0, topics, n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def from_real(real: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    if n <= len(real):
        return real[rng.choice(len(real), n, replace=False)]
    x = real[rng.integers(0, len(real), n)] + 0.05 * rng.standard_normal((n, real.shape[1]))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def p50_ms(fn, queries: np.ndarray) -> float:
    lat = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        lat.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(lat), 3)


def run_size(n: int, data: np.ndarray, queries: np.ndarray, k: int, args) -> dict:
    from agentic_rag.store.vectors import VectorIndex

    ids = [f"c{i}" for i in range(n)]
    exact = VectorIndex(dim=data.shape[1], exact_limit=n)
    exact.add(ids, data)
    ann = VectorIndex(dim=data.shape[1], exact_limit=0, connectivity=args.connectivity,
                      expansion_add=args.expansion_add, expansion_search=args.expansion_search)
    ann.add(ids, data)
    t0 = time.perf_counter()
    ann._ensure_ann()  # build now, so search latency excludes it
    build_s = time.perf_counter() - t0
    truth = [{i for i, _ in exact.search(q, k)} for q in queries]
    got = [{i for i, _ in ann.search(q, k)} for q in queries]
    recall = float(np.mean([len(t & g) / k for t, g in zip(truth, got, strict=True)]))
    with tempfile.TemporaryDirectory() as tmp:
        ann.path = Path(tmp) / "v"
        t0 = time.perf_counter()
        ann.save()
        save_s = time.perf_counter() - t0
        ann_mb = (Path(tmp) / "v" / "ann.hnsw").stat().st_size / 2**20
        t0 = time.perf_counter()
        VectorIndex.open(Path(tmp) / "v", exact_limit=0).search(queries[0], k)
        open_s = time.perf_counter() - t0
    return {"n": n, "exact_p50_ms": p50_ms(lambda q: exact.search(q, k), queries),
            "ann_p50_ms": p50_ms(lambda q: ann.search(q, k), queries),
            "ann_recall_at_k": round(recall, 4), "ann_build_s": round(build_s, 2),
            "ann_file_mb": round(ann_mb, 1), "save_s": round(save_s, 2),
            "open_and_first_search_s": round(open_s, 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 20000, 50000, 100000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--vectors", type=Path, help="real embeddings (.npy, rows) instead of synthetic")
    ap.add_argument("--connectivity", type=int, default=16)
    ap.add_argument("--expansion-add", type=int, default=128)
    ap.add_argument("--expansion-search", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    real = np.load(args.vectors, allow_pickle=False).astype(np.float32) if args.vectors else None
    dim = real.shape[1] if real is not None else args.dim
    load_before = [round(x, 2) for x in os.getloadavg()]
    rows = []
    for n in args.sizes:
        pool = from_real(real, n + args.queries, rng) if real is not None else clustered(
            n + args.queries, dim, rng)
        data, queries = pool[:n], pool[n:]
        row = run_size(n, data, queries, args.k, args)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print(json.dumps({"dim": dim, "k": args.k, "source": str(args.vectors or "clustered synthetic"),
                      "backend": f"hnswlib {importlib.metadata.version('hnswlib')}",
                      "cpus": os.cpu_count(), "loadavg_before": load_before,
                      "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                      "results": rows,
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)},
                     indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
