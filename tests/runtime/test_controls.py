"""The three controls the web page's sliders set, honoured by the runtime: retrieval intensity
(queries per round, rounds), reflection depth (which gates and how deep verification runs) and
inference latitude (abstain, or answer from partial evidence marked needs_review)."""

from __future__ import annotations

import pytest

from agentic_rag.runtime import Limits, Session
from agentic_rag.types import Answer, Evidence, RouteDecision
from tests.runtime.conftest import CORPUS

ANSWERABLE = "住院报销比例是多少？"
ABSENT = "生育津贴的发放标准是什么？"
PARTIAL = "北京市2023年退休人员住院报销比例是多少？"  # the corpus names no city


def events(answer, kind, tool=None):
    return [e for e in answer.trace if e.kind == kind and (tool is None or e.tool == tool)]


class AbstainingReasoner:
    """Abstains whatever the evidence: what the lenient latitude is for."""

    def reason(self, question: str, route: RouteDecision, evidence: list[Evidence]) -> Answer:
        return Answer(question=question, text="未找到明确依据。", status="abstained", gaps=[question])


def test_retrieval_intensity_maps_to_queries_per_round_and_rounds():
    assert Limits().with_controls(retrieval=1).model_dump(include={"queries_per_round", "max_rounds"}) == \
        {"queries_per_round": 1, "max_rounds": 1}
    assert Limits().with_controls(retrieval=4).max_rounds == 5
    assert Limits().with_controls() == Limits()
    with pytest.raises(ValueError, match="1-4"):
        Limits().with_controls(retrieval=9)


def test_low_retrieval_intensity_runs_one_query_in_one_round(make_runtime):
    low, low_retriever = make_runtime(**Limits().with_controls(retrieval=1).model_dump())
    high, high_retriever = make_runtime(**Limits().with_controls(retrieval=3).model_dump())
    a_low = Session(low).ask(PARTIAL)
    a_high = Session(high).ask(PARTIAL)
    assert a_low.usage.retrieval_rounds == 1 and len(low_retriever.queries) == 1
    assert a_high.usage.retrieval_rounds == 2 and len(high_retriever.queries) == 2


def test_retrieval_intensity_caps_the_queries_a_planner_asks_for(make_runtime, script):
    counter = iter(range(100))
    llm = script({
        "RetrievalPlan": lambda m: {"queries": [f"生育津贴 标准 第{next(counter)}版" for _ in range(3)]},
        "SufficiencyJudgement": {"coverage": 1, "timeliness": 3, "authority": 3,
                                 "verdict": "INSUFFICIENT", "missing": "生育津贴标准"},
        "Verification": {"unsupported": []}, "AnswerDraft": {"sentences": []},
        "RouterOutput": {"intent": ["医保"], "query": "生育津贴 发放标准", "confidence": 0.9}})
    rt, retriever = make_runtime(llm=llm, **Limits().with_controls(retrieval=2).model_dump())
    answer = Session(rt).ask(ABSENT)
    assert answer.usage.retrieval_rounds == 2
    rounds = [e for e in answer.trace if e.kind == "gate" and e.tool == "plan"]
    assert len(rounds) == 2 and len(retriever.queries) <= 4  # 2 queries a round, not the 3 planned
    assert len(retriever.queries) > 2


def test_reflection_depth_zero_skips_the_sufficiency_gate_and_the_verification_gate(make_runtime):
    rt, retriever = make_runtime(reflection=0, max_rounds=3)
    answer = Session(rt).ask(PARTIAL)
    assert answer.usage.retrieval_rounds == 1
    suff = events(answer, "gate", "sufficiency")
    assert [e.args["verdict"] for e in suff] == ["SKIPPED"]
    assert events(answer, "verify")[0].detail.startswith("skipped")
    full, _ = make_runtime(reflection=1, max_rounds=3)
    deep = Session(full).ask(PARTIAL)
    assert {e.args["verdict"] for e in events(deep, "gate", "sufficiency")} <= {"SUFFICIENT", "INSUFFICIENT"}
    assert deep.usage.retrieval_rounds > 1


def test_reflection_depth_two_sends_even_a_confirmed_answer_to_the_llm_verifier(make_runtime, script):
    # the model doubts the first sentence and offers no rewrite. Depth 2 re-verifies every
    # sentence as if a model had written it, so the doubt flags it; depth 1 shows the confirmed
    # quote to the model only for a second look (the rules were unsure the evidence suffices)
    # and one call's doubt does not outweigh the rules' confirmation
    for depth, flagged in ((1, False), (2, True)):
        llm = script({"Verification": {"unsupported": [1]},
                      "SufficiencyJudgement": {"coverage": 5, "timeliness": 5, "authority": 5,
                                               "verdict": "SUFFICIENT", "missing": ""},
                      "AnswerDraft": {"sentences": []}}, default={})
        rt, _ = make_runtime(llm=llm, reflection=depth)
        answer = Session(rt).ask(ANSWERABLE)
        assert [e for e in answer.trace if e.kind == "verify" and e.detail.startswith("llm")]
        assert (answer.status == "needs_review") is flagged
        assert ("〔未经证据证实〕" in answer.text) is flagged


def test_strict_latitude_abstains_when_part_of_the_question_is_missing(make_runtime):
    normal, _ = make_runtime(latitude=1)
    strict, _ = make_runtime(latitude=0)
    partial = Session(normal).ask(PARTIAL)
    assert partial.status in ("answered", "needs_review") and partial.gaps and partial.citations
    refused = Session(strict).ask(PARTIAL)
    assert refused.status == "abstained" and not refused.citations and refused.gaps
    assert "缺少" in refused.text and refused.gaps[0] in refused.text
    assert events(refused, "gate", "latitude")[0].args["to"] == "abstained"
    # a fully covered question is answered at every latitude
    assert Session(strict).ask(ANSWERABLE).status == "answered"


def test_lenient_latitude_quotes_the_closest_passages_marked_needs_review(make_runtime):
    normal, _ = make_runtime(reasoner=AbstainingReasoner(), latitude=1)
    lenient, _ = make_runtime(reasoner=AbstainingReasoner(), latitude=2)
    assert Session(normal).ask(ANSWERABLE).status == "abstained"
    answer = Session(lenient).ask(ANSWERABLE)
    assert answer.status == "needs_review" and answer.citations and answer.gaps
    assert answer.text.startswith("证据不足")
    clauses = [text for *_, parts in CORPUS for _, _, text in parts]
    assert all(any(c.quote in text for text in clauses) for c in answer.citations)  # the sources' words
    assert "[1]" in answer.text
    # nothing found at all stays an abstention: small talk retrieves nothing
    assert Session(lenient).ask("你好！").status == "abstained"
