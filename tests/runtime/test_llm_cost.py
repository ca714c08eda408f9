"""Only ask where it can help: the gates skip the LLM when the rules are confident, a run stops
calling it at the call cap, and a call past the per-call timeout becomes the rules' result. Every
call made is an ``llm`` trace event with its tokens; the answer's usage sums them."""

from __future__ import annotations

import threading
import time

import pytest

from agentic_rag.runtime import Session
from tests.runtime.conftest import MiniReasoner

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
                                           "verdict": "SUFFICIENT"},
                  "Verification": {"unsupported": []}})
    rt, _ = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE)
    assert [e.detail for e in events(answer, "gate", "sufficiency")] == ["llm"]
    calls = events(answer, "llm")
    # the rules were unsure the evidence suffices, so their confirmed quote gets a second look
    assert [e.tool for e in calls] == ["RetrieveDecision", "SufficiencyJudgement", "Verification"]
    assert all(e.args["outcome"] == "ok" and e.args["prompt_tokens"] > 0 for e in calls)
    assert calls[-1].args["run_tokens"] == answer.usage.prompt_tokens + answer.usage.completion_tokens
    assert answer.usage.llm_calls == 3


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


# ---------------------------------------------------------------- a model's claims, cross-checked

def test_a_sufficient_verdict_does_not_stop_the_search_short_of_the_rules(make_runtime, script):
    llm = script({"SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 5,
                                           "verdict": "SUFFICIENT"},
                  "RetrievalPlan": {"queries": ["生育 津贴"]}})
    rt, retriever = make_runtime(llm=llm)
    rules_rt, rules_retriever = make_runtime()
    question = "北京市2023年退休人员住院报销比例是多少？"  # the corpus names no city: the rules search on
    answer = Session(rt).ask(question)
    expected = Session(rules_rt).ask(question)
    # every search the rules run, runs (the model's plan adds its own beside them)
    assert set(rules_retriever.queries) <= set(retriever.queries)
    assert answer.status == expected.status
    assert any("searching on" in e.fallback for e in events(answer, "fallback", "sufficiency"))


def test_a_missing_element_the_sources_name_does_not_start_another_round(make_runtime, script):
    llm = script({"SufficiencyJudgement": {"coverage": 2, "timeliness": 4, "authority": 4,
                                           "verdict": "INSUFFICIENT", "missing": "报销比例"}})
    rt, retriever = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE)
    assert len(retriever.queries) == 1 and answer.status == "answered"
    [fallback] = events(answer, "fallback", "sufficiency")
    assert "'报销比例' missing, but the sources name it" in fallback.fallback


