"""What the HTTP app, ``arag warm`` and ``arag mcp`` call: the :class:`~agentic_rag.engine.Engine`
plus the service's promises (sessions shared by workers, abort, the deadline, the answer cache,
the audit log, feedback, metrics). No web framework here; the app only parses and renders.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentic_rag.config import Settings
from agentic_rag.engine import Engine
from agentic_rag.errors import IngestError, NotFoundError, QueueError
from agentic_rag.runtime import AgentRuntime, Limits, SessionState
from agentic_rag.server.audit import AuditLog
from agentic_rag.server.deadline import answer_within
from agentic_rag.server.feedback import FeedbackLog
from agentic_rag.server.metrics import Metrics
from agentic_rag.server.schemas import (
    AskControls,
    AskRequest,
    ClauseSpan,
    ControlInfo,
    DateCandidate,
    DocumentSummary,
    DocumentView,
    FeedbackRecord,
    FeedbackRequest,
    IngestedFile,
    ReportRequest,
    ServedAnswer,
    ServiceInfo,
    SessionTurn,
    SessionView,
    TemplateInfo,
    TemplateInput,
)
from agentic_rag.server.slots import RunSlots
from agentic_rag.state import open_state
from agentic_rag.state.cache import cache_key
from agentic_rag.state.runs import RunAbort
from agentic_rag.types import Answer, Evidence, RouteDecision, TraceEvent

Sink = Callable[[TraceEvent], None]

#: the folder under the index where uploaded files are kept (their path is the document's id)
UPLOADS = "uploads"
#: pixels per PDF point of the page images the document view draws citations on
PAGE_SCALE = 1.5
_UNSAFE = re.compile(r"[^\w.\- ]+")


class InputError(ValueError):
    """A request the service refuses (a 4xx): ``code`` names the problem for clients."""

    def __init__(self, code: str, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


class Service:
    """One per server process. Thread-safe: requests run in a thread pool."""

    def __init__(self, settings: Settings, *, engine: Engine | None = None) -> None:
        self.settings = settings
        self.engine = engine or Engine(settings)
        index = settings.index
        self.state = open_state(settings)
        self.sessions, self.runs, self.cache = self.state.sessions, self.state.runs, self.state.cache
        self.limits = self.state.limits
        self.audit = AuditLog(index)
        self.feedback = FeedbackLog(index)
        self.metrics = Metrics()
        self._runtimes: dict[tuple[Any, ...], AgentRuntime] = {}
        self._celery: Any = None
        self._lock = threading.Lock()
        self._ingest_lock = threading.Lock()
        slots = settings.server.run_slots(settings.store)
        self._run_slots = RunSlots(slots) if slots else None

    # ------------------------------------------------------------------ lifecycle
    def warm_up(self) -> None:
        """Open the store, load the embedder and run one question through the deterministic
        agents now, so the first request (and a deadline fallback) does not pay for it."""
        if self.engine.store.stats()["docs"]:
            self.runtime(False).run("warm-up: 第一条 scope")
        if self.engine.llm is not None:
            self.runtime(True)

    def ready(self) -> dict[str, Any]:
        stats = self.engine.store.stats()
        return {"docs": stats["docs"], "chunks": stats["chunks"], "index_version": stats["version"],
                "dense": self.engine.dense_status, "llm": self.settings.llm.provider, "pid": os.getpid(),
                "state": self.state.where, "reasoner": self.settings.server.reasoner}

    def info(self) -> ServiceInfo:
        from agentic_rag.runtime.loop import MODES

        stats = self.engine.store.stats()
        llm = self.settings.llm.provider if self.engine.llm is not None else None
        return ServiceInfo(version=_version(), llm=llm, modes=list(MODES), default_mode=self.settings.runtime.mode,
                           docs=stats["docs"], chunks=stats["chunks"],
                           controls=[ControlInfo(name="retrieval", min=1, max=4, default=3),
                                     ControlInfo(name="reflection", min=0, max=2, default=1),
                                     ControlInfo(name="latitude", min=0, max=2, default=1)])

    def close(self) -> None:
        for rt in self._runtimes.values():
            rt.tools.close()
        for part in (self.state, self.audit, self.feedback):
            part.close()
        self.engine.close()

    def runtime(self, use_llm: bool, k: int | None = None, controls: AskControls | None = None,
                queued: bool = False) -> AgentRuntime:
        """One runtime per (LLM or not, k, slider settings, reasoning queued to a worker or not):
        at most 2 × 51 × 60 × 2 of them."""
        controls = controls or AskControls()
        key = (use_llm, k, controls.key(), queued)
        with self._lock:
            rt = self._runtimes.get(key)
            if rt is None:
                limits = Limits.from_settings(self.settings).with_controls(
                    retrieval=controls.retrieval, reflection=controls.reflection, latitude=controls.latitude)
                if k is not None:
                    limits = limits.model_copy(update={"k": k})
                llm = self.engine.llm if use_llm else None
                if queued:
                    rt = AgentRuntime(router=self.engine.router, retriever=self.engine.retriever,
                                      reasoner=self._queued_reasoner(), store=self.engine.store,
                                      llm=llm, limits=limits, mode=self.settings.runtime.mode)
                else:
                    rt = AgentRuntime.from_engine(self.engine, llm=llm, limits=limits)
                self._runtimes[key] = rt
        return rt

    def _queued_reasoner(self) -> Any:
        from agentic_rag.workers import make_celery, reason_queue
        from agentic_rag.workers.reasoning import QueuedReasoner

        if self._celery is None:
            self._celery = make_celery(self.settings)
        return QueuedReasoner(self.engine.reasoner, self._celery, reason_queue(self.settings),
                              self.settings.server.deadline_s)

    # ------------------------------------------------------------------ the three agents
    def route(self, question: str) -> RouteDecision:
        return self.engine.route(self._question(question))

    def retrieve(self, question: str | None, route: RouteDecision | None,
                 k: int | None) -> tuple[RouteDecision, list[Evidence]]:
        if route is None:
            if question is None:
                raise InputError("missing_field", "give a question or a route")
            route = self.route(question)
        return route, self.engine.retriever.retrieve(route, k=k)

    def reason(self, question: str, route: RouteDecision | None, evidence: list[Evidence]) -> Answer:
        question = self._question(question)
        return self.engine.reasoner.reason(question, route or self.engine.route(question), evidence)

    # ------------------------------------------------------------------ reports
    @property
    def reports(self) -> Any:
        from agentic_rag.reports import ReportRunner

        return ReportRunner(self.engine, runtime=self.runtime(False, None, AskControls()))

    def report_templates(self) -> list[TemplateInfo]:
        return [TemplateInfo(name=t.name, title=t.title, description=t.description,
                             inputs=[TemplateInput(**i.model_dump()) for i in t.inputs],
                             steps=[f"{s.id}: {s.op}" for s in t.steps])
                for t in self.reports.templates().values()]

    def check_report(self, request: ReportRequest) -> None:
        """Refuse a report before a stream starts: unknown template or document, bad inputs,
        unknown session."""
        self.reports.prepare(request.template, request.inputs)
        if request.session_id is not None:
            self._state(request.session_id)

    def report(self, request: ReportRequest, *, on_event: Sink | None = None,
               cancel: threading.Event | None = None) -> Any:
        """Run a report template; ``POST /v1/sessions/{id}/abort`` on ``request.session_id``
        (or ``cancel``) stops it between steps."""
        session_id = request.session_id
        if session_id is not None:
            self._state(session_id)
            self.runs.start(session_id)
        abort = RunAbort(parent=cancel, registry=self.runs if session_id else None, session_id=session_id)
        try:
            return self.reports.run(request.template, request.inputs, on_event=on_event, abort=abort,
                                    session_id=session_id or "")
        finally:
            if session_id is not None:
                self.runs.finish(session_id)

    # ------------------------------------------------------------------ answers
    def check(self, request: AskRequest) -> None:
        """Refuse a request before a stream starts: empty or oversized question, unknown session."""
        self._question(request.question)
        if request.session_id is not None:
            self._state(request.session_id)

    def ask(self, request: AskRequest, *, on_event: Sink | None = None,
            cancel: threading.Event | None = None,
            history: Sequence[tuple[str, str]] = ()) -> ServedAnswer:
        """Answer one question (in a session when ``request.session_id`` names one).

        ``cancel`` stops the run between steps (a client that went away); ``history`` seeds the
        conversation of a session-less question (OpenAI-style message lists)."""
        return self._answer(request, on_event, cancel, history)[0]

    def ask_json(self, request: AskRequest, *, cancel: threading.Event | None = None) -> str:
        """:meth:`ask`'s answer as JSON: the text the audit log stored, serialized once."""
        return self._answer(request, None, cancel, ())[1]

    def _answer(self, request: AskRequest, on_event: Sink | None, cancel: threading.Event | None,
                history: Sequence[tuple[str, str]]) -> tuple[ServedAnswer, str]:
        started = time.monotonic()
        question = self._question(request.question)
        session_id = request.session_id
        use_llm = request.llm == "auto" and self.engine.llm is not None
        mode = request.mode
        deadline_s = request.options.deadline_s or self.settings.server.deadline_s
        key = version = None
        if session_id is None and not history and request.options.cache and self.settings.server.cache:
            version = self.engine.store.version
            key = cache_key(question, self._answer_settings(mode, use_llm, request.k, request.controls),
                            version)
            hit = self.cache.get(key, version)
            self.metrics.cache_lookup(hit is not None)
            if hit is not None:
                return self._served(hit, None, cached=True, deadline=False)
        if session_id is not None:
            state = self._state(session_id)
            self.runs.start(session_id)
            state.status = "running"  # what GET /v1/sessions/{id} shows meanwhile
            self.sessions.save(state)
        else:
            state = SessionState()
            for role, content in history:
                state.conversation.add(role, content)  # type: ignore[arg-type]
        abort = RunAbort(parent=cancel, registry=self.runs if session_id else None,
                         session_id=session_id)
        try:
            # the deadline counts from the request's arrival, not from the start of the run
            remaining = max(0.0, deadline_s - (time.monotonic() - started))
            answer, state, hit_deadline = self._run(question, state, mode, use_llm, request.k,
                                                    request.controls, remaining, on_event, abort)
        except BaseException:
            if session_id is not None:
                state.status = "failed"
                self.sessions.save(state)
            raise
        else:
            if session_id is not None:
                self.sessions.save(state)
        finally:
            if session_id is not None:
                self.runs.finish(session_id)
        if key is not None and version is not None and not hit_deadline and answer.status != "aborted":
            self.cache.put(key, version, answer)
        return self._served(answer, session_id, cached=False, deadline=hit_deadline)

    def _run(self, question: str, state: SessionState, mode: Any, use_llm: bool, k: int | None,
             controls: AskControls, deadline_s: float, on_event: Sink | None,
             abort: threading.Event) -> tuple[Answer, SessionState, bool]:
        plain = self.runtime(False, k, controls)

        def deterministic(st: SessionState, sink: Sink, ab: threading.Event) -> Answer:
            return plain.run(question, state=st, mode=mode, on_event=sink, abort=ab)

        if self.settings.server.reasoner == "queue":
            queued = self.runtime(use_llm, k, controls, queued=True)

            def remote(st: SessionState, sink: Sink, ab: threading.Event) -> Answer:
                try:
                    return queued.run(question, state=st, mode=mode, on_event=sink, abort=ab)
                except QueueError as exc:  # the broker is down: answer here, and say so
                    note = TraceEvent(session_id=st.session_id, kind="fallback", tool="queue",
                                      fallback=f"{exc}: deterministic answer from the API process")
                    sink(note)
                    answer = deterministic(st, sink, ab)
                    return answer.model_copy(update={"trace": [note, *answer.trace]})

            return answer_within(deadline_s, remote, deterministic, state, on_event, abort,
                                 what="the queued reasoning")
        if not use_llm:
            return self._deterministic(deterministic, state, on_event, abort), state, False
        agent = self.runtime(True, k, controls)
        # the runtime's own deadline (when this version of it has one) lets it finish in time
        # by itself; the thread below holds the guarantee either way
        extra = ({"deadline_s": deadline_s}
                 if "deadline_s" in inspect.signature(agent.run).parameters else {})

        def with_llm(st: SessionState, sink: Sink, ab: threading.Event) -> Answer:
            return agent.run(question, state=st, mode=mode, on_event=sink, abort=ab, **extra)

        return answer_within(deadline_s, with_llm, deterministic, state, on_event, abort)

    def _deterministic(self, run: Callable[[SessionState, Sink, threading.Event], Answer],
                       state: SessionState, on_event: Sink | None, abort: threading.Event) -> Answer:
        """``run`` once one of ``server.max_concurrent_runs`` slots is free, in the order the
        requests came: waiting costs no CPU, while one more run sharing the interpreter lock
        slows every other run down."""
        if self._run_slots is None:
            return run(state, on_event, abort)  # type: ignore[arg-type]
        with self._run_slots:
            return run(state, on_event, abort)  # type: ignore[arg-type]

    def _served(self, answer: Answer, session_id: str | None, *, cached: bool,
                deadline: bool) -> tuple[ServedAnswer, str]:
        """The answer as served, and its JSON (stored in the audit log, sent as the response)."""
        # the answer was validated when it was made: copy its fields, do not validate them again
        served = ServedAnswer.model_construct(**{
            **dict(answer), "answer_id": uuid.uuid4().hex[:16], "session_id": session_id,
            "cached": cached, "deadline_fallback": deadline})
        data = served.model_dump_json()
        self.audit.record(served, self.engine.store, data)
        self.metrics.answer(served, cached=cached, deadline=deadline)
        return served, data

    def _answer_settings(self, mode: Any, use_llm: bool, k: int | None,
                         controls: AskControls) -> dict[str, Any]:
        s = self.settings
        return {"mode": mode or s.runtime.mode, "llm": [s.llm.provider, s.llm.model] if use_llm else None,
                "k": k, "controls": list(controls.key()), "retrieval": s.retrieval.model_dump(mode="json"),
                "reasoner": s.reasoner.model_dump(mode="json"), "router": s.router.model_dump(mode="json"),
                "runtime": s.runtime.model_dump(mode="json"), "embedder": s.embedder.provider}

    def _question(self, question: str) -> str:
        limit = self.settings.runtime.max_question_chars
        if len(question) > limit:
            raise InputError("question_too_long", f"the question has {len(question)} characters; "
                             f"the limit is runtime.max_question_chars = {limit}", 413)
        question = question.strip()
        if not question:
            raise InputError("empty_question", "the question is empty")
        return question

    # ------------------------------------------------------------------ sessions
    def _state(self, session_id: str) -> SessionState:
        try:
            return self.sessions.load(session_id)
        except NotFoundError:
            raise NotFoundError(f"no session {session_id!r}") from None

    def create_session(self) -> SessionState:
        state = SessionState()
        self.sessions.save(state)
        return state

    def session(self, session_id: str) -> SessionView:
        state = self._state(session_id)
        turns = [SessionTurn(question=a.question, answer=a) for a in self.audit.for_session(session_id)]
        return SessionView(session_id=state.session_id, status=state.status, created=state.created,
                           updated=state.updated, turns=turns)

    def abort(self, session_id: str) -> str:
        state = self._state(session_id)
        return "aborting" if self.runs.request_abort(session_id) else state.status

    def delete_session(self, session_id: str) -> None:
        if not self.sessions.delete(session_id):
            raise NotFoundError(f"no session {session_id!r}")

    # ------------------------------------------------------------------ documents
    def documents(self) -> list[DocumentSummary]:
        counts = self.engine.store.chunk_counts()
        return [DocumentSummary(doc_id=d.doc_id, source=d.source, meta=d.meta,
                                chunks=counts.get(d.doc_id, 0)) for d in self.engine.store.documents()]

    def document(self, doc_id: str) -> DocumentView:
        doc = self.engine.store.get_document(doc_id)
        if doc is None:
            raise NotFoundError(f"no document {doc_id!r}")
        from agentic_rag.ingest.metadata import date_candidates

        clauses = [ClauseSpan(chunk_id=c.chunk_id, clause=c.clause, path=c.path, kind=c.kind, span=c.span,
                              page=c.extra.get("page"), boxes=c.extra.get("boxes") or [])
                   for c in self.engine.store.chunks(doc_id)]
        pdf = Path(doc.source).suffix.lower() == ".pdf" and Path(doc.source).is_file()
        return DocumentView(doc_id=doc.doc_id, source=doc.source, content_hash=doc.content_hash,
                            meta=doc.meta, text=doc.text, clauses=clauses,
                            date_candidates=[DateCandidate(**c) for c in date_candidates(doc.text, doc.meta)],
                            page_scale=PAGE_SCALE if pdf else None)

    def confirm(self, doc_id: str, fields: dict[str, str]) -> DocumentView:
        """Store a person's confirmation of metadata (``{"publish_date": "2024-06-18"}``) in the
        document's sidecar and ingest it again, as ``arag docs confirm`` does; a value that does
        not fit its field changes nothing (422)."""
        from agentic_rag.ingest.pipeline import confirm_fields

        doc = self.engine.store.get_document(doc_id)
        if doc is None:
            raise NotFoundError(f"no document {doc_id!r}")
        try:
            confirm_fields(doc, fields)
        except IngestError as exc:
            raise InputError("invalid_confirmation", str(exc)) from exc
        with self._ingest_lock:
            report = self.engine.ingest([doc.source])
        if not report.ok:
            raise InputError("invalid_confirmation", f"{doc.source}: {report.files[0].reason}")
        return self.document(doc_id)

    def page_image(self, doc_id: str, page: int) -> bytes:
        """Page ``page`` (from 1) of a PDF document as PNG, ``PAGE_SCALE`` pixels per point."""
        doc = self.engine.store.get_document(doc_id)
        if doc is None:
            raise NotFoundError(f"no document {doc_id!r}")
        path = Path(doc.source)
        if path.suffix.lower() != ".pdf" or not path.is_file():
            raise NotFoundError(f"document {doc_id!r} has no PDF pages to show")
        import io

        import pypdfium2

        pdf = pypdfium2.PdfDocument(str(path))
        try:
            if not 1 <= page <= len(pdf):
                raise NotFoundError(f"document {doc_id!r} has no page {page} (it has {len(pdf)})")
            image = pdf[page - 1].render(scale=PAGE_SCALE).to_pil()
        finally:
            pdf.close()
        out = io.BytesIO()
        image.save(out, format="PNG")
        return out.getvalue()

    def upload(self, files: Sequence[tuple[str, bytes]]) -> list[IngestedFile]:
        """Keep each file under ``<index>/uploads/`` and ingest it; a file that fails leaves the
        index and the uploads folder as they were (an earlier upload of the same name included)."""
        from agentic_rag.ingest.pipeline import SUFFIXES

        if not files:
            raise InputError("no_files", "send one or more files as multipart field 'files'")
        names = []
        for raw_name, _ in files:
            name = _UNSAFE.sub("_", Path(raw_name or "").name).strip(" .")
            suffix = Path(name).suffix.lower()
            if name.lower().endswith(".jsonl.gz"):
                suffix = ".jsonl"
            if not name or suffix not in SUFFIXES:
                raise InputError("unsupported_file_type",
                                 f"{raw_name!r}: unsupported file type; accepted: {', '.join(sorted(SUFFIXES))}",
                                 415)
            names.append(name)
        if len(set(names)) != len(names):
            raise InputError("duplicate_file", "two files with the same name in one upload")
        folder = Path(self.settings.index) / UPLOADS
        with self._ingest_lock:
            folder.mkdir(parents=True, exist_ok=True)
            backup = Path(tempfile.mkdtemp(prefix="arag-upload-"))
            try:
                paths = []
                for name, (_, data) in zip(names, files):
                    path = folder / name
                    if path.exists():
                        shutil.copy2(path, backup / name)
                    path.write_bytes(data)
                    paths.append(path)
                report = self.engine.ingest(paths)
                by_path = {Path(r.path).resolve(): r for r in report.files}
                results = []
                for name, path in zip(names, paths):
                    r = by_path.get(path.resolve())
                    status = r.status if r is not None else "failed"
                    if status == "failed":
                        kept = backup / name
                        if kept.exists():
                            shutil.copy2(kept, path)
                        else:
                            path.unlink(missing_ok=True)
                    reason = (r.reason if r is not None else "not ingested").replace(str(path), name)
                    results.append(IngestedFile(filename=name, status=status, doc_id=r.doc_id if r else None,
                                                chunks=r.chunks if r else 0, reason=reason))
                return results
            finally:
                shutil.rmtree(backup, ignore_errors=True)

    def delete_document(self, doc_id: str) -> None:
        with self._ingest_lock:
            doc = self.engine.store.get_document(doc_id)
            if doc is None or not self.engine.store.delete(doc_id):
                raise NotFoundError(f"no document {doc_id!r}")
            source = Path(doc.source)
            if source.parent.resolve() == (Path(self.settings.index) / UPLOADS).resolve():
                source.unlink(missing_ok=True)

    # ------------------------------------------------------------------ feedback
    def add_feedback(self, item: FeedbackRequest) -> FeedbackRecord:
        answer = self.audit.get(item.answer_id)
        if answer is None:
            raise NotFoundError(f"no answer {item.answer_id!r} (answer ids come with every answer)")
        return self.feedback.add(item, answer.question)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentic-rag")
    except PackageNotFoundError:
        return "0.1.0"
