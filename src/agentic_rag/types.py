"""The contracts agents, stores and the CLI exchange.

Every model here is pydantic v2; documents, chunks and edges are frozen (they are facts about
the corpus). Agents read only these types from each other, never each other's internals:

    question -> Router -> RouteDecision -> Retriever -> [Evidence] -> Reasoner -> Answer

Chunk ids are stable across re-ingest of unchanged content: ``<doc_id>:<clause path>:<n>``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_rag.text.clauses import AMENDED_CLAUSE

SectionKind = Literal["body", "appendix", "footnote", "table"]
DocStatus = Literal["active", "superseded", "repealed"]
EdgeKind = Literal["REFERENCES", "SUPERSEDES"]
AnswerStatus = Literal["answered", "abstained", "needs_review", "aborted"]

#: Position weights per section kind (DESIGN.md): a footnote is weaker evidence than a body clause.
POSITION_WEIGHTS: dict[str, float] = {"body": 1.0, "table": 1.0, "appendix": 0.6, "footnote": 0.3}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Table(_Frozen):
    """A table kept as structured rows; ``Chunk.text`` holds its searchable rendering."""

    headers: list[str]
    rows: list[list[str]]


class _Dated:
    """What a document's dates say, for its metadata and each of its chunks (both have
    ``publish_date`` and ``effective_date`` fields)."""

    @property
    def version_date(self) -> dt.date | None:
        """The date that orders versions of one document: its publication date, else the date
        it takes effect (a handbook page's front matter often gives only ``effective_date``)."""
        return self.publish_date or self.effective_date  # type: ignore[attr-defined]


class DocMeta(_Dated, _Frozen):
    """Metadata of one document; every field can be overridden by a sidecar or jsonl ``meta``."""

    title: str = ""
    doc_number: str | None = None
    authority: str | None = None
    publish_date: dt.date | None = None
    effective_date: dt.date | None = None
    version: str | None = None
    status: DocStatus = "active"
    language: str = "zh"
    #: which rule found each field, e.g. ``{"publish_date": "发布日期 line"}``; "override" for user values
    provenance: dict[str, str] = Field(default_factory=dict)
    #: statements in the text that repeal/supersede other documents (titles or doc numbers)
    supersedes: list[str] = Field(default_factory=list)
    #: anything else the user supplied (place, category, ...), usable in filters
    extra: dict[str, Any] = Field(default_factory=dict)


class Document(_Frozen):
    """One ingested source document."""

    doc_id: str
    source: str
    content_hash: str
    text: str
    meta: DocMeta


class Chunk(_Dated, _Frozen):
    """One clause (or a piece of a long clause) of a document, with its document metadata."""

    chunk_id: str
    doc_id: str
    ord: int
    text: str
    clause: str | None = None  # label as written: 第十二条, Section 4, 3.1
    clause_no: str | None = None  # normalized: "12", "12-1" for 第十二条之一, "3.1", "A"
    path: list[str] = Field(default_factory=list)  # heading path: ["第三章", "第十二条"]
    kind: SectionKind = "body"
    position_weight: float = 1.0
    span: tuple[int, int] = (0, 0)  # char span in Document.text
    table: Table | None = None
    # propagated document metadata, so a chunk is self-describing evidence
    title: str = ""
    source: str = ""
    doc_number: str | None = None
    authority: str | None = None
    publish_date: dt.date | None = None
    effective_date: dt.date | None = None
    version: str | None = None
    status: DocStatus = "active"
    language: str = "zh"
    extra: dict[str, Any] = Field(default_factory=dict)

    def is_version(self, pinned: str | int) -> bool:
        """Whether this chunk belongs to the version a question pins ("2023" in "按照2023年的规定"):
        its version says so, its title names it, or it was published or took effect that year.
        The one rule the Retriever, the Reasoner and arbitration use."""
        pinned = str(pinned)
        if (self.version and pinned in self.version) or (self.title and pinned in self.title):
            return True
        return pinned.isdigit() and any(d is not None and d.year == int(pinned)
                                        for d in (self.publish_date, self.effective_date))



class Edge(_Frozen):
    """A graph edge. REFERENCES: chunk -> chunk. SUPERSEDES: newer doc -> older doc."""

    src: str
    dst: str
    kind: EdgeKind
    phrase: str = ""  # the text that produced the edge, e.g. 详见第七条

    @property
    def amends(self) -> bool:
        """Whether ``src`` is an item of an amending act that changes the clause ``dst``: its
        phrase is how such an item names the clause (:data:`~agentic_rag.text.clauses.AMENDED_CLAUSE`:
        "将第九条", "在第七条", "Clause 4.2 is deleted and replaced"); a plain reference starts
        with its verb (详见, see)."""
        return self.kind == "REFERENCES" and AMENDED_CLAUSE.match(self.phrase) is not None


class Filter(_Frozen):
    """A metadata filter: ``field op value`` (ops: = != < <= > >= in like)."""

    field: str
    op: Literal["=", "!=", "<", "<=", ">", ">=", "in", "like"] = "="
    value: Any


class Slots(BaseModel):
    places: list[str] = Field(default_factory=list)
    years: list[int] = Field(default_factory=list)
    dates: list[dt.date] = Field(default_factory=list)
    amounts: list[str] = Field(default_factory=list)
    persons: list[str] = Field(default_factory=list)  # person categories: 在职, 退休, ...
    entities: list[str] = Field(default_factory=list)  # from the lexicon and proper names
    clauses: list[str] = Field(default_factory=list)  # clause references in the question: 第七条


class RouteDecision(BaseModel):
    """The Router's contract: what the question asks for and how to look for it."""

    question: str
    intent: list[str] = Field(default_factory=lambda: ["general"])
    slots: Slots = Field(default_factory=Slots)
    query: str = ""  # normalized query used for retrieval
    version: str = "latest"  # "latest" or a pinned year such as "2023"
    language: str = "zh"
    confidence: float = 0.0
    fallback: bool = False  # True when the default route replaced a low-confidence/invalid one
    subqueries: list[str] = Field(default_factory=list)  # decomposed or planned queries


class Evidence(BaseModel):
    """A retrieved chunk with its fused score and per-leg scores."""

    chunk: Chunk
    score: float
    scores: dict[str, float] = Field(default_factory=dict)  # bm25, vector, graph, position, recency
    rank: int = 0
    legs: list[str] = Field(default_factory=list)  # which legs found it
    round: int = 1  # retrieval round that found it

    @property
    def chunk_id(self) -> str:
        return self.chunk.chunk_id


class Quantity(BaseModel):
    """A normalized value mentioned in a claim: 3个工作日 -> (3, 'workday'); a name stated as a
    value ("Tampa" in "Tampa hosted the final") is kind ``entity``, its value the lowercased text.
    Frozen: the extractor hands out the same objects for the same text (text/quantities.py)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["percent", "money", "duration", "date", "number", "count", "entity"]
    value: float | str
    unit: str = ""
    raw: str


class Claim(BaseModel):
    """A short statement extracted from one evidence chunk."""

    chunk_id: str
    text: str
    matter: str = ""  # what the claim is about, normalized (used to pair claims for conflicts)
    quantities: list[Quantity] = Field(default_factory=list)


class ConflictValue(BaseModel):
    value: str
    chunk_id: str
    title: str = ""
    clause: str | None = None
    publish_date: dt.date | None = None


class Conflict(BaseModel):
    """Two or more sources disagree about the same matter; the winner and the deciding rule."""

    matter: str
    values: list[ConflictValue]
    winner: str  # chunk id of the winning value
    rule: str  # e.g. "newer (≥1 year)", "authority×recency", "pinned version 2023", "override"


class Citation(BaseModel):
    chunk_id: str
    doc_id: str
    title: str
    clause: str | None = None
    quote: str
    span: tuple[int, int] = (0, 0)


class AnswerSentence(BaseModel):
    text: str
    citations: list[str]  # chunk ids
    supported: bool = True


class TraceEvent(BaseModel):
    """One step of a run, streamable as it happens."""

    session_id: str = ""
    step: int = 0
    kind: str  # route, retrieve, gate, reason, verify, tool, fallback, final, abort, ...
    tool: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    duration_ms: float = 0.0
    evidence_ids: list[str] = Field(default_factory=list)
    confidence: float | None = None
    fallback: str | None = None  # why a deterministic fallback ran, when one did
    detail: str = ""


class Usage(BaseModel):
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: int = 0
    retrieval_rounds: int = 0
    llm_ms: float = 0.0  # time spent waiting for LLM calls
    wall_ms: float = 0.0  # the whole run, LLM calls included


class Answer(BaseModel):
    """The Reasoner's contract and what users see."""

    question: str = ""
    text: str
    status: AnswerStatus
    sentences: list[AnswerSentence] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list)
    route: RouteDecision | None = None
    trace: list[TraceEvent] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
