"""Questions about two named things: which one comes first or is larger, which one has a
property, whether both have it.

- "Which band was formed first, The Exies or Circus Diablo?", "Who is older, A or B?",
  "A和B哪个成立得更早？": each thing's value (a date, or a number with the same unit) read from
  the best sentence about it, compared; the answer names the winner and cites both values.
- "Which singer is American, Mark King or Nick Hexum?": the one whose sentences state the
  property, when exactly one does.
- "Are A and B both film directors?", "Are both X and Y British publications?": yes only when
  the sentences about each state the property; the answer cites the sentence for each.

:func:`parse` reads the question; :func:`decide` works on scored candidate sentences (anything
with ``chunk``, ``text`` and ``quote``) and returns ``None`` when the evidence does not settle
it, so the Reasoner answers the usual way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_rag.agents.vocabulary import TextCover
from agentic_rag.text.quantities import extract_quantities
from agentic_rag.text.terms import content_terms

__all__ = ["Comparison", "Verdict", "decide", "parse"]

#: direction words: (pattern, kind of value compared, whether the smaller value wins)
_DIRECTIONS: tuple[tuple[re.Pattern[str], str, bool], ...] = (
    (re.compile(r"\b(?:first|earlier|earliest|older|oldest|before)\b|更早|最早|先|年长|更老", re.I), "date", True),
    (re.compile(r"\b(?:later|latest|younger|youngest|newer|newest|more recent|most recent|after)\b|更晚|最晚|"
                r"年轻|更新", re.I), "date", False),
    (re.compile(r"\b(?:larger|largest|bigger|biggest|more|most|higher|highest|taller|tallest|longer|longest|"
                r"greater|greatest)\b|更大|更多|更高|更长|最大|最多|最高", re.I), "number", False),
    (re.compile(r"\b(?:smaller|smallest|fewer|fewest|less|least|lower|lowest|shorter|shortest)\b|更小|更少|"
                r"更低|更短|最小|最少|最低", re.I), "number", True),
)
_WHICH_OR = re.compile(r"^\s*(?:which|who|what)\b(?P<head>.*?)(?:,|:)?\s+(?P<a>[^,?]+?)\s+or\s+(?P<b>[^,?]+?)\s*\??\s*$", re.I)
_BOTH = (re.compile(r"^\s*(?:are|were|is|was|do|did)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+both\s+(?P<attr>[^?]+?)\s*\??\s*$", re.I),
         re.compile(r"^\s*(?:are|were|do|did)\s+both\s+(?:\w+,\s+)?(?P<a>.+?)\s+and\s+(?P<b>[^,]+?),\s*(?P<attr>[^?]+?)\s*\??\s*$",
                    re.I))
_ZH_WHICH = re.compile(r"(?P<a>[^，,。？?、]{2,20}?)(?:和|与|跟|还是)(?P<b>[^，,。？?、]{2,20}?)"
                       r"(?:哪个|哪一个|谁|哪家|哪部)(?P<head>.*)$")
_LEADING = re.compile(r"^(?:the|a|an)\s+")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)


@dataclass(frozen=True)
class Comparison:
    """What a two-thing question asks: the things, the property words, and how to decide."""

    items: tuple[str, str]
    attribute: str  # the words of the property ("formed", "film directors")
    mode: str  # "compare" (values), "which" (the one with the property), "both" (yes/no)
    kind: str = ""  # "date" or "number" for "compare"
    smaller_wins: bool = True


@dataclass
class Verdict:
    """The decided answer: the winner (or yes/no) and, per thing, the sentence it rests on."""

    mode: str
    winner: str  # the winning thing, or "yes" / "no"
    sentences: list[Any]  # one candidate per thing, the winner's first
    values: list[str]  # the compared values as written, in the order of ``sentences``


def parse(question: str) -> Comparison | None:
    """The two-thing question in ``question``, or ``None``."""
    q = question.strip()
    m = next((m for m in (p.match(q) for p in _BOTH) if m), None)
    if m and not re.search(r"\bsame\b", q, re.I):
        return Comparison((_clean(m.group("a")), _clean(m.group("b"))), m.group("attr"), "both")
    m = _WHICH_OR.match(q)
    if m:
        head = m.group("head")
        a = _trailing_name(m.group("a")) if not re.search(r"[,:]", q) else _clean(m.group("a"))
        if not a:
            return None
        head = head + " " + m.group("a")[: len(m.group("a")) - len(a)] if a != _clean(m.group("a")) else head
        return _with_direction((a, _clean(m.group("b"))), head)
    m = _ZH_WHICH.search(q.rstrip("？?"))
    if m:
        found = _with_direction((m.group("a").strip(), m.group("b").strip()), m.group("head"))
        return found if found is not None and found.mode == "compare" else None
    return None


def _with_direction(items: tuple[str, str], head: str) -> Comparison | None:
    if not all(items):
        return None
    for pattern, kind, smaller in _DIRECTIONS:
        if pattern.search(head):
            return Comparison(items, pattern.sub(" ", head), "compare", kind, smaller)
    return Comparison(items, head, "which")


def _clean(name: str) -> str:
    return _LEADING.sub("", name.strip().strip("\"'“”")).strip()


def _trailing_name(text: str) -> str:
    """The capitalised words that end ``text`` ("was formed first The Exies" -> "The Exies")."""
    words = text.split()
    out: list[str] = []
    for w in reversed(words):
        if w[:1].isupper() or (out and w.lower() in ("of", "the", "and", "de", "von")):
            out.insert(0, w)
        else:
            break
    while out and out[0].lower() in ("of", "and", "de", "von"):
        out.pop(0)
    return _clean(" ".join(out))


def decide(comparison: Comparison, candidates: Sequence[Any], subject: Callable[[str], str]) -> Verdict | None:
    """Settle ``comparison`` from ``candidates`` (best first); ``subject`` gives the name a
    passage title is about. ``None`` when a thing has no sentence or the values do not compare."""
    per_item = [_about(name, candidates, subject) for name in comparison.items]
    if not all(per_item):
        return None
    attr = [t for t in content_terms(comparison.attribute) if not t.soft]
    if comparison.mode == "compare":
        found = [_value(sents, comparison.kind, attr) for sents in per_item]
        if not all(found):
            return None
        (sa, va, ka), (sb, vb, kb) = found  # type: ignore[misc]
        if ka == kb or comparison.kind == "number" and ka[0] != kb[0]:
            return None  # the same value, or numbers of different units: nothing decided
        first_wins = (ka < kb) == comparison.smaller_wins
        order = [(sa, va, 0), (sb, vb, 1)] if first_wins else [(sb, vb, 1), (sa, va, 0)]
        return Verdict("compare", comparison.items[order[0][2]], [o[0] for o in order], [o[1] for o in order])
    if not attr:
        return None
    states = [_stating(sents, attr) for sents in per_item]
    if comparison.mode == "which":
        having = [i for i, s in enumerate(states) if s is not None]
        if len(having) != 1:
            return None
        i = having[0]
        other = per_item[1 - i][0]
        return Verdict("which", comparison.items[i], [states[i], other], [])
    shown = [s if s is not None else sents[0] for s, sents in zip(states, per_item)]
    return Verdict("both", "yes" if all(s is not None for s in states) else "no", shown, [])


def _about(name: str, candidates: Sequence[Any], subject: Callable[[str], str]) -> list[Any]:
    """The candidates about ``name``: of a passage titled with it, or naming it."""
    low = _ARTICLE.sub("", name.lower())
    titled = [c for c in candidates if low in (_ARTICLE.sub("", subject(c.chunk.title).lower()),
                                               _ARTICLE.sub("", c.chunk.title.lower()))]
    if titled:
        return titled
    pattern = re.compile(rf"(?<!\w){re.escape(_ARTICLE.sub('', name))}(?!\w)", re.I)
    return [c for c in candidates if pattern.search(c.text)]


def _value(sentences: Sequence[Any], kind: str, attr: Sequence[Any]) -> tuple[Any, str, tuple] | None:
    """The first sentence (those stating the property's words first) with a value of ``kind``:
    (sentence, the value as written, a sort key)."""
    ranked = sorted(sentences, key=lambda s: -sum(TextCover(s.text).covers(t) for t in attr))
    for s in ranked:
        for q in extract_quantities(s.text):
            if kind == "date" and q.kind == "date":
                digits = re.findall(r"\d+", str(q.value))
                if digits and len(digits[0]) == 4:
                    return s, q.raw, tuple(int(d) for d in digits)
            if kind == "number" and q.kind not in ("date",) and isinstance(q.value, (int, float)):
                return s, q.raw, (q.unit or "", float(q.value))
        year = _YEAR.search(s.text) if kind == "date" else None
        if year:  # a bare year ("formed in 2004"), which quantities leave to dates in context
            return s, year.group(0), (int(year.group(0)),)
    return None


_YEAR = re.compile(r"(?<!\d)(?:1[0-9]|20)\d{2}(?!\d)")


def _stating(sentences: Sequence[Any], attr: Sequence[Any]) -> Any | None:
    """The first sentence stating every word of the property, or ``None``."""
    for s in sentences:
        cover = TextCover(f"{s.chunk.title} {s.text}")
        if all(cover.covers(t) for t in attr):
            return s
    return None
