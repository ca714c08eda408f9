"""The runtime driven by scripted models: caps, duplicate blocking, timeouts, invalid output,
a dead endpoint, abort, sessions and the trace. Store, Router and Retriever are the real ones."""

from __future__ import annotations

import threading

import pytest

from agentic_rag.errors import LLMError, NotFoundError
from agentic_rag.models.llm import ScriptedLLM
from agentic_rag.runtime import AgentRuntime, Limits, Session, SessionStore, ToolRegistry, builtin_tools
from tests.runtime.conftest import MiniReasoner

ANSWERABLE = "住院报销比例是多少？"
ABSENT = "生育津贴的发放标准是什么？"


def kinds(answer):
    return [e.kind for e in answer.trace]


def events(answer, kind, tool=None):
    return [e for e in answer.trace if e.kind == kind and (tool is None or e.tool == tool)]


# ---------------------------------------------------------------- rules only (no LLM)

@pytest.mark.parametrize("mode", ["pipeline", "react", "plan"])
def test_without_llm_every_mode_answers_with_citations_and_a_full_trace(make_runtime, mode):
    rt, _ = make_runtime(mode=mode)
    session = Session(rt)
    answer = session.ask(ANSWERABLE)
    assert answer.status == "answered"
    assert answer.citations and all(c.chunk_id in answer.text for c in answer.citations)
    assert answer.usage.llm_calls == 0 and answer.usage.retrieval_rounds >= 1
    assert kinds(answer)[0] == "route" and kinds(answer)[-1] == "final"
    assert {"tool", "reason", "verify"} <= set(kinds(answer))
    assert all(e.session_id == session.id for e in answer.trace)
    assert not events(answer, "fallback")  # no LLM configured is not a fallback


def test_small_talk_is_not_retrieved(make_runtime):
    rt, retriever = make_runtime()
    answer = Session(rt).ask("你好！")
    assert answer.status == "abstained" and not retriever.queries
    assert events(answer, "gate", "retrieve_or_not")[0].args["decision"] == "NO_RETRIEVE"


# ---------------------------------------------------------------- caps

def test_round_cap_reached_gives_a_final_answer_that_says_what_is_missing(make_runtime, script):
    # the model never finds the evidence sufficient and keeps asking for new queries
    counter = iter(range(100))
    llm = script({
        "RetrievalPlan": lambda m: {"queries": [f"生育津贴 标准 第{next(counter)}版"]},
        "SufficiencyJudgement": {"coverage": 1, "timeliness": 3, "authority": 3,
                                 "verdict": "INSUFFICIENT", "missing": "生育津贴标准"},
        "Verification": {"unsupported": []},
        "RouterOutput": {"intent": ["医保"], "query": "生育津贴 发放标准", "confidence": 0.9},
        "RetrieveDecision": {"decision": "RETRIEVE"},
    })
    rt, _ = make_runtime(llm=llm, max_rounds=3)
    answer = Session(rt).ask(ABSENT)
    assert answer.usage.retrieval_rounds == 3
    # the (minimal) Reasoner still answers from the weak evidence, and the text says it is partial
    assert "检索轮数上限" in answer.text and "生育津贴标准" in answer.text
    assert "生育津贴标准" in answer.gaps
    assert events(answer, "final")[0].args["cap"] == "retrieval round cap (3)"


class PartialReasoner(MiniReasoner):
    """Answers from the top evidence and, like the real Reasoner, names an uncovered part in
    its own text."""

    def reason(self, question, route, evidence):
        answer = super().reason(question, route, evidence)
        gap = "未找到关于产假天数的规定"
        return answer.model_copy(update={"text": f"{answer.text}另外，{gap}。", "gaps": [gap]})


