"""``arag eval compare RUN_A RUN_B``: what changed between two runs, question by question.

Questions are matched by id (and noise variant). A question is listed when any verdict, the
answer status, or the retrieved units differ; the summary metrics are compared side by side.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentic_rag.errors import EvalError
from agentic_rag.eval.report import load_run, metric_rank
from agentic_rag.eval.runner import PROCESS


class QuestionDiff(BaseModel):
    key: str
    question: str
    changes: dict[str, list[Any]] = Field(default_factory=dict)  # name -> [a, b]


class RunDiff(BaseModel):
    a: str
    b: str
    set: str
    metrics: dict[str, list[float | None]]  # name -> [a, b]
    questions: list[QuestionDiff]
    only_a: list[str] = Field(default_factory=list)
    only_b: list[str] = Field(default_factory=list)
    same: int = 0


def compare_runs(a: str | Path, b: str | Path) -> RunDiff:
    """Differences between two run folders of the same set."""
    sa, ra = load_run(a)
    sb, rb = load_run(b)
    if sa.get("set") != sb.get("set"):
        raise EvalError(f"runs are of different sets: {sa.get('set')} ({a}) vs {sb.get('set')} ({b})")
    ma, mb = sa.get("metrics", {}), sb.get("metrics", {})
    names = sorted({*ma, *mb}, key=lambda n: (n in PROCESS, *metric_rank(n)))
    metrics = {n: [ma.get(n), mb.get(n)] for n in names}
    for p in ("p50", "p95"):
        metrics[f"latency_{p}_ms"] = [sa.get("latency_ms", {}).get(p), sb.get("latency_ms", {}).get(p)]
    by_a = {r.key: r for r in ra}
    by_b = {r.key: r for r in rb}
    diffs: list[QuestionDiff] = []
    same = 0
    for key, x in by_a.items():
        y = by_b.get(key)
        if y is None:
            continue
        changes: dict[str, list[Any]] = {}
        for name in sorted({*x.verdicts, *y.verdicts}):
            va, vb = x.verdicts.get(name), y.verdicts.get(name)
            if va != vb:
                changes[name] = [va, vb]
        if x.status != y.status:
            changes["status"] = [x.status, y.status]
        if x.retrieved[:5] != y.retrieved[:5]:  # reordering deep in the tail is noise
            changes["retrieved"] = [x.retrieved[:5], y.retrieved[:5]]
        if (x.error or None) != (y.error or None):
            changes["error"] = [x.error, y.error]
        if changes:
            diffs.append(QuestionDiff(key=key, question=x.question, changes=changes))
        else:
            same += 1
    return RunDiff(a=str(a), b=str(b), set=str(sa.get("set")), metrics=metrics, questions=diffs,
                   only_a=[k for k in by_a if k not in by_b], only_b=[k for k in by_b if k not in by_a],
                   same=same)


def diff_tables(diff: RunDiff, limit: int = 200) -> list[Any]:
    """Rich tables for the terminal: the metrics side by side, then the changed questions."""
    from rich.markup import escape
    from rich.table import Table

    m = Table(title=f"{diff.set}: {Path(diff.a).name} → {Path(diff.b).name}", title_justify="left")
    for col, just in (("metric", "left"), ("A", "right"), ("B", "right"), ("Δ", "right")):
        m.add_column(col, justify=just)  # type: ignore[arg-type]
    for name, (va, vb) in diff.metrics.items():
        d = "—" if va is None or vb is None else f"{vb - va:+.3f}"
        m.add_row(name, "—" if va is None else f"{va:.3f}", "—" if vb is None else f"{vb:.3f}", d)
    q = Table(title=f"{len(diff.questions)} questions changed, {diff.same} unchanged", title_justify="left")
    q.add_column("question")
    q.add_column("change")
    q.add_column("A")
    q.add_column("B")
    for d in diff.questions[:limit]:
        for i, (name, (va, vb)) in enumerate(d.changes.items()):
            q.add_row(escape(f"{d.key} {d.question[:40]}") if i == 0 else "", name,
                      escape(_short(va)), escape(_short(vb)))
    return [m, q]


def _short(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    text = "—" if v is None else str(v)
    return text if len(text) <= 60 else text[:59] + "…"
