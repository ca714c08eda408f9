"""Query expansion with the synonym table (packaged vocabulary plus ``retrieval.synonyms``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["expand_query", "term_in"]


_CJK = re.compile(r"[\u3400-\u9fff]")


def term_in(term: str, text: str) -> bool:
    # the plain substring test first: every query is checked against every synonym group,
    # and most terms are not in it at all
    if _CJK.search(term):
        return term in text
    if term.isupper():  # abbreviations match case-sensitively: "ID" but not "id"
        return term in text and re.search(
            rf"(?<![A-Za-z0-9]){re.escape(term)}(?![A-Za-z0-9])", text) is not None
    low, word = text.lower(), term.lower()
    return word in low and re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", low) is not None


def expand_query(query: str, groups: Sequence[Sequence[str]]) -> tuple[str, list[str]]:
    """The query with the synonyms of the terms it contains appended, and the added terms.

    >>> expand_query("公积金怎么提取", [["公积金", "住房公积金"]])
    ('公积金怎么提取 住房公积金', ['住房公积金'])
    """
    added: list[str] = []
    for group in groups:
        if any(term_in(t, query) for t in group):
            added += [t for t in group if not term_in(t, query) and t not in added]
    return (f"{query} {' '.join(added)}" if added else query), added