def test_a_gap_the_answer_already_names_is_not_repeated_in_the_search_note(make_runtime, script):
    llm = script({
        "RetrievalPlan": {"queries": ["住院 报销比例"]},
        "SufficiencyJudgement": {"coverage": 2, "timeliness": 2, "authority": 2,
                                 "verdict": "INSUFFICIENT", "missing": "2025年版本"},
        "Verification": {"unsupported": []},
    })
    rt, _ = make_runtime(llm=llm, reasoner=PartialReasoner())
    answer = Session(rt).ask(ANSWERABLE)
    # said once, in the answer; the note adds only what the search still lacks
    assert answer.text.count("未找到关于产假天数的规定") == 1, answer.text
    assert answer.status == "answered" and "仍缺少：2025年版本。）" in answer.text, answer.text
    assert {"未找到关于产假天数的规定", "2025年版本"} <= set(answer.gaps)


def test_step_cap_in_react_forces_a_final_answer_with_tools_disabled(make_runtime, script):
    n = iter(range(100))
    llm = script({
        "AgentStep": lambda m: {"thought": "more", "tool_calls": [
            {"tool": "exact_search", "args": {"query": f"报销 {next(n)}"}}]},
        "AnswerDraft": {"sentences": [{"text": "报销比例为80%。", "citations": ["medins2024:a10:0"]}]},
        "Verification": {"unsupported": []},
    })
    rt, _ = make_runtime(llm=llm, max_steps=4, max_rounds=10)
    answer = Session(rt).ask(ANSWERABLE, mode="react")
    thinks = events(answer, "think")
    assert len(thinks) == 4  # one model decision per step, then no more tools
    assert events(answer, "final")[0].args["cap"] == "step cap (4)"
    assert answer.trace[-1].kind == "final" and "tool" not in kinds(answer)[kinds(answer).index("reason"):]
    assert answer.status in ("answered", "needs_review")


def test_token_budget_stops_llm_calls_and_the_rules_finish_the_search(make_runtime, script):
    llm = script({"AgentStep": lambda m: {"thought": "x" * 500, "tool_calls": [
        {"tool": "exact_search", "args": {"query": f"q{len(m)}"}}]}}, default={"unsupported": []})
    rt, retriever = make_runtime(llm=llm, max_tokens=1500, max_steps=6)
    answer = Session(rt).ask(ANSWERABLE, mode="react")
    assert any("token budget" in e.fallback for e in events(answer, "fallback", "think"))
    # the last call may overshoot the budget once; after that no call is made
    assert answer.usage.prompt_tokens + answer.usage.completion_tokens < 1500 + 2000
    calls = len(llm.calls)
    # the rules searched once the model was out of budget, and found the clause
    assert retriever.queries == ["住院报销比例是多少"]
    assert "medins2024:a10:0" in events(answer, "tool", "semantic_search")[0].evidence_ids
    assert answer.status == "answered"
    assert len(llm.calls) == calls


# ---------------------------------------------------------------- duplicate blocking

def test_duplicate_query_is_blocked_and_the_model_is_shown_the_earlier_result(make_runtime, script):
    seen_prompts: list[str] = []
    steps = iter([
        {"thought": "search", "tool_calls": [{"tool": "semantic_search", "args": {"query": "住院 报销比例"}}]},
        {"thought": "again", "tool_calls": [{"tool": "semantic_search", "args": {"query": "住院  报销比例！"}}]},
        {"thought": "done", "final": True, "confidence": 0.9},
    ])

    def agent(messages):
        seen_prompts.append(messages[1]["content"])
        return next(steps)

    llm = script({"AgentStep": agent,
                  "AnswerDraft": {"sentences": [{"text": "住院报销比例为80%。", "citations": ["medins2024:a10:0"]}]},
                  "Verification": {"unsupported": []}})
    rt, retriever = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE, mode="react")
    assert retriever.queries.count("住院 报销比例") == 1 and len(retriever.queries) == 1
    blocked = events(answer, "blocked")
    assert blocked and blocked[0].detail.startswith("duplicate query")
    assert blocked[0].evidence_ids  # what the first run returned
    assert "already run" in seen_prompts[2] and "medins2024:a10:0" in seen_prompts[2]
    assert answer.status == "answered" and answer.citations[0].chunk_id == "medins2024:a10:0"


