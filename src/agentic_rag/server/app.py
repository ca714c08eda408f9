"""The FastAPI app of ``arag serve``: parse, call :class:`~agentic_rag.server.service.Service`,
render. OpenAPI at ``/openapi.json``, docs at ``/docs``.

    uvicorn --factory agentic_rag.server.app:create_app     # settings from arag.toml / ARAG_*

Every error is JSON ``{"error": {"code", "message"}}`` with a 4xx status (a 503 when the index
cannot be read); an unexpected exception is logged and answered with a 500 in the same shape,
never a traceback.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import gc
import hmac
import os
import threading
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import FastAPI, File, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentic_rag.config import Settings
from agentic_rag.errors import AragError
from agentic_rag.server import sse
from agentic_rag.server.chat import chat_completion, chat_stream, split_messages
from agentic_rag.server.errors import error_payload
from agentic_rag.server.schemas import (
    AbortResult,
    AskRequest,
    ChatCompletion,
    ChatRequest,
    ConfirmRequest,
    Deleted,
    DocumentSummary,
    DocumentView,
    ErrorBody,
    FeedbackRecord,
    FeedbackRequest,
    Health,
    ModelCard,
    ModelList,
    ReasonRequest,
    ReportRequest,
    RetrieveRequest,
    RetrieveResponse,
    RouteRequest,
    ServedAnswer,
    ServiceInfo,
    SessionCreated,
    SessionView,
    TemplateInfo,
    UploadResult,
)
from agentic_rag.server.service import InputError, Service
from agentic_rag.state.runs import SessionBusy
from agentic_rag.types import Answer, RouteDecision, TraceEvent

MODEL_ID = "agentic-rag"
_OPEN_PATHS = ("/healthz", "/readyz", "/docs", "/openapi.json", "/redoc", "/static/")
#: the web page: static files shipped in the package (no data in them, so no key needed)
WEB = Path(__file__).with_name("web")
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 404, 409, 413, 415, 422, 429, 503)}

T = TypeVar("T")


def create_app(settings: Settings | None = None, *, service: Service | None = None) -> FastAPI:
    """The app over ``service`` (or a new one from ``settings``, or from ``Settings.load()``)."""
    if service is None:
        service = Service(settings or Settings.load())
    svc = service
    heartbeat_s = svc.settings.server.heartbeat_s
    started = int(time.time())

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await run_in_threadpool(svc.warm_up)
        # what start-up loaded (the index, the models, the app) lives as long as the process:
        # frozen, a full garbage collection no longer walks it, and no longer stops every
        # request for tens of milliseconds under load
        gc.collect()
        gc.freeze()
        yield
        svc.close()

    app = FastAPI(title="agentic-rag", version="0.1.0", lifespan=lifespan,
                  description="Cited answers from your own documents: the three agents' contracts, "
                              "streaming /v1/ask, an OpenAI-compatible chat endpoint, sessions, "
                              "documents, feedback, metrics.")
    app.state.service = svc
    if svc.settings.server.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=svc.settings.server.cors_origins,
                           allow_methods=["*"], allow_headers=["*"])
    app.add_middleware(_Gate, service=svc, keys=_api_keys())
    _error_handlers(app)

    async def blocking(request: Request, fn: Callable[[threading.Event], T]) -> T:
        """``fn(cancel)`` in the thread pool; a client that disconnects sets ``cancel``."""
        cancel = threading.Event()
        task = asyncio.ensure_future(run_in_threadpool(fn, cancel))
        while True:
            done, _ = await asyncio.wait({task}, timeout=0.5)
            if done:
                return task.result()
            if await request.is_disconnected():
                cancel.set()

    def stream_steps(request: Request, work: Callable[[Callable[[Any], None], threading.Event], Any],
                     finish: Callable[[Any], list[bytes]]) -> StreamingResponse:
        """One event per trace step of ``work(emit, cancel)`` as it happens (named by its kind),
        then ``finish(result)``'s frames, or an ``error`` and ``done`` event."""
        async def events():
            async for kind, value in sse.run_streaming(request, work, heartbeat_s):
                if kind == "heartbeat":
                    yield sse.HEARTBEAT
                elif kind == "item":
                    event: TraceEvent = value
                    yield sse.frame(event.model_dump(mode="json"), event.kind)
                elif kind == "result":
                    for frame in finish(value):
                        yield frame
                else:
                    yield sse.frame(error_payload(value)[1], "error")
                    yield sse.frame({"status": "error"}, "done")

        return StreamingResponse(events(), media_type=sse.MEDIA_TYPE, headers=sse.HEADERS)

    # ------------------------------------------------------------------ health and metrics
    @app.get("/healthz", response_model=Health, tags=["service"])
    def healthz() -> Health:
        return Health(status="ok")

    @app.get("/readyz", response_model=Health, responses=_ERRORS, tags=["service"])
    def readyz() -> Health:
        return Health(status="ready", detail=svc.ready())

    @app.get("/metrics", tags=["service"], response_class=Response,
             responses={200: {"content": {"text/plain": {}}}})
    def metrics() -> Response:
        return Response(svc.metrics.render(), media_type=svc.metrics.content_type)

    @app.get("/v1/info", response_model=ServiceInfo, tags=["service"])
    def info() -> ServiceInfo:
        """The LLM (if any), the modes and the sliders' ranges: what the web page draws."""
        return svc.info()

    # ------------------------------------------------------------------ the web page
    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(WEB / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=WEB), name="static")

    # ------------------------------------------------------------------ the three agents
    @app.post("/v1/route", response_model=RouteDecision, responses=_ERRORS, tags=["agents"])
    async def route(body: RouteRequest) -> RouteDecision:
        # about a millisecond of CPU: on the event loop, a thread hand-off would cost as much
        return svc.route(body.question)

    @app.post("/v1/retrieve", response_model=RetrieveResponse, responses=_ERRORS, tags=["agents"])
    def retrieve(body: RetrieveRequest) -> RetrieveResponse:
        decision, evidence = svc.retrieve(body.question, body.route, body.k)
        return RetrieveResponse(route=decision, evidence=evidence)

    @app.post("/v1/reason", response_model=Answer, responses=_ERRORS, tags=["agents"])
    def reason(body: ReasonRequest) -> Answer:
        return svc.reason(body.question, body.route, body.evidence)

    # ------------------------------------------------------------------ answers
    @app.post("/v1/ask", response_model=ServedAnswer, tags=["answers"],
              responses={**_ERRORS, 200: {"content": {"text/event-stream": {}}}})
    async def ask(body: AskRequest, request: Request) -> Any:
        """The answer as JSON; with ``Accept: text/event-stream`` or ``stream: true``, server-sent
        events: one per trace step as it happens (event name = the step's kind: route, gate,
        retrieve, tool, reason, verify, fallback, final, ...), then ``answer``, then ``done``."""
        if not (body.stream or "text/event-stream" in request.headers.get("accept", "")):
            # svc.ask_json refuses a bad question or session itself, in the same thread hand-off;
            # the JSON comes serialized (once, for the audit log too) off the event loop, and
            # FastAPI does not validate it again (the response_model only documents it)
            data = await blocking(request, lambda cancel: svc.ask_json(body, cancel=cancel))
            return Response(data, media_type="application/json")
        await run_in_threadpool(svc.check, body)  # a 4xx before the stream starts, not inside it

        def answered(answer: ServedAnswer) -> list[bytes]:
            return [sse.frame(answer.model_dump(mode="json", exclude={"trace"}), "answer"),
                    sse.frame({"answer_id": answer.answer_id, "status": answer.status}, "done")]

        return stream_steps(request, lambda emit, cancel: svc.ask(body, on_event=emit, cancel=cancel), answered)

    @app.get("/v1/reports", response_model=list[TemplateInfo], responses=_ERRORS, tags=["reports"])
    def report_templates() -> list[TemplateInfo]:
        """The report templates: packaged ones and those in reports.templates_dir."""
        return svc.report_templates()

    @app.post("/v1/reports", tags=["reports"], responses={**_ERRORS, 200: {"content": {"text/event-stream": {}}}})
    async def report(body: ReportRequest, request: Request) -> Any:
        """Run a report template (``compare-versions``, ``topic-brief``, ...). JSON: the report
        (sections of cited lines, per-clause changes, citations, conflicts, gaps, trace); with
        ``Accept: text/event-stream`` or ``stream: true``: one event per step as it happens
        (``plan``, ``step``, ``tool``, ``verify``, ``fallback``, ``final``, ...), then ``report``,
        then ``done``. Unknown template or document, bad inputs: a 4xx before anything runs."""
        await run_in_threadpool(svc.check_report, body)
        if not (body.stream or "text/event-stream" in request.headers.get("accept", "")):
            done = await blocking(request, lambda cancel: svc.report(body, cancel=cancel))
            return JSONResponse(done.model_dump(mode="json"))

        def reported(report: Any) -> list[bytes]:
            return [sse.frame(report.model_dump(mode="json", exclude={"trace"}), "report"),
                    sse.frame({"status": report.status}, "done")]

        return stream_steps(request, lambda emit, cancel: svc.report(body, on_event=emit, cancel=cancel), reported)

    @app.post("/v1/chat/completions", response_model=ChatCompletion, responses=_ERRORS, tags=["openai"])
    async def chat(body: ChatRequest, request: Request) -> Any:
        """OpenAI-compatible: the cited answer is the message content with [n] markers; the
        sources travel in ``citations`` (of the response, or of the stream's final chunk)."""
        question, history = split_messages(body.messages)
        ask_body = _ask_request(question)
        await run_in_threadpool(svc.check, ask_body)
        if not body.stream:
            answer = await blocking(request, lambda cancel: svc.ask(ask_body, cancel=cancel,
                                                                    history=history))
            return chat_completion(answer, body.model)
        work = lambda emit, cancel: svc.ask(ask_body, cancel=cancel, history=history)  # noqa: E731
        return StreamingResponse(chat_stream(request, work, body.model, heartbeat_s),
                                 media_type=sse.MEDIA_TYPE, headers=sse.HEADERS)

    @app.get("/v1/models", response_model=ModelList, tags=["openai"])
    def models() -> ModelList:
        return ModelList(data=[ModelCard(id=MODEL_ID, created=started)])

    # ------------------------------------------------------------------ sessions
    @app.post("/v1/sessions", response_model=SessionCreated, status_code=201, tags=["sessions"])
    def create_session() -> SessionCreated:
        state = svc.create_session()
        return SessionCreated(session_id=state.session_id, created=state.created)

    @app.get("/v1/sessions/{session_id}", response_model=SessionView, responses=_ERRORS, tags=["sessions"])
    def get_session(session_id: str) -> SessionView:
        return svc.session(session_id)

    @app.post("/v1/sessions/{session_id}/abort", response_model=AbortResult, responses=_ERRORS,
              tags=["sessions"])
    def abort_session(session_id: str) -> AbortResult:
        return AbortResult(session_id=session_id, status=svc.abort(session_id))

    @app.delete("/v1/sessions/{session_id}", response_model=Deleted, responses=_ERRORS, tags=["sessions"])
    def delete_session(session_id: str) -> Deleted:
        svc.delete_session(session_id)
        return Deleted(deleted=session_id)

    # ------------------------------------------------------------------ documents
    @app.post("/v1/documents", response_model=UploadResult, responses=_ERRORS, tags=["documents"])
    async def upload(files: Annotated[list[UploadFile], File(description="one or more files")]) -> UploadResult:
        items = [(f.filename or "", await f.read()) for f in files]
        return UploadResult(files=await run_in_threadpool(svc.upload, items))

    @app.get("/v1/documents", response_model=list[DocumentSummary], tags=["documents"])
    def list_documents() -> list[DocumentSummary]:
        return svc.documents()

    @app.get("/v1/documents/{doc_id}", response_model=DocumentView, responses=_ERRORS, tags=["documents"])
    def get_document(doc_id: str) -> DocumentView:
        return svc.document(doc_id)

    @app.post("/v1/documents/{doc_id}/confirm", response_model=DocumentView, responses=_ERRORS,
              tags=["documents"])
    def confirm_document(doc_id: str, body: ConfirmRequest) -> DocumentView:
        """Confirm metadata (``{"fields": {"publish_date": "2024-06-18"}}``): stored in the file's
        sidecar, applied at once and by every later ingest."""
        return svc.confirm(doc_id, body.fields)

    @app.get("/v1/documents/{doc_id}/pages/{page}", responses={**_ERRORS, 200: {"content": {"image/png": {}}}},
             response_class=Response, tags=["documents"])
    def page_image(doc_id: str, page: int) -> Response:
        """Page ``page`` (from 1) of a PDF document as PNG, ``page_scale`` pixels per point: a
        citation's ``boxes`` are drawn on it."""
        return Response(svc.page_image(doc_id, page), media_type="image/png",
                        headers={"Cache-Control": "private, max-age=300"})

    @app.delete("/v1/documents/{doc_id}", response_model=Deleted, responses=_ERRORS, tags=["documents"])
    def delete_document(doc_id: str) -> Deleted:
        svc.delete_document(doc_id)
        return Deleted(deleted=doc_id)

    # ------------------------------------------------------------------ feedback
    @app.post("/v1/feedback", response_model=FeedbackRecord, status_code=201, responses=_ERRORS,
              tags=["feedback"])
    def add_feedback(body: FeedbackRequest) -> FeedbackRecord:
        return svc.add_feedback(body)

    @app.get("/v1/feedback", response_model=list[FeedbackRecord], responses=_ERRORS, tags=["feedback"])
    def list_feedback(since: Annotated[dt.datetime | None, Query(description="ISO time; only later feedback")] = None
                      ) -> list[FeedbackRecord]:
        return svc.feedback.since(since)

    return app


