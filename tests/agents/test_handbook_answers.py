"""Answers from a handbook page as handbooks are written (Markdown headings, bullet lists with
bold run-in headings, "The following ...:" lists, an appendix the text points to), parsed by the
real ingest. The page and the questions are written for these tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_rag.agents.reasoner import Reasoner
from agentic_rag.agents.reasoner.question import analyze
from agentic_rag.ingest import parse_document
from agentic_rag.types import Evidence, RouteDecision

PAGE = """---
title: Expenses Handbook
policy_id: FH-EXP-3
version: "2.0"
effective_date: 2025-02-01
---

# Expenses Handbook

How Fernhollow pays back what you spend on its behalf.

## Claiming

- **Receipts.** Keep a receipt for every item of EUR 30 or more.
- **Deadline.** Send each claim to Finance within 60 days of the spend.

## Not covered

The following are not refunded:

- speeding tickets and parking penalties;
- airport lounge passes;
- minibar drinks.

## 3. Travel abroad

3.1 Trips to a country listed in Appendix B need approval from the Risk desk.

## Appendix B — Countries needing Risk desk approval

The countries below need approval under 3.1:

1. Narnia
2. Genovia
3. Wakanda
"""


@pytest.fixture(scope="module")
def page_chunks(tmp_path_factory):
    path = Path(tmp_path_factory.mktemp("handbook")) / "expenses.md"
    path.write_text(PAGE, encoding="utf-8")
    [(_, chunks, _)] = parse_document(path)
    return chunks


def ask(question: str, chunks, first: str | None = None):
    """The Reasoner's answer with every chunk as evidence, the one naming ``first`` ranked first."""
    ranked = sorted(chunks, key=lambda c: first is None or first not in c.text)
    evidence = [Evidence(chunk=c, score=1.0 - i * 0.05, rank=i + 1, legs=["bm25"]) for i, c in enumerate(ranked)]
    return Reasoner().reason(question, RouteDecision(question=question, query=question, language="en"), evidence)


def test_a_list_item_is_quoted_after_the_line_that_says_what_the_list_is(page_chunks):
    answer = ask("Will Fernhollow refund a speeding ticket I got on a trip?", page_chunks, "speeding")
    assert answer.status == "answered"
    assert "The following are not refunded: speeding tickets and parking penalties" in answer.text
    # two items of the same list: the second goes on without the introducing line again
    assert answer.text.count("The following are not refunded") == 1


def test_a_list_question_gets_the_appendix_the_rule_points_to(page_chunks):
    answer = ask("Which countries need approval from the Risk desk before a trip?", page_chunks, "Risk desk")
    assert answer.status == "answered"
    assert all(country in answer.text for country in ("Narnia", "Genovia", "Wakanda")), answer.text
    assert any(c.clause == "Appendix B" for c in answer.citations)


def test_a_run_in_heading_is_the_context_of_its_item_not_a_sentence(page_chunks):
    answer = ask("What are the rules on receipts?", page_chunks)
    assert answer.text.startswith("Keep a receipt for every item of EUR 30 or more"), answer.text
    assert "Receipts[" not in answer.text


def test_how_quickly_with_a_when_clause_asks_for_a_duration():
    asked = analyze("How quickly must HR answer a request when I return from leave?")
    assert asked.answer_type == "number" and "duration" in asked.kinds


def test_how_often_is_answered_by_the_period_the_rule_states():
    from agentic_rag.types import Chunk

    text = "各小区每个投放点应当至少设置两个收集容器。餐厨垃圾应当每日至少清运一次。"
    chunk = Chunk(chunk_id="g:1", doc_id="g", ord=0, text=text, title="青岚市垃圾清运办法", clause="第九条",
                  span=(0, len(text)), kind="body", language="zh")
    question = "餐厨垃圾多久至少清运一次？"
    answer = Reasoner().reason(question, RouteDecision(question=question, query=question, language="zh"),
                               [Evidence(chunk=chunk, score=1.0, rank=1, legs=["bm25"])])
    assert answer.text.startswith("餐厨垃圾应当每日至少清运一次"), answer.text