def test_pipeline_never_runs_the_same_query_twice(make_runtime, script):
    llm = script({"RetrievalPlan": {"queries": ["住院 报销比例"]},
                  "SufficiencyJudgement": {"coverage": 2, "timeliness": 2, "authority": 2,
                                           "verdict": "INSUFFICIENT", "missing": "2025年版本"},
                  "Verification": {"unsupported": []}})
    rt, retriever = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE)
    # round 1: the Router's query; round 2: the rules' narrower query and the model's plan;
    # round 3: the same two again -> not run (a round's queries run in parallel, in no set order)
    assert retriever.queries[0] == "住院报销比例是多少"
    assert sorted(retriever.queries[1:]) == sorted(["住院报销比例是多少 2025年版本", "住院 报销比例"])
    assert events(answer, "final")[0].args["cap"] == "no new query left to run"
    # what the reader sees says why the search ended, in a sentence that reads
    assert "（检索已停止：没有新的查询可执行；仍缺少：2025年版本。）" in answer.text, answer.text


# ---------------------------------------------------------------- tool timeout

def test_a_hanging_tool_becomes_an_observation_not_a_crash(make_runtime, corpus_store, router, script):
    release = threading.Event()
    registry = ToolRegistry(timeout_s=0.2)

    def slow_lookup(query: str) -> str:
        """A backend that hangs."""
        release.wait(10)
        return "late"

    registry.register(slow_lookup)
    builtin_tools(registry, store=corpus_store)
    steps = iter([
        {"thought": "both", "tool_calls": [{"tool": "slow_lookup", "args": {"query": "住院"}},
                                            {"tool": "exact_search", "args": {"query": "住院 报销比例"}}]},
        {"thought": "enough", "final": True, "confidence": 0.8},
    ])
    llm = script({"AgentStep": lambda m: next(steps), "AnswerDraft": lambda m: "not json",
                  "Verification": {"unsupported": []}})
    rt, _ = make_runtime(llm=llm, tools=registry)
    try:
        answer = Session(rt).ask(ANSWERABLE, mode="react")
    finally:
        release.set()
    slow, fast = events(answer, "tool", "slow_lookup")[0], events(answer, "tool", "exact_search")[0]
    assert "timed out" in slow.detail
    assert fast.evidence_ids  # the parallel call was not held up by the stuck one
    assert answer.status == "answered"


def test_a_hanging_retriever_times_out_unless_it_says_it_cannot_block(router):
    release = threading.Event()
    threads: list[str] = []

    class Hanging:
        def retrieve(self, route, k=None):
            threads.append(threading.current_thread().name)
            release.wait(10)
            return []

    class InMemory(Hanging):
        may_block = False  # it never waits on anything: run where the question runs

        def retrieve(self, route, k=None):
            threads.append(threading.current_thread().name)
            return []

    limits = Limits(tool_timeout_s=0.2, max_rounds=1)
    rt = AgentRuntime(router=router, retriever=Hanging(), reasoner=MiniReasoner(), limits=limits)
    try:
        answer = rt.run(ABSENT)
    finally:
        release.set()
        rt.tools.close()
    assert "timed out" in events(answer, "tool", "semantic_search")[0].detail
    assert answer.status == "abstained"
    assert threads[0] != threading.current_thread().name

    threads.clear()
    rt = AgentRuntime(router=router, retriever=InMemory(), reasoner=MiniReasoner(), limits=limits)
    answer = rt.run(ABSENT)
    assert threads == [threading.current_thread().name]
    assert "timed out" not in events(answer, "tool", "semantic_search")[0].detail


