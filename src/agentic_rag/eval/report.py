"""What an ``arag eval`` run leaves behind: a terminal table, and a run folder

``eval-runs/<set>-<timestamp>/`` with ``results.json`` (the summary plus run facts),
``details.jsonl`` (one line per scored question), ``report.md`` and ``chart.png`` (the metrics
beside the BM25 floor). :func:`load_run` reads a folder back (for ``arag eval compare``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

from rich.table import Table

from agentic_rag.errors import EvalError
from agentic_rag.eval.runner import PROCESS, EvalRun, QuestionResult

#: metrics where smaller is better (the delta's colour flips)
LOWER_IS_BETTER = {"false_rejection_rate", "repeated_query_rate", "rounds", "tool_calls", "llm_calls",
                   "tokens"}


_GROUPS = ("all@", "recall@", "mrr@", "passage_accuracy", "accuracy", "facts_present", "rejection_rate", "false_rejection_rate",
           "gold_cited", "conflict_detected", "conflict_true_won", "conflict_not_fake", "cited_sentences", "citation_precision")


def metric_rank(name: str) -> tuple[int, float, str]:
    """Sort key: the metric's group in :data:`_GROUPS`, then its cutoff or ratio (``@0.4``)."""
    group = next((i for i, g in enumerate(_GROUPS) if name.startswith(g)), len(_GROUPS))
    num = re.search(r"[@](\d+(?:\.\d+)?)$", name)
    return group, float(num.group(1)) if num else -1.0, name


def ordered_metrics(run: EvalRun) -> list[str]:
    """Retrieval, answers, abstention, conflicts, citations; then the process metrics."""
    quality = {m for m in [*run.metrics, *run.baseline] if m not in PROCESS}
    return sorted(quality, key=metric_rank) + [m for m in PROCESS if m in run.metrics]


def _fmt(v: float | None, name: str = "") -> str:
    if v is None:
        return "—"
    if name == "ms":
        return f"{v:.1f}"
    if name in ("tokens", "rounds", "tool_calls", "llm_calls"):
        return f"{v:.2f}" if v != int(v) else f"{int(v)}"
    return f"{v:.3f}"


def delta(run: EvalRun, name: str) -> float | None:
    a, b = run.metrics.get(name), run.baseline.get(name)
    return None if a is None or b is None else round(a - b, 4)


def table(run: EvalRun) -> Table:
    """The terminal table: metric, ours, BM25, delta; latency last."""
    t = Table(title=f"{run.set} · {run.questions} questions · k={run.k}", title_justify="left")
    t.add_column("metric")
    t.add_column("ours", justify="right")
    t.add_column("BM25", justify="right")
    t.add_column("Δ", justify="right")
    for name in ordered_metrics(run):
        d = delta(run, name)
        if d is None:
            ds = "—"
        else:
            good = d < 0 if name in LOWER_IS_BETTER else d > 0
            color = "green" if good and d else ("red" if d else "")
            ds = f"[{color}]{d:+.3f}[/{color}]" if color else f"{d:+.3f}"
        t.add_row(name, _fmt(run.metrics.get(name), name), _fmt(run.baseline.get(name), name), ds)
    for p in ("p50", "p95"):
        t.add_row(f"latency {p} (ms)", _fmt(run.latency_ms.get(p), "ms"),
                  _fmt(run.baseline_latency_ms.get(p), "ms"), "")
    return t


