"""Sentence spans: where a sentence ends and where a line only wraps. Texts written for the test."""

from __future__ import annotations

from agentic_rag.text.sentences import LIST_ITEM, split_sentences


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text)]


def test_a_numbered_item_keeps_its_number_and_a_sentence_still_ends_at_its_dot():
    text = "Approved ports:\n\n1. Valparaiso\n2. Durban\n\nShips dock at 9. Crews rest."
    assert sentences(text) == ["Approved ports:", "1. Valparaiso", "2. Durban", "Ships dock at 9", "Crews rest"]
    assert all(LIST_ITEM.match(s) for s in sentences(text)[1:3])

