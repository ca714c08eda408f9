"""Request and response bodies of the HTTP service (the agents' own contracts come from
:mod:`agentic_rag.types`). Unknown fields are refused, so a typo is a 422, not a silent default."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_rag.types import Answer, DocMeta, Evidence, RouteDecision

Mode = Literal["pipeline", "react", "plan"]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AskOptions(_Request):
    deadline_s: float | None = Field(None, gt=0, le=600,
                                     description="this request's deadline (default server.deadline_s)")
    cache: bool = Field(True, description="use and fill the answer cache (questions outside a session)")


class AskControls(_Request):
    """The web page's three sliders (None: as configured). See
    :meth:`agentic_rag.runtime.Limits.with_controls`."""

    retrieval: int | None = Field(None, ge=1, le=4, description="retrieval intensity: 1 = one query "
                                  "in one round, 2 = two queries a round in up to two rounds, 3 = "
                                  "three and three (default), 4 = three queries in up to five rounds")
    reflection: Literal[0, 1, 2] | None = Field(None, description="reflection depth: 0 = one round, "
                                                "no sufficiency or verification gate; 1 = every gate "
                                                "(default); 2 = stricter sufficiency, every sentence re-verified")
    latitude: Literal[0, 1, 2] | None = Field(None, description="inference latitude: 0 = abstain unless "
                                              "the whole question is covered; 1 = answer what was found, "
                                              "name the rest (default); 2 = quote the closest passages "
                                              "as needs_review instead of abstaining")

    def key(self) -> tuple[int | None, int | None, int | None]:
        return (self.retrieval, self.reflection, self.latitude)


class AskRequest(_Request):
    question: str = Field(min_length=1)
    session_id: str | None = Field(None, min_length=1, max_length=64)
    mode: Mode | None = None
    llm: Literal["auto", "none"] = Field("auto", description='"none": deterministic agents only')
    k: int | None = Field(None, ge=1, le=50, description="evidence handed to the Reasoner")
    stream: bool = Field(False, description="server-sent events (same as Accept: text/event-stream)")
    options: AskOptions = Field(default_factory=AskOptions)
    controls: AskControls = Field(default_factory=AskControls)


class ReportRequest(_Request):
    # a name only, never a path: the service reads no file a client names
    template: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$", description="a name from GET /v1/reports")
    inputs: dict[str, str] = Field(default_factory=dict, description='e.g. {"old": DOC_ID, "new": DOC_ID}')
    session_id: str | None = Field(None, min_length=1, max_length=64,
                                   description="POST /v1/sessions/{id}/abort stops the report between steps")
    stream: bool = Field(False, description="server-sent events (same as Accept: text/event-stream)")


class TemplateInput(BaseModel):
    name: str
    kind: str
    description: str = ""
    required: bool = True


class TemplateInfo(BaseModel):
    name: str
    title: str
    description: str = ""
    inputs: list[TemplateInput]
    steps: list[str]


class ServedAnswer(Answer):
    """An :class:`~agentic_rag.types.Answer` as the service returns it."""

    answer_id: str
    session_id: str | None = None
    cached: bool = Field(False, description="served from the answer cache")
    deadline_fallback: bool = Field(False, description="the LLM-backed run passed the deadline; "
                                    "this is the deterministic answer")


class RouteRequest(_Request):
    question: str = Field(min_length=1)


class RetrieveRequest(_Request):
    question: str | None = Field(None, min_length=1)
    route: RouteDecision | None = Field(None, description="a Router decision (else the question is routed)")
    k: int | None = Field(None, ge=1, le=200)


class RetrieveResponse(BaseModel):
    route: RouteDecision
    evidence: list[Evidence]


class ReasonRequest(_Request):
    question: str = Field(min_length=1)
    route: RouteDecision | None = None
    evidence: list[Evidence] = Field(default_factory=list, max_length=200)


class SessionCreated(BaseModel):
    session_id: str
    created: dt.datetime


class SessionTurn(BaseModel):
    question: str
    answer: ServedAnswer


class SessionView(BaseModel):
    session_id: str
    status: str
    created: dt.datetime
    updated: dt.datetime
    turns: list[SessionTurn]


class AbortResult(BaseModel):
    session_id: str
    status: str = Field(description='"aborting" when a run was going, else the session status')


class ClauseSpan(BaseModel):
    chunk_id: str
    clause: str | None
    path: list[str]
    kind: str
    span: tuple[int, int]
    #: from a PDF: the first page and the blocks the clause covers, ``[page, x0, top, x1, bottom]``
    #: in PDF points from the page's top-left corner (draw them on ``/v1/documents/{id}/pages/{n}``)
    page: int | None = None
    boxes: list[list[float]] = Field(default_factory=list)


class DateCandidate(BaseModel):
    """A date ingest read for a document, for a person to confirm (``arag docs --dates``)."""

    kind: str  # publish, effective, signature, amendment
    field: str | None  # the metadata field it would set: publish_date, effective_date
    date: str
    rule: str  # the rule that found it; "confirmed" once a person confirmed it
    span: list[int] | None = None  # where in the document text, when read from the text
    text: str | None = None


class ConfirmRequest(BaseModel):
    """Metadata values a person confirms, e.g. ``{"fields": {"publish_date": "2024-06-18"}}``:
    kept in the file's sidecar ``<file>.meta.json``, so every later ingest applies them."""

    fields: dict[str, str] = Field(min_length=1)


