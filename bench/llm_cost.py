"""LLM cost per question: the runtime's ``pipeline`` mode vs a naive Self-RAG loop.

    python bench/llm_cost.py [--examples examples] [--llm scripted|local] [--limit N] [--json]

The naive loop (implemented here only, as a baseline) is the common tutorial Self-RAG graph:
retrieve k chunks, grade *every* chunk with the LLM, rewrite the query and retrieve again when
none is relevant, generate, grade the generation for grounding and for usefulness, up to 3 rounds.
The pipeline asks the LLM only at the gates (retrieve-or-not when the question has no anchor,
planning, one sufficiency judgement per round, one verification), so it should cost at most half.

Both loops use the same model: ``scripted`` (default; a deterministic judge that knows the gold
answers, so it judges sufficiency and relevance the way a good model would and the counts are
reproducible) or ``local`` (SmolLM2 via llama-cpp-python; slow on CPU, use ``--limit``). Tokens are the provider's counts when it reports
them and estimates otherwise, identical for both loops.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from agentic_rag import Engine, Settings
from agentic_rag.agents.sufficiency import key_terms
from agentic_rag.models.llm import LLM, LLMFallback, MeteredLLM, ScriptedLLM, structured
from agentic_rag.runtime import AgentRuntime, Session
from agentic_rag.types import Evidence


# ------------------------------------------------------------------ naive Self-RAG (baseline)

class Grade(BaseModel):
    relevant: bool


class Grounded(BaseModel):
    grounded: bool


class Useful(BaseModel):
    useful: bool


class Rewrite(BaseModel):
    query: str


# The prompts of the well-known LangGraph Self-RAG tutorial (graders, rewriter, RAG prompt).
GRADE = ("You are a grader assessing relevance of a retrieved document to a user question. If the document "
         "contains keyword(s) or semantic meaning related to the user question, grade it as relevant. It does "
         "not need to be a stringent test. The goal is to filter out erroneous retrievals. Give a binary "
         "score to indicate whether the document is relevant to the question.")
GROUNDED = ("You are a grader assessing whether an LLM generation is grounded in / supported by a set of "
            "retrieved facts. Give a binary score. 'Yes' means that the answer is grounded in / supported "
            "by the set of facts.")
USEFUL = ("You are a grader assessing whether an answer addresses / resolves a question. Give a binary "
          "score. 'Yes' means that the answer resolves the question.")
REWRITE = ("You are a question re-writer that converts an input question to a better version that is "
           "optimized for vectorstore retrieval. Look at the input and try to reason about the underlying "
           "semantic intent / meaning.")
GENERATE = ("You are an assistant for question-answering tasks. Use the following pieces of retrieved context "
            "to answer the question. If you don't know the answer, just say that you don't know. Use three "
            "sentences maximum and keep the answer concise.")


def naive_self_rag(question: str, engine: Engine, llm: MeteredLLM, k: int = 8, max_rounds: int = 3) -> None:
    """The baseline: every retrieved chunk is graded by the LLM, every round."""
    query = question
    for _ in range(max_rounds):
        route = engine.router.route(question).model_copy(update={"query": query})
        docs = engine.retriever.retrieve(route, k=k)
        relevant: list[Evidence] = [
            ev for ev in docs
            if _ask(llm, [{"role": "system", "content": GRADE},
                          {"role": "user", "content": f"question: {question}\npassage: {ev.chunk.text}"}],
                    Grade, relevant=False).relevant]
        if not relevant:
            query = _ask(llm, [{"role": "system", "content": REWRITE}, {"role": "user", "content": question}],
                         Rewrite, query=question).query
            continue
        context = "\n\n".join(ev.chunk.text for ev in relevant)
        answer = llm.complete([{"role": "system", "content": GENERATE},
                               {"role": "user", "content": f"question: {question}\npassages:\n{context}"}],
                              max_tokens=300).text
        if not _ask(llm, [{"role": "system", "content": GROUNDED},
                          {"role": "user", "content": f"passages:\n{context}\nanswer: {answer}"}],
                    Grounded, grounded=True).grounded:
            continue
        if _ask(llm, [{"role": "system", "content": USEFUL},
                      {"role": "user", "content": f"question: {question}\nanswer: {answer}"}],
                Useful, useful=True).useful:
            return
        query = _ask(llm, [{"role": "system", "content": REWRITE}, {"role": "user", "content": question}],
                     Rewrite, query=question).query


def _ask(llm: MeteredLLM, msgs: list[dict[str, str]], schema: type[BaseModel], **default: object) -> BaseModel:
    try:
        return structured(llm, msgs, schema, max_tokens=60)
    except LLMFallback:
        return schema(**default)


# ------------------------------------------------------------------ the scripted judge

def _field(text: str, name: str) -> str:
    m = re.search(rf"^{name}:\s*(.*?)(?=^\w[\w ]*:|\Z)", text, re.S | re.M)
    return m.group(1).strip() if m else ""


def _overlap(question: str, text: str) -> float:
    terms = key_terms(question)
    low = text.lower()
    return sum(t in low for t in terms) / len(terms) if terms else 0.0


class Judge:
    """A reproducible stand-in for a *good* model, used by both loops alike: it knows the gold
    answers of examples/questions.jsonl, so it calls evidence sufficient (or a passage relevant)
    exactly when the gold answer is in it, and falls back to term overlap for questions without
    one. The counts then measure the loops, not the model's mistakes."""

    def __init__(self, gold: dict[str, list[str]]) -> None:
        self.gold = gold

    def _has_answer(self, question: str, text: str) -> bool:
        answers = self.gold.get(question)
        if answers is None:
            return _overlap(question, text) >= 0.6
        return any(a in text for a in answers)

    def __call__(self, messages: list[dict[str, str]]) -> object:
        schema = messages[-1]["content"] if messages[-1]["role"] == "system" else ""
        title = ""
        if "JSON schema" in schema:
            title = json.loads(schema.split("\n", 1)[1]).get("title", "")
        user = next((m["content"] for m in messages if m["role"] == "user"), "")
        question = _field(user, "question") or user
        if title == "RetrieveDecision":
            return {"decision": "RETRIEVE"}
        if title == "RetrievalPlan":
            missing = re.search(r"(?:Missing after the last round|上一轮缺失的要素)[:：] ?(.+)", user)
            return {"queries": [f"{question[:50]} {missing.group(1)}" if missing else question[:60]]}
        if title == "SufficiencyJudgement":
            ok = self._has_answer(question, _field(user, "results"))
            return {"coverage": 5 if ok else 2, "timeliness": 4, "authority": 4,
                    "verdict": "SUFFICIENT" if ok else "INSUFFICIENT", "missing": "" if ok else "具体规定"}
        if title == "Verification":
            return {"unsupported": []}
        if title == "RouterOutput":
            return {"intent": ["general"], "query": question[:60], "confidence": 0.5}
        if title == "Grade":
            return {"relevant": self._has_answer(question, _field(user, "passage"))}
        if title == "Grounded":
            return {"grounded": True}
        if title == "Useful":
            return {"useful": True}
        if title == "Rewrite":
            return {"query": " ".join(key_terms(question)) or question}
        if title:
            raise ValueError(f"the scripted judge has no answer for {title}")
        return _field(user, "passages").split("\n")[0][:200] or "无法回答"


