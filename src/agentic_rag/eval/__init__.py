"""``arag eval``: the benchmark harness (datasets, metrics, the BM25 floor, runner, reports).

    >>> from agentic_rag.eval import load_set, run_eval, EngineBackend   # doctest: +SKIP
    >>> run = run_eval(load_set("hotpotqa"), EngineBackend(), k=8)       # doctest: +SKIP
    >>> run.metrics["all@8"], run.baseline["all@8"]                       # doctest: +SKIP
"""

from agentic_rag.eval.compare import RunDiff, compare_runs
from agentic_rag.eval.datasets import SETS, EvalQuestion, EvalSet, find_bench_dir, load_set
from agentic_rag.eval.runner import Backend, EngineBackend, EvalRun, QuestionResult, System, run_eval

__all__ = ["SETS", "Backend", "EngineBackend", "EvalQuestion", "EvalRun", "EvalSet", "QuestionResult",
           "RunDiff", "System", "compare_runs", "find_bench_dir", "load_set", "run_eval"]
