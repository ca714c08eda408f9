"""Sentence spans: where a sentence ends and where a line only wraps. Texts written for the test."""

from __future__ import annotations

import pytest

from agentic_rag.text.sentences import LIST_ITEM, is_numbered_title, split_sentences, strip_label


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text)]


def test_a_numbered_item_keeps_its_number_and_a_sentence_still_ends_at_its_dot():
    text = "Approved ports:\n\n1. Valparaiso\n2. Durban\n\nShips dock at 9. Crews rest."
    assert sentences(text) == ["Approved ports:", "1. Valparaiso", "2. Durban", "Ships dock at 9", "Crews rest"]
    assert all(LIST_ITEM.match(s) for s in sentences(text)[1:3])


def test_a_numbered_title_set_as_a_sentence_is_told_from_a_list_item():
    text = "  4. Conveying Modified Versions.\n\n  You may convey a modified version.\n\n1. Oslo\n2. Bergen\n"
    first, _, item, _ = split_sentences(text)
    assert is_numbered_title(text[first[0]:first[1]], text[first[1]:])
    assert not is_numbered_title(text[item[0]:item[1]], text[item[1]:])  # "1. Oslo" lists a city
    assert not is_numbered_title("4. You may convey a modified version", ".\n\n")  # a sentence, not a title


def test_a_wrapped_line_that_starts_with_a_section_number_continues_its_sentence():
    # hard-wrapped text: "Section\n4.2," is a reference the line break fell before; "4.3 Fees"
    # opening a line is the next clause
    text = ("The operator is the data controller. Except as set out in Section\n4.2, no one else may\n"
            "change these terms\n4.3 Fees are paid yearly.")
    assert sentences(text) == ["The operator is the data controller",
                               "Except as set out in Section\n4.2, no one else may\nchange these terms",
                               "4.3 Fees are paid yearly"]



@pytest.mark.parametrize("sentence, stripped", [
    # an article's own title, set apart by spaces, is part of its label, not of the sentence
    ("第八条 加班调休 员工加班的，应当在三个月内安排调休", "员工加班的，应当在三个月内安排调休"),
    ("第十二条　押金退还　退租时押金应在七日内退还", "退租时押金应在七日内退还"),
    # a stray space inside the sentence itself is not a title
    ("第八条　为了保障 员工休息，制定本规定", "为了保障 员工休息，制定本规定"),
    ("第八条 员工加班的，应当安排调休", "员工加班的，应当安排调休"),
    # a clause quoted whole by an amendment opens with a quotation mark before its label
    ('"6.2 Deposits are refunded within 14 days of move-out.', "Deposits are refunded within 14 days of move-out."),
])
def test_a_label_with_its_title_or_opening_quote_is_stripped(sentence: str, stripped: str) -> None:
    assert strip_label(sentence) == stripped
