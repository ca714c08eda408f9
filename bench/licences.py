"""Answers over public documents nobody on the project wrote: the free-software licences Debian
ships in ``/usr/share/common-licenses`` (hard-wrapped plain text with numbered sections).

    python bench/licences.py [--licences /usr/share/common-licenses] [--json]

Ingests GPL-3, LGPL-2.1, Apache-2.0, MPL-2.0, GFDL-1.3 and Artistic into a fresh index and asks
the questions of ``bench/data/licences.jsonl``, each with the words its answer must contain. A
question counts as answered right when the answer is not an abstention and one of its words is
in the answer's first 300 characters (what ``arag eval`` reads of an English answer); the
report lists each question's verdict and the start of its answer.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from agentic_rag import Engine, Settings

LICENCES = ("GPL-3", "LGPL-2.1", "Apache-2.0", "MPL-2.0", "GFDL-1.3", "Artistic")
#: what an English answer is read for, as in ``agentic_rag.eval.metrics.ANSWER_CAPS``
CAP = 300


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--licences", type=Path, default=Path("/usr/share/common-licenses"))
    ap.add_argument("--questions", type=Path, default=Path(__file__).parent / "data" / "licences.jsonl")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text("utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        for name in LICENCES:
            shutil.copy(args.licences / name, docs / f"{name}.txt")
        engine = Engine(Settings.load(index=Path(tmp) / "idx"))
        engine.ingest([docs])
        rows = []
        for q in questions:
            answer = engine.ask(q["question"])
            text = answer.text[:CAP].lower()
            right = answer.status == "answered" and any(a.lower() in text for a in q["answers"])
            rows.append({"id": q["id"], "right": right, "status": answer.status, "answer": answer.text[:160]})
        engine.close()
    score = sum(r["right"] for r in rows) / len(rows)
    if args.json:
        print(json.dumps({"questions": len(rows), "right": round(score, 3), "rows": rows}, ensure_ascii=False))
        return
    for r in rows:
        print(f"{'ok ' if r['right'] else 'no '} {r['id']}  {r['answer'][:100]}")
    print(f"right {sum(r['right'] for r in rows)} / {len(rows)} ({score:.3f})")


if __name__ == "__main__":
    main()
