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


def test_an_emitted_event_is_the_event_validation_would_make():
    import pytest
    from pydantic import ValidationError

    tracer = Tracer("s3")
    tracer.step = 1
    ids = ["d:1:0"]
    event = tracer.emit("tool", tool="semantic_search", args={"query": "q", "n": [1]},
                        duration_ms=1.23456, evidence_ids=ids, confidence=0.5, fallback="why", detail="1 results")
    ids.append("d:2:0")  # the caller's list is not the event's
    made = TraceEvent(session_id="s3", step=1, kind="tool", tool="semantic_search", args={"query": "q", "n": [1]},
                      duration_ms=1.235, evidence_ids=["d:1:0"], confidence=0.5, fallback="why", detail="1 results")
    assert event == made and event.__dict__ == made.__dict__ and list(event.__dict__) == list(made.__dict__)
    assert event.model_fields_set == made.model_fields_set
    assert event.model_dump_json() == made.model_dump_json() and event.model_dump() == made.model_dump()
    assert event.model_copy(update={"step": 4}).step == 4 and event.step == 1
    # other types are validated as before: coerced where pydantic coerces, refused where it refuses
    loose = tracer.emit("gate", duration_ms=2, confidence=1, evidence_ids=("a",))
    assert (loose.duration_ms, loose.confidence, loose.evidence_ids) == (2.0, 1.0, ["a"])
    assert type(loose.duration_ms) is float and type(loose.confidence) is float
    with pytest.raises(ValidationError):
        tracer.emit("gate", detail=None)  # type: ignore[arg-type]
