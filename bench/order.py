"""How often the deterministic answer changes when the same evidence comes in another order.

    python bench/order.py [--docs examples/docs] [--questions examples/questions.jsonl]
                          [--shuffles 4] [--json]

Builds a fresh index of the documents, retrieves each question's evidence once, and asks the
Reasoner again with that evidence shuffled (seeded, ``--shuffles`` times). It reports the
questions whose answer (status and first sentence) changes under any shuffle.

The retrieval rank is one of the evidence signals, so some change is expected where two
sentences score alike. A change is still a weakness: an LLM-planned extra round can return the
same passages in another order, and then the same evidence gives another answer. Run it on the
examples and on the holdout (`--docs examples/holdout/docs --questions
examples/holdout/questions.jsonl`).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path

from agentic_rag import Engine, Settings


def lead(answer) -> tuple[str, str]:
    """What a reader sees first: the status and the first sentence without its citations."""
    first = answer.sentences[0].text if answer.sentences else answer.text
    return answer.status, first.split("[")[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, default=Path("examples/docs"))
    ap.add_argument("--questions", type=Path, default=Path("examples/questions.jsonl"))
    ap.add_argument("--shuffles", type=int, default=4)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    questions = [json.loads(line)["question"]
                 for line in args.questions.read_text("utf-8").splitlines() if line.strip()]
    changed: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine(Settings.load(index=Path(tmp) / "idx"))
        engine.ingest([args.docs])
        for q in questions:
            route, evidence = engine.retrieve(q)
            base = lead(engine.reasoner.reason(q, route, evidence))
            others = set()
            for seed in range(args.shuffles):
                shuffled = list(evidence)
                random.Random(seed).shuffle(shuffled)
                others.add(lead(engine.reasoner.reason(q, route, shuffled)))
            if others - {base}:
                changed.append({"question": q, "answer": base[1][:80],
                                "other answers": sorted(o[1][:80] for o in others - {base})})
    summary = {"questions": len(questions), "changed": len(changed), "shuffles": args.shuffles}
    if args.json:
        print(json.dumps({**summary, "details": changed}, ensure_ascii=False, indent=1))
        return
    for c in changed:
        print(f"{c['question']}\n  {c['answer']}\n  " + "\n  ".join(f"-> {o}" for o in c["other answers"]))
    print(f"{summary['changed']} of {summary['questions']} questions change their answer under "
          f"{summary['shuffles']} shuffles of the same evidence")


if __name__ == "__main__":
    main()