class DocumentSummary(BaseModel):
    doc_id: str
    source: str
    meta: DocMeta
    chunks: int


class DocumentView(BaseModel):
    doc_id: str
    source: str
    content_hash: str
    meta: DocMeta
    text: str
    clauses: list[ClauseSpan]
    date_candidates: list[DateCandidate] = Field(default_factory=list)
    #: pixels per PDF point of ``/v1/documents/{id}/pages/{n}`` (None: not a PDF on disk)
    page_scale: float | None = None


class IngestedFile(BaseModel):
    filename: str
    status: Literal["added", "unchanged", "replaced", "failed"]
    doc_id: str | None = None
    chunks: int = 0
    reason: str = ""


class UploadResult(BaseModel):
    files: list[IngestedFile]


class FeedbackRequest(_Request):
    answer_id: str = Field(min_length=1, max_length=64)
    rating: Literal["up", "down"]
    reason: str | None = Field(None, max_length=2000)
    irrelevant_chunk_ids: list[str] = Field(default_factory=list, max_length=100)


class FeedbackRecord(FeedbackRequest):
    feedback_id: int
    at: dt.datetime
    question: str


class Deleted(BaseModel):
    deleted: str


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


# ------------------------------------------------------------------ OpenAI-compatible chat
class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")  # clients send name, tool_call_id, ...

    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """What OpenAI-compatible clients send; sampling fields are accepted and ignored (the answer
    is built from evidence, not sampled)."""

    model_config = ConfigDict(extra="allow")

    model: str = "agentic-rag"
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


class ChatChoiceMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class ChatChoice(BaseModel):
    index: int = 0
    message: ChatChoiceMessage
    finish_reason: Literal["stop"] = "stop"


class ChatUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]
    usage: ChatUsage
    #: extra fields (the official client keeps them): the cited sources behind the [n] markers
    citations: list[dict[str, Any]] = Field(default_factory=list)
    answer_id: str = ""
    status: str = ""


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "agentic-rag"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class ControlInfo(BaseModel):
    name: Literal["retrieval", "reflection", "latitude"]
    min: int
    max: int
    default: int


class ServiceInfo(BaseModel):
    """What a client (the web page) needs to draw its controls."""

    version: str
    llm: str | None = Field(description='the configured LLM provider; null when it is "none"')
    modes: list[Mode]
    default_mode: Mode
    controls: list[ControlInfo]
    docs: int
    chunks: int


class Health(BaseModel):
    status: str
    detail: dict[str, Any] = Field(default_factory=dict)

