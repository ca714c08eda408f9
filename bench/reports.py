"""compare-versions against a hand-made list of changes: precision and recall, time per report.

    python bench/reports.py [--changes bench/reports_changes.json] [--repeat 5] [--json]

Ingests the documents of every pair in ``reports_changes.json`` (the version pairs of
examples/ and examples/holdout/, and one written for the bench) into a fresh index (no
embedder: the comparison reads clauses, not vectors), runs ``compare-versions`` on each pair
and scores it against the list:

- **clauses**: every clause the report does not call unchanged is one detected item
  ``(status, old label, new label)``; every clause in the list is one expected item. An
  unchanged clause reported as changed is a false positive; a listed clause reported
  unchanged, or under another status or partner, a false negative.
- **values**: every old → new value of a reported clause (numbers, amounts, percentages,
  dates, durations; whole sentences added or dropped are not values) is one detected item; it
  matches a listed ``[old, new]`` of the same clause when the quantities each side states are
  the listed ones (so 三十日 matches 30日).

Time per report: the median of ``--repeat`` runs of each pair, after one warm-up run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentic_rag import Engine, Settings
from agentic_rag.reports import ReportRunner
from agentic_rag.text.quantities import extract_quantities, quantity_key

ROOT = Path(__file__).resolve().parent.parent
VALUE_KINDS = ("number", "date", "duration")


def keys(text: str) -> frozenset:
    found = frozenset(quantity_key(q) for q in extract_quantities(text))
    return found or frozenset({("text", "", text.strip().lower())})


class _Merged:
    """Two old clauses in one new one, as the report states it: one paired with the new clause,
    the other removed with ``merged_into`` naming it; their changes taken together."""

    def __init__(self) -> None:
        self.olds: set[str] = set()
        self.changes: list = []


def _label(c) -> str | None:
    return c.clause if c is not None else None


def detected_items(report) -> dict:
    """(status, old, new) -> the clause (or the merge) for every clause not unchanged."""
    targets = {c.merged_into.clause for c in report.clauses if c.merged_into is not None}
    merges: dict[str, _Merged] = {}
    out: dict = {}
    for c in report.clauses:
        into = c.merged_into.clause if c.merged_into is not None else (
            c.new.clause if c.new is not None and c.old is not None and c.new.clause in targets else None)
        if into is not None:
            m = merges.setdefault(into, _Merged())
            m.olds.add(c.old.clause)
            m.changes.extend(c.changes)
        elif c.status != "unchanged":
            out[(c.status, _label(c.old), _label(c.new))] = c
    for into, m in merges.items():
        out[("merged", frozenset(m.olds), into)] = m
    return out


def score(report, pair: dict) -> dict:
    expected = {(c["status"], frozenset(c["old"]) if isinstance(c["old"], list) else c["old"], c["new"]): c
                for c in pair["changes"]}
    detected = detected_items(report)
    clause_tp = len(set(expected) & set(detected))
    value_found, value_tp, value_expected, value_hit = 0, 0, 0, 0
    misses: list[str] = []
    for key, c in detected.items():
        want = expected.get(key, {}).get("values", []) if key in expected else []
        got = [(v.old, v.new) for v in c.changes if v.kind in VALUE_KINDS and not v.whole and v.old and v.new]
        value_found += len(got)
        value_tp += sum(1 for o, n in got if any(keys(a) <= keys(o) and keys(b) <= keys(n) for a, b in want))
    for key, c in expected.items():
        value_expected += len(c["values"])
        got = [(v.old, v.new) for v in detected[key].changes if v.kind in VALUE_KINDS and not v.whole] \
            if key in detected else []
        for a, b in c["values"]:
            if any(keys(a) <= keys(o) and keys(b) <= keys(n) for o, n in got):
                value_hit += 1
            else:
                misses.append(f"{_show(key[1])}→{key[2]}: {a} → {b}")
    return {"clauses_expected": len(expected), "clauses_detected": len(detected), "clauses_tp": clause_tp,
            "values_expected": value_expected, "values_detected": value_found, "values_tp": value_tp,
            "values_hit": value_hit,
            "missed_clauses": sorted(f"{s} {_show(o)}→{n}" for s, o, n in set(expected) - set(detected)),
            "extra_clauses": sorted(f"{s} {_show(o)}→{n}" for s, o, n in set(detected) - set(expected)),
            "missed_values": misses}


def _show(label) -> str:
    return "+".join(sorted(label)) if isinstance(label, frozenset) else str(label)


def ratio(a: int, b: int) -> float:
    return round(a / b, 3) if b else 1.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--changes", type=Path, default=Path(__file__).with_name("reports_changes.json"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    pairs = json.loads(args.changes.read_text("utf-8"))["pairs"]
    files = sorted({ROOT / p[side] for p in pairs for side in ("old", "new")})
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load(None, index=Path(tmp) / "idx", embedder={"provider": "none"}, llm={"provider": "none"})
        with Engine(settings) as engine:
            engine.ingest(files)
            by_source = {Path(d.source).resolve(): d.doc_id for d in engine.store.documents()}
            runner = ReportRunner(engine)
            rows = []
            for pair in pairs:
                inputs = {"old": by_source[(ROOT / pair["old"]).resolve()],
                          "new": by_source[(ROOT / pair["new"]).resolve()]}
                report = runner.run("compare-versions", inputs)  # warm-up
                times = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    report = runner.run("compare-versions", inputs)
                    times.append((time.perf_counter() - t0) * 1000)
                row = {"pair": pair["name"], "ms": round(statistics.median(times), 1), "status": report.status,
                       **score(report, pair)}
                rows.append(row)
    total = {k: sum(r[k] for r in rows) for k in ("clauses_expected", "clauses_detected", "clauses_tp",
                                                  "values_expected", "values_detected", "values_tp", "values_hit")}
    summary = {"clause_precision": ratio(total["clauses_tp"], total["clauses_detected"]),
               "clause_recall": ratio(total["clauses_tp"], total["clauses_expected"]),
               "value_precision": ratio(total["values_tp"], total["values_detected"]),
               "value_recall": ratio(total["values_hit"], total["values_expected"]),
               "ms_median": round(statistics.median(r["ms"] for r in rows), 1), **total}
    if args.json:
        json.dump({"pairs": rows, "total": summary}, sys.stdout, ensure_ascii=False, indent=2)
        print()
        return
    print("| pair | clauses P | clauses R | values P | values R | ms/report |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['pair']} | {ratio(r['clauses_tp'], r['clauses_detected']):.2f} | "
              f"{ratio(r['clauses_tp'], r['clauses_expected']):.2f} | {ratio(r['values_tp'], r['values_detected']):.2f} | "
              f"{ratio(r['values_hit'], r['values_expected']):.2f} | {r['ms']:.0f} |")
    print(f"| **all** | {summary['clause_precision']:.2f} | {summary['clause_recall']:.2f} | "
          f"{summary['value_precision']:.2f} | {summary['value_recall']:.2f} | {summary['ms_median']:.0f} (median) |")
    for r in rows:
        for what in ("missed_clauses", "extra_clauses", "missed_values"):
            if r[what]:
                print(f"{r['pair']}: {what.replace('_', ' ')}: {'; '.join(r[what])}")


if __name__ == "__main__":
    main()
