"""The runtime against a real OpenAI-compatible server on 127.0.0.1: every gate through HTTP
(JSON and SSE streaming), and a server that goes down mid-run."""

from __future__ import annotations

import json

import pytest

from agentic_rag.models.llm import OpenAILLM
from agentic_rag.runtime import Session

QUESTION = "住院报销比例是多少？"


def brain_for(server):
    state = {"agent_steps": 0}

    def brain(body):
        title = server.title(body)
        if title == "RetrieveDecision":
            out = {"decision": "RETRIEVE"}
        elif title == "RetrievalPlan":
            out = {"queries": ["住院 报销比例 2024年修订", "职工医疗保障办法 第十条"]}
        elif title == "SufficiencyJudgement":
            state["judged"] = state.get("judged", 0) + 1
            out = ({"coverage": 3, "timeliness": 2, "authority": 4, "verdict": "INSUFFICIENT",
                    "missing": "2024年修订版"} if state["judged"] == 1 else
                   {"coverage": 5, "timeliness": 5, "authority": 4, "verdict": "SUFFICIENT"})
        elif title == "Verification":
            out = {"unsupported": []}
        elif title == "AgentStep":
            state["agent_steps"] += 1
            out = ({"thought": "查第十条", "tool_calls": [
                        {"tool": "semantic_search", "args": {"query": "住院 报销比例 2024年"}},
                        {"tool": "exact_search", "args": {"query": "第十条 报销比例"}}]}
                   if state["agent_steps"] == 1 else
                   {"thought": "够了", "final": True, "confidence": 0.9,
                    "facts": [{"text": "2024年修订后住院报销比例为80%", "chunk_ids": ["medins2024:a10:0"]}]})
        elif title == "AnswerDraft":
            out = {"sentences": [{"text": "依据2024年修订的办法，参保职工住院报销比例为80%。",
                                  "citations": ["medins2024:a10:0"]}]}
        else:
            raise AssertionError(f"unexpected prompt {title!r}")
        return json.dumps(out, ensure_ascii=False)

    return brain


@pytest.mark.parametrize("stream", [False, True])
def test_pipeline_over_http(chat_server, make_runtime, stream):
    server = chat_server(lambda body: brain(body))
    brain = brain_for(server)
    llm = OpenAILLM(server.base_url, "qwen2.5-7b-instruct", "sk-x", stream=stream)
    rt, retriever = make_runtime(llm=llm)
    answer = Session(rt).ask(QUESTION)
    assert answer.status == "answered" and answer.citations
    # round 1 runs the Router's query; the INSUFFICIENT verdict makes the LLM plan a narrower
    # round 2, beside the rules' own narrower query (run in parallel, in no set order)
    assert retriever.queries[0] == "住院报销比例是多少"
    assert sorted(retriever.queries[1:]) == sorted(["住院报销比例是多少 2024年修订版",
                                                    "住院 报销比例 2024年修订", "职工医疗保障办法 第十条"])
    assert answer.usage.retrieval_rounds == 2
    titles = [server.title(b) for _, b in server.requests]
    assert titles[:4] == ["RetrieveDecision", "SufficiencyJudgement", "RetrievalPlan", "SufficiencyJudgement"], titles
    assert answer.usage.llm_calls == len(server.requests)
    assert answer.usage.prompt_tokens == 11 * len(server.requests)  # as the server reported
    gates = [(e.tool, e.detail) for e in answer.trace if e.kind == "gate"]
    assert gates == [("retrieve_or_not", "llm"), ("plan", "rules (confident route)"), ("sufficiency", "llm"),
                     ("plan", "llm"), ("sufficiency", "llm")]
    # the model's doubt (the 2024 revision) is no word of the question, and round 1 already had
    # the 2024 source: the one fallback says so, and the Reasoner answers from round 1's evidence
    [fallback] = [e for e in answer.trace if e.kind == "fallback"]
    assert fallback.tool == "sufficiency" and "no newer source turned up" in fallback.fallback
    assert all(b["stream"] is stream for _, b in server.requests)


def test_react_over_http_with_parallel_tools_and_the_writer(chat_server, make_runtime):
    server = chat_server(lambda body: brain(body))
    brain = brain_for(server)
    rt, _ = make_runtime(llm=OpenAILLM(server.base_url, "m", stream=True))
    session = Session(rt)
    answer = session.ask(QUESTION, mode="react")
    assert answer.text.startswith("依据2024年修订的办法，参保职工住院报销比例为80%[1]。")
    assert [c.chunk_id for c in answer.citations] == ["medins2024:a10:0"]
    tools = [e for e in answer.trace if e.kind == "tool"]
    assert {e.tool for e in tools} == {"semantic_search", "exact_search"}
    assert session.state.retrieval.facts[0].chunk_ids == ["medins2024:a10:0"]


def test_server_failing_mid_run_degrades_to_the_rules(chat_server, make_runtime):
    server = chat_server(lambda body: brain(body))
    brain = brain_for(server)
    llm = OpenAILLM(server.base_url, "m", max_retries=1, backoff_s=0.01)
    rt, _ = make_runtime(llm=llm)
    server.fail = [200, 503, 503, 503, 503]  # the retrieve gate succeeds, then the server is gone
    answer = Session(rt).ask(QUESTION)
    rules_rt, _ = make_runtime()
    baseline = Session(rules_rt).ask(QUESTION)
    assert answer.status == "answered" and answer.text == baseline.text
    fallbacks = [e for e in answer.trace if e.kind == "fallback"]
    assert fallbacks and "HTTP 503" in fallbacks[0].fallback
    assert len(server.requests) == 3  # one good call, then one call and one retry: breaker open
