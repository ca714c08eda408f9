"""The deadline guarantee: an LLM-backed run that would pass ``deadline_s`` is abandoned and the
deterministic pipeline answers the same question instead, so a slow or hung LLM never leaves a
request unanswered.

The LLM-backed run works in a thread on a copy of the session state. At the deadline its own abort
event is set (it stops at its next checkpoint, or when its LLM call gives up), its later events
are no longer passed on, and ``fallback`` runs in the caller's thread on the original state; its
answer's trace starts with a ``fallback`` event (tool ``deadline``) saying why.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from agentic_rag.runtime.memory import SessionState
from agentic_rag.state.runs import RunAbort
from agentic_rag.types import Answer, TraceEvent

Sink = Callable[[TraceEvent], None]
#: ``run(state, on_event, abort) -> Answer``
Run = Callable[[SessionState, Sink, threading.Event], Answer]


def answer_within(deadline_s: float, llm_run: Run, fallback: Run, state: SessionState,
                  on_event: Sink | None, abort: threading.Event, *,
                  what: str = "the LLM-backed run") -> tuple[Answer, SessionState, bool]:
    """``(answer, the state to keep, whether the deadline replaced the LLM-backed answer)``;
    ``what`` names the abandoned run in the fallback event (the queued reasoning, say)."""
    live = threading.Event()
    live.set()

    def relay(event: TraceEvent) -> None:
        if live.is_set() and on_event is not None:
            on_event(event)

    trial = state.model_copy(deep=True)
    trial_abort = RunAbort(parent=abort)  # the deadline stops the trial, not the fallback
    result: dict[str, object] = {}

    def work() -> None:
        try:
            result["answer"] = llm_run(trial, relay, trial_abort)
        except BaseException as exc:  # re-raised in the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=work, name="arag-llm-run", daemon=True)
    worker.start()
    worker.join(deadline_s)
    if not worker.is_alive():
        if "error" in result:
            raise result["error"]  # type: ignore[misc]
        return result["answer"], trial, False  # type: ignore[return-value]
    live.clear()
    trial_abort.set()
    note = TraceEvent(session_id=state.session_id, kind="fallback", tool="deadline",
                      fallback=f"{what} passed the {deadline_s:g} s deadline: "
                               "deterministic answer from the same index")
    if on_event is not None:
        on_event(note)
    answer = fallback(state, on_event or (lambda e: None), abort)
    return answer.model_copy(update={"trace": [note, *answer.trace]}), state, True