def test_bad_tool_arguments_and_unknown_tools_go_back_to_the_model(make_runtime, script):
    seen: list[str] = []
    steps = iter([
        {"thought": "typo", "tool_calls": [{"tool": "exact_search", "args": {"qeury": "住院"}}]},
        {"thought": "done", "final": True, "confidence": 0.1},
    ])

    def agent(messages):
        seen.append(messages[1]["content"])
        return next(steps)

    llm = script({"AgentStep": agent, "Verification": {"unsupported": []}})
    rt, _ = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE, mode="react")
    assert "invalid arguments" in events(answer, "tool", "exact_search")[0].detail
    assert "invalid arguments" in seen[1]
    assert answer.status == "abstained"  # nothing was retrieved; low confidence noted as a gap


# ---------------------------------------------------------------- invalid output, dead endpoint

def test_invalid_json_is_retried_once_with_the_error_then_the_rules_run(make_runtime):
    llm = ScriptedLLM(lambda messages: "I think the answer is 80% (no JSON here)")
    rt, _ = make_runtime(llm=llm)
    rules_rt, _ = make_runtime()
    answer = Session(rt).ask(ANSWERABLE)
    baseline = Session(rules_rt).ask(ANSWERABLE)
    fallbacks = events(answer, "fallback")
    assert fallbacks and all("invalid output" in e.fallback and "after one retry" in e.fallback
                             for e in fallbacks)
    assert answer.usage.llm_calls == 2 * len(fallbacks)
    retry = llm.calls[1]
    assert retry[-2]["role"] == "user" and "invalid" in retry[-2]["content"]
    assert retry[-3] == {"role": "assistant", "content": "I think the answer is 80% (no JSON here)"}
    assert answer.text == baseline.text and answer.status == "answered"


def test_schema_violations_count_as_invalid_output(make_runtime, script, unsure_router):
    # valid JSON, wrong content: a year 24, six queries (max 3), an INSUFFICIENT verdict naming
    # nothing, a sentence number that does not exist, a citation that is not a passage id
    llm = script({"RouterOutput": {"intent": ["医保"], "query": "生育津贴", "years": [24]},
                  "RetrievalPlan": {"queries": ["a", "b", "c", "d", "e", "f"]},
                  "SufficiencyJudgement": {"coverage": 9, "timeliness": 3, "authority": 3,
                                           "verdict": "INSUFFICIENT"},
                  "AgentStep": [{"thought": "s", "tool_calls": [{"tool": "exact_search",
                                                                 "args": {"query": "住院 报销比例"}}]},
                                {"thought": "ok", "final": True, "confidence": 0.9}],
                  "AnswerDraft": {"sentences": [{"text": "比例为80%。", "citations": ["no-such-id"]}]},
                  "Verification": {"unsupported": [99]}})
    # every gate's output is invalid (two calls each): no call cap gets in the way here
    unsure, _ = make_runtime(llm=llm, router_=unsure_router, max_llm_calls=50)
    answer = Session(unsure).ask(ABSENT)  # the Router is unsure: the LLM routes and plans
    reasons = {e.tool: e.fallback for e in events(answer, "fallback")}
    assert "years" in reasons["route"] and "queries" in reasons["plan"]
    rt, _ = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE)
    reasons = {e.tool: e.fallback for e in events(answer, "fallback")}
    assert "coverage" in reasons["sufficiency"] and answer.status == "answered"
    answer = Session(rt).ask(ANSWERABLE, mode="react")
    reasons = {e.tool: e.fallback for e in events(answer, "fallback")}
    assert "citations.0: Input should be '1', '2'" in reasons["write"]  # the passage numbers
    assert answer.status == "answered" and answer.citations


