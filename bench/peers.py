"""This engine beside LlamaIndex and Haystack: same corpora, same chunks, same embeddings, one run.

    pip install 'agentic-rag[peers]'
    python bench/peers.py [--sets examples hotpotqa 2wiki musique lecoqa rgb/zh_noise]
                          [--limit N] [--rgb-limit N] [--query-limit 50] [--k 8]
                          [--bench-dir ../shared/bench] [--cache-dir DIR] [--out FILE.md] [--json]

For each set, each system runs in its own fresh process (so its peak RSS is its own), one after
the other: ``ours`` (the engine with its defaults, through ``arag eval``'s backend) and the two
peers of :mod:`agentic_rag.eval.peers`. All three are scored by ``run_eval`` (same gold units,
same k, same metric code as ``arag eval``) over the set's cached engine index, whose embedding
cache holds every document vector, so no system embeds a document (the tables say how many
were computed: 0 expected) and only queries are embedded, by the same model.

Per system: the retrieval metrics of ``arag eval`` (for ``rgb/zh_noise``: answer accuracy per
noise ratio, where a peer's answer is its top passage as for the BM25 floor, since a no-op LLM
writes nothing), retrieval latency p50/p95 (the ``retrieve`` calls of ``run_eval``), a full query
through each system's query pipeline (ours: ``Engine.ask`` with no LLM, i.e. the deterministic
agents; the peers: their query pipelines with a no-op LLM) timed on a freshly opened index over
the first ``--query-limit`` questions, index build time (ours: a fresh ingest of the corpus
seeded with the cached embeddings; the peers: their in-memory indexes over the engine's chunks,
parsing and chunking not included; RGB: the sum over the fresh per-question indexes), and the
process's peak RSS.

Then the engine overhead per run with retrieval and the LLM stubbed out, the way agent-framework
benchmarks measure it: our runtime driving three no-op agents (Router → Retriever → Reasoner),
a three-node LangGraph graph and a three-component Haystack pipeline, interleaved rounds, median
(and ours once more with a Retriever that may block, whose search goes to a worker thread under
the tool timeout).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

SETS = ("examples", "hotpotqa", "2wiki", "musique", "lecoqa", "rgb/zh_noise")
SYSTEMS = ("ours", "llamaindex", "haystack")


# -- one system on one set, in a child process -------------------------------------------------
def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _cache_keys(folder: Path) -> set[str]:
    keys: set[str] = set()
    for f in folder.rglob("[0-9]*.json"):
        keys.update(json.loads(f.read_text("utf-8"))["keys"])
    return keys


class _TimedBackend:
    """The engine backend, recording how long each build takes (the RGB sets' fresh indexes)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.fingerprint, self.settings = inner, inner.fingerprint, inner.settings
        self.builds: list[float] = []

    def build(self, sources: Any, index_dir: Path, **kw: Any) -> None:
        t = time.perf_counter()
        self.inner.build(sources, index_dir, **kw)
        self.builds.append(time.perf_counter() - t)

    def open(self, index_dir: Path, k: int) -> Any:
        return self.inner.open(index_dir, k)


def _query_latency(system: Any, questions: list[str]) -> dict[str, float | None]:
    from agentic_rag.eval import metrics as M

    times = []
    try:
        for q in questions:
            t = time.perf_counter()
            system.ask(q)
            times.append((time.perf_counter() - t) * 1000)
    finally:
        system.close()
    return {"p50": M.percentile(times, 50), "p95": M.percentile(times, 95)}


def run_system(system: str, set_name: str, bench_dir: str | None, limit: int | None, k: int,
               cache_dir: str, query_limit: int) -> dict[str, Any]:
    """One system on one set (run in a fresh process): its :class:`SystemResult` as a dict."""
    from agentic_rag.config import Settings
    from agentic_rag.eval import EngineBackend, load_set, run_eval
    from agentic_rag.eval.peers import PeerBackend, summarize
    from agentic_rag.eval.runner import EMBEDDING_CACHE, cached_index

    eval_set = load_set(set_name, bench_dir=bench_dir, limit=limit)
    cache = Path(cache_dir)
    engine = _TimedBackend(EngineBackend(Settings.load()))
    per_question = eval_set.spec.kind not in ("corpus", "examples")
    backend: Any = engine if system == "ours" else PeerBackend(system, engine, lang=eval_set.spec.lang)
    _warm_up(eval_set, backend, k, cache)
    engine.builds.clear()
    if system != "ours":
        backend.builds.clear()
    run = run_eval(eval_set, backend, k=k, cache_dir=cache)
    query_ms = None
    if per_question:  # every question was asked on its own fresh index
        # one build per scored row; for ours the set's passage pool may come first (not counted)
        builds = engine.builds[-len(run.rows):] if system == "ours" else [s for s, _ in backend.builds]
        computed = None if system == "ours" else sum(n for _, n in backend.builds)
        build_s = sum(builds)
    else:
        index_dir, _, _ = cached_index(eval_set.name, eval_set.corpus, engine, cache)
        questions = [q.question for q in eval_set.questions[:query_limit]]
        if system == "ours":
            with tempfile.TemporaryDirectory(prefix="peers-bench-", dir=cache) as tmp:
                fresh = Path(tmp) / "index"
                before = _cache_keys(index_dir / EMBEDDING_CACHE)
                t = time.perf_counter()
                engine.inner.build(eval_set.corpus, fresh, seed=index_dir)
                build_s = time.perf_counter() - t
                computed = len(_cache_keys(fresh / EMBEDDING_CACHE) - before)
            builds = [build_s]
            query_ms = _query_latency(engine.open(index_dir, k), questions)
        else:
            builds = [s for s, _ in backend.builds]
            computed = sum(n for _, n in backend.builds)
            build_s = builds[-1]
            query_ms = _query_latency(backend.open(index_dir, k), questions)
    result = summarize(system, run, build_s=build_s, builds=len(builds), computed=computed,
                       query_ms=query_ms, peak_rss_mb=_peak_rss_mb())
    result.notes.append(f"{run.questions} questions, {run.duration_s:.0f} s")
    return result.model_dump(mode="json")


def _warm_up(eval_set: Any, backend: Any, k: int, cache: Path) -> None:
    """One question through a throwaway run, so that loading the model, jieba's dictionary and
    lazy imports (paid once per process by every system) land in no measured call."""
    from agentic_rag.eval import run_eval

    run_eval(eval_set.model_copy(update={"questions": eval_set.questions[:1]}), backend, k=k, cache_dir=cache)


def _in_child(fn: Any, *args: Any) -> Any:
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(fn, *args).result()


# -- engine overhead: three no-op steps --------------------------------------------------------
def overhead(runs: int, rounds: int = 15) -> dict[str, dict[str, float]]:
    """Microseconds per run of a three-step no-op pipeline in each framework (median, min and
    max over ``rounds`` interleaved rounds of ``runs`` runs each, after a warm-up), and ours
    over each peer as the median of the per-round ratios."""
    pipelines = {"ours": _ours_noop(), "ours_guarded": _ours_noop(may_block=True),
                 "langgraph": _langgraph_noop(), "haystack": _haystack_noop()}
    for fn in pipelines.values():
        for _ in range(min(runs, 200)):
            fn("How long is the notice period?")
    per_run: dict[str, list[float]] = {name: [] for name in pipelines}
    for _ in range(rounds):
        for name, fn in pipelines.items():
            t = time.perf_counter()
            for _ in range(runs):
                fn("How long is the notice period?")
            per_run[name].append((time.perf_counter() - t) / runs * 1e6)
    out = {name: {"median_us": statistics.median(xs), "min_us": min(xs), "max_us": max(xs)}
           for name, xs in per_run.items()}
    # the load on a shared machine changes between rounds, so each round's ratio is the fair one
    for ours in ("ours", "ours_guarded"):
        for name in ("langgraph", "haystack"):
            out[ours][f"ratio_{name}"] = statistics.median(a / b for a, b in zip(per_run[ours], per_run[name]))
    return out


def _ours_noop(*, may_block: bool = False) -> Any:
    """The agent runtime (tracing, memory, gates, limits) over three agents that do nothing. The
    no-op Retriever says it cannot block (``may_block = False``), as it cannot, so its search runs
    in the calling thread, like a peer's no-op step; with ``may_block=True`` it is treated as a
    retriever that may hang (the engine's own, over a store or an embedding server): each search
    goes to a worker thread under the tool timeout, a hand-over the peers never pay."""
    from agentic_rag.runtime.loop import AgentRuntime
    from agentic_rag.types import Answer, Chunk, Evidence, RouteDecision

    chunk = Chunk(chunk_id="d:1:0", doc_id="d", ord=0, text="The notice period is 30 days.", title="Policy")
    evidence = [Evidence(chunk=chunk, score=1.0, rank=1)]

    class Router:
        def route(self, question: str) -> RouteDecision:
            return RouteDecision(question=question, query=question, language="en", confidence=1.0)

    class Retriever:
        def retrieve(self, route: RouteDecision, k: int) -> list[Evidence]:
            return evidence

    Retriever.may_block = may_block  # type: ignore[attr-defined]

    class Reasoner:
        def reason(self, question: str, route: RouteDecision, found: list[Evidence]) -> Answer:
            return Answer(question=question, text="", status="abstained", gaps=[question])

    runtime = AgentRuntime(router=Router(), retriever=Retriever(), reasoner=Reasoner())
    return runtime.run


def _langgraph_noop() -> Any:
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class State(TypedDict, total=False):
        question: str
        route: str
        evidence: list[str]
        answer: str

    g = StateGraph(State)
    g.add_node("route", lambda s: {"route": s["question"]})
    g.add_node("retrieve", lambda s: {"evidence": []})
    g.add_node("reason", lambda s: {"answer": ""})
    g.add_edge(START, "route")
    g.add_edge("route", "retrieve")
    g.add_edge("retrieve", "reason")
    g.add_edge("reason", END)
    graph = g.compile()
    return lambda q: graph.invoke({"question": q})


def _haystack_noop() -> Any:
    from haystack import Pipeline, component

    @component
    class Route:
        @component.output_types(route=str)
        def run(self, question: str) -> dict[str, Any]:
            return {"route": question}

    @component
    class Retrieve:
        @component.output_types(evidence=list[str])
        def run(self, route: str) -> dict[str, Any]:
            return {"evidence": []}

    @component
    class Reason:
        @component.output_types(answer=str)
        def run(self, evidence: list[str]) -> dict[str, Any]:
            return {"answer": ""}

    p = Pipeline()
    p.add_component("route", Route())
    p.add_component("retrieve", Retrieve())
    p.add_component("reason", Reason())
    p.connect("route.route", "retrieve.route")
    p.connect("retrieve.evidence", "reason.evidence")
    return lambda q: p.run({"route": {"question": q}})


# -- the report --------------------------------------------------------------------------------
def _set_section(name: str, results: list[Any]) -> list[str]:
    from agentic_rag.eval.peers import markdown_table

    ours = results[0]
    facts = [f"{r.name}: {r.notes[0] if r.notes else ''}; document vectors computed while building: "
             f"{'n/a (fresh engine ingest, cache-seeded)' if r.computed is None else r.computed}"
             + (f" ({r.builds} fresh indexes)" if r.builds > 1 else "") for r in results]
    if ours.computed is not None:
        facts[0] = facts[0].replace("n/a (fresh engine ingest, cache-seeded)", str(ours.computed))
    return [f"### {name}", "", markdown_table(results), "", *[f"- {f}" for f in facts], ""]


def _acceptance(per_set: dict[str, list[Any]], over: dict[str, dict[str, float]]) -> list[str]:
    from agentic_rag.eval.peers import compared_metrics, split

    lines = []
    for name, results in per_set.items():
        ours, peers = results[0], results[1:]

        def behind(metrics: list[str], ours: Any = ours, peers: list[Any] = peers) -> list[str]:
            return [f"{m} {ours.metrics.get(m, 0):.3f} < {p.name} {p.metrics[m]:.3f}"
                    + (f", questions ours ahead / {p.name} ahead {c[0]} / {c[1]}" if (c := split(ours, p, m)) else "")
                    for m in metrics for p in peers if m in p.metrics and ours.metrics.get(m, 0) < p.metrics[m]]

        # the target is retrieval; on the RGB sets the answer metrics (a peer's answer is its
        # first passage) are shown beside it, not counted in it
        shown = compared_metrics(results)
        retrieval = [m for m in shown if m.startswith(("all@", "recall@", "mrr@", "passage_accuracy"))]
        lost = behind(retrieval)
        lines.append(f"- {name}: retrieval ≥ every peer on every retrieval metric ({', '.join(retrieval)}): "
                     f"{'yes' if not lost else 'no (' + '; '.join(lost) + ')'}")
        if answer_lost := behind([m for m in shown if m not in retrieval and m != "rejection_rate"]):
            lines.append(f"  answer metrics behind a peer: {'; '.join(answer_lost)}")
        p50s = [p.retrieve_ms.get("p50") for p in peers if p.retrieve_ms.get("p50")]
        ours_p50 = ours.retrieve_ms.get("p50")
        if p50s and ours_p50:
            ratio = ours_p50 / min(p50s)
            lines.append(f"  retrieval p50 ours / fastest peer = {ratio:.2f} ({'within' if ratio <= 2 else 'over'} 2×)")
    if over:
        ratio = over["ours"]["ratio_haystack"]
        lines.append(f"- engine overhead ours / Haystack = {ratio:.2f}, median of the rounds' ratios "
                     f"({'met' if ratio <= 1 else 'not met'}: ≤ 1); ours / LangGraph = "
                     f"{over['ours']['ratio_langgraph']:.2f}; with a retriever that may block "
                     f"(each search in a worker thread under the tool timeout): ours / Haystack = "
                     f"{over['ours_guarded']['ratio_haystack']:.2f}, ours / LangGraph = "
                     f"{over['ours_guarded']['ratio_langgraph']:.2f}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", nargs="*", default=list(SETS), choices=SETS,
                    help="sets to compare (none: only the overhead comparison)")
    ap.add_argument("--limit", type=int, default=None, help="first N questions of each corpus set")
    ap.add_argument("--rgb-limit", type=int, default=None,
                    help="first N questions of rgb/zh_noise (default: all 150; 6 fresh indexes each, "
                         "for every system)")
    ap.add_argument("--query-limit", type=int, default=50, help="questions timed as full queries")
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--bench-dir", default=None)
    ap.add_argument("--cache-dir", default=None, help="index cache (default: arag eval's)")
    ap.add_argument("--overhead-runs", type=int, default=300, help="runs per round (15 rounds; 0: skip)")
    ap.add_argument("--out", type=Path, default=None, help="write the markdown report here")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from agentic_rag.errors import MissingExtraError
    from agentic_rag.eval.peers import SystemResult, require_peers
    from agentic_rag.eval.runner import default_cache_dir

    if args.sets:
        require_peers()
    # the overhead comparison needs only the two frameworks it drives
    missing = [m for m in ("langgraph", "haystack") if args.overhead_runs and importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtraError(f"{', '.join(missing)} (needed by the overhead comparison)", "peers")
    cache = str(args.cache_dir or default_cache_dir())
    per_set: dict[str, list[SystemResult]] = {}
    for name in args.sets:
        limit = args.rgb_limit if name.startswith("rgb/") else args.limit
        results = []
        for system in SYSTEMS:
            t = time.perf_counter()
            results.append(SystemResult(**_in_child(run_system, system, name, args.bench_dir, limit, args.k,
                                                    cache, args.query_limit)))
            print(f"{name} {system}: {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
        per_set[name] = results
    over = _in_child(overhead, args.overhead_runs) if args.overhead_runs else {}
    if args.json:
        print(json.dumps({"sets": {n: [r.model_dump(mode="json") for r in rs] for n, rs in per_set.items()},
                          "overhead": over}, indent=2))
        return
    lines = [f"Command: `python bench/peers.py {' '.join(sys.argv[1:])}`".rstrip(), ""]
    for name, results in per_set.items():
        lines += _set_section(name, results)
    if over:
        names = ("ours", "ours_guarded", "langgraph", "haystack")
        lines += ["### Engine overhead (three no-op steps, µs per run)", "",
                  "| | ours | ours, retriever that may block | LangGraph | Haystack |",
                  "|---|---:|---:|---:|---:|",
                  "| median | " + " | ".join(f"{over[n]['median_us']:.0f}" for n in names) + " |",
                  "| min–max of rounds | " + " | ".join(f"{over[n]['min_us']:.0f}–{over[n]['max_us']:.0f}"
                                                      for n in names) + " |", ""]
    lines += ["### Targets", "", *_acceptance(per_set, over), ""]
    text = "\n".join(lines)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
