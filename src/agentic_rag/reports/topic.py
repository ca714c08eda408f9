"""A topic across the corpus: the clauses that govern it, by document and status, their
conflicts (decided by the Reasoner's arbitration) and what the documents leave open."""

from __future__ import annotations

from collections.abc import Sequence

from agentic_rag.agents.reasoner.arbitration import Arbiter
from agentic_rag.agents.reasoner.conflicts import facts_of, find_conflicts
from agentic_rag.agents.vocabulary import TextCover
from agentic_rag.text.sentences import split_sentences
from agentic_rag.text.terms import Term, content_terms
from agentic_rag.types import Chunk, Conflict, Evidence

__all__ = ["IN_FORCE", "SUPERSEDED", "by_document", "governing", "topic_conflicts", "topic_terms",
           "uncovered"]

IN_FORCE, SUPERSEDED = "in_force", "superseded"
#: a clause governs the topic when it names at least this share of the topic's key terms
COVER_SHARE = 0.5


def topic_terms(topic: str) -> list[Term]:
    """The words a clause must name to be about ``topic`` (generic rule words only when the
    topic has nothing else)."""
    terms = content_terms(topic)
    return [t for t in terms if not t.soft] or terms


def _covered(terms: Sequence[Term], text: str) -> int:
    cover = TextCover(text)
    return sum(1 for t in terms if cover.covers(t))


def governing(evidence: Sequence[Evidence], topic: str) -> list[Evidence]:
    """The evidence that is about ``topic``, in rank order, each chunk once: the clauses whose
    text (with their document's title and heading path) names every key term of the topic, or,
    when none does, at least half of them. Heading-only chunks are left out."""
    from agentic_rag.ingest.chunking import heading_only

    terms = topic_terms(topic)
    seen: set[str] = set()
    scored: list[tuple[Evidence, int]] = []
    for ev in evidence:
        if ev.chunk_id in seen or heading_only(ev.chunk.text):
            continue
        seen.add(ev.chunk_id)
        text = f"{ev.chunk.text}\n{ev.chunk.title}\n{' '.join(ev.chunk.path)}"
        scored.append((ev, _covered(terms, text) if terms else 0))
    labelled = {ev.chunk.doc_id for ev, _ in scored if ev.chunk.clause}
    # a document's front matter or signature block is not a clause of it
    scored = [(ev, n) for ev, n in scored if ev.chunk.clause or ev.chunk.doc_id not in labelled]
    if not terms:
        return [ev for ev, _ in scored]
    full = [ev for ev, n in scored if n == len(terms)]
    if full:
        return full
    need = max(1, round(COVER_SHARE * len(terms) + 1e-9))
    return [ev for ev, n in scored if n >= need]


def status_of(chunk: Chunk) -> str:
    return IN_FORCE if chunk.status == "active" else SUPERSEDED


def by_document(evidence: Sequence[Evidence]) -> list[tuple[str, str, list[Chunk]]]:
    """(doc_id, status, chunks in document order): documents in force first, newest first."""
    groups: dict[str, list[Chunk]] = {}
    for ev in evidence:
        groups.setdefault(ev.chunk.doc_id, []).append(ev.chunk)

    def order(item: tuple[str, list[Chunk]]) -> tuple[int, str]:
        first = item[1][0]
        date = first.publish_date or first.effective_date
        return (0 if first.status == "active" else 1, "" if date is None else f"{9999 - date.year:04d}{date:%m%d}")

    out = []
    for doc_id, chunks in sorted(groups.items(), key=order):
        out.append((doc_id, status_of(chunks[0]), sorted(chunks, key=lambda c: c.ord)))
    return out


def topic_conflicts(evidence: Sequence[Evidence], arbiter: Arbiter) -> list[Conflict]:
    """Values of one matter that different documents state differently, each with the winner
    and the rule that decided (the Reasoner's conflict finder and arbiter)."""
    facts = []
    for rank, ev in enumerate(evidence):
        text = ev.chunk.text
        for s, e in split_sentences(text):
            facts.extend(facts_of(text[s:e], ev.chunk, rank))
    return [arbiter.conflict(group)[0] for group in find_conflicts(facts)]


def uncovered(topic: str, evidence: Sequence[Evidence]) -> list[str]:
    """The topic's key terms that no governing clause names."""
    texts = "\n".join(ev.chunk.text for ev in evidence)
    cover = TextCover(texts)
    return [t.text for t in topic_terms(topic) if not cover.covers(t)]
