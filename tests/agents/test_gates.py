"""The deterministic gates (the rules used when no LLM is configured, or when its output fails)."""

from __future__ import annotations

import datetime as dt

from agentic_rag.agents.sufficiency import sufficiency_rules
from agentic_rag.types import Chunk, Evidence, RouteDecision, Slots


def _evidence(text: str, published: dt.date, version: str | None = None) -> Evidence:
    chunk = Chunk(chunk_id=f"d{published.year}:a4:0", doc_id=f"d{published.year}", ord=0, text=text,
                  clause="第四条", title="江南省职工基本医疗保险门诊和住院待遇办法", authority="江南省医疗保障局",
                  publish_date=published, version=version)
    return Evidence(chunk=chunk, score=1.0)


def test_a_pinned_year_is_met_by_the_source_date_not_only_by_its_wording():
    route = RouteDecision(question="按照2023年的规定，门诊起付标准是多少？", query="2023年 门诊起付标准",
                          version="2023", slots=Slots(years=[2023]))
    text = "第四条 参保人员在定点医疗机构发生的普通门诊政策范围内费用，年度起付标准为1000元。"
    found = sufficiency_rules(route, [_evidence(text, dt.date(2023, 3, 1))])
    assert found.verdict == "SUFFICIENT" and found.missing == ""
    # only the 2024 version found: the year is what is missing
    later = sufficiency_rules(route, [_evidence(text, dt.date(2024, 6, 20), version="2024")])
    assert later.verdict == "INSUFFICIENT" and "2023" in later.missing


def test_question_words_and_their_parts_are_never_what_the_evidence_is_missing():
    # "how long after", "which year", "in total": the question's frame, not its matter
    route = RouteDecision(question="设备故障申报以后多长时间必须派人检修？", query="设备故障申报 检修")
    text = "第四条 使用单位申报设备故障后，维保单位应当在四小时内到场检修。"
    judged = sufficiency_rules(route, [_evidence(text, dt.date(2024, 1, 5))])
    assert judged.verdict == "SUFFICIENT" and judged.missing == ""
    from agentic_rag.agents.sufficiency import key_terms

    assert key_terms("这份章程是哪一年修订的？") == ["章程", "修订"]
    assert "一共" not in key_terms("这届运动会一共有多少名志愿者？")
    assert "这场" not in key_terms("这场音乐节一共来了多少观众？")


def test_what_the_evidence_is_missing_is_named_by_the_readers_word_not_an_index_stem():
    route = RouteDecision(question="How often are vehicles inspected?",
                          query="How often are vehicles inspected?", language="en")
    text = "第四条 参保人员在定点医疗机构发生的普通门诊政策范围内费用，年度起付标准为1000元。"
    judged = sufficiency_rules(route, [_evidence(text, dt.date(2024, 1, 5))])
    assert judged.verdict == "INSUFFICIENT" and judged.missing == "vehicles"  # not the stem "vehicl"


def test_the_noun_a_question_word_asks_about_is_never_what_the_evidence_is_missing():
    from agentic_rag.agents.sufficiency import key_terms

    assert key_terms("园区里哪些地方禁止吸烟？") == ["园区", "禁止", "吸烟"]
    assert key_terms("Which countries require a visa letter?") == ["requir", "visa", "letter"]


def test_a_word_the_dictionary_gains_is_a_key_term_of_questions_asked_before():
    """Key terms are kept per text until the segmentation dictionary changes (an ingest adds
    the router's lexicon terms): a question asked before then splits the new word whole."""
    from agentic_rag.agents.sufficiency import key_terms
    from agentic_rag.text.tokenize import add_terms

    question = "龘靐齉齾渠道有哪些？"
    before = key_terms(question)
    assert "龘靐齉齾" not in before
    before.append("changed by a caller")
    assert key_terms(question) == [t for t in before if t != "changed by a caller"]
    add_terms(["龘靐齉齾"])
    assert key_terms(question)[0] == "龘靐齉齾"