def test_a_route_or_plan_copied_from_the_output_schema_is_not_searched(make_runtime, script, unsure_router):
    # a small model sometimes fills its JSON with the schema's own words
    llm = script({"RouterOutput": {"intent": ["intent", "maxLength"], "query": "maxLength", "confidence": 0.9},
                  # cut off mid-word, or run together with a stray word
                  "RetrievalPlan": {"queries": ["items:{", " ",
                                                "items:items.maxLength:80,minItems:1,type:array,items:{max"]},
                  "SufficiencyJudgement": {"coverage": 2, "timeliness": 3, "authority": 3,
                                           "verdict": "INSUFFICIENT", "missing": "2024年修订版"},
                  "Verification": {"unsupported": []}})
    rt, retriever = make_runtime(llm=llm, router_=unsure_router)
    answer = Session(rt).ask(ANSWERABLE)
    assert retriever.queries and not [q for q in retriever.queries if "max" in q.lower() or "items" in q]
    reasons = [(e.tool, e.fallback) for e in events(answer, "fallback")]
    assert [r for tool, r in reasons if tool == "route" and "repeats the output schema" in r]
    assert [r for tool, r in reasons if tool == "plan" and "repeat the output schema" in r], reasons
    assert answer.status == "answered" and answer.citations[0].chunk_id == "medins2024:a10:0"


def test_an_llm_route_that_cuts_words_from_the_question_searches_the_rules_query(make_runtime, script,
                                                                                 unsure_router):
    # a model that shortens the question mid-way ("...per night for business trips" lost)
    # would search for something else: its added words are kept, the lost ones come back
    question = "How much are hotel costs reimbursed per night for business trips?"
    llm = script({"RouterOutput": {"intent": ["general"], "query": "How much are hotel costs reimbursed pe",
                                   "entities": ["Travel Expense Policy"], "confidence": 0.9},
                  "SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 5,
                                           "verdict": "SUFFICIENT", "missing": ""},
                  "Verification": {"unsupported": []}})
    rt, retriever = make_runtime(llm=llm, router_=unsure_router)
    answer = Session(rt).ask(question)
    route = events(answer, "route")[0]
    assert "night" in route.args["query"] and "business" in route.args["query"]
    assert retriever.queries[0] == route.args["query"]
    reasons = {e.tool: e.fallback for e in events(answer, "fallback")}
    assert "drops" in reasons["route"]


def test_an_llm_route_query_that_keeps_the_question_words_is_searched_as_it_is():
    from agentic_rag.runtime.loop import query_keeping_terms

    assert query_keeping_terms("住院报销比例是多少", "住院 报销 比例 2024年") == ("住院 报销 比例 2024年", [])
    query, lost = query_keeping_terms("hotel costs per night", "hotel costs Shanghai")
    assert lost and query == "hotel costs per night Shanghai"


def test_a_plan_keeps_its_real_queries_when_one_is_blank_or_copies_the_schema(make_runtime, script):
    llm = script({"RetrievalPlan": {"queries": ["  ", "maxLength", "住院 报销 比例 修订"]},
                  "SufficiencyJudgement": {"coverage": 2, "timeliness": 3, "authority": 3,
                                           "verdict": "INSUFFICIENT", "missing": "2024年修订版"},
                  "Verification": {"unsupported": []}})
    rt, retriever = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE)
    assert "住院 报销 比例 修订" in retriever.queries and "maxLength" not in retriever.queries
    assert not [e for e in events(answer, "fallback") if e.tool == "plan"]


def test_an_llm_route_keeps_only_intents_the_router_knows():
    from agentic_rag.runtime import prompts
    from agentic_rag.runtime.loop import _route_from_llm
    from agentic_rag.types import RouteDecision

    base = RouteDecision(question="q", query="q", intent=["其他"], fallback=True)
    out = prompts.RouterOutput(intent=["医保/住院", "maxLength"], query="住院 报销")
    route = _route_from_llm("q", base, out, known=["医保", "医保/住院", "工伤"])
    assert route.intent == ["医保", "住院"]
    made_up = _route_from_llm("q", base, prompts.RouterOutput(intent=["minLength"], query="住院"), known=["医保"])
    assert made_up.intent == ["其他"]


