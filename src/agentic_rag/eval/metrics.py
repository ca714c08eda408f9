"""Metric functions of ``arag eval``: pure, per question, then averaged by the runner.

Retrieval metrics take a ranked list of *unit* ids (passages, statute articles, clauses: what the
benchmark's gold names) and the gold ids. A system that returns several chunks of the same unit
is scored on the unit's first appearance (:func:`dedupe`), so splitting a long article into
pieces neither helps nor hurts the rank of the article.

Answer metrics compare an answer text with alias lists. The text is capped before matching
(200 characters for Chinese, 300 for English) so that pasting whole passages does not score.

    >>> recall_at(["a", "x", "b"], {"a", "b"}, 2)
    0.5
    >>> contains_alias("会议在2022年1月3日举行", ["1月3日"], "zh")
    True
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence

from agentic_rag.types import Answer, Conflict

#: characters of an answer that count, per language (RGB's protocol caps long dumps)
ANSWER_CAPS: dict[str, int] = {"zh": 200, "en": 300}

_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=\.)\s+|\n+")


# -- retrieval -------------------------------------------------------------------------------
def dedupe(units: Iterable[str]) -> list[str]:
    """Units in rank order, each kept at its first (best) rank."""
    seen: set[str] = set()
    out: list[str] = []
    for u in units:
        if u not in seen:
            seen.add(u)
            out.append(u)
    return out


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of distinct gold units found in the top ``k`` distinct ranked units.

    An empty gold set is a question this metric cannot score; callers skip it (raises)."""
    g = set(gold)
    if not g:
        raise ValueError("recall needs at least one gold unit")
    return len(g & set(dedupe(ranked)[:k])) / len(g)


