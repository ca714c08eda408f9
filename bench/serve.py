"""`arag serve` under load on 127.0.0.1: throughput and latency per endpoint and concurrency,
time to the first SSE event, the server's overhead over an in-process `Engine.ask`, and memory.

    python bench/serve.py [--examples examples] [--seconds 5] [--concurrency 1 8 32]
                          [--workers 1] [--embedder auto|none] [--endpoints route retrieve ask cached lookup]
                          [--env ARAG_KEY=VALUE ...] [--trees SRC SRC ...] [--rounds 1] [--json]

    # the code before a change beside this one, same index, load runs alternating:
    git worktree add /tmp/before HEAD~1
    python bench/serve.py --endpoints ask --concurrency 8 --seconds 3 --rounds 4 --trees /tmp/before/src src

Builds a fresh index of examples/docs in a temp folder, starts `arag serve` on a free port and
drives it with a bounded asyncio load generator (a fixed number of keep-alive connections, each
sending its next request when the last one is answered; no open-loop overload). Endpoints:
/v1/route, /v1/retrieve, /v1/ask with the answer cache off (the deterministic agents every time)
and /v1/ask with the cache on and filled (the questions repeat, as a help desk's do); on request
(``lookup``) /v1/ask on a server whose run is a lookup of answers made at its start, so that its CPU
per request is the service's own overhead, without the agents' work. The load generator
shares the machine's cores with the server: on a 2-core box it takes part of the CPU it measures, so
each run reports the generator's own CPU (``gen_cpu_pct``, % of one core) and the server's CPU per
request (``server_cpu_ms``, all worker processes together, from /proc). On a shared machine one tree's
numbers swing by ±30% from run to run: compare trees with ``--trees`` in one run, not across runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from agentic_rag import Engine, Settings

#: --endpoints names → the load runs' names
_RUNS = {"route": "/v1/route", "retrieve": "/v1/retrieve", "ask": "/v1/ask", "cached": "/v1/ask (cached)",
         "lookup": "/v1/ask (lookup)"}
#: the runs not in the default set: ``lookup`` measures the service without the agents' work
_EXTRA = {"lookup"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def start_server(index: Path, env: dict[str, str], workers: int = 1,
                 lookup: Path | None = None) -> tuple[subprocess.Popen, str, float]:
    """``arag serve`` over ``index`` on a free port: (process, root URL, seconds until ready).
    With ``lookup`` (a questions.jsonl) the app of :func:`serve_lookup` instead, one worker."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    if lookup is None:
        cmd = [sys.executable, "-m", "agentic_rag.cli", "serve", "--index", str(index),
               "--port", str(port), "--workers", str(workers)]
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve-lookup", str(index), str(port), str(lookup)]
        workers = 1
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.perf_counter()
    ready: set[int] = set()  # each new connection may reach another worker: wait for all of them
    while True:
        try:
            r = httpx.get(f"{url}/readyz", timeout=2)
            if r.status_code == 200:
                ready.add(r.json()["detail"]["pid"])
                if len(ready) >= workers or time.perf_counter() - t0 > 60:
                    return proc, url, round(time.perf_counter() - t0, 2)
                continue
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.perf_counter() - t0 > 120:
            proc.kill()
            raise SystemExit("arag serve did not start")
        time.sleep(0.2)


