"""Deterministic `ask` latency on the examples index, and `arag ask` cold start.

    python bench/ask.py [--examples examples] [--repeat 3] [--json]

Builds a fresh index of examples/docs in a temp folder, answers every question in
examples/questions.jsonl in-process (after one warm-up pass) and reports p50/p95 of the wall
time and the mean and p95 of the CPU time per answer (``time.process_time()``, all threads: on a
shared machine it moves less than the wall time); then runs
`arag ask` as a new process a few times and reports the wall time of each (cold start), the
peak RSS of the in-process part and the index size.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agentic_rag import Engine, Settings


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=Path, default=Path("examples"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    questions = [json.loads(line)["question"]
                 for line in (args.examples / "questions.jsonl").read_text("utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "idx"
        engine = Engine(Settings.load(index=index))
        t0 = time.perf_counter()
        engine.ingest([args.examples / "docs"])
        ingest_s = time.perf_counter() - t0
        for q in questions:  # warm-up: jieba dictionary, lazy imports, SQLite page cache
            engine.ask(q)
        times, cpu = [], []
        for _ in range(args.repeat):
            for q in questions:
                t0, c0 = time.perf_counter(), time.process_time()
                engine.ask(q)
                times.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
        engine.close()
        index_mb = sum(f.stat().st_size for f in index.rglob("*") if f.is_file()) / 2**20
        # this process: ingest and every ask (ru_maxrss is in KiB on Linux)
        peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        cold = []
        for q in questions[:3]:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "agentic_rag.cli", "ask", q, "--index", str(index), "--json"],
                           check=True, capture_output=True)
            cold.append(time.perf_counter() - t0)
    times.sort()
    cpu.sort()
    result = {"questions": len(questions), "ingest_s": round(ingest_s, 2),
              "ask_ms": {"p50": round(statistics.median(times), 1),
                         "p95": round(times[int(0.95 * (len(times) - 1))], 1)},
              "cpu_ms": {"mean": round(statistics.mean(cpu), 1), "p95": round(cpu[int(0.95 * (len(cpu) - 1))], 1)},
              "cold_start_s": [round(c, 2) for c in cold],
              "peak_rss_mb": round(peak_rss_mb, 1), "index_mb": round(index_mb, 2)}
    print(json.dumps(result, ensure_ascii=False) if args.json else
          f"{result['questions']} questions · ingest {result['ingest_s']} s · ask p50 "
          f"{result['ask_ms']['p50']} ms, p95 {result['ask_ms']['p95']} ms · CPU per answer mean "
          f"{result['cpu_ms']['mean']} ms, p95 {result['cpu_ms']['p95']} ms · cold start "
          f"{', '.join(map(str, result['cold_start_s']))} s · peak RSS {result['peak_rss_mb']} MB · "
          f"index {result['index_mb']} MB")


if __name__ == "__main__":
    main()