def markdown(run: EvalRun) -> str:
    lines = [f"# `arag eval {run.set}`", "",
             f"- questions: {run.questions} ({run.questions_file})",
             f"- k: {run.k}; started {run.started}; took {run.duration_s:.1f} s",
             f"- index: {run.index.get('path', 'one fresh index per question')}"
             + (" from a passage pool" if run.index.get("pool") else "")
             + (f" (built in {run.index['build_s']:.1f} s)" if run.index.get("built") else
                " (cached)" if run.index else ""),
             "", "| metric | ours | BM25 | Δ |", "|---|---:|---:|---:|"]
    for name in ordered_metrics(run):
        d = delta(run, name)
        lines.append(f"| {name} | {_fmt(run.metrics.get(name), name)} | {_fmt(run.baseline.get(name), name)} "
                     f"| {'—' if d is None else f'{d:+.3f}'} |")
    for p in ("p50", "p95"):
        lines.append(f"| latency {p} (ms) | {_fmt(run.latency_ms.get(p), 'ms')} | "
                     f"{_fmt(run.baseline_latency_ms.get(p), 'ms')} | |")
    for name, d in run.latency_detail.items():
        lines.append(f"| {name} p50 / p95 (ms) | {_fmt(d.get('p50'), 'ms')} / {_fmt(d.get('p95'), 'ms')} | | |")
    lines += ["", "BM25 = Okapi BM25 (bm25s) over the benchmark's units at the same k; its answer is the top "
              "unit's text, capped like ours. Averages are over the questions a metric applies to. "
              "Latency is the answer (ask) when answers are scored, else the retrieval.", ""]
    if run.notes:
        lines += ["## Notes", "", *[f"- {n}" for n in run.notes], ""]
    errors = [r for r in run.rows if r.error]
    if errors:
        lines += ["## Errors", "", *[f"- `{r.key}`: {r.error}" for r in errors[:50]], ""]
    lines += ["![metrics vs BM25](chart.png)", ""]
    return "\n".join(lines)


def chart(run: EvalRun, path: Path) -> Path | None:
    """A bar chart of the 0..1 metrics, ours beside BM25 (None when matplotlib is missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only; never a window
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    names = [n for n in ordered_metrics(run) if n not in PROCESS or n == "repeated_query_rate"]
    names = [n for n in names if all(0 <= (v if v is not None else 0) <= 1
                                     for v in (run.metrics.get(n), run.baseline.get(n)))]
    if not names:
        return None
    fig, ax = plt.subplots(figsize=(max(6.0, 0.8 * len(names) + 2), 4))
    xs = range(len(names))
    w = 0.4
    ax.bar([x - w / 2 for x in xs], [run.metrics.get(n) or 0 for n in names], w, label="ours")
    ax.bar([x + w / 2 for x in xs], [run.baseline.get(n) or 0 for n in names], w, label="BM25")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_title(f"{run.set} (n={run.questions}, k={run.k})")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_run(run: EvalRun, out_dir: Path) -> Path:
    """Write the run folder under ``out_dir`` and return it."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    base = out_dir / f"{run.set.replace('/', '_')}-{stamp}"
    folder, n = base, 1
    while folder.exists() and n < 1000:  # two runs within a second get distinct folders
        n += 1
        folder = base.with_name(f"{base.name}-{n}")
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(
        json.dumps({**run.summary(), **run.model_dump(mode="json", exclude={"set", "questions", "k", "metrics",
                                                                             "baseline", "latency_ms"})},
                   ensure_ascii=False, indent=2), encoding="utf-8")
    with (folder / "details.jsonl").open("w", encoding="utf-8") as fh:
        for r in run.rows:
            fh.write(r.model_dump_json() + "\n")
    chart(run, folder / "chart.png")
    (folder / "report.md").write_text(markdown(run), encoding="utf-8")
    return folder


def load_run(folder: str | Path) -> tuple[dict[str, Any], list[QuestionResult]]:
    """A run folder's summary and its per-question rows."""
    folder = Path(folder)
    results, details = folder / "results.json", folder / "details.jsonl"
    if not results.is_file() or not details.is_file():
        raise EvalError(f"{folder}: not an eval run folder (needs results.json and details.jsonl)")
    try:
        summary = json.loads(results.read_text(encoding="utf-8"))
        rows = [QuestionResult.model_validate_json(line)
                for line in details.read_text(encoding="utf-8").splitlines() if line.strip()]
    except ValueError as exc:
        raise EvalError(f"{folder}: unreadable run files: {exc}") from exc
    return summary, rows