def test_no_retrieve_is_overruled_when_the_documents_answer(make_runtime, script):
    llm = script({"RetrieveDecision": {"decision": "NO_RETRIEVE"}, "RouterOutput": "not json",
                  "SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 4, "verdict": "SUFFICIENT"}})
    rt, _ = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE)
    assert answer.status == "answered" and "80%" in answer.text
    assert any("the documents answer the question" in e.fallback
               for e in events(answer, "fallback", "retrieve_or_not"))
    unrelated = Session(rt).ask("今天心情怎么样")  # nothing in the documents: the model's skip stands
    assert unrelated.status == "abstained" and not events(unrelated, "tool")


# ---------------------------------------------------------------- prompts sized for the model

def test_evidence_prompts_shrink_to_the_tokens_left_and_fall_back_when_nothing_fits(make_runtime, script):
    from agentic_rag.models.llm import _estimate_messages, with_schema
    from agentic_rag.runtime import prompts

    sizes = []

    def judge(messages):
        sizes.append(_estimate_messages(messages))
        return {"coverage": 5, "timeliness": 5, "authority": 4, "verdict": "SUFFICIENT"}

    llm = script({"SufficiencyJudgement": judge})
    llm.context_tokens = 500  # a small model: 500 tokens of context, 120 kept for the reply
    rt, _ = make_runtime(llm=llm)
    Session(rt).ask(ANSWERABLE)
    assert sizes and sizes[0] <= 500 - 120
    full = prompts.sufficiency_messages(*_route_and_evidence(rt, ANSWERABLE))
    assert _estimate_messages(with_schema(full, prompts.SufficiencyJudgement)) > 500 - 120  # it did shrink

    llm.context_tokens = 300  # not even one short quote fits: the rules judge, and say why
    answer = Session(rt).ask(ANSWERABLE)
    [fallback] = events(answer, "fallback", "sufficiency")
    assert "the prompt needs more than the 180 tokens left for it" in fallback.fallback


def _route_and_evidence(rt, question):
    route = rt.router.route(question)
    return route, rt.retriever.retrieve(route, 8)


def test_the_writer_cites_numbered_quotes_and_its_schema_allows_only_those(make_runtime, script):
    from agentic_rag.models.llm import schema_title

    seen = {}

    def writer(messages):
        seen["prompt"] = messages
        return {"sentences": [{"text": "住院报销比例为80%。", "citations": ["1"]}]}

    steps = [{"thought": "s", "tool_calls": [{"tool": "semantic_search", "args": {"query": "住院 报销比例"}}]},
             {"thought": "ok", "final": True, "confidence": 0.9}]
    llm = script({"AgentStep": steps, "AnswerDraft": writer, "Verification": {"unsupported": []},
                  "SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 4, "verdict": "SUFFICIENT"}})
    rt, _ = make_runtime(llm=llm)
    answer = Session(rt).ask(ANSWERABLE, mode="react")
    user = next(m["content"] for m in seen["prompt"] if m["role"] == "user")
    assert "  [1] " in user and "citable: 1, 2" in user and ":a10:0]" not in user
    assert schema_title(seen["prompt"]) == "AnswerDraft"
    schema = seen["prompt"][-1]["content"]
    assert '"enum":["1","2"' in schema  # a grammar-constrained model can cite nothing else
    assert answer.text.startswith("住院报销比例为80%[1]")
    assert answer.citations[0].chunk_id.endswith(":a10:0")


# ---------------------------------------------------------------- the writer over an abstention

class AbstainingReasoner:
    """A Reasoner that finds no answering sentence in what it is given."""

    def reason(self, question, route, evidence):
        from agentic_rag.types import Answer

        return Answer(question=question, text="未找到相关依据。", status="abstained", gaps=["依据"])


@pytest.mark.parametrize("cite, text, kept", [
    ("1", "参保职工住院发生的政策范围内医疗费用，报销比例为80%。", True),
    ("medins2024:a12:0", "参保人员应当在出院后3个工作日内提交报销申请材料。", False),
])
def test_the_pipeline_writer_answers_over_an_abstention_only_from_sources_on_the_question(
        make_runtime, script, cite, text, kept):
    llm = script({"SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 4, "verdict": "SUFFICIENT"},
                  "AnswerDraft": {"sentences": [{"text": text, "citations": [cite]}]},
                  "Verification": {"unsupported": []}})
    rt, _ = make_runtime(llm=llm, reasoner=AbstainingReasoner())
    answer = Session(rt).ask(ANSWERABLE)
    if kept:
        assert answer.status == "answered" and "80%" in answer.text
        assert answer.citations[0].chunk_id.endswith(":a10:0")
    else:  # grounded, but about another matter: the abstention stands, and says why
        assert answer.status == "abstained" and "申请材料" not in answer.text
        assert any("cites no source naming" in e.fallback for e in events(answer, "fallback", "write"))


def test_a_written_answer_that_states_no_number_does_not_replace_an_abstention(make_runtime, script):
    # grounded and on the question's matter, but the question asks for a rate and the
    # sentence gives none: the Reasoner abstained for exactly that reason
    llm = script({"SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 4, "verdict": "SUFFICIENT"},
                  "AnswerDraft": {"sentences": [{"text": "参保职工住院发生的政策范围内医疗费用可以报销。",
                                                 "citations": ["1"]}]},
                  "Verification": {"unsupported": []}})
    rt, _ = make_runtime(llm=llm, reasoner=AbstainingReasoner())
    answer = Session(rt).ask(ANSWERABLE)
    assert answer.status == "abstained"
    assert any("states no number" in e.fallback for e in events(answer, "fallback", "write"))


# ---------------------------------------------------------------- an INSUFFICIENT over the rules

class RecordingReasoner(MiniReasoner):
    """The minimal Reasoner, remembering the evidence it was last given."""

    def reason(self, question, route, evidence):
        self.seen = [e.chunk_id for e in evidence]
        return super().reason(question, route, evidence)


@pytest.mark.parametrize("missing, query, used, why", [
    # the search finds other matters, not what was "missing"
    ("住院生育津贴标准", "异地就医 备案 平台", False, "did not find it"),
    ("异地就医住院", "异地就医 备案 平台", True, ""),  # the search finds what was missing
    # found, but the question never asked about it: the model's own worry, not a gap
    ("异地就医备案", "异地就医 备案 平台", False, "does not ask about it"),
])
def test_an_insufficient_verdict_over_the_rules_must_find_what_it_says_is_missing(
        make_runtime, script, missing, query, used, why):
    llm = script({"SufficiencyJudgement": [{"coverage": 2, "timeliness": 4, "authority": 4,
                                            "verdict": "INSUFFICIENT", "missing": missing},
                                           {"coverage": 5, "timeliness": 5, "authority": 5,
                                            "verdict": "SUFFICIENT", "missing": ""}],
                  "RetrievalPlan": {"queries": [query]},
                  "Verification": {"unsupported": []}})
    reasoner = RecordingReasoner()
    rt, retriever = make_runtime(llm=llm, reasoner=reasoner, k=5)
    answer = Session(rt).ask(ANSWERABLE)
    assert query in retriever.queries
    assert ("medins2024:a15:0" in reasoner.seen) is used
    stood = [e.fallback for e in events(answer, "fallback", "sufficiency") if "rules stopped at" in e.fallback]
    assert bool(stood) is not used and all(why in f for f in stood)


# ---------------------------------------------------------------- a second, independent answer

class QuotingReasoner:
    """A Reasoner that answers with one passage's own words, whatever the question asks."""

    def __init__(self, chunk_id):
        self.chunk_id = chunk_id

    def reason(self, question, route, evidence):
        from agentic_rag.types import Answer, AnswerSentence, Citation

        e = next(e for e in evidence if e.chunk_id == self.chunk_id)
        c = e.chunk
        return Answer(question=question, text=c.text, status="answered",
                      sentences=[AnswerSentence(text=c.text, citations=[e.chunk_id])],
                      citations=[Citation(chunk_id=e.chunk_id, doc_id=c.doc_id, title=c.title, clause=c.clause,
                                          quote=c.text)])


def kinds(llm):
    from tests.runtime.conftest import kind_of

    return [kind_of(messages) for messages in llm.calls]


@pytest.mark.parametrize("second, swapped", [
    ("住院医疗费用的报销比例为80%。", True),  # the writer, asked afresh, gives the same rate
    ("住院医疗费用的报销比例为70%。", False),  # another rate: the model is guessing
])
def test_a_confirmed_quote_is_replaced_only_when_a_second_independent_answer_agrees(
        make_runtime, script, second, swapped):
    # the Reasoner quoted the filing deadline for a question about the rate: the rules confirm
    # the quote (the source's own words), the model proposes the rate sentence instead
    llm = script({"SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 4, "verdict": "SUFFICIENT"},
                  "Verification": {"unsupported": [1], "fixes": [{
                      "index": 1, "rewritten": "参保职工住院发生的政策范围内医疗费用，报销比例为80%。",
                      "evidence_ids": ["medins2024:a10:0"]}], "correction_reason": "asks the rate"},
                  "AnswerDraft": {"sentences": [{"text": second, "citations": ["medins2024:a10:0"]}]}})
    rt, _ = make_runtime(llm=llm, reasoner=QuotingReasoner("medins2024:a12:0"))
    answer = Session(rt).ask(ANSWERABLE)
    assert kinds(llm).count("AnswerDraft") == 1  # one extra call, for the override only
    assert answer.status == "answered"
    if swapped:
        assert "80%" in answer.text and "3个工作日" not in answer.text
        assert any(c.chunk_id == "medins2024:a10:0" for c in answer.citations)
    else:  # the rules' confirmed quote stands, unflagged, and the trace says why
        assert "3个工作日" in answer.text and "80%" not in answer.text
        assert events(answer, "fallback", "second_opinion")


def test_a_confirmed_quote_the_rules_were_sure_of_gets_no_second_look(make_runtime, script):
    llm = script({"Verification": {"unsupported": [1]}})
    rt, _ = make_runtime(llm=llm, reasoner=QuotingReasoner("medins2024:a12:0"))
    answer = Session(rt).ask(CLAUSE)  # the clause and the title anchor it; all found
    assert answer.status == "answered" and not llm.calls


COLLOQUIAL = "I slept in a hotel while away for the job - how much will they pay me back?"


@pytest.mark.parametrize("second, kept", [
    ("Hotel costs are reimbursed up to 500 yuan per night.", True),
    ("Receipts are required within 30 days.", False),
])
def test_a_written_answer_citing_no_source_on_the_question_needs_a_second_answer_that_agrees(
        make_runtime, script, second, kept):
    # the cited passage says 'hotel' but none of 'slept', 'away', 'job', 'pay': a colloquial
    # question, or a grounded sentence about something else. Only agreement tells them apart.
    first = {"sentences": [{"text": "Hotel costs are reimbursed up to 500 yuan per night for business trips.",
                            "citations": ["travel:a3:0"]}]}
    again = {"sentences": [{"text": second, "citations": ["travel:a3:0"]}]}
    llm = script({"SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 4, "verdict": "SUFFICIENT"},
                  "RetrievalPlan": {"queries": ["hotel per night"]},
                  "AnswerDraft": [first, again],
                  "Verification": {"unsupported": []}})
    rt, _ = make_runtime(llm=llm, reasoner=AbstainingReasoner())
    answer = Session(rt).ask(COLLOQUIAL)
    assert kinds(llm).count("AnswerDraft") == 2
    if kept:
        assert answer.status == "answered" and "500 yuan" in answer.text
    else:
        assert answer.status == "abstained"
        assert any("cites no source naming" in e.fallback for e in events(answer, "fallback", "write"))


@pytest.mark.parametrize("a, b, question, instead_of, same", [
    # a value decides, whatever unit word each sentence puts after it
    ("至此，立法会90个议席全部产生。", "选举委员会40席、地区直选50席，合计90席。", "立法会有多少个议席？", "", True),
    ("至此，立法会90个议席全部产生。", "合计70席。", "立法会有多少个议席？", "", False),
    ("Refunds are paid within 5 business days.", "Paid in five business days.", "How fast do I get my money?", "", True),
    # a name both give, which the answer they would replace does not
    ("The office is in Lyon, near the station.", "Staff work from the Lyon office.", "Where is the office?",
     "The office opened in 2019.", True),
    # the second call repeats the answer: it sides with it, not with the replacement
    ("The office is in Lyon.", "The office opened in 2019 in Paris, near the river.", "Where is the office?",
     "The office is in Paris, near the river.", False),
    # both repeat what the answer says, behind a clause label: nothing new is agreed on
    ("1.2 It applies to all staff.", "1.2 It applies to all staff.", "Who approves a trip?",
     "It applies to all staff.", False),
])
def test_two_answers_agree_on_what_the_question_asks_not_on_their_wording(a, b, question, instead_of, same):
    from agentic_rag.runtime.gates import same_answer

    assert same_answer(a, b, question, instead_of=instead_of) is same


def test_the_writer_over_an_abstention_sees_the_top_hit_of_the_search_the_llm_planned(make_runtime, script):
    # the question's own searches agree on its matter, so that fills the fused top k (here 1);
    # what the model's narrower search found first must still reach the writer
    shown = []

    def draft(messages):
        user = next(m["content"] for m in messages if m["role"] == "user")
        shown.append("病假证明" in user)
        return {"sentences": []}

    llm = script({"SufficiencyJudgement": [{"coverage": 2, "timeliness": 4, "authority": 4,
                                            "verdict": "INSUFFICIENT", "missing": "陪护费用"},
                                           {"coverage": 5, "timeliness": 5, "authority": 5,
                                            "verdict": "SUFFICIENT", "missing": ""}],
                  "RetrievalPlan": {"queries": ["病假 证明"]},
                  "AnswerDraft": draft})
    rt, retriever = make_runtime(llm=llm, reasoner=AbstainingReasoner(), k=1)
    Session(rt).ask(ANSWERABLE)
    assert "病假 证明" in retriever.queries
    assert shown and shown[0]


# ---------------------------------------------------------------- a second look the run can fit

def test_no_second_look_when_the_time_left_cannot_fit_its_two_calls(make_runtime, script):
    import time as clock

    def slowly(reply):
        def answer(messages):
            clock.sleep(0.5)
            return reply
        return answer

    # each call of this model takes half a second: after two, at most 0.8 s of the 1.8 s are
    # left, less than the look and a second opinion take; the rules' confirmed quote stands
    llm = script({"RetrieveDecision": slowly({"decision": "RETRIEVE"}),
                  "SufficiencyJudgement": slowly({"coverage": 5, "timeliness": 5, "authority": 4,
                                                  "verdict": "SUFFICIENT"}),
                  "Verification": slowly({"unsupported": []})})
    rt, _ = make_runtime(llm=llm)
    rules_rt, _ = make_runtime()
    answer = Session(rt).ask(ANSWERABLE, deadline_s=1.8)
    assert kinds(llm) == ["RetrieveDecision", "SufficiencyJudgement"]
    [skipped] = events(answer, "fallback", "verify")
    assert "no second look" in skipped.fallback and "left before the question deadline" in skipped.fallback
    expected = Session(rules_rt).ask(ANSWERABLE)
    assert answer.text == expected.text and answer.status == expected.status == "answered"
    assert not events(answer, "deadline")  # it ended before the deadline, not at it


def test_a_second_opinion_the_call_cap_cannot_fit_is_not_asked_and_says_why(make_runtime, script):
    # the verifier's first reply is unusable and its retry proposes a swap: four calls made
    # under a cap of four, so the agreeing answer a swap needs cannot be asked
    llm = script({"SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 4, "verdict": "SUFFICIENT"},
                  "Verification": ["not json", {"unsupported": [1], "fixes": [{
                      "index": 1, "rewritten": "参保职工住院发生的政策范围内医疗费用，报销比例为80%。",
                      "evidence_ids": ["medins2024:a10:0"]}]}],
                  "AnswerDraft": {"sentences": [{"text": "报销比例为80%。", "citations": ["medins2024:a10:0"]}]}})
    rt, _ = make_runtime(llm=llm, reasoner=QuotingReasoner("medins2024:a12:0"), max_llm_calls=4)
    answer = Session(rt).ask(ANSWERABLE)
    assert "AnswerDraft" not in kinds(llm) and answer.usage.llm_calls == 4
    [skipped] = events(answer, "fallback", "second_opinion")
    assert "no second, independent LLM answer" in skipped.fallback and "cap of 4" in skipped.fallback
    assert "3个工作日" in answer.text and answer.status == "answered"  # the rules' quote stands


def test_the_verifier_can_list_each_sentence_once_at_most():
    from pydantic import ValidationError

    from agentic_rag.models.llm import reply_tokens
    from agentic_rag.runtime.prompts import verification_schema

    schema = verification_schema(2)
    unsupported = schema.model_json_schema()["properties"]["unsupported"]
    assert unsupported["maxItems"] == 2 and unsupported["items"]["enum"] == [1, 2]
    assert schema.model_validate({"unsupported": [2], "fixes": [{"index": 2}]}).unsupported == [2]
    for runaway in ({"unsupported": [1, 2, 3]}, {"fixes": [{"index": 3}]}):
        with pytest.raises(ValidationError):
            schema.model_validate(runaway)
    # bounded everywhere, so the reply has a length a grammar-constrained model must close within
    assert reply_tokens(schema) is not None


def test_a_sufficient_verdict_less_sure_than_the_rules_must_find_what_the_search_went_on_for(make_runtime, script):
    # "sufficient", but with the lowest timeliness and authority: below the bar, so the search
    # goes on where the rules had stopped. What it brings in (another matter) must not become
    # what the Reasoner answers from.
    llm = script({"SufficiencyJudgement": {"coverage": 5, "timeliness": 1, "authority": 1, "verdict": "SUFFICIENT"},
                  "RetrievalPlan": {"queries": ["异地就医 备案 平台"]}})
    reasoner = RecordingReasoner()
    rt, retriever = make_runtime(llm=llm, reasoner=reasoner, k=5)
    answer = Session(rt).ask(ANSWERABLE)
    assert "异地就医 备案 平台" in retriever.queries  # the model's doubt did cost a search
    assert "medins2024:a15:0" not in reasoner.seen
    # what the model doubted (the version in force) is nothing this question asks about
    assert [e for e in events(answer, "fallback", "sufficiency") if "does not ask about it" in e.fallback]
    rules_rt, _ = make_runtime(k=5)
    expected = Session(rules_rt).ask(ANSWERABLE)
    assert answer.citations == expected.citations and answer.text.startswith(expected.text)


def test_searches_the_model_asked_for_that_add_no_passage_leave_the_rules_order(make_runtime, script):
    # the doubt made another round run; it found nothing new, only the same passages again in
    # another order. The Reasoner must see them as the rules ranked them (its answer can hinge
    # on the order), and the trace says why.
    llm = script({"SufficiencyJudgement": {"coverage": 5, "timeliness": 1, "authority": 1, "verdict": "SUFFICIENT"},
                  "RetrievalPlan": {"queries": ["住院 报销比例"]}})
    reasoner, rules = RecordingReasoner(), RecordingReasoner()
    rt, retriever = make_runtime(llm=llm, reasoner=reasoner, k=5)
    answer = Session(rt).ask(ANSWERABLE)
    rules_rt, _ = make_runtime(reasoner=rules, k=5)
    Session(rules_rt).ask(ANSWERABLE)
    assert "住院 报销比例" in retriever.queries
    assert reasoner.seen == rules.seen
    assert [e for e in events(answer, "fallback", "sufficiency") if "rules stopped at" in e.fallback]


def test_a_doubt_about_time_holds_when_the_searches_bring_a_newer_source(make_runtime, script):
    # the sick-leave rule is from 2022; the model doubts its timeliness (no word of the question)
    # and the search it plans brings a 2024 passage: the doubt was about time, and it stands
    llm = script({"SufficiencyJudgement": {"coverage": 5, "timeliness": 1, "authority": 1, "verdict": "SUFFICIENT"},
                  "RetrievalPlan": {"queries": ["异地就医 备案 平台"]}})
    reasoner = RecordingReasoner()
    rt, retriever = make_runtime(llm=llm, reasoner=reasoner, k=5)
    answer = Session(rt).ask("员工请病假需要提供什么证明？")
    assert "异地就医 备案 平台" in retriever.queries
    assert "medins2024:a15:0" in reasoner.seen
    assert not [e for e in events(answer, "fallback", "sufficiency") if "rules stopped at" in e.fallback]