def test_endpoint_down_degrades_to_the_deterministic_answer_after_one_call(make_runtime):
    def down(messages):
        raise LLMError("http://127.0.0.1:9/v1/chat/completions: unreachable (ConnectError)")

    llm = ScriptedLLM(down)
    rt, _ = make_runtime(llm=llm)
    rules_rt, _ = make_runtime()
    answer = Session(rt).ask(ANSWERABLE, mode="react")
    baseline = Session(rules_rt).ask(ANSWERABLE, mode="react")
    assert len(llm.calls) == 1 and answer.usage.llm_calls == 1
    assert answer.text == baseline.text and answer.status == baseline.status == "answered"
    reasons = [e.fallback for e in events(answer, "fallback")]
    assert reasons and all("unreachable" in r for r in reasons)


# ---------------------------------------------------------------- verification gate

def test_verification_rewrites_from_evidence_or_flags(make_runtime, script):
    draft = {"sentences": [{"text": "住院报销比例为80%。", "citations": ["medins2024:a10:0"]},
                           {"text": "报销申请须在出院后10日内提交。", "citations": ["medins2024:a12:0"]},
                           {"text": "异地备案须本人到窗口办理。", "citations": ["medins2024:a15:0"]}]}
    verdict = {"unsupported": [2, 3], "correction_reason": "期限与原文不符；办理方式无依据",
               "fixes": [{"index": 2, "rewritten": "报销申请须在出院后3个工作日内提交。",
                          "evidence_ids": ["medins2024:a12:0"]},
                         {"index": 3, "rewritten": "异地备案须在30日内到窗口办理。",  # invented: rejected
                          "evidence_ids": ["medins2024:a15:0"]}]}
    llm = script({"AgentStep": [{"thought": "s", "tool_calls": [{"tool": "exact_search",
                                                                 "args": {"query": "住院 报销 申请 备案"}}]},
                                {"thought": "ok", "final": True, "confidence": 0.9}],
                  "AnswerDraft": draft, "Verification": verdict})
    rt, _ = make_runtime(llm=llm)
    answer = Session(rt).ask("住院报销比例、申请期限和异地备案怎么规定？", mode="react")
    verify = events(answer, "verify")[0]
    assert "期限与原文不符" in verify.detail and verify.args["unsupported"] == ["异地备案须本人到窗口办理。"]
    assert verify.args["rewritten"] == ["报销申请须在出院后3个工作日内提交。"]  # confirmed by its source
    # one sentence stayed unsupported, so the draft does not replace the Reasoner's verified answer
    assert answer.status == "answered" and "窗口" not in answer.text and "未经证据证实" not in answer.text
    assert all(s.supported for s in answer.sentences)
    assert "deterministic answer is kept" in events(answer, "fallback", "write")[0].fallback


def test_rules_flag_a_sentence_whose_number_is_not_in_its_source(make_runtime, script):
    llm = script({"AgentStep": [{"thought": "s", "tool_calls": [{"tool": "exact_search",
                                                                 "args": {"query": "住院 报销比例"}}]},
                                {"thought": "ok", "final": True, "confidence": 0.9}],
                  "AnswerDraft": {"sentences": [{"text": "住院报销比例为90%。", "citations": ["medins2024:a10:0"]}]},
                  "Verification": "garbage"})
    rt, _ = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE, mode="react")
    assert events(answer, "verify")[0].args["unsupported"] == ["住院报销比例为90%。"]
    assert "90%" not in answer.text and answer.status == "answered"


# ---------------------------------------------------------------- abort

