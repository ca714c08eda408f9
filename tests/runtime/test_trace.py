"""The trace records each step as it was: later changes to the lists and dicts a step was
described with (a plan's steps are popped as they run) do not reach the recorded event."""

from __future__ import annotations

from agentic_rag.runtime.trace import Tracer
from agentic_rag.types import TraceEvent


def test_an_event_keeps_its_arguments_as_they_were_when_emitted():
    seen: list[TraceEvent] = []
    tracer = Tracer("s1", seen.append)
    steps = ["a", "b", {"nested": ["c"]}]
    tracer.step = 2
    tracer.emit("plan", args={"steps": steps, "pair": ("x", ["y"])})
    steps.pop(0)
    steps[-1]["nested"].append("d")
    event = tracer.events[0]
    assert event.args == {"steps": ["a", "b", {"nested": ["c"]}], "pair": ("x", ["y"])}
    assert (event.session_id, event.step) == ("s1", 2) and seen == [event]


def test_an_event_made_elsewhere_is_restamped_for_this_run():
    tracer = Tracer("s2")
    tracer.step = 3
    outside = TraceEvent(session_id="other", step=9, kind="retrieve", detail="bm25")
    tracer.add(outside)
    assert (tracer.events[0].session_id, tracer.events[0].step, tracer.events[0].detail) == ("s2", 3, "bm25")
    assert (outside.session_id, outside.step) == ("other", 9)
