"""The one sufficiency judge: is the evidence enough to answer, and if not, what is missing?

- :func:`sufficiency_rules` — the deterministic verdict of the sufficiency gate (coverage,
  timeliness, authority, 1-5 each, and the one missing element that drives a narrower round);
  an LLM gate's verdict has the same shape (:class:`Sufficiency`) and falls back to this one.
- :func:`coverage` — the Retriever's per-round check: are the question's entities found, and,
  when the question follows a relation, has the bridge entity's passage been retrieved?
- :func:`key_terms`, :func:`anchors` — what a question's evidence must cover.
"""

from __future__ import annotations

import re

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field

from agentic_rag.text.names import fold, title_matches
from agentic_rag.text.stopwords import GENERIC_EN, GENERIC_ZH, QUESTION_ZH, SCAFFOLD
from agentic_rag.text.terms import answer_classes, asked_noun
from agentic_rag.text.tokenize import dictionary_generation, tokenize
from agentic_rag.types import Chunk, Evidence, RouteDecision

__all__ = ["Coverage", "Sufficiency", "anchors", "coverage", "key_terms", "sufficiency_rules"]


class Sufficiency(BaseModel):
    """The sufficiency gate's verdict, from the LLM or the rules (``source``)."""

    coverage: int = Field(ge=1, le=5)
    timeliness: int = Field(ge=1, le=5)
    authority: int = Field(ge=1, le=5)
    verdict: Literal["SUFFICIENT", "INSUFFICIENT"]
    missing: str = ""
    source: Literal["llm", "rules"] = "rules"

    @property
    def confidence(self) -> float:
        """The three scores as one 0–1 number (the runtime's sufficiency threshold applies here)."""
        return round((self.coverage + self.timeliness + self.authority - 3) / 12, 3)

    @property
    def sufficient(self) -> bool:
        return self.verdict == "SUFFICIENT"

    def missing_element(self, route: RouteDecision) -> str:
        """What to look for next: the named missing element, else the weakest dimension (a
        model may say SUFFICIENT with timeliness 1, which is not sufficient enough to stop)."""
        if self.missing.strip():
            return self.missing.strip()
        zh = route.language == "zh"
        pinned = [str(y) for y in route.slots.years] or ([route.version] if route.version != "latest" else [])
        weakest = min(("coverage", self.coverage), ("timeliness", self.timeliness),
                      ("authority", self.authority), key=lambda kv: kv[1])[0]
        if weakest == "timeliness":
            if pinned:
                return f"{pinned[0]}年版本" if zh else f"the {pinned[0]} version"
            return "现行有效版本" if zh else "the version in force"
        if weakest == "authority":
            return "权威来源" if zh else "an authoritative source"
        return shown_word((key_terms(route.question) or [route.question])[0], route.question)


def shown_word(term: str, text: str) -> str:
    """The word of ``text`` an index token was made from, to name it to a reader: "remote" for
    the stem "remot"; the token itself when no word of ``text`` gives it."""
    for m in re.finditer(r"[A-Za-z][A-Za-z'’-]*", text):
        if term in tokenize(m.group(0)):
            return m.group(0)
    return term


def key_terms(text: str) -> list[str]:
    """Content terms of a question: tokens minus single CJK characters, question words and
    general-purpose stopwords (the index tokens are stems: "many" is "mani"). The index
    tokenizer also emits the parts of a compound (多长时间 -> 多长, 时间, 长时间); the parts of a
    Chinese question word (多长时间, 哪一年) are question words too."""
    # kept per text and dictionary: the runtime's gates, the Retriever's query checks and the
    # sufficiency rules ask for the terms of the same question several times per answer
    return list(_key_terms(text, dictionary_generation()))


@lru_cache(maxsize=8192)
def _key_terms(text: str, generation: int) -> tuple[str, ...]:
    toks = tokenize(text)
    asked = [t for t in toks if len(t) > 1 and t in QUESTION_ZH]
    # the noun a question word asks about ("哪些地方", "which countries") is the answer's
    # class; the documents state its instances, so it is never what the evidence lacks
    nouns = answer_classes(text)
    classes = set(tokenize(" ".join(nouns))) | {t for t in toks if asked_noun(t) in nouns}
    seen: dict[str, None] = {}
    for tok in toks:
        if tok in SCAFFOLD or tok in GENERIC_EN or tok in GENERIC_ZH or tok in QUESTION_ZH or tok in classes \
                or (len(tok) == 1 and not tok.isdigit()) or any(tok in q for q in asked):
            continue
        seen.setdefault(tok, None)
    return tuple(seen)


def anchors(route: RouteDecision) -> list[str]:
    """The slot values a good answer must touch: entities, places, clauses, persons, years."""
    s = route.slots
    return [*s.entities, *s.places, *s.clauses, *s.persons, *(str(y) for y in s.years)]


