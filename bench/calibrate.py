"""The abstention curve: false rejection vs missed abstention for every threshold on the evidence score.

    python bench/calibrate.py RUN_DIR [RUN_DIR ...] [--step 0.02] [--json]

Reads the ``details.jsonl`` of ``arag eval`` run folders (each row carries the Reasoner's
``evidence_score``: the score of its best answer sentence, 0 when nothing could answer) and
pools them: an answerable question (``examples``, the public dev sets, ``rgb/zh_noise`` at noise
0–0.8) is a positive, an unanswerable one (the examples' out-of-scope questions, ``rgb/zh_noise``
at noise 1.0) a negative. For each threshold t, a positive scoring below t is a false rejection
and a negative scoring t or more a missed abstention. Each set weighs the same (rates are
averaged over sets, so 900 RGB variants do not drown 50 HotpotQA questions); the suggested
threshold minimises mean false rejection + mean missed abstention, ties to the lower one.

Typical pool (run each with the current code, then pass the run folders)::

    arag eval examples --out runs; arag eval hotpotqa --out runs; arag eval musique --out runs
    arag eval rgb/en_fact --out runs; arag eval rgb/zh_noise --out runs
    python bench/calibrate.py runs/*
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def load(run: Path) -> tuple[str, list[tuple[float, bool]]]:
    """(set name, [(evidence score, answerable)]) of one run folder."""
    meta = json.loads((run / "results.json").read_text("utf-8")) if (run / "results.json").exists() else {}
    name = str(meta.get("set") or run.name.rsplit("-", 2)[0])
    folder = Path(meta.get("questions_file") or "").parent.name
    if folder and folder != name:  # another questions file for the set (examples/holdout)
        name += f" ({folder})"
    points: list[tuple[float, bool]] = []
    for line in (run / "details.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        verdicts = row.get("verdicts") or {}
        if row.get("evidence_score") is None:
            continue
        if "rejection_rate" in verdicts:
            points.append((float(row["evidence_score"]), False))
        elif "false_rejection_rate" in verdicts:
            points.append((float(row["evidence_score"]), True))
    return name, points


def curve(sets: dict[str, list[tuple[float, bool]]], step: float) -> list[dict[str, float]]:
    """One row per threshold: mean false rejection over sets with positives, mean missed
    abstention over sets with negatives, and each set's own rate."""
    top = max((s for pts in sets.values() for s, _ in pts), default=1.0)
    rows = []
    t = 0.0
    while t <= top + step:
        row: dict[str, float] = {"threshold": round(t, 4)}
        fr, ma = [], []
        for name, pts in sets.items():
            pos = [s for s, ok in pts if ok]
            neg = [s for s, ok in pts if not ok]
            if pos:
                row[f"{name} FR"] = sum(s < t for s in pos) / len(pos)
                fr.append(row[f"{name} FR"])
            if neg:
                row[f"{name} MA"] = sum(s >= t for s in neg) / len(neg)
                ma.append(row[f"{name} MA"])
        row["false_rejection"] = sum(fr) / len(fr) if fr else 0.0
        row["missed_abstention"] = sum(ma) / len(ma) if ma else 0.0
        rows.append(row)
        t += step
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="arag eval run folders")
    ap.add_argument("--step", type=float, default=0.02)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sets: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for run in args.runs:
        if not (run / "details.jsonl").exists():
            raise SystemExit(f"{run}: not an arag eval run folder (no details.jsonl)")
        name, points = load(run)
        sets[name].extend(points)
    if not any(sets.values()):
        raise SystemExit("no row carries an evidence_score: run the evals with the current code")
    rows = curve(dict(sets), args.step)
    best = min(rows, key=lambda r: (r["false_rejection"] + r["missed_abstention"], r["threshold"]))
    if args.json:
        print(json.dumps({"sets": {k: len(v) for k, v in sets.items()}, "suggested": best["threshold"],
                          "curve": rows}, indent=1))
        return
    cols = [c for c in rows[0] if c not in ("threshold", "false_rejection", "missed_abstention")]
    print("| threshold | false rejection | missed abstention | " + " | ".join(cols) + " |")
    print("|---" * (3 + len(cols)) + "|")
    for r in rows:
        mark = " ←" if r is best else ""
        print(f"| {r['threshold']:.2f}{mark} | {r['false_rejection']:.3f} | {r['missed_abstention']:.3f} | "
              + " | ".join(f"{r.get(c, 0.0):.2f}" for c in cols) + " |")
    print(f"\nsuggested threshold (least mean false rejection + missed abstention): {best['threshold']:.2f}")


if __name__ == "__main__":
    main()
