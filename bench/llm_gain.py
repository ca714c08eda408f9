"""The gain curve: how the LLM path scores as the model gets better, without a large model.

    python bench/llm_gain.py SET [--limit N] [--p 0,0.5,0.8,1] [--seed 0] [--mode pipeline] [--json]

SET is any `arag eval` set (examples, hotpotqa, rgb/zh_noise, ...). Each run answers the same
questions with the deterministic agents alone and then with an :class:`Oracle` of quality p: a
test model that knows the gold answers of the set and answers each gate and the answer writer
*correctly* with probability p and otherwise with plausible wrong output (the opposite verdict,
an off-target search plan, a grounded sentence from a passage that does not hold the answer, a
flag on a correct sentence). Reported per p: accuracy, abstention (false rejection on answerable
questions, rejection on unanswerable ones) and LLM calls per question. At p = 1 the LLM path
should beat the rules; at p = 0 it should not fall below them: that is what the fallbacks and
the cross-checks against the rules are for.

The oracle lives here, in bench/, and nowhere in the product: no provider name reaches it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

from agentic_rag.agents.sufficiency import key_terms
from agentic_rag.config import Settings
from agentic_rag.eval import EngineBackend, load_set, run_eval
from agentic_rag.eval.metrics import contains_alias
from agentic_rag.models.llm import ScriptedLLM, schema_title

Messages = list[dict[str, str]]
_SENT = re.compile(r"[^。！？!?；;]+[。！？!?；;]?|[^.]+\.?")


def _user(messages: Messages) -> str:
    return next((m["content"] for m in messages if m["role"] == "user"), "")


def _field(text: str, name: str) -> str:
    m = re.search(rf"^{name}:\s*(.*?)(?=^\w[\w ]*:|\Z)", text, re.S | re.M)
    return m.group(1).strip() if m else ""


def _passages(block: str) -> list[tuple[str, str]]:
    """(id, text) of each ``  [id] clause: text`` line of a rendered evidence block."""
    out = []
    for line in block.splitlines():
        m = re.match(r"\s+\[([^\]]+)\]\s*(.*)", line)
        if m:
            out.append((m.group(1), m.group(2).strip("…")))
    return out


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.findall(text) if len(s.strip()) >= 4]


class Oracle:
    """A scripted model of quality ``p`` for the questions of one eval set (see the module
    docstring). Each decision draws its own coin from (seed, question, prompt, n), so runs are
    reproducible and the p = 0.5 run is not the p = 0.8 run with fewer right answers."""

    def __init__(self, gold: dict[str, tuple[list[list[str]], str]], p: float, seed: int = 0) -> None:
        self.gold = gold  # question -> (parts: each a list of aliases, lang)
        self.p = p
        self.seed = seed
        self.draws = {"right": 0, "wrong": 0}
        self._n: dict[tuple[str, str], int] = {}

    def _right(self, question: str, title: str) -> bool:
        n = self._n.get((question, title), 0)
        self._n[(question, title)] = n + 1
        h = hashlib.sha256(f"{self.seed}|{question}|{title}|{n}".encode()).digest()
        right = random.Random(h).random() < self.p
        self.draws["right" if right else "wrong"] += 1
        return right

    def _has(self, question: str, text: str) -> bool:
        parts, lang = self.gold.get(question, ([], "en"))
        return bool(parts) and all(contains_alias(text, aliases, lang) for aliases in parts)

    def _holding(self, question: str, passages: list[tuple[str, str]]) -> tuple[list, list]:
        """(passages holding an answer part, the others)."""
        parts, lang = self.gold.get(question, ([], "en"))
        hold = [(i, t) for i, t in passages if any(contains_alias(t, a, lang) for a in parts)]
        return hold, [(i, t) for i, t in passages if (i, t) not in hold]

    def _answer_sentence(self, question: str, text: str) -> str:
        parts, lang = self.gold.get(question, ([], "en"))
        for s in _sentences(text):
            if any(contains_alias(s, a, lang) for a in parts):
                return s
        return text[:160]

    def __call__(self, messages: Messages) -> Any:
        title = schema_title(messages)
        user = _user(messages)
        question = _field(user, "question") or user.strip()
        parts, _lang = self.gold.get(question, ([], "en"))
        right = self._right(question, title) if title else True
        terms = key_terms(question)
        if title == "RetrieveDecision":
            return {"decision": "RETRIEVE" if right else "NO_RETRIEVE"}
        if title == "RetrievalPlan":
            if right and parts:
                return {"queries": [" ".join([*terms[:4], parts[0][0]])[:80]]}
            return {"queries": [" ".join(reversed(terms[-2:])) or "overview"]}
        if title == "SufficiencyJudgement":
            has = self._has(question, _field(user, "results"))
            verdict = has if right else not has
            shown = _field(user, "results").lower()
            # a model that knows the answer knows what the sources lack: a term they do not
            # show, else the answer itself (what a strong model would describe in words)
            missing = next((t for t in terms if t not in shown), parts[0][0] if parts else question[:20])
            if not right:
                missing = terms[-1] if terms else "details"
            return {"coverage": 5 if verdict else 2, "timeliness": 4, "authority": 4,
                    "verdict": "SUFFICIENT" if verdict else "INSUFFICIENT",
                    "missing": "" if verdict else missing}
        if title == "Verification":
            answer = _field(user, "answer")
            n = len(re.findall(r"^\d+\.", answer, re.M)) or 1
            hold, other = self._holding(question, _passages(_field(user, "passages")))
            if right:
                if self._has(question, answer) or not hold:
                    return {"unsupported": []}
                cid, text = hold[0]
                return {"unsupported": [1], "fixes": [{"index": 1, "rewritten": self._answer_sentence(question, text),
                                                       "evidence_ids": [cid]}],
                        "correction_reason": "the answer misses what the passage says"}
            fixes = ([{"index": 1, "rewritten": _sentences(other[0][1])[0] if _sentences(other[0][1]) else other[0][1],
                       "evidence_ids": [other[0][0]]}] if other else [])
            return {"unsupported": list(range(1, n + 1)), "fixes": fixes, "correction_reason": "not supported"}
        if title == "AnswerDraft":
            hold, other = self._holding(question, _passages(_field(user, "passages")))
            if right and not hold:  # nothing here answers: a good writer declines
                return "The passages do not answer the question."
            pick = hold if right else (other or hold)
            if not pick:
                return "no passages"
            cid, text = pick[0]
            sentence = self._answer_sentence(question, text) if right else (_sentences(text) or [text])[0]
            return {"sentences": [{"text": sentence[:200], "citations": [cid]}]}
        if title == "AgentStep":
            seen = _field(user, "recent observations") + _field(user, "confirmed facts")
            if right and parts and not self._has(question, seen):
                return {"thought": "search", "tool_calls": [{"tool": "semantic_search", "args": {
                    "query": " ".join([*terms[:4], parts[0][0]])[:80]}}]}
            return {"thought": "done", "final": True, "confidence": 0.9 if right else 0.3}
        if title == "RouterOutput":
            return {"intent": ["general"], "query": question[:60], "confidence": 0.5}
        if title == "PlanOutput":
            return {"steps": [question[:200]]}
        if title == "PlanCheck":
            return {"keep": True}
        if title == "StandaloneQuestion":
            return {"question": question[:300]}
        if title == "ConversationSummary":
            return {"summary": question[:200]}
        return "I do not know."


class OracleBackend(EngineBackend):
    """The eval's engine with ``llm`` plugged in (the product's providers never see it)."""

    def __init__(self, settings: Settings, llm: Any) -> None:
        super().__init__(settings)
        self.llm = llm

    def open(self, index_dir: Path, k: int) -> Any:
        system = super().open(index_dir, k)
        system.engine._llm = self.llm  # the Engine's own seam for a ready LLM
        return system


def run(set_name: str, *, limit: int | None, ps: list[float], seed: int, mode: str,
        bench_dir: Path | None) -> list[dict[str, Any]]:
    eval_set = load_set(set_name, bench_dir=bench_dir, limit=limit)
    gold = {q.question: (q.parts or ([q.answers] if q.answers else []), q.lang)
            for q in eval_set.questions if q.answerable}
    settings = Settings.load(None, runtime={"mode": mode})
    rows = []
    for p in [None, *ps]:
        if p is None:
            backend: EngineBackend = EngineBackend(settings)
        else:
            oracle = Oracle(gold, p, seed)
            backend = OracleBackend(settings, ScriptedLLM(oracle, name=f"oracle-p{p}"))
        result = run_eval(eval_set, backend)
        m = result.summary()["metrics"]
        rows.append({"p": "rules" if p is None else p, "accuracy": m.get("accuracy"),
                     "false_rejection": m.get("false_rejection_rate"), "rejection": m.get("rejection_rate"),
                     "llm_calls_per_q": m.get("llm_calls"), "tokens_per_q": m.get("tokens"),
                     "questions": result.summary()["questions"]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("set")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--p", default="0,0.5,0.8,1", help="comma-separated model qualities")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mode", choices=["pipeline", "react", "plan"], default="pipeline")
    ap.add_argument("--bench-dir", type=Path, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    try:
        ps = [float(x) for x in args.p.split(",") if x.strip()]
    except ValueError:
        sys.exit(f"error: --p must be comma-separated numbers, got {args.p!r}")
    rows = run(args.set, limit=args.limit, ps=ps, seed=args.seed, mode=args.mode, bench_dir=args.bench_dir)
    if args.json:
        print(json.dumps(rows, indent=2))
        return

    def f(x: Any) -> str:
        return "-" if x is None else f"{x:.3f}"

    print(f"{args.set} ({rows[0]['questions']} questions, mode {args.mode})")
    print(f"{'p':>6} {'accuracy':>9} {'false_rej':>9} {'rejection':>9} {'llm/q':>7} {'tokens/q':>9}")
    for r in rows:
        print(f"{r['p']!s:>6} {f(r['accuracy']):>9} {f(r['false_rejection']):>9} {f(r['rejection']):>9} "
              f"{f(r['llm_calls_per_q']):>7} {r['tokens_per_q'] or 0:>9.0f}")


if __name__ == "__main__":
    main()
