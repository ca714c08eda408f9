"""Only ask where it can help: the gates skip the LLM when the rules are confident, a run stops
calling it at the call cap, and a call past the per-call timeout becomes the rules' result. Every
call made is an ``llm`` trace event with its tokens; the answer's usage sums them."""

from __future__ import annotations

import threading
import time

import pytest

from agentic_rag.runtime import Session

ANSWERABLE = "住院报销比例是多少？"
CLAUSE = "某市职工医疗保障办法第十二条规定的申请期限是多久？"


def events(answer, kind, tool=None):
    return [e for e in answer.trace if e.kind == kind and (tool is None or e.tool == tool)]


def test_a_question_with_a_clause_number_is_answered_without_asking_the_gates(make_runtime, script):
    llm = script({"SufficiencyJudgement": {"coverage": 1, "timeliness": 1, "authority": 1,
                                           "verdict": "INSUFFICIENT", "missing": "x"},
                  "Verification": {"unsupported": [1]}})
    rt, retriever = make_runtime(llm=llm)
    answer = Session(rt).ask(CLAUSE)
    assert answer.status == "answered" and "3个工作日" in answer.text
    assert not llm.calls and answer.usage.llm_calls == 0  # the clause and the title anchor it; all found
    [retrieve] = events(answer, "gate", "retrieve_or_not")
    [suff] = events(answer, "gate", "sufficiency")
    assert retrieve.detail == "rules" and suff.detail == "rules (confident: all covered)"
    assert len(retriever.queries) == 1


def test_an_unanchored_question_still_gets_the_llm_sufficiency_judgement(make_runtime, script):
    llm = script({"SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 4,
                                           "verdict": "SUFFICIENT"}})
    rt, _ = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE)
    assert [e.detail for e in events(answer, "gate", "sufficiency")] == ["llm"]
    calls = events(answer, "llm")
    assert [e.tool for e in calls] == ["RetrieveDecision", "SufficiencyJudgement"]
    assert all(e.args["outcome"] == "ok" and e.args["prompt_tokens"] > 0 for e in calls)
    assert calls[-1].args["run_tokens"] == answer.usage.prompt_tokens + answer.usage.completion_tokens
    assert answer.usage.llm_calls == 2


def test_the_call_cap_ends_the_llm_part_of_the_run(make_runtime, script):
    step = {"thought": "再查", "tool_calls": [{"tool": "exact_search", "args": {"query": "报销"}}]}
    queries = iter(f"报销 {i}" for i in range(100))
    llm = script({"AgentStep": lambda m: {**step, "tool_calls": [
                      {"tool": "exact_search", "args": {"query": next(queries)}}]},
                  "AnswerDraft": "not json", "Verification": {"unsupported": []}})
    rt, _ = make_runtime(llm=llm, max_llm_calls=3, max_steps=8, max_rounds=8)
    answer = Session(rt).ask(ANSWERABLE, mode="react")
    assert answer.usage.llm_calls == 3 and len(llm.calls) == 3
    capped = [e for e in events(answer, "fallback") if "LLM call cap of 3 reached" in e.fallback]
    assert capped and answer.status == "answered" and answer.citations


def test_a_call_past_the_per_call_timeout_becomes_the_rules_result(make_runtime, script):
    release = threading.Event()

    def slow(messages):
        release.wait(10)
        return {"coverage": 1, "timeliness": 1, "authority": 1, "verdict": "INSUFFICIENT", "missing": "x"}

    llm = script({"SufficiencyJudgement": slow})
    rt, _ = make_runtime(llm=llm, llm_timeout_s=0.3)
    rules_rt, _ = make_runtime()
    try:
        t0 = time.monotonic()
        answer = Session(rt).ask(ANSWERABLE)
        took = time.monotonic() - t0
    finally:
        release.set()
    assert took < 3  # one timeout, not one per gate or per round
    [fallback] = events(answer, "fallback", "sufficiency")
    assert "per-call timeout of 0.3 s" in fallback.fallback
    assert [e.args["outcome"] for e in events(answer, "llm")] == ["ok", "timeout"]
    expected = Session(rules_rt).ask(ANSWERABLE)
    assert answer.text == expected.text and answer.status == expected.status


@pytest.mark.parametrize("max_calls", [1, 2])
def test_the_cap_counts_retries(make_runtime, script, max_calls):
    llm = script({"SufficiencyJudgement": "not json"})
    rt, _ = make_runtime(llm=llm, max_llm_calls=max_calls)
    answer = Session(rt).ask(ANSWERABLE)
    assert answer.usage.llm_calls == len(llm.calls) == max_calls
    assert answer.status == "answered"
