"""The one fact-check: every number and key term of an answer sentence must be in what it cites."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from agentic_rag.agents.reasoner.compose import strip_templates
from agentic_rag.agents.vocabulary import shared_cover
from agentic_rag.text.numerals import normalize_digits
from agentic_rag.text.quantities import extract_quantities, quantity_key
from agentic_rag.text.terms import content_terms
from agentic_rag.types import Evidence

__all__ = ["check_sentence", "sentence_supported"]

_MARKERS = re.compile(r"\[\d+\]")


def check_sentence(sentence: str, cited_texts: Sequence[str],
                   cited_meta: Iterable[str] = ()) -> list[str]:
    """What in ``sentence`` its citations do not support: numbers (compared as normalized
    quantities, so 百分之九十 is supported by 90%) and key terms. ``cited_meta`` (titles,
    clause labels, dates) may support document names and years but not the facts themselves.

    Returns the unsupported items; an empty list means the sentence is supported.
    """
    return list(_check(sentence, tuple(cited_texts), tuple(cited_meta)))


@lru_cache(maxsize=2048)
def _check(sentence: str, cited_texts: tuple[str, ...], cited_meta: tuple[str, ...]) -> tuple[str, ...]:
    """:func:`check_sentence`, kept per sentence and citations: the same answer sentences are
    checked against the same clauses question after question."""
    body = strip_templates(_MARKERS.sub("", sentence))
    evidence = "\n".join(cited_texts)
    meta = "\n".join(cited_meta)
    have = {quantity_key(q) for q in extract_quantities(evidence)}
    have_meta = {quantity_key(q) for q in extract_quantities(meta)}
    missing: list[str] = []
    for q in extract_quantities(body):
        key = quantity_key(q)
        if key in have or (q.kind == "date" and key in have_meta):
            continue
        missing.append(q.raw)
    stated = extract_quantities(body)
    taken = "".join(q.raw for q in stated)
    plain = shared_cover(evidence + "\n" + meta)
    words = body
    for q in stated:
        words = words.replace(q.raw, " ")
    for num in re.findall(r"\d+(?:\.\d+)?", normalize_digits(body)):
        if num not in normalize_digits(taken) and num not in plain.text:
            missing.append(num)
    for term in content_terms(words):
        if not plain.covers(term):
            missing.append(term.text)
    return tuple(missing)


def sentence_supported(sentence: str, cited: Sequence[Evidence]) -> bool:
    """Whether the passages ``cited`` support ``sentence`` (:func:`check_sentence` finds nothing
    missing); titles, clause labels and dates may support names and years. The verification
    gate's deterministic check, and the test an LLM's rewrite must pass."""
    if not cited:
        return False
    meta = [x for e in cited for x in (e.chunk.title, e.chunk.clause or "",
                                        str(e.chunk.publish_date or ""), e.chunk.version or "") if x]
    return not check_sentence(sentence, [e.chunk.text for e in cited], meta)
