"""A session: one conversation with the runtime, persisted, interruptible, streamable.

    session = Session(runtime, store=SessionStore.for_index(".arag"))
    answer = session.ask("住院报销比例是多少？")
    answer = session.ask("那退休人员呢？")          # a follow-up, resolved against the history
    later = Session.open(runtime, session.id, store) # continue in another process

:meth:`Session.abort` may be called from any thread (a Ctrl-C handler, a web request); the run
stops at its next checkpoint between steps and returns the partial state with status "aborted".
:meth:`Session.stream` yields each :class:`~agentic_rag.types.TraceEvent` as it happens, then the
:class:`~agentic_rag.types.Answer`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator

from agentic_rag.models.llm import LLM
from agentic_rag.runtime.loop import AgentRuntime, Mode
from agentic_rag.runtime.memory import SessionState, SessionStore
from agentic_rag.types import Answer, TraceEvent

_DONE = object()


class Session:
    """Conversation memory + retrieval state for a series of questions."""

    def __init__(self, runtime: AgentRuntime, *, state: SessionState | None = None,
                 store: SessionStore | None = None) -> None:
        self.runtime = runtime
        self.state = state or SessionState()
        self.store = store
        self._abort = threading.Event()
        self._lock = threading.Lock()  # one question at a time per session

    @classmethod
    def open(cls, runtime: AgentRuntime, session_id: str, store: SessionStore) -> "Session":
        """Continue a saved session; :class:`~agentic_rag.errors.NotFoundError` if there is none."""
        return cls(runtime, state=store.load(session_id), store=store)

    @property
    def id(self) -> str:
        return self.state.session_id

    @property
    def status(self) -> str:
        return self.state.status

    def abort(self) -> None:
        """Stop the running question at its next checkpoint (between steps)."""
        self._abort.set()

    def ask(self, question: str, *, mode: Mode | None = None, llm: LLM | None = None,
            on_event: Callable[[TraceEvent], None] | None = None,
            deadline_s: float | None = None) -> Answer:
        """One question (``deadline_s``: None = the runtime's ``limits.deadline_s``)."""
        with self._lock:
            try:
                answer = self.runtime.run(question, state=self.state, mode=mode, on_event=on_event,
                                          abort=self._abort, llm=llm, deadline_s=deadline_s)
            except BaseException:
                self.state.status = "failed"
                raise
            finally:
                self._abort.clear()  # an abort ends this question, not the session
                if self.store is not None:
                    self.store.save(self.state)
        return answer

    def ask_interruptible(self, question: str, *, mode: Mode | None = None, llm: LLM | None = None,
                          on_event: Callable[[TraceEvent], None] | None = None,
                          deadline_s: float | None = None) -> Answer:
        """:meth:`ask` in a worker thread, so Ctrl-C in the calling thread aborts the run between
        steps and returns its partial answer (status "aborted") instead of a traceback."""
        answer: Answer | None = None
        try:
            for item in self.stream(question, mode=mode, llm=llm, deadline_s=deadline_s):
                if isinstance(item, Answer):
                    answer = item
                elif on_event is not None:
                    on_event(item)
        except KeyboardInterrupt:
            pass  # stream() aborted the run and waited for it; the partial answer is in the state
        if answer is None:
            answer = self.state.answers[-1]
        return answer

    def stream(self, question: str, *, mode: Mode | None = None, llm: LLM | None = None,
               deadline_s: float | None = None) -> Iterator[TraceEvent | Answer]:
        """Events as they happen, then the answer. Closing the iterator early aborts the run."""
        q: queue.Queue = queue.Queue()
        result: dict[str, object] = {}

        def work() -> None:
            try:
                result["answer"] = self.ask(question, mode=mode, llm=llm, on_event=q.put,
                                            deadline_s=deadline_s)
            except BaseException as exc:  # re-raised in the consumer's thread
                result["error"] = exc
            finally:
                q.put(_DONE)

        worker = threading.Thread(target=work, name=f"arag-session-{self.id}", daemon=True)
        worker.start()
        try:
            while True:
                item = q.get()
                if item is _DONE:
                    break
                yield item
        finally:
            if worker.is_alive():
                self.abort()
            worker.join()
        if "error" in result:
            raise result["error"]  # type: ignore[misc]
        yield result["answer"]  # type: ignore[misc]