def test_abort_mid_run_returns_partial_state_and_the_session_goes_on(make_runtime, script, tmp_path):
    store = SessionStore(tmp_path / "sessions.db")
    holder: dict[str, Session] = {}
    calls = {"n": 0}

    def agent(messages):
        calls["n"] += 1
        if calls["n"] == 2:
            holder["s"].abort()  # e.g. Ctrl-C or an API call, arriving during step 2
        return {"thought": "go", "tool_calls": [{"tool": "exact_search", "args": {"query": f"报销 {calls['n']}"}}]}

    rt, _ = make_runtime(llm=script({"AgentStep": agent}))
    session = holder["s"] = Session(rt, store=store)
    answer = session.ask(ANSWERABLE, mode="react")
    assert answer.status == "aborted" and "已中止" in answer.text
    assert kinds(answer)[-2:] == ["abort", "final"]
    assert len(events(answer, "think")) == 2  # step 2 finished, step 3 never started
    saved = store.load(session.id)
    assert saved.status == "aborted" and saved.retrieval.queries
    # the abort ended that question only
    rules_rt, _ = make_runtime()
    again = Session.open(rules_rt, session.id, store).ask(ANSWERABLE)
    assert again.status == "answered"


# ---------------------------------------------------------------- memory and sessions

def test_sessions_persist_and_continue_with_follow_ups(make_runtime, tmp_path):
    store = SessionStore.for_index(tmp_path)
    rt, retriever = make_runtime()
    first = Session(rt, store=store)
    first.ask(ANSWERABLE)
    assert (tmp_path / "sessions.db").exists()
    resumed = Session.open(rt, first.id, store)
    answer = resumed.ask("那申请期限呢？")
    ctx = events(answer, "contextualize")[0]
    assert ANSWERABLE in ctx.args["question"]  # the follow-up was made standalone
    state = store.load(first.id)
    assert [t.role for t in state.conversation.turns] == ["user", "assistant"] * 2
    # retrieval state is per question: the first question's queries are not in the second's
    assert all("申请期限" in r.query or "那申请期限呢" in r.query or ANSWERABLE in r.query
               for r in state.retrieval.queries.values())
    assert state.known_facts or state.retrieval.facts
    with pytest.raises(NotFoundError):
        store.load("nope")


def test_conversation_window_folds_old_turns_into_a_summary(make_runtime):
    rt, _ = make_runtime()
    session = Session(rt)
    session.state.conversation.window = 1
    for q in ["住院报销比例是多少？", "年休假有几天？", "Hotel cost per night?"]:
        session.ask(q)
    conv = session.state.conversation
    assert len(conv.turns) == 2 and conv.turns[0].content == "Hotel cost per night?"
    assert "年休假" in conv.summary and "住院" in conv.summary


def test_stream_yields_events_as_they_happen_then_the_answer(make_runtime):
    rt, _ = make_runtime()
    items = list(Session(rt).stream(ANSWERABLE))
    *trace, answer = items
    assert answer.status == "answered"
    assert [e.kind for e in trace] == [e.kind for e in answer.trace]


def test_secrets_never_reach_the_trace(make_runtime):
    from pydantic import SecretStr

    from agentic_rag.models.llm import OpenAILLM

    llm = OpenAILLM("http://127.0.0.1:9/v1", "m", SecretStr("sk-very-secret"), max_retries=0, timeout_s=2)
    assert "sk-very-secret" not in repr(llm)
    rt, _ = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE)
    assert answer.status == "answered"
    assert "sk-very-secret" not in answer.model_dump_json()


def test_a_sufficient_verdict_with_weak_scores_narrows_to_the_weakest_dimension(make_runtime, script):
    plans: list[str] = []

    def plan(messages):
        plans.append(messages[1]["content"])
        return {"queries": ["职工医疗保障办法 2024年修订 报销比例"]}

    llm = script({"SufficiencyJudgement": [
                      {"coverage": 5, "timeliness": 1, "authority": 4, "verdict": "SUFFICIENT"},
                      {"coverage": 5, "timeliness": 5, "authority": 4, "verdict": "SUFFICIENT"}],
                  "RetrievalPlan": plan})
    rt, retriever = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE)
    assert "上一轮缺失的要素：现行有效版本" in plans[0]
    # the model's narrower query runs in round 2, beside the rules' own (in no set order)
    assert "职工医疗保障办法 2024年修订 报销比例" in retriever.queries[1:]
    assert answer.usage.retrieval_rounds == 2 and not answer.gaps