def _ask_request(question: str) -> AskRequest:
    from pydantic import ValidationError

    try:
        return AskRequest(question=question)
    except ValidationError as exc:
        raise InputError("empty_question", "the last user message has no text") from exc


def _api_keys() -> list[str]:
    """``ARAG_API_KEYS`` (comma-separated), from the environment only."""
    return [k.strip() for k in os.environ.get("ARAG_API_KEYS", "").split(",") if k.strip()]


# ------------------------------------------------------------------ errors
def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error(400, "malformed_json", "the request body is not valid JSON")
        parts = []
        for e in errors[:3]:
            loc = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
            parts.append(f"{loc or 'body'}: {e.get('msg')}")
        return _error(422, "invalid_request", "; ".join(parts))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, f"http_{exc.status_code}")
        return _error(exc.status_code, code, str(exc.detail))

    async def service_error(request: Request, exc: Exception) -> JSONResponse:
        status, body = error_payload(exc)
        return JSONResponse(body, status_code=status)

    # the expected errors by class (handled inside the app, the connection stays open);
    # ``Exception`` last: Starlette answers it, then re-raises it to the server for the log
    for kind in (AragError, SessionBusy, ValueError, Exception):
        app.add_exception_handler(kind, service_error)


class _Gate:
    """ASGI middleware: API keys, the JSON body size limit, and request metrics."""

    def __init__(self, app: Any, service: Service, keys: list[str]) -> None:
        self.app = app
        self.service = service
        self.keys = [k.encode() for k in keys]
        server = service.settings.server
        self.per_minute = server.rate_limit_per_minute
        self.max_body = int(server.max_body_mb * 1024 * 1024)
        # an upload may carry several files of up to ingest.max_file_mb each
        self.max_upload = int(service.settings.ingest.max_file_mb * 1024 * 1024 * 8)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        path: str = scope["path"]
        status_box = [500]

        async def send_status(message: dict) -> None:
            if message["type"] == "http.response.start":
                status_box[0] = message["status"]
            await send(message)

        try:
            refused = self._refuse(scope, path)
            if refused is not None:
                await refused(scope, receive, send_status)
            else:
                await self.app(scope, receive, send_status)
        finally:
            route = scope.get("route")
            endpoint = getattr(route, "path", None) or "unmatched"
            self.service.metrics.request(endpoint, scope["method"], status_box[0],
                                         time.perf_counter() - start)

    def _refuse(self, scope: dict, path: str) -> JSONResponse | None:
        headers = dict(scope.get("headers") or [])
        given = b""
        open_path = path == "/" or path.startswith(_OPEN_PATHS)
        if self.keys and not open_path:
            given = headers.get(b"x-api-key", b"")
            auth = headers.get(b"authorization", b"")
            if auth.lower().startswith(b"bearer "):
                given = auth[7:].strip()
            if not any(hmac.compare_digest(given, k) for k in self.keys):
                return _error(401, "unauthorized", "a valid API key is required "
                                                   "(Authorization: Bearer KEY or X-API-Key)")
        if self.per_minute and not open_path:
            # per API key; without keys per client address
            who = given.decode("latin-1") if given else "addr:" + str((scope.get("client") or ("",))[0])
            try:
                allowed = self.service.limits.allow(who, self.per_minute)
            except AragError as exc:
                status, body = error_payload(exc)
                return JSONResponse(body, status_code=status)
            if not allowed:
                return _error(429, "rate_limited", f"more than {self.per_minute} requests this minute "
                              "for this key (server.rate_limit_per_minute); retry in the next minute")
        length = headers.get(b"content-length")
        if length is not None:
            try:
                size = int(length)
            except ValueError:
                return _error(400, "bad_content_length", "Content-Length is not a number")
            limit = self.max_upload if path == "/v1/documents" else self.max_body
            if size > limit:
                return _error(413, "body_too_large", f"the request body has {size} bytes; the limit "
                              f"is {limit} (server.max_body_mb)")
        return None