def test_another_companys_policy_does_not_answer_for_the_company_asked_about():
    from agentic_rag.types import Chunk

    import datetime as dt

    def clause(doc: str, label: str, text: str, title: str, year: int = 2024) -> Chunk:
        return Chunk(chunk_id=f"{doc}:{label}", doc_id=doc, ord=0, text=text, title=title, clause=label,
                     clause_no=label, span=(0, len(text)), kind="body", language="en",
                     publish_date=dt.date(year, 3, 1))

    # the older version's clause does not repeat the company's name: it is about it all the same
    tidewater = [clause("tw", "2.1", "Tidewater Mills staff receive 12 days of paid sick leave per year.",
                        "Leave Policy"),
                 clause("tw-old", "2.1", "Staff receive 10 days of paid sick leave per year.", "Leave Policy", 2021)]
    harrow = [clause("hp", "1.1", "Harrow Pines repays course fees up to GBP 500 a year.", "Training Budget"),
              clause("hp", "1.2", "Courses must be approved by your manager first.", "Training Budget")]
    evidence = [Evidence(chunk=c, score=1.0 - i * 0.05, rank=i + 1, legs=["bm25"])
                for i, c in enumerate(tidewater + harrow)]

    def reason(question: str):
        return Reasoner().reason(question, RouteDecision(question=question, query=question, language="en"), evidence)

    assert reason("How many days of paid sick leave does Harrow Pines give?").status == "abstained"
    answer = reason("How many days of paid sick leave does Tidewater Mills give?")
    assert answer.status == "answered" and "12 days" in answer.text
    assert "10 days" in answer.text  # the older version's value, named as superseded


def test_a_fee_asked_for_is_a_word_the_documents_must_state():
    from agentic_rag.text.terms import content_terms

    assert "污水处理费" in [t.text for t in content_terms("每户每月要交多少污水处理费？")]
    assert "什么税" not in [t.text for t in content_terms("出租房屋要交什么税？")]


def test_no_sentence_is_added_only_to_repeat_the_company_name(page_chunks):
    answer = ask("How long does a Fernhollow employee have to send a claim to Finance?", page_chunks)
    assert answer.text.startswith("Send each claim to Finance within 60 days"), answer.text
    assert "Fernhollow" not in answer.text and len(answer.sentences) == 1


def test_the_old_version_of_a_section_does_not_answer_when_the_current_one_is_there():
    import datetime as dt

    from agentic_rag.types import Chunk

    def section(doc: str, text: str, status: str, year: int) -> Chunk:
        return Chunk(chunk_id=f"{doc}:h2:0", doc_id=doc, ord=0, text=text, title="Sabbatical Leave",
                     clause="Eligibility", span=(0, len(text)), kind="body", language="en", status=status,
                     effective_date=dt.date(year, 1, 1))

    new = section("v2", "Contractors and interns on short placements are not covered. Sabbatical leave is open "
                        "to staff from their first day. There is no minimum length of service.", "active", 2025)
    old = section("v1", "Sabbatical leave is open to staff once they have completed two years of service.",
                  "superseded", 2021)
    question = "How long must I have worked here before I can take sabbatical leave?"
    evidence = [Evidence(chunk=c, score=1.0 - i * 0.05, rank=i + 1, legs=["bm25"]) for i, c in enumerate([old, new])]
    answer = Reasoner().reason(question, RouteDecision(question=question, query=question, language="en"), evidence)
    lead = answer.sentences[0].text
    assert "no minimum length of service" in lead or "first day" in lead, answer.text
    assert "two years" not in lead and "Contractors" not in lead


def test_no_minimum_length_of_service_answers_how_long_not_how_much():
    from agentic_rag.agents.reasoner.question import carries

    none = "There is no minimum length of service."
    assert carries("number", none, "How long must I have worked here before I can take sabbatical leave?")
    assert not carries("number", none, "How much is the monthly childcare subsidy?")