def all_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 when every gold unit is in the top ``k`` ("perfect retrieval", 2Wiki's metric)."""
    g = set(gold)
    if not g:
        raise ValueError("all@k needs at least one gold unit")
    return 1.0 if g <= set(dedupe(ranked)[:k]) else 0.0


def mrr_at(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    """Reciprocal rank of the first gold unit within the top ``k`` distinct units, else 0."""
    g = set(gold)
    if not g:
        raise ValueError("mrr needs at least one gold unit")
    for rank, u in enumerate(dedupe(ranked)[:k], 1):
        if u in g:
            return 1.0 / rank
    return 0.0


def retrieval_scores(ranked: Sequence[str], gold: Iterable[str], k: int,
                     cutoffs: Sequence[int] = (2, 5, 8, 10)) -> dict[str, float]:
    """``all@k``, ``recall@c`` for each cutoff (and ``k``), ``mrr@10`` of one question."""
    g = set(gold)
    scores = {f"all@{k}": all_at(ranked, g, k)}
    for c in sorted({*cutoffs, k}):
        scores[f"recall@{c}"] = recall_at(ranked, g, c)
    scores["mrr@10"] = mrr_at(ranked, g, 10)
    return scores


# -- answers ---------------------------------------------------------------------------------
def normalize(text: str) -> str:
    """NFKC (full-width digits and letters to ASCII), lowercase, no whitespace."""
    return _SPACE.sub("", unicodedata.normalize("NFKC", text)).lower()


def capped(text: str, lang: str) -> str:
    return text[: ANSWER_CAPS.get(lang, ANSWER_CAPS["en"])]


def contains_alias(text: str, aliases: Iterable[str], lang: str) -> bool:
    """True when any non-empty alias occurs in the capped answer text (case/space-insensitive)."""
    t = normalize(capped(text, lang))
    return any(a and normalize(a) in t for a in aliases if normalize(a))


def parts_present(text: str, parts: Sequence[Sequence[str]], lang: str) -> list[bool]:
    """For each required part (a list of aliases), whether the capped answer contains it."""
    return [contains_alias(text, aliases, lang) for aliases in parts]


def all_parts_present(text: str, parts: Sequence[Sequence[str]], lang: str) -> bool:
    """Information integration: every part present. No parts -> False (nothing to verify)."""
    found = parts_present(text, parts, lang)
    return bool(found) and all(found)


def is_rejection(answer: Answer) -> bool:
    """The system declined to answer (status ``abstained``)."""
    return answer.status == "abstained"


# -- conflicts -------------------------------------------------------------------------------
def conflict_verdict(conflicts: Sequence[Conflict], true_aliases: Sequence[str],
                     fake_aliases: Sequence[str]) -> tuple[bool, str | None]:
    """Whether one reported conflict mentions both the true and the fake value, and which won.

    Returns ``(detected, winner)`` with winner ``"true"``, ``"fake"``, ``"other"`` (the winning
    value names neither) or ``"undecided"`` (the conflict is stated as one no rule decides),
    ``None`` when nothing was detected."""

    def mentions(text: str, aliases: Sequence[str]) -> bool:
        t = normalize(text)
        return any(normalize(a) and normalize(a) in t for a in aliases)

    def has_true(text: str) -> bool:
        # a fake value may contain the true one ("170" vs "70"): strip fake mentions first
        t = normalize(text)
        for f in fake_aliases:
            if normalize(f) and not any(normalize(f) in normalize(a) for a in true_aliases):
                t = t.replace(normalize(f), " ")
        return any(normalize(a) and normalize(a) in t for a in true_aliases)

    for c in conflicts:
        texts = [f"{v.value} {v.title} {v.clause or ''}" for v in c.values]
        if not (any(has_true(t) for t in texts) and any(mentions(t, fake_aliases) for t in texts)):
            continue
        if c.rule == "undecided":
            return True, "undecided"
        won = next((t for v, t in zip(c.values, texts) if v.chunk_id == c.winner), "")
        if has_true(won):
            return True, "true"
        if mentions(won, fake_aliases):
            return True, "fake"
        return True, "other"
    return False, None


# -- citations -------------------------------------------------------------------------------
def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def cited_sentence_share(answer: Answer) -> float | None:
    """Share of answer sentences with at least one citation; ``None`` for an abstention or an
    empty answer. An answer without sentence structure counts all its sentences uncited."""
    if is_rejection(answer) or not answer.text.strip():
        return None
    if answer.sentences:
        return sum(bool(s.citations) for s in answer.sentences) / len(answer.sentences)
    return 0.0


def citation_precision(answer: Answer, facts: Sequence[Sequence[str]]) -> tuple[int, int]:
    """(supported, checked) citations: a citation attached to a sentence that states a gold fact
    is supported when its quote contains that fact too. Sentences stating no gold fact are not
    checked (there is no fact to verify them against)."""
    quotes = {c.chunk_id: c.quote for c in answer.citations}
    supported = checked = 0
    sentences = answer.sentences or []
    for s in sentences:
        stated = [aliases for aliases in facts if _mentions(s.text, aliases)]
        if not stated:
            continue
        for cid in s.citations:
            checked += 1
            quote = quotes.get(cid, "")
            supported += any(_mentions(quote, aliases) for aliases in stated)
    return supported, checked


def _mentions(text: str, aliases: Sequence[str]) -> bool:
    t = normalize(text)
    return any(normalize(a) and normalize(a) in t for a in aliases)


# -- process ---------------------------------------------------------------------------------
def repeated_query_rate(batches: Sequence[Sequence[str]]) -> float | None:
    """Share of executed queries that repeat one executed earlier in the same run.

    Each batch is one retrieval step (the queries its legs ran together); a query repeated
    inside one batch counts once. ``None`` when nothing was executed."""
    seen: set[str] = set()
    issued = repeats = 0
    for batch in batches:
        current = {normalize(q) for q in batch if normalize(q)}
        issued += len(current)
        repeats += len(current & seen)
        seen |= current
    return repeats / issued if issued else None


def percentile(values: Sequence[float], p: float) -> float | None:
    """Linear-interpolated percentile (numpy's default method), ``None`` for no values."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * p / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not ``None``; ``None`` when there are none."""
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None
