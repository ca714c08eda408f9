"""Clause labels and the numbered items one clause refers to in another."""

from __future__ import annotations

from agentic_rag.text.clauses import clause_number, item_references, item_text


def test_item_references_name_the_clause_and_its_items():
    assert item_references("村民会议讨论本章程第八条第（二）项和第（四）项规定的事项，应当经到会人员三分之二以上同意。") \
        == [("8", [2, 4])]
    assert item_references("有本办法第十五条第一款第三项、第五项情形的，不予登记。") == [("15", [3, 5])]
    assert item_references("依照本办法第十五条规定处理。") == []  # a whole clause, no item


def test_a_range_of_items_names_every_item_in_it():
    assert item_references("违反本规定第九条第一项至第四项规定的，处二百元罚款。") == [("9", [1, 2, 3, 4])]
    assert item_references("有本规定第九条第（二）项至第（三）项、第（六）项情形的") == [("9", [2, 3, 6])]


def test_item_text_reads_either_kind_of_bracket_and_misses_an_absent_item():
    clause = "第八条 下列事项由村民会议决定：\n（一）修订村规民约；\n(二)使用集体公益金；\n（四）调整宅基地。"
    assert item_text(clause, 1) == "修订村规民约"
    assert item_text(clause, 2) == "使用集体公益金"
    assert item_text(clause, 4) == "调整宅基地"
    assert item_text(clause, 3) == ""


def test_clause_numbers_of_common_labels():
    assert clause_number("第三十九条") == "39"
    assert clause_number("第十二条之一") == "12-1"
