"""Property: whatever a model says, in whatever order, every run ends within the caps with a
final answer event."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentic_rag.errors import LLMError
from agentic_rag.models.llm import ScriptedLLM
from agentic_rag.runtime import Session

QUERIES = ["住院 报销比例", "年休假", "hotel", "生育津贴", "第十条"]

tool_call = st.builds(lambda tool, q: {"tool": tool, "args": {"query": q}},
                      st.sampled_from(["semantic_search", "exact_search", "no_such_tool"]),
                      st.sampled_from(QUERIES))
agent_step = st.one_of(
    st.builds(lambda calls: {"thought": "t", "tool_calls": calls}, st.lists(tool_call, min_size=1, max_size=3)),
    st.builds(lambda c: {"thought": "t", "final": True, "confidence": c}, st.floats(0, 1)),
)
reply = st.one_of(
    agent_step,
    st.just("not json"),
    st.just({"queries": QUERIES[:3]}),
    st.just({"coverage": 2, "timeliness": 3, "authority": 3, "verdict": "INSUFFICIENT", "missing": "比例"}),
    st.just({"coverage": 5, "timeliness": 5, "authority": 5, "verdict": "SUFFICIENT"}),
    st.just({"steps": ["住院报销比例", "申请期限", "异地备案", "年休假"]}),
    st.just({"keep": False, "revised_steps": ["生育津贴", "第十条"]}),
    st.just({"unsupported": [1], "fixes": [{"index": 1, "rewritten": "", "evidence_ids": []}]}),
    st.just({"sentences": [{"text": "比例为80%。", "citations": ["medins2024:a10:0"]}]}),
    st.just({"decision": "NO_RETRIEVE"}),
    st.just("RAISE"),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(replies=st.lists(reply, min_size=1, max_size=40), mode=st.sampled_from(["pipeline", "react", "plan"]),
       max_steps=st.integers(1, 6), max_rounds=st.integers(1, 3))
def test_any_model_behaviour_ends_within_the_caps(make_runtime, replies, mode, max_steps, max_rounds):
    feed = iter(replies)

    def model(messages):
        r = next(feed, "not json")  # a model that runs out of script keeps talking nonsense
        if r == "RAISE":
            raise LLMError("connection reset")
        return r

    llm = ScriptedLLM(model)
    rt, retriever = make_runtime(llm=llm, max_steps=max_steps, max_rounds=max_rounds, max_tokens=20000)
    answer = Session(rt).ask("住院报销比例和申请期限是怎么规定的？", mode=mode)
    assert answer.trace[-1].kind == "final"
    assert answer.status in ("answered", "abstained", "needs_review")
    assert answer.usage.retrieval_rounds <= max_rounds
    assert len([e for e in answer.trace if e.kind == "think"]) <= max_steps
    assert max(e.step for e in answer.trace) <= max_steps + 1  # +1: the forced final step
    # each decision costs at most two calls (one retry); decisions per step are bounded
    assert len(llm.calls) <= 2 * (4 * max_steps + 6)
    rt.tools.close()