class _Conn:
    """One keep-alive HTTP/1.1 connection with just enough parsing for JSON replies."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        await self.writer.drain()
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        await self.reader.readexactly(length)
        return status

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def _cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds used so far by ``pids`` (from /proc; 0 where unreadable)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


async def _load(port: int, path: str, bodies: list[bytes], concurrency: int, seconds: float,
                server_pids: list[int] = ()) -> dict:
    latencies: list[float] = []
    errors = 0
    stop = time.perf_counter() + seconds

    async def worker(n: int) -> None:
        nonlocal errors
        conn = _Conn(port)
        i = n
        try:
            while time.perf_counter() < stop:
                body = bodies[i % len(bodies)]
                i += concurrency
                t0 = time.perf_counter()
                try:
                    status = await conn.post(path, body)
                except (OSError, asyncio.IncompleteReadError):
                    errors += 1
                    conn.close()
                    conn = _Conn(port)
                    continue
                latencies.append((time.perf_counter() - t0) * 1000)
                if status != 200:
                    errors += 1
        finally:
            conn.close()

    t0 = time.perf_counter()
    own0, server0 = time.process_time(), _cpu_s(list(server_pids))
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    wall = time.perf_counter() - t0
    own, server = time.process_time() - own0, _cpu_s(list(server_pids)) - server0
    n = len(latencies)
    return {"requests": n, "rps": round(n / wall, 1), "errors": errors,
            "p50_ms": round(_pct(latencies, 0.50), 1), "p95_ms": round(_pct(latencies, 0.95), 1),
            "p99_ms": round(_pct(latencies, 0.99), 1), "gen_cpu_pct": round(100 * own / wall, 1),
            "server_cpu_ms": round(1000 * server / n, 1) if n else float("nan")}


def _paired_overhead(engine: Engine, url: str, questions: list[str], passes: int = 2) -> dict:
    """Each question through ``engine.ask`` here, then at once through ``/v1/ask`` (cache off)
    on a plain keep-alive ``http.client`` connection, so both see the same moment's load and the
    client costs next to nothing. ``in_run``: the server's own ``usage.wall_ms``; ``outside``:
    the request's time outside the run (HTTP, validation, thread hand-off, audit, rendering)."""
    import http.client

    host, port = url.rsplit("//", 1)[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    here, there, in_run = [], [], []
    try:
        for _ in range(passes):
            for q in questions:
                t0 = time.perf_counter()
                engine.ask(q)
                here.append((time.perf_counter() - t0) * 1000)
                body = json.dumps({"question": q, "options": {"cache": False}}, ensure_ascii=False).encode()
                t0 = time.perf_counter()
                conn.request("POST", "/v1/ask", body, {"Content-Type": "application/json"})
                reply = json.loads(conn.getresponse().read())
                there.append((time.perf_counter() - t0) * 1000)
                in_run.append(reply["usage"]["wall_ms"])
    finally:
        conn.close()
    pairs = [b - a for a, b in zip(here, there)]
    outside = [b - w for b, w in zip(there, in_run)]
    return {"requests": len(there), "engine_ask_p50_ms": round(statistics.median(here), 1),
            "http_ask_p50_ms": round(statistics.median(there), 1),
            "server_run_p50_ms": round(statistics.median(in_run), 1),
            "overhead_p50_ms": round(statistics.median(pairs), 1),
            "outside_run_p50_ms": round(statistics.median(outside), 1)}


def _first_event(url: str, questions: list[str]) -> dict:
    firsts, totals = [], []
    with httpx.Client(base_url=url, timeout=60) as c:
        for q in questions:
            t0 = time.perf_counter()
            first = None
            with c.stream("POST", "/v1/ask", json={"question": q, "stream": True, "options": {"cache": False}}) as r:
                for line in r.iter_lines():
                    if first is None and line.startswith("event:"):
                        first = (time.perf_counter() - t0) * 1000
            firsts.append(first or float("nan"))
            totals.append((time.perf_counter() - t0) * 1000)
    return {"first_event_p50_ms": round(statistics.median(firsts), 1),
            "stream_total_p50_ms": round(statistics.median(totals), 1)}


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return float("nan")


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def serve_lookup(index: Path, port: int, questions_file: Path) -> None:
    """``arag serve``'s app over ``index`` with the deterministic run replaced by a lookup of
    the answers to ``questions_file``'s questions, computed at start: under load, the server's
    CPU per request is then all the service's own (HTTP, validation, thread hand-off, sessions,
    the audit write, serialization, metrics)."""
    import uvicorn

    from agentic_rag.server.app import create_app
    from agentic_rag.server.service import Service

    service = Service(Settings.load(index=index))
    runtime = service.runtime(False)  # the one a default /v1/ask runs on
    run = runtime.run
    answers = {q: run(q) for q in _questions(questions_file)}

    def lookup(question: str, **kwargs):
        return answers[question].model_copy() if question in answers else run(question, **kwargs)

    runtime.run = lookup  # type: ignore[method-assign]
    uvicorn.run(create_app(service=service), host="127.0.0.1", port=port, log_level="warning",
                access_log=False)


def _questions(path: Path) -> list[str]:
    return [json.loads(line)["question"] for line in path.read_text("utf-8").splitlines() if line.strip()]


def _tree_env(env: dict[str, str], tree: Path | None) -> dict[str, str]:
    """The server's environment: with ``tree`` (a ``src`` folder) its code comes first on the path."""
    if tree is None:
        return env
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree.resolve()), env.get("PYTHONPATH")]))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=Path, default=Path("examples"))
    ap.add_argument("--seconds", type=float, default=5.0, help="per endpoint and concurrency")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--embedder", default="auto", help="embedder.provider for the index and server")
    ap.add_argument("--endpoints", nargs="+", choices=list(_RUNS), default=[e for e in _RUNS if e not in _EXTRA],
                    help="which load runs (default all but lookup; 'ask' is /v1/ask with the cache off; "
                         "'lookup' the same requests to a server whose run is a lookup of ready answers)")
    ap.add_argument("--env", nargs="+", default=[], metavar="ARAG_KEY=VALUE",
                    help="settings for the server, e.g. ARAG_SERVER__MAX_CONCURRENT_RUNS=2")
    ap.add_argument("--trees", nargs="+", type=Path, default=[], metavar="SRC",
                    help="serve each of these src folders (e.g. a worktree of the code before a "
                         "change, and this one's src); their load runs alternate, round by round")
    ap.add_argument("--rounds", type=int, default=1, help="load runs per endpoint, concurrency and tree")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--serve-lookup", nargs=3, metavar=("INDEX", "PORT", "QUESTIONS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_lookup:
        index, port, questions_file = args.serve_lookup
        return serve_lookup(Path(index), int(port), Path(questions_file))
    questions = _questions(args.examples / "questions.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARAG_")}
    env.update({"ARAG_EMBEDDER__PROVIDER": args.embedder, "ARAG_LLM__PROVIDER": "none"})
    env.update(item.split("=", 1) for item in args.env)
    trees: list[Path | None] = list(args.trees) or [None]
    result: dict = {"cores": len(os.sched_getaffinity(0)), "workers": args.workers, "env": args.env,
                    "load_average": [round(x, 2) for x in os.getloadavg()],
                    "embedder": args.embedder, "questions": len(questions), "trees": {}}
    bodies = {
        "/v1/route": [json.dumps({"question": q}, ensure_ascii=False).encode() for q in questions],
        "/v1/retrieve": [json.dumps({"question": q}, ensure_ascii=False).encode() for q in questions],
        "/v1/ask": [json.dumps({"question": q, "options": {"cache": False}}, ensure_ascii=False).encode()
                    for q in questions],
        "/v1/ask (cached)": [json.dumps({"question": q}, ensure_ascii=False).encode() for q in questions],
    }
    bodies["/v1/ask (lookup)"] = bodies["/v1/ask"]
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "idx"
        settings = Settings.load(index=index, embedder={"provider": args.embedder}, llm={"provider": "none"})
        engine = Engine(settings)
        engine.ingest([args.examples / "docs"])
        for q in questions:  # warm-up
            engine.ask(q)
        servers: list[tuple[str, subprocess.Popen, str]] = []
        lookups: list[tuple[str, subprocess.Popen, str]] = []
        try:
            for tree in trees:
                label = str(tree) if tree is not None else "this tree"
                if "lookup" in args.endpoints:
                    proc, url, _ = start_server(index, _tree_env(env, tree), lookup=args.examples / "questions.jsonl")
                    lookups.append((label, proc, url))
                proc, url, ready_s = start_server(index, _tree_env(env, tree), args.workers)
                servers.append((label, proc, url))
                out: dict = {"server_ready_s": ready_s}
                result["trees"][label] = out
                for q in questions * args.workers:  # every worker's warm-up: a new connection each
                    httpx.post(f"{url}/v1/ask", json={"question": q, "options": {"cache": False}}, timeout=60)
                inproc = []
                for q in questions:
                    t0 = time.perf_counter()
                    engine.ask(q)
                    inproc.append((time.perf_counter() - t0) * 1000)
                with httpx.Client(base_url=url, timeout=60) as c:
                    served = []
                    for q in questions:
                        t0 = time.perf_counter()
                        c.post("/v1/ask", json={"question": q, "options": {"cache": False}})
                        served.append((time.perf_counter() - t0) * 1000)
                    for body in bodies["/v1/ask (cached)"]:  # the cached runs start warm
                        c.post("/v1/ask", content=body, headers={"Content-Type": "application/json"})
                out["overhead"] = {"engine_ask_p50_ms": round(statistics.median(inproc), 1),
                                   "http_ask_p50_ms": round(statistics.median(served), 1),
                                   "overhead_p50_ms": round(statistics.median(served) - statistics.median(inproc), 1)}
                out["overhead_paired"] = _paired_overhead(engine, url, questions)
                out["sse"] = _first_event(url, questions)
                out["load"] = {}
            for name, payload in bodies.items():
                if not any(_RUNS[e] == name for e in args.endpoints):
                    continue
                path = name.split()[0]
                targets = lookups if name == _RUNS["lookup"] else servers
                for conc in args.concurrency:
                    for rnd in range(args.rounds):
                        for label, proc, url in (targets if rnd % 2 == 0 else targets[::-1]):
                            port = int(url.rsplit(":", 1)[1])
                            key = f"{name} c={conc}" + (f" #{rnd + 1}" if args.rounds > 1 else "")
                            run = asyncio.run(_load(port, path, payload, conc, args.seconds,
                                                    [proc.pid, *_children(proc.pid)]))
                            run["load_average"] = round(os.getloadavg()[0], 2)
                            result["trees"][label]["load"][key] = run
            result["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
            for label, proc, _ in servers:
                result["trees"][label]["rss_mb"] = {str(p): _rss_mb(p) for p in [proc.pid, *_children(proc.pid)]}
        finally:
            engine.close()
            for _, proc, _ in servers + lookups:
                proc.terminate()
            for _, proc, _ in servers + lookups:
                proc.wait(15)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return
    print(f"{result['cores']} cores · load average {' '.join(map(str, result['load_average']))} at the start · "
          f"{args.workers} worker(s) · embedder {args.embedder}")
    for label, out in result["trees"].items():
        print(f"== {label}: server ready in {out['server_ready_s']} s")
        o = out["overhead"]
        print(f"Engine.ask p50 {o['engine_ask_p50_ms']} ms · /v1/ask p50 {o['http_ask_p50_ms']} ms · "
              f"overhead {o['overhead_p50_ms']} ms")
        o = out["overhead_paired"]
        print(f"paired, {o['requests']} questions alternating: Engine.ask p50 {o['engine_ask_p50_ms']} ms · "
              f"/v1/ask p50 {o['http_ask_p50_ms']} ms (the run inside it {o['server_run_p50_ms']} ms) · "
              f"overhead p50 {o['overhead_p50_ms']} ms, outside the run {o['outside_run_p50_ms']} ms")
        print(f"SSE: first event p50 {out['sse']['first_event_p50_ms']} ms, whole stream p50 "
              f"{out['sse']['stream_total_p50_ms']} ms")
        print("RSS MB per process:", ", ".join(f"{p}: {m}" for p, m in out["rss_mb"].items()))
    print(f"{'tree':<18}{'endpoint':<26}{'req/s':>9}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'errors':>8}"
          f"{'srv cpu ms/req':>16}{'gen cpu %':>11}{'load':>7}")
    rows = [(key, label, r) for label, out in result["trees"].items() for key, r in out["load"].items()]
    order = {key: i for i, key in enumerate(dict.fromkeys(key for key, _, _ in rows))}
    for key, label, r in sorted(rows, key=lambda row: order[row[0]]):  # trees side by side
        print(f"{label[-16:]:<18}{key:<26}{r['rps']:>9}{r['p50_ms']:>9}{r['p95_ms']:>9}{r['p99_ms']:>9}"
              f"{r['errors']:>8}{r['server_cpu_ms']:>16}{r['gen_cpu_pct']:>11}{r['load_average']:>7}")
    if args.rounds > 1:
        print("medians over the rounds:")
        for label, out in result["trees"].items():
            runs: dict[str, list[dict]] = {}
            for key, r in out["load"].items():
                runs.setdefault(key.rsplit(" #", 1)[0], []).append(r)
            for key, rs in runs.items():
                med = {m: round(statistics.median(r[m] for r in rs), 1)
                       for m in ("rps", "p50_ms", "p95_ms", "server_cpu_ms")}
                print(f"{label[-16:]:<18}{key:<26}{med['rps']:>9}{med['p50_ms']:>9}{med['p95_ms']:>9}"
                      f"{'':>17}{med['server_cpu_ms']:>16}")
    print(f"load average at the end {' '.join(map(str, result['load_average_end']))}")


if __name__ == "__main__":
    main()