@lru_cache(maxsize=256)
def _terms_of(text: str, generation: int) -> frozenset[str]:
    """The search terms of the top evidence's text, kept per text and dictionary: each round's
    gate reads the same evidence again, and the same questions find the same evidence."""
    return frozenset(tokenize(text))


def _text_of(evidence: Sequence[Evidence]) -> str:
    return " ".join(f"{e.chunk.title} {e.chunk.authority or ''} {e.chunk.clause or ''} {e.chunk.text}"
                    for e in evidence)


def sufficiency_rules(route: RouteDecision, evidence: Sequence[Evidence], *,
                      terms: Sequence[str] | None = None) -> Sufficiency:
    """Coverage: share of the question's key terms (slot anchors count twice) found in the
    evidence. Timeliness: a pinned year must appear in a source's date/version/text; otherwise the
    top sources must be in force. Authority: body clauses of documents with a named issuer.
    ``terms``: ``key_terms(route.query or route.question)`` when the caller has them already."""
    if not evidence:
        return Sufficiency(coverage=1, timeliness=1, authority=1, verdict="INSUFFICIENT",
                           missing=(anchors(route) or key_terms(route.question) or [route.question])[0])
    top = list(evidence)[:8]
    body_terms = _terms_of(_text_of(top), dictionary_generation())
    if terms is None:
        terms = key_terms(route.query or route.question)
    anchored = [a for a in anchors(route) if a]
    years = {str(y) for y in route.slots.years}

    def dated(e: Evidence) -> str:
        c = e.chunk
        return f"{c.publish_date or ''} {c.effective_date or ''} {c.version or ''} {c.title} {c.text}"

    weighted: list[tuple[str, int, bool]] = []
    for a in anchored:
        if a in years:
            # a year is met by a source's dates or version: the 2023 version of a regulation
            # rarely writes "2023" in the clause that answers
            weighted.append((a, 2, any(a in dated(e) for e in top)))
            continue
        toks = key_terms(a) or tokenize(a)
        weighted.append((a, 2, bool(toks) and all(t in body_terms for t in toks)))
    for t in terms:
        weighted.append((t, 1, t in body_terms))
    total = sum(w for _, w, _ in weighted) or 1
    covered = sum(w for _, w, ok in weighted if ok)
    coverage = 1 + round(4 * covered / total) if weighted else 3
    uncovered = [name for name, _, ok in weighted if not ok]

    pinned = [str(y) for y in route.slots.years] or ([route.version] if route.version != "latest" else [])
    if pinned:
        timeliness = 5 if any(any(y in dated(e) for y in pinned) for e in top[:5]) else 2
    else:
        statuses = [e.chunk.status for e in top[:3]]
        timeliness = 5 if all(s == "active" for s in statuses) else (2 if statuses[0] != "active" else 4)

    lead = top[:3]
    authority = 3
    if any(e.chunk.authority for e in lead):
        authority += 1
    if all(e.chunk.kind in ("body", "table") for e in lead):
        authority += 1
    elif all(e.chunk.kind == "footnote" for e in lead):
        authority -= 1

    sufficient = coverage >= 4 and timeliness >= 3 and authority >= 2
    missing = ""
    if not sufficient:
        if uncovered:
            missing = shown_word(uncovered[0], route.query or route.question)
        elif timeliness < 3:
            missing = (f"{pinned[0]}年版本" if pinned else "现行有效版本") if route.language == "zh" else \
                (f"the {pinned[0]} version" if pinned else "the version in force")
        else:
            missing = "权威来源" if route.language == "zh" else "an authoritative source"
    return Sufficiency(coverage=coverage, timeliness=timeliness, authority=authority,
                       verdict="SUFFICIENT" if sufficient else "INSUFFICIENT", missing=missing)


@dataclass
class Coverage:
    """The sufficiency check's verdict for one round."""

    covered: list[str]
    missing: list[str]
    sufficient: bool


def coverage(entities: Sequence[str], chunks: Sequence[Chunk], needs_bridge: bool,
             bridged: bool) -> Coverage:
    """Are the question's entities found in the passages (title or text), and, when the question
    asks to follow a relation, has a bridge entity's own passage been retrieved?"""
    covered, missing = [], []
    said = [fold(f"{c.authority or ''} {c.text}") for c in chunks]  # the issuer may name it alone
    for e in entities:
        fe = fold(e)
        if any(title_matches(e, c) or fe in text for c, text in zip(chunks, said)):
            covered.append(e)
        else:
            missing.append(e)
    if needs_bridge and not bridged:
        missing.append("relation bridge")
    return Coverage(covered, missing, not missing)