# ------------------------------------------------------------------ main

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=Path, default=Path("examples"))
    ap.add_argument("--llm", choices=["scripted", "local"], default="scripted")
    ap.add_argument("--limit", type=int, default=0, help="only the first N questions")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    qfile = args.examples / "questions.jsonl"
    if not qfile.is_file():
        sys.exit(f"error: {qfile} not found")
    rows = [json.loads(line) for line in qfile.read_text("utf-8").splitlines() if line.strip()]
    questions = [r["question"] for r in rows]
    gold = {r["question"]: list(r.get("answers") or []) for r in rows if not r.get("abstain")}
    if args.limit:
        questions = questions[:args.limit]
    model: LLM
    if args.llm == "local":
        from agentic_rag.models.llm import LocalLLM

        model = LocalLLM()
    else:
        model = ScriptedLLM(Judge(gold))

    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine(Settings.load(index=Path(tmp) / "idx"))
        engine.ingest([args.examples / "docs"])
        runtime = AgentRuntime.from_engine(engine, llm=model)
        pipe_calls, pipe_tokens, naive_calls, naive_tokens = [], [], [], []
        t0 = time.perf_counter()
        for q in questions:
            answer = Session(runtime).ask(q, mode="pipeline")
            pipe_calls.append(answer.usage.llm_calls)
            pipe_tokens.append(answer.usage.prompt_tokens + answer.usage.completion_tokens)
            meter = MeteredLLM(model)
            naive_self_rag(q, engine, meter)
            naive_calls.append(meter.usage.llm_calls)
            naive_tokens.append(meter.tokens)
        runtime.tools.close()
        engine.close()
    result = {
        "questions": len(questions), "llm": args.llm,
        "pipeline": {"calls_per_q": statistics.mean(pipe_calls), "tokens_per_q": statistics.mean(pipe_tokens)},
        "naive_self_rag": {"calls_per_q": statistics.mean(naive_calls), "tokens_per_q": statistics.mean(naive_tokens)},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    result["ratio_calls"] = round(result["pipeline"]["calls_per_q"] / result["naive_self_rag"]["calls_per_q"], 3)
    result["ratio_tokens"] = round(result["pipeline"]["tokens_per_q"] / result["naive_self_rag"]["tokens_per_q"], 3)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return
    print(f"{len(questions)} questions, model: {args.llm}")
    print(f"{'':16}{'LLM calls/q':>12}{'tokens/q':>12}")
    for name in ("pipeline", "naive_self_rag"):
        r = result[name]
        print(f"{name:16}{r['calls_per_q']:>12.2f}{r['tokens_per_q']:>12.0f}")
    print(f"pipeline / naive: calls {result['ratio_calls']:.0%}, tokens {result['ratio_tokens']:.0%} "
          f"(target ≤ 50%)")


if __name__ == "__main__":
    main()
