"""The trace: every step of a run as a typed :class:`~agentic_rag.types.TraceEvent`.

A :class:`Tracer` belongs to one run. It stamps each event with the session id and the current
step, keeps them in order (they end up in ``Answer.trace``) and hands each one, as it happens, to
an optional ``sink`` callback: that is how the CLI prints progress and the service streams
server-sent events. Secrets never reach it: events carry tool arguments and reasons, never
provider settings, and a fallback reason (often an endpoint's own error text) is redacted once
more here, in case a provider other than the built-in ones let a token through.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from agentic_rag.models.llm import redact
from agentic_rag.types import TraceEvent

log = logging.getLogger(__name__)

Sink = Callable[[TraceEvent], None]


class Tracer:
    """Collects the events of one run and streams them to ``sink``.

    >>> t = Tracer("s1")
    >>> t.emit("route", confidence=0.9).kind
    'route'
    """

    def __init__(self, session_id: str = "", sink: Sink | None = None) -> None:
        self.session_id = session_id
        self.sink = sink
        self.step = 0
        self.events: list[TraceEvent] = []
        self._lock = threading.Lock()  # parallel tool calls emit from worker threads

    def emit(self, kind: str, *, tool: str | None = None, args: dict[str, Any] | None = None,
             duration_ms: float = 0.0, evidence_ids: list[str] | None = None,
             confidence: float | None = None, fallback: str | None = None,
             detail: str = "") -> TraceEvent:
        # what the runtime passes has the declared types already: validating it changes nothing,
        # so each value is checked as it is prepared and only an odd one costs a validation
        plain = type(kind) is str and type(detail) is str and (tool is None or type(tool) is str)
        if args:
            args = _snapshot(args)
            plain = plain and type(args) is dict and all(type(k) is str for k in args)
        else:
            args = {}
        if evidence_ids:
            ids = list(evidence_ids) if type(evidence_ids) is list else evidence_ids
            plain = plain and type(ids) is list and all(type(i) is str for i in ids)
        else:
            ids = []
        if duration_ms:
            duration_ms = round(duration_ms, 3)
        plain = plain and type(duration_ms) is float and (confidence is None or type(confidence) is float)
        if fallback:
            fallback = redact(fallback)
            plain = plain and type(fallback) is str
        else:
            fallback = None
        fields = {"session_id": self.session_id, "step": self.step, "kind": kind, "tool": tool,
                  "args": args, "duration_ms": duration_ms, "evidence_ids": ids,
                  "confidence": confidence, "fallback": fallback, "detail": detail}
        plain = plain and type(self.session_id) is str and type(self.step) is int
        event = _built(fields) if plain else TraceEvent(**fields)
        self._record(event)  # stamped already: no copy
        return event

    def add(self, event: TraceEvent) -> None:
        """Record an event made elsewhere (say, by the Retriever), restamped for this run."""
        self._record(event.model_copy(update={"session_id": self.session_id, "step": self.step}))

    def _record(self, event: TraceEvent) -> None:
        with self._lock:
            self.events.append(event)
        if self.sink is not None:
            try:
                self.sink(event)
            except Exception:  # a broken progress printer must not break the answer
                log.exception("trace sink failed on %s event", event.kind)

    def fallback(self, what: str, reason: str, **fields: Any) -> TraceEvent:
        """A deterministic implementation replaced an LLM decision; ``reason`` says why."""
        return self.emit("fallback", tool=what, fallback=reason, **fields)

    @contextmanager
    def timed(self) -> Iterator[Callable[[], float]]:
        """``with tracer.timed() as ms: ...; tracer.emit(..., duration_ms=ms())``"""
        start = time.perf_counter()
        yield lambda: (time.perf_counter() - start) * 1000.0


_EVENT_FIELDS = frozenset(TraceEvent.model_fields)


_new = object.__new__
_set = object.__setattr__


def _built(fields: dict[str, Any]) -> TraceEvent:
    """The event of ``fields`` (every field, each of its declared type) without
    re-validating them: what ``TraceEvent(**fields)`` makes, at a third of the cost (pydantic's
    ``model_construct`` costs more than the validation). tests/runtime/test_trace.py checks
    the two are the same event."""
    event = _new(TraceEvent)
    _set(event, "__dict__", fields)
    _set(event, "__pydantic_fields_set__", set(_EVENT_FIELDS))
    _set(event, "__pydantic_extra__", None)
    _set(event, "__pydantic_private__", None)
    return event


def _snapshot(value: Any) -> Any:
    """``value`` copied so that later changes to the caller's lists and dicts (a plan's steps are
    popped as they run) cannot reach the recorded event. Event arguments are JSON-shaped, and
    copying those by hand costs a fraction of ``copy.deepcopy``'s memo bookkeeping; anything
    else is deep-copied."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {k: v if type(v) in _ATOMS else _snapshot(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _ATOMS else _snapshot(v) for v in value]
    if kind is tuple:
        return tuple(_snapshot(v) for v in value)
    return copy.deepcopy(value)


_ATOMS = frozenset({str, int, float, bool, type(None)})
