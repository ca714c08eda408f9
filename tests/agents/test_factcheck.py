"""The fact-check of an answer sentence against what it cites."""

from __future__ import annotations

from agentic_rag.agents.reasoner.factcheck import check_sentence


def test_unsupported_numbers_and_words_are_named_and_the_list_is_the_callers_own():
    cited = ["职工住院医疗费用报销比例为80%，退休人员为85%。"]
    first = check_sentence("职工住院报销比例为90%[1]。", cited)
    assert first == ["90%"]
    first.append("x")  # checking the same sentence again is not changed by what a caller did
    assert check_sentence("职工住院报销比例为90%[1]。", cited) == ["90%"]
    assert check_sentence("职工住院报销比例为80%[1]。", cited) == []
    # the same sentence against other citations is checked against those
    assert check_sentence("职工住院报销比例为80%[1]。", ["退休人员报销比例为85%。"]) != []
