"""Conflicting evidence through the runtime with the real Reasoner: the newer rule wins, and an
LLM writer cannot quietly switch the answer to the losing source."""

from __future__ import annotations

import pytest

from agentic_rag.runtime import Session

reasoner_mod = pytest.importorskip("agentic_rag.agents.reasoner")

QUESTION = "住院报销比例是多少？"
WINNER, LOSER = "medins2024:a10:0", "medins2023:a10:0"


def react_script(script, draft):
    return script({"AgentStep": [{"thought": "s", "tool_calls": [
                                     {"tool": "semantic_search", "args": {"query": "住院 报销比例"}}]},
                                 {"thought": "ok", "final": True, "confidence": 0.9}],
                   "AnswerDraft": draft, "Verification": {"unsupported": []}})


@pytest.mark.parametrize("mode", ["pipeline", "react", "plan"])
def test_rules_arbitrate_the_conflict_and_say_why(make_runtime, mode):
    rt, _ = make_runtime(reasoner=reasoner_mod.Reasoner(), mode=mode)
    answer = Session(rt).ask(QUESTION)
    assert answer.status == "answered"
    [conflict] = answer.conflicts
    assert conflict.winner == WINNER and {v.chunk_id for v in conflict.values} == {WINNER, LOSER}
    assert "80%" in answer.text and "新文件优先" in answer.text


def test_a_writer_citing_only_the_losing_source_is_rejected(make_runtime, script):
    llm = react_script(script, {"sentences": [{"text": "住院报销比例为70%。", "citations": [LOSER]}]})
    rt, _ = make_runtime(llm=llm, reasoner=reasoner_mod.Reasoner())
    answer = Session(rt).ask(QUESTION, mode="react")
    fallback = [e for e in answer.trace if e.kind == "fallback" and e.tool == "write"]
    assert fallback and "losing side of a conflict" in fallback[0].fallback
    assert "80%" in answer.text and answer.conflicts[0].winner == WINNER


def test_a_writer_following_the_winner_keeps_the_conflict_record(make_runtime, script):
    draft = {"sentences": [{"text": "住院报销比例为80%。", "citations": [WINNER]}]}
    rt, _ = make_runtime(llm=react_script(script, draft), reasoner=reasoner_mod.Reasoner())
    answer = Session(rt).ask(QUESTION, mode="react")
    assert answer.text.startswith("住院报销比例为80%[1]。") and answer.status == "answered"
    assert [c.chunk_id for c in answer.citations] == [WINNER]
    assert answer.conflicts and answer.conflicts[0].winner == WINNER


def test_a_writer_sentence_its_sources_do_not_say_never_replaces_the_verified_answer(make_runtime, script):
    draft = {"sentences": [
        {"text": "住院报销比例为80%。", "citations": [WINNER]},
        {"text": "2023年办法规定为70%，已被2024年修订版取代。", "citations": [LOSER, WINNER]}]}
    rt, _ = make_runtime(llm=react_script(script, draft), reasoner=reasoner_mod.Reasoner())
    answer = Session(rt).ask(QUESTION, mode="react")
    # the explanatory sentence words things ("取代") its sources do not say: the fact check flags
    # it, and the Reasoner's verified answer stands instead of a needs_review draft
    assert answer.status == "answered" and "取代" not in answer.text
    assert "80%" in answer.text and "新文件优先" in answer.text
    assert all(s.supported for s in answer.sentences)
    assert answer.conflicts and answer.conflicts[0].winner == WINNER
    [kept] = [e for e in answer.trace if e.kind == "fallback" and e.tool == "write"]
    assert "deterministic answer is kept" in kept.fallback and "取代" in kept.args["unsupported"][0]
